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


def test_a_sync_to_the_shared_log_lingers_for_the_last_batchs_clients(tmp_path, etcd_single):
    """Linger (journal.py's docstring): with a shared log, a sync waits until as many ops are
    logged as the last batch held, then sends them in one etcd transaction; with fewer, it
    goes once ``shared_linger`` is up. A real etcd member and an active's quorum journal."""
    from nnlite.client.etcd.client import Etcd
    from tests.namenode.ha.inprocess import lead, mkdir
    from tests.servers import wait_for

    format_dirs([NameDir(tmp_path / "nn1")])
    fs = FSNamesystem.open([str(tmp_path / "nn1")])
    etcd = Etcd(etcd_single.endpoints)
    try:
        lead(fs, etcd, "nn1")
        journal, user = fs.journal, getpass.getuser()
        shared = journal.shared
        assert shared is not None
        last = max(fs.mkdirs(f"/a{i}", 0o755, user).txid for i in range(4))
        fs.durable(fs.mkdirs("/a4", 0o755, user))        # one batch of 5 ops
        assert journal.synced_txid == last + 1
        journal.shared_linger = 60.0     # only the fifth op can end this wait in time
        appends = shared.appends
        first = fs.mkdirs("/b0", 0o755, user)
        done = threading.Thread(target=fs.durable, args=(first,), daemon=True)
        done.start()
        wait_for(lambda: journal._linger_until, 10, "the sync to linger")
        for i in range(1, 4):
            fs.mkdirs(f"/b{i}", 0o755, user)
        assert shared.appends == appends and done.is_alive()    # 4 of 5: still waiting
        fs.mkdirs("/b4", 0o755, user)
        done.join(timeout=30)
        assert not done.is_alive(), "the fifth op did not end the linger"
        assert shared.appends == appends + 1 and shared.last_txid == first.txid + 4
        journal.shared_linger = 0.05     # a lone op goes once the linger is up
        mkdir(fs, "/c")
        assert shared.appends == appends + 2 and journal.synced_txid == journal.txid
    finally:
        fs.close()
        etcd.close()
