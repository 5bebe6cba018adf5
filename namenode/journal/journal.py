"""The journal: txids, the open edits files of every healthy name dir, and group commit.

Protocol (as HDFS's FSEditLog ``logEdit`` / ``logSync``):

* ``log(ops)`` is called with the namesystem lock held, right after the ops were applied; it
  assigns the next txids and appends the framed records to an in-memory buffer. No I/O.
* ``sync(txid)`` is called after that lock is released. If ``txid`` is already durable it
  returns at once; if another caller is syncing it waits for that sync; otherwise it takes the
  whole buffer, writes it to every healthy dir and fdatasyncs each, outside the lock. So many
  concurrent callers share one write and one fsync.
* An op is acknowledged only when ``sync`` returned for its txid: it is then durable in every
  healthy dir. A dir whose write or sync fails is dropped; with none left, the journal is
  failed and every later ``sync`` raises StorageError.

In an HA set (``namenode/ha/``) the active namenode's journal has a ``shared`` log, the quorum
journal in etcd. A batch is acknowledged once etcd's quorum holds it and every healthy local
dir has it durably. **Overlap**: the local write and fdatasync run while etcd takes the batch
(Hadoop's ``JournalSet`` flushes the shared journal, then the local dirs, one after the
other), so the local edits may run one batch past the shared journal, never more: a batch
the shared log refused (no quorum, or fenced) is cut from the local edits again (``_cut``)
before its waiters fail with SharedJournalError, and a namenode killed between the two has
its edits compared with the shared journal and cut at start, before it follows or campaigns
(``EditLogTailer.reconcile``, a JournalNode's segment recovery). After a refusal every later
sync fails the same way until ``discard_unsynced`` drops what was logged after the last
durable txid (the namesystem then reloads its tree from the local dirs, which hold exactly
that). A standby appends the active's records as they are (``append_records``), with their
own txids.

``requires_shared`` (set for every namenode of an HA set) makes that rule hold whatever the
HA state does around it: a record this journal logged itself (``log``, a segment's first
record) reaches a local dir only through the shared log. With none attached -- a standby, an
active stepping down or cut off from etcd -- its batch fails as a refused one does, so an op
is never acknowledged on the local edits alone (QJM's rule: the edit log of an HA NameNode
has no local-only path, ``FSEditLog`` writes through the ``JournalSet`` whose quorum journal
must take every transaction).

**Linger** (the shared log only). An etcd transaction costs the set the same CPU whatever it
holds, so with a shared log a sync waits, before it takes the buffer, until as many ops are
logged past the last durable txid as the previous batch held (the clients that batch released
have each sent their next op), or ``shared_linger`` seconds: one cohort of clients per batch
instead of two alternating ones. It only delays the start of a sync; what is acknowledged, and
when, is unchanged (the ``linger.ms`` of Kafka's producer; Hadoop's ``FSEditLog.logSync``
has none: its local and JournalNode syncs cost no shared CPU per batch).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, NamedTuple, Protocol, TypeVar

from nnlite.durability import durable, faults
from nnlite.formats import edits
from nnlite.namenode.errors import SharedJournalError, StorageError
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir

log = logging.getLogger(__name__)

T = TypeVar("T")
# Longest a sync to the shared log waits for the previous batch's clients (module docstring):
# about one etcd transaction on loopback, so a lone client loses at most that once.
SHARED_LINGER = 0.002


class JournalMetrics:
    __slots__ = ("syncs", "sync_seconds", "txns", "batched", "bytes")

    def __init__(self) -> None:
        self.syncs = 0
        self.sync_seconds = 0.0
        self.txns = 0
        self.batched = 0
        self.bytes = 0


class Logged(NamedTuple, Generic[T]):
    """A request applied and logged, not yet acknowledged: its ``value`` may be answered only
    once ``txid`` is durable (``sync``: ``FSNamesystem.durable``, or the event loop's group
    commit). ``txid`` 0: it changed nothing and logged nothing."""
    value: T
    txid: int


class SharedLog(Protocol):
    """The shared journal of an HA set, as the local journal uses it (``namenode/ha/``)."""

    def append(self, data: bytes, first_txid: int, last_txid: int) -> None:
        """Make the framed records ``data`` (txids ``first_txid..last_txid``) durable in the
        shared journal, or raise SharedJournalError having exposed none of them."""


class Journal:
    """Owns ``txid`` (the last one assigned) and ``synced_txid`` (the last durable one)."""

    def __init__(self, streams: dict[NameDir, edits.EditsWriter], last_txid: int,
                 lock: threading.Lock | threading.RLock):
        self.streams = dict(streams)
        self.txid = last_txid
        self.synced_txid = last_txid
        self.failure: str | None = None
        self.metrics = JournalMetrics()
        self._cond = threading.Condition(lock)
        self._buf = bytearray()
        self._buf_txid = last_txid
        self._syncing = False
        self.shared: SharedLog | None = None
        self.shared_failure: SharedJournalError | None = None
        self.generation = 0        # +1 at each discard_unsynced: a txid's meaning changed
        # An HA set's namenode (module docstring): its own records need the shared log.
        self.requires_shared = False
        self._buf_own = False       # the buffer holds records ``log`` assigned here
        # Told (from the syncing thread) when the shared log refuses a batch.
        self.on_shared_failure: Callable[[], None] | None = None
        self.shared_linger = SHARED_LINGER
        self._shared_batch = 0      # ops in the last batch the shared log took
        self._linger_until = 0      # a lingering sync waits for this txid (0: none waits)
        self._local_sync: ThreadPoolExecutor | None = None    # an HA active's local writes

    @property
    def writable(self) -> bool:
        return self.failure is None and bool(self.streams)

    def check_writable(self) -> None:
        if not self.writable:
            raise StorageError(
                f"No healthy name directory is left ({self.failure}); nothing can be made "
                "durable, so the namenode stops serving (as Hadoop's NameNode terminates when "
                "its edit log cannot sync): no op that was not synced was acknowledged or "
                "shown. Free space or fix the disks, then restart it.")

    @property
    def segment_name(self) -> str:
        """``edits`` or ``edits.new``: the file the journal appends to."""
        writer = next(iter(self.streams.values()), None)
        return EDITS_NEW if writer is not None and writer.path.endswith(EDITS_NEW) else EDITS

    # ------------------------------------------------------------------ logging and sync

    def log(self, ops: list[edits.Op]) -> int:
        """Assign txids and buffer the records (namesystem lock held). Returns the last txid.
        Ops the namespace already packed (``edits.PackedOps``) are framed, not packed again."""
        txid = self.txid
        buf = self._buf
        if type(ops) is edits.PackedOps and len(ops.packed) == len(ops):
            for untimed in ops.packed:
                txid += 1
                buf += edits.record_at(txid, untimed)
        else:
            for op in ops:
                txid += 1
                buf += edits.encode_record(txid, op)
        self.txid = txid
        self._buf_own = True
        self.metrics.txns += len(ops)
        if self._linger_until and txid >= self._linger_until:
            self._linger_until = 0
            self._cond.notify_all()
        return txid

    def sync(self, txid: int) -> None:
        """Return once ``txid`` is durable in every healthy dir (namesystem lock NOT held)."""
        cond = self._cond
        with cond:
            generation = self.generation
            lingered = False
            while self.synced_txid < txid:
                if self.generation != generation or txid > self.txid:
                    # dropped while waiting, or before this call (a target the group
                    # committer queued before a reload): it never becomes durable
                    raise SharedJournalError(f"txid {txid} was dropped before it became "
                                             f"durable: the namesystem was reloaded")
                if self.failure is not None:
                    self.check_writable()
                if self.shared_failure is not None:
                    raise self.shared_failure
                if self._syncing:
                    cond.wait()
                    continue
                if not lingered:
                    lingered = True
                    if self._linger():
                        continue
                data, end, own = self._take_buffer()
                self._syncing = True
                cond.release()
                try:
                    self._write_and_sync(data, end, own)
                finally:
                    cond.acquire()
                    self._syncing = False
                    cond.notify_all()

    def _linger(self) -> bool:
        """(Lock held, no sync running.) With a shared log, wait until the previous batch's
        count of ops is logged past the last durable txid, at most ``shared_linger`` seconds
        (module docstring); True if it waited (the caller looks at the journal again)."""
        want = self.synced_txid + self._shared_batch
        if self.shared is None or self._shared_batch <= 1 or self.txid >= want \
                or self.shared_linger <= 0:
            return False
        self._linger_until = want
        self._cond.wait(self.shared_linger)
        self._linger_until = 0
        return True

    def sync_all_locked(self) -> None:
        """With the namesystem lock held: make everything logged so far durable."""
        while self._syncing:
            self._cond.wait()
        if self.shared_failure is not None:
            raise self.shared_failure
        data, end, own = self._take_buffer()
        if data:
            self._write_and_sync(data, end, own)
        self._cond.notify_all()
        self.check_writable()

    def _take_buffer(self) -> tuple[bytearray, int, bool]:
        data, self._buf = self._buf, bytearray()
        own, self._buf_own = self._buf_own, False
        return data, self.txid, own

    def _write_and_sync(self, data: bytearray, end: int, own: bool) -> None:
        start = time.perf_counter()
        shared = self.shared           # read once: the HA thread may detach it meanwhile
        if data and (shared is not None or (own and self.requires_shared)):
            self._share_and_write(shared, data, end)
        else:
            self._write_local(data)
        m = self.metrics
        m.syncs += 1
        m.sync_seconds += time.perf_counter() - start
        m.batched += end - self.synced_txid
        m.bytes += len(data)
        if self.streams:
            self.synced_txid = end
        else:
            self.failure = self.failure or "every name directory failed"
            log.critical("no healthy name directory is left: refusing writes")

    def _share_and_write(self, shared: SharedLog | None, data: bytearray, end: int) -> None:
        """An HA active's batch (module docstring, "Overlap"): the local write and fdatasync
        run in the local-sync thread while etcd takes the batch; a batch the shared log
        refused is cut from the local edits again before the failure is raised."""
        first = self.synced_txid + 1
        written = None
        try:
            if shared is None:
                raise SharedJournalError(
                    f"txids {first}-{end} were not acknowledged: this namenode can no "
                    f"longer write the shared journal (it is not the active, or is "
                    f"stepping down)")
            sizes = {d: writer.size for d, writer in self.streams.items()}
            if self._local_sync is None:
                self._local_sync = ThreadPoolExecutor(1, thread_name_prefix="nnlite-local-sync")
            written = self._local_sync.submit(self._write_local, data)
            if faults.due("journal.before-shared"):
                written.result()    # for the crash tests: local and durable, not in etcd
                faults.act("journal.before-shared")
            shared.append(bytes(data), first, end)
            self._shared_batch = end - self.synced_txid
        except Exception as exc:
            # Whatever went wrong, the batch is not in the shared journal, and no later
            # batch may go there before it: every sync fails until discard_unsynced.
            if written is not None:
                written.result()
                self._cut(sizes)
            failure = exc if isinstance(exc, SharedJournalError) else SharedJournalError(
                f"the shared journal could not take txids {first}-{end}: {exc}")
            self.shared_failure = failure
            if self.on_shared_failure is not None:
                self.on_shared_failure()
            raise failure from exc
        written.result()

    def _write_local(self, data: bytearray) -> None:
        """Append ``data`` to every healthy dir and fdatasync each; a dir that fails is
        dropped."""
        for d, writer in list(self.streams.items()):
            try:
                faults.hit(f"journal.write:{d.root.name}")
                if data and faults.due("journal.partial-write"):
                    # A torn tail, for the crash tests: the batch's last record cut 3 bytes
                    # short. (Cutting at half the batch could fall on a record boundary and
                    # leave no tear at all.)
                    writer.write(data[:-3])
                    faults.act("journal.partial-write")
                writer.write(data)
                durable.sync_fd(writer.fd, writer.path)
            except OSError as exc:
                self.drop(d, f"cannot write {writer.path}: {exc}")

    def _cut(self, sizes: dict[NameDir, int]) -> None:
        """Cut each dir's edits back to its size in ``sizes`` (a batch the shared log
        refused) and make the cut durable; a dir that cannot be cut is dropped: it holds
        records the shared journal does not."""
        for d, writer in list(self.streams.items()):
            size = sizes.get(d)
            if size is None or writer.size == size:
                continue
            try:
                os.ftruncate(writer.fd, size)
                os.lseek(writer.fd, size, os.SEEK_SET)
                writer.size = size
                durable.sync_fd(writer.fd, writer.path)
            except OSError as exc:
                self.drop(d, f"cannot cut {writer.path} back to {size} bytes after the "
                             f"shared journal refused a batch: {exc}")

    def append_records(self, data: bytes, last_txid: int) -> None:
        """A standby's log (lock held): ``data`` are the active's framed records, txids
        ``self.txid + 1`` to ``last_txid``, already applied to the tree; they are synced as
        they are, so the standby's edits hold the active's bytes."""
        self._buf += data
        self.metrics.txns += last_txid - self.txid
        self.txid = last_txid

    def discard_unsynced(self) -> int:
        """Forget every op logged after the last durable txid and clear a shared-journal
        failure (lock held, no sync running): the namesystem reloads its tree from the local
        dirs next, which hold exactly ``synced_txid``. Returns how many ops were dropped."""
        while self._syncing:
            self._cond.wait()
        dropped = self.txid - self.synced_txid
        self._buf = bytearray()
        self._buf_own = False
        self.txid = self._buf_txid = self.synced_txid
        self.shared_failure = None
        self.generation += 1
        self._cond.notify_all()
        return dropped

    def reopen(self, streams: dict[NameDir, edits.EditsWriter], last_txid: int) -> None:
        """Append to ``streams`` from now on, their last record ``last_txid`` (lock held, no
        sync running, nothing buffered): the edits files were cut or replaced under the
        journal (``FSNamesystem.truncate_edits``, ``reset_to_image``)."""
        while self._syncing:
            self._cond.wait()
        self.streams = dict(streams)
        self._buf = bytearray()
        self._buf_own = False
        self.txid = self.synced_txid = self._buf_txid = last_txid
        self.shared_failure = None
        self.generation += 1
        self._cond.notify_all()
        self.check_writable()

    def drop(self, d: NameDir, reason: str) -> None:
        """Fail ``d`` and stop writing edits to it (lock held)."""
        writer = self.streams.pop(d)
        d.fail(reason)
        with contextlib.suppress(OSError):
            writer.close()
        if not self.streams:
            self.failure = reason

    # ------------------------------------------------------------------ segments

    def roll(self, restore: Iterable[NameDir] = ()) -> int:
        """End the current segment and continue in ``edits.new`` (lock held).
        Returns the last txid of the closed segment. The failed dirs in ``restore`` are
        brought back first where they can be written again (NNStorage's
        ``attemptRestoreRemovedStorage`` at a roll): the image and the closed segment are
        copied into them, and the new segment starts in them too.

        Already in ``edits.new`` (a checkpoint that was retried before its swap), it is a
        no-op, as in Hadoop 1: starting ``edits.new`` again would truncate acknowledged ops."""
        if self.segment_name == EDITS_NEW:
            return next(iter(self.streams.values())).first_txid - 1
        self.log([edits.EndLogSegmentOp()])
        self.sync_all_locked()
        end = self.txid
        self._reopen(EDITS_NEW, end + 1, replace=False, more=self._restore(restore))
        return end

    def _restore(self, failed: Iterable[NameDir]) -> list[NameDir]:
        source = next(iter(self.streams), None)
        back: list[NameDir] = []
        for d in failed:
            if source is None or d in self.streams:
                continue
            try:
                d.restore_from(source, EDITS)
                back.append(d)
            except OSError as exc:
                log.warning("name directory %s stays failed: %s", d.root, exc)
        return back

    def restart_segment(self, empty: bool = False) -> int:
        """After an image covering every logged txid was saved: start a fresh ``edits`` whose
        first record is the next txid, and remove ``edits.new`` (lock held). ``empty``: the
        fresh edits hold no record (an HA standby's: ``start_segment``)."""
        self.sync_all_locked()
        first = self.txid + 1
        self._reopen(EDITS, first, replace=True, empty=empty)
        for d in self.streams:
            durable.remove_durably(d.file(EDITS_NEW))
        return first

    def _reopen(self, name: str, first_txid: int, *, replace: bool,
                more: Iterable[NameDir] = (), empty: bool = False) -> None:
        """Close the open files and start ``name`` in every healthy dir (and ``more``, just
        restored) at ``first_txid`` (``start_segment``)."""
        if self.shared is None and self.requires_shared and not empty:
            raise SharedJournalError(f"cannot start an edits segment at txid {first_txid}: "
                                     f"its first record needs the shared journal")
        if self.shared is not None:
            # The segment's first record goes to the shared journal before any local dir, so
            # the local edits stay a prefix of it.
            self.shared.append(edits.encode_record(first_txid, edits.StartLogSegmentOp()),
                               first_txid, first_txid)
        for d, writer in [*self.streams.items(), *((d, None) for d in more)]:
            if writer is not None:
                writer.close()
            try:
                self.streams[d] = start_segment(d, name, first_txid, replace=replace,
                                                empty=empty)
            except OSError as exc:
                if writer is None:
                    d.fail(f"cannot start {d.file(name)}: {exc}")
                else:
                    self.drop(d, f"cannot start {d.file(name)}: {exc}")
        last = first_txid - 1 if empty else first_txid
        self.txid = self.synced_txid = self._buf_txid = last
        self.check_writable()

    def segment_renamed(self, name: str) -> None:
        """The open segment was renamed (``edits.new -> edits`` by a checkpoint swap); the
        descriptors stay valid, only the names they are reported under change."""
        for d, writer in self.streams.items():
            writer.path = str(d.file(name))

    def close(self) -> None:
        if self._local_sync is not None:
            self._local_sync.shutdown()
        for writer in self.streams.values():
            writer.close()


def start_segment(d: NameDir, name: str, first_txid: int, *,
                  replace: bool = True, empty: bool = False) -> edits.EditsWriter:
    """The one way an edits segment starts, live or offline: ``name`` in ``d`` holding only
    START_LOG_SEGMENT at ``first_txid``, durable before it is returned open for appending.
    ``replace``: written under a temp name and renamed over ``name``, so a crash leaves the
    old file or the new one (``edits``, whose old content an image now holds); otherwise
    created in place (``edits.new`` at a roll). ``empty``: the header alone, no record (an HA
    namenode after recovery: its next record, whatever op it is, comes from the shared
    journal at ``first_txid``)."""
    target = d.file(name)
    path = target.with_name(name + ".tmp") if replace else target
    writer = edits.EditsWriter.create(str(path), first_txid)
    try:
        if not empty:
            writer.write(edits.encode_record(first_txid, edits.StartLogSegmentOp()))
        durable.sync_fd(writer.fd, str(path))
    except BaseException:
        writer.close()
        raise
    if not replace:
        durable.sync_dir(d.current)
        return writer
    writer.close()
    durable.rename_durably(path, target)
    return edits.EditsWriter.open_append(str(target), writer.size)


def restart_edits(d: NameDir, first_txid: int, *, empty: bool = False) -> None:
    """Offline (format, recovery, an imported checkpoint): a fresh ``edits`` starting at
    ``first_txid``, closed, and no ``edits.new`` (``empty``: see ``start_segment``)."""
    start_segment(d, EDITS, first_txid, empty=empty).close()
    durable.remove_durably(d.file(EDITS_NEW))
