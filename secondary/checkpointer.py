"""The secondary's whole job, one checkpoint at a time: when to checkpoint (``TriggerPolicy``,
``Checkpointer.check``), and what a finished or failed checkpoint leaves behind (counters, the
last result and failure, log lines). The steps themselves are merge.py's; the records
outcome.py's.

Trigger (``TriggerPolicy``): checkpoint when a checkpoint is pending on the namenode (resume
it), or ``txid - lastCheckpointTxid >= checkpoint.txns``, or ``now - lastCheckpointTime >=
checkpoint.period``. A check never raises: a failure is logged, counted and left for the next.

Failures keep what is still true (merge.py says what each step keeps). An unexpected error
drops the namespace in memory: it may be half updated. After ``checkpoint.max-retries`` merge
failures in a row the namespace and the local image are dropped and the next try starts from
a freshly downloaded image.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nnlite.client.failover import Address
from nnlite.client.peer import Credentials
from nnlite.formats import edits
from nnlite.namenode.namespace.tree import Tree
from nnlite.secondary.client import NamenodeStatus, TransferClient
from nnlite.secondary.errors import CHECKPOINT_FAILURES, CheckpointDirError, MergeError
from nnlite.secondary.merge import Merger
from nnlite.secondary.outcome import CheckpointResult, Counters, Failure, Phases
from nnlite.secondary.storage import CheckpointDir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TriggerPolicy:
    """When a check should become a checkpoint. ``period`` in seconds."""
    txns: int
    period: float

    def reason(self, status: NamenodeStatus, now: float) -> str | None:
        """Why to checkpoint now ("pending", "txns", "period"), or None to wait."""
        if status.pending:
            return "pending"
        if status.uncheckpointed >= self.txns:
            return "txns"
        if now - status.last_checkpoint_time >= self.period:
            return "period"
        return None


def _on_merger(name: str) -> property:
    """An attribute of the Checkpointer that is its merger's, read and set through."""
    return property(lambda self: getattr(self.merger, name),
                    lambda self, value: setattr(self.merger, name, value))


