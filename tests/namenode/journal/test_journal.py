"""The journal's sync (namenode/journal/journal.py) around a reload."""

from __future__ import annotations

import getpass
import threading

from nnlite.namenode.errors import SharedJournalError
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.storage.namedir import NameDir


def test_a_sync_of_a_txid_dropped_before_it_was_asked_fails_at_once(tmp_path):
    """The group committer queues a target txid, then a reload drops it (an HA active
    stepping down) before the sync thread asks for it: that sync must fail, not wait for a
    txid that no longer exists. Before, the sync thread spun on it for ever and everything
    waiting for the journal (the step-down's comparison with the shared journal) hung."""
    format_dirs([NameDir(tmp_path)])
    fs = FSNamesystem.open([str(tmp_path)])
    try:
        fs.journal.requires_shared = True        # the op's batch fails: as an HA namenode's
        logged = fs.mkdirs("/dropped", 0o755, getpass.getuser())
        fs.reload()                              # the step-down drops it
        outcome: list[BaseException | None] = []

        def sync() -> None:
            try:
                fs.journal.sync(logged.txid)
                outcome.append(None)
            except BaseException as exc:         # noqa: BLE001 -- handed to the test
                outcome.append(exc)
        thread = threading.Thread(target=sync, daemon=True)
        thread.start()
        thread.join(timeout=30)
        assert not thread.is_alive(), "the sync of a dropped txid never returned"
        assert isinstance(outcome[0], SharedJournalError)
        with fs.lock:
            fs.journal.sync_all_locked()         # and the journal is not left busy
    finally:
        fs.close()
