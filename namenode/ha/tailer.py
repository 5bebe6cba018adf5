"""EditLogTailer: a standby follows the shared journal, as Hadoop's ``EditLogTailer`` tails
the JournalNodes' edits.

Every ``tail`` interval (the controller's loop) it reads ``committed`` and applies the chunks
up to it with ``FSNamesystem.apply_replicated`` -- the replay appliers, the code startup
replays with -- writing them to its own edits as they are. Before it follows -- at start and
after every step-down -- ``reconcile`` makes its edits a prefix of the journal (a
JournalNode's segment recovery). It keeps the figures of its lag: since when it has seen a
committed txid it had not applied (``behind_since``, which the health check reads), and the
worst lag since the position was last published (``take_lag``).

A journal it cannot apply raises: ``ReplayError`` (a txid refused; the tree is reloaded from
the disk first) or ``HAError`` (the journal was purged past it); the controller then tells the
health monitor (``health.py``).
"""

from __future__ import annotations

import logging
import time

from nnlite.client.etcd.client import Etcd
from nnlite.formats import edits
from nnlite.namenode.errors import HAError, ReplayError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.quorum_journal import Layout, committed_txid, read_batches

log = logging.getLogger(__name__)


class EditLogTailer:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout):
        self.fs = fs
        self.etcd = etcd
        self.layout = layout
        # whether its edits were compared with the journal since it last led or started
        self.reconciled = False
        self.behind_since: float | None = None    # it saw txids it had not applied
        self.max_behind = 0                       # ... and the worst of the last second
        self.max_lag = 0.0

    def tail(self, upto: int | None = None) -> int:
        """Apply every committed batch this namenode lacks (up to txid ``upto`` at most);
        returns the last txid it holds."""
        committed = committed_txid(self.etcd, self.layout)
        if committed is not None and upto is not None:
            committed = min(committed, upto)
        have = self.fs.last_synced_txid
        if committed is not None and have < committed:
            self.max_behind = max(self.max_behind, committed - have)
            if self.behind_since is None:
                self.behind_since = time.monotonic()
        while committed is not None and have < committed:
            batches = read_batches(self.etcd, self.layout, have, committed)
            if not batches:
                raise HAError(f"the shared journal no longer holds txids after {have} (it "
                              f"was purged after a checkpoint): bootstrap this namenode from "
                              f"the active's image")
            for batch in batches:
                try:
                    have = self.fs.apply_replicated(batch.data, batch.first_txid,
                                                    batch.last_txid, upto=committed)
                except ReplayError:
                    # the tree may hold part of the batch: start again from the disk
                    self.fs.reload()
                    raise
        if upto is None and self.behind_since is not None:
            self.max_lag = max(self.max_lag, time.monotonic() - self.behind_since)
            self.behind_since = None
        return have

    def take_lag(self) -> tuple[int, float]:
        """The worst lag since the last call -- the most txids seen committed and not yet
        applied, and the longest time (seconds) from seeing a committed txid it lacked to
        having applied it -- and start counting again."""
        worst = self.max_behind, self.max_lag
        self.max_behind, self.max_lag = 0, 0.0
        return worst

    def reconcile(self) -> None:
        """Make this namenode's edits a prefix of the shared journal before it follows it,
        as a JournalNode's segment recovery makes every replica agree with the recovered
        segment (``Journal.acceptRecovery``): each local record after the image that etcd
        still holds is compared, byte for byte, with etcd's record of that txid; from the
        first that differs, or lies past ``committed``, the local edits are cut
        (``FSNamesystem.truncate_edits``). A difference at or below the image cannot be cut:
        the namenode starts again from the active's image (``HealthMonitor.recover``)."""
        committed = committed_txid(self.etcd, self.layout)
        if committed is None:
            self.reconciled = True
            return
        fs = self.fs
        local = fs.local_records(after_txid=fs.last_checkpoint_txid)
        first_bad = None
        if local:
            theirs = self._shared_records(local[0][0], min(local[-1][0], committed))
            for txid, data in local:
                if txid > committed or theirs.get(txid, data) != data:
                    first_bad = txid
                    break
        if first_bad is not None:
            where = "past" if first_bad > committed else "beside"
            log.error("this namenode's edits run %s the shared journal from txid %d "
                      "(committed %d): cutting them there", where, first_bad, committed)
            fs.truncate_edits(first_bad - 1)
        self.reconciled = True

    def _shared_records(self, first: int, last: int) -> dict[int, bytes]:
        """The shared journal's framed records of txids ``first..last`` that etcd still
        holds, by txid."""
        found: dict[int, bytes] = {}
        after = first - 1
        while after < last:
            batches = read_batches(self.etcd, self.layout, after, last)
            if not batches:
                break
            for batch in batches:
                records = edits.payloads_in(batch.data, batch.first_txid,
                                            source=f"shared journal chunk {batch.last_txid}")
                ends = [off for off, _ in records[1:]] + [len(batch.data)]
                for (off, items), end in zip(records, ends, strict=True):
                    if first <= items[1] <= last:
                        found[items[1]] = batch.data[off:end]
                after = batch.last_txid
        return found