class Checkpointer:
    """Checkpoints one namenode into one checkpoint directory. Not thread-safe: one caller."""

    def __init__(self, client: TransferClient, checkpoint_dir: str | Path, *,
                 policy: TriggerPolicy, max_retries: int = 3,
                 max_record: int = edits.DEFAULT_MAX_RECORD,
                 clock: Callable[[], float] = time.time):
        self.merger = Merger(client, CheckpointDir(checkpoint_dir), Counters(),
                             max_record=max_record, clock=clock)
        self.policy = policy
        self.max_retries = max(1, max_retries)
        self.last_result: CheckpointResult | None = None
        self.last_failure: Failure | None = None
        self.last_status: NamenodeStatus | None = None
        self.busy = threading.Event()
        self._opened = False

    # One copy, on the merger: a caller that sets one here (a test pointing ``client`` at a
    # restarted namenode) changes what the next checkpoint's steps use.
    client = _on_merger("client")
    dir = _on_merger("dir")
    counters = _on_merger("counters")
    max_record = _on_merger("max_record")
    clock = _on_merger("clock")

    @classmethod
    def from_config(cls, namenode_url: Address, checkpoint_dir: str | Path,
                    secret: Credentials, config,
                    clock: Callable[[], float] = time.time) -> Checkpointer:
        client = TransferClient(namenode_url, secret,
                                timeout=config.int("dfs.image.transfer.timeout") / 1000)
        policy = TriggerPolicy(config.int("checkpoint.txns"),
                               config.float("checkpoint.period"))
        return cls(client, checkpoint_dir, policy=policy,
                   max_retries=config.int("checkpoint.max-retries"),
                   max_record=config.int("nnlite.edits.max-record"), clock=clock)

    # ------------------------------------------------------------------ life cycle

    def open(self) -> Checkpointer:
        """Lock the checkpoint dir, finish what a crash left, note the image it holds."""
        self.dir.open()
        local = self.merger.local = self.dir.image_ref()
        self._opened = True
        if local:
            log.info("checkpoint directory %s holds an image at txid %d", self.dir.root,
                     local.txid)
        return self

    def close(self) -> None:
        if self._opened:
            self.dir.close()
            self._opened = False

    def __enter__(self) -> Checkpointer:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def tree(self) -> Tree | None:
        """The tree kept in memory between checkpoints (None when there is none)."""
        merged = self.merger.merged
        return merged.tree if merged else None

    @property
    def namespace_txid(self) -> int | None:
        """The txid of the namespace kept in memory (None when there is none)."""
        merged = self.merger.merged
        return merged.txid if merged else None

    # ------------------------------------------------------------------ the daemon's tick

    def edits_size(self) -> int:
        """Transactions the namenode has not checkpointed yet."""
        return self.client.status().uncheckpointed

    def check(self) -> CheckpointResult | None:
        """Ask the namenode's status; checkpoint if the policy says so. Failures are logged,
        counted and left for the next check, never raised."""
        try:
            status = self.last_status = self.client.status()
        except CHECKPOINT_FAILURES as exc:
            log.warning("checkpoint check failed: %s", exc)
            self.last_failure = Failure(self.clock(), "status", _line(exc))
            return None
        reason = self.policy.reason(status, self.clock())
        if reason is None:
            log.debug("no checkpoint needed: %d uncheckpointed txns", status.uncheckpointed)
            return None
        try:
            return self.do_checkpoint(reason)
        except CHECKPOINT_FAILURES as exc:
            log.error("checkpoint failed; retrying at the next check: %s", _line(exc))
            return None

    # ------------------------------------------------------------------ doCheckpoint

    def do_checkpoint(self, reason: str = "forced") -> CheckpointResult:
        """One checkpoint, start to finish; raises one of CHECKPOINT_FAILURES when it fails."""
        if not self._opened:
            raise CheckpointDirError("the checkpoint directory is not open: call open() first")
        phases = Phases()
        self.busy.set()
        try:
            result = self.merger.run(phases, reason)
        except MergeError as exc:
            self._failed(exc, phases.current, merge=True)
            raise
        except CHECKPOINT_FAILURES as exc:
            self._failed(exc, phases.current)
            raise
        except OSError as exc:
            err = CheckpointDirError(f"local I/O failed during {phases.current} in "
                                     f"{self.dir.root}: {exc}")
            self._failed(err, phases.current)
            raise err from exc
        except Exception as exc:
            self.merger.merged = None   # unexpected: the namespace may be half updated
            self._failed(exc, phases.current)
            raise
        finally:
            self.busy.clear()
        self._succeeded(result)
        return result

    # ------------------------------------------------------------------ outcome

    def _succeeded(self, result: CheckpointResult) -> None:
        c = self.counters
        c.checkpoints += 1
        c.failures_in_row = c.merge_failures_in_row = 0
        self.last_result = result
        log.info("checkpoint done (%s): txids %s, %d ops replayed, image %d bytes%s; %s",
                 result.reason, f"{result.first_txid}-{result.last_txid}" if result.ops
                 else f"up to {result.last_txid} (nothing to replay)", result.ops,
                 result.image_size, " (namenode image downloaded)" if result.image_downloaded
                 else "", ", ".join(f"{k} {v:.3f} s" for k, v in result.phases.items()))

    def _failed(self, exc: Exception, phase: str, *, merge: bool = False) -> None:
        c = self.counters
        c.failures += 1
        c.failures_in_row += 1
        self.last_failure = Failure(self.clock(), phase, _line(exc))
        log.error("checkpoint failed in %s (%d in a row): %s", phase, c.failures_in_row,
                  _line(exc))
        if not merge:
            return
        c.merge_failures_in_row += 1
        if c.merge_failures_in_row >= self.max_retries:
            log.warning("%d merge failures in a row: dropping the namespace in memory and the "
                        "local image; the next checkpoint starts from a downloaded image",
                        c.merge_failures_in_row)
            self.merger.merged = self.merger.local = None
            c.merge_failures_in_row = 0


def _line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
