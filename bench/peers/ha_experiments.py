"""Experiments on the write path of an HA namenode, for the proposals in BENCHMARKS.md's "High
availability": each one a change measured before anyone writes it into namenode/. Installed as
the namenodes' sitecustomize (``bash bench/peers.sh --nn-sitecustomize
bench/peers/ha_experiments.py``) and chosen by the environment variable
``NNLITE_HA_EXPERIMENT``, a comma-separated list; unset or empty, nothing changes:

``switch=SECONDS``
    ``sys.setswitchinterval(SECONDS)``: how long a thread that wants the GIL back (the sync
    thread, after each socket call to etcd and after its fdatasync) may wait for the busy
    event loop to give it up (Python's default is 5 ms).
``linger=SECONDS``
    With a shared journal, the group commit starts the next sync not as soon as one op is
    pending but once as many ops are pending as the last sync released and had pending at
    its end (every released client has sent its next op), or after SECONDS: one cohort of
    clients per batch instead of two alternating ones.
``overlap``
    The local dirs are written and fdatasynced in a second thread while the etcd transaction
    is in flight. For measuring only: a batch etcd refuses would stay in the local edits.
These patch private methods of this revision's ``Journal`` and ``AsyncCommitter``; they are
measurements, not the way to build the change.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def experiments() -> dict[str, str]:
    chosen = {}
    for item in os.environ.get("NNLITE_HA_EXPERIMENT", "").split(","):
        name, _, value = item.strip().partition("=")
        if name:
            chosen[name] = value
    return chosen


def lingering(seconds: float) -> None:
    from nnlite.namenode.journal.committer import AsyncCommitter, log

    def synced(self: Any, target: int, error: Exception | None) -> None:
        if error is not None and not self.journal.writable and self.on_journal_failure:
            failed, self.on_journal_failure = self.on_journal_failure, None
            failed(error)
        pending, released = self._pending, 0
        while pending and pending[0][0] <= target:
            _, callback, value, arg = pending.popleft()
            released += 1
            try:
                callback(value, error, arg)
            except Exception:
                log.exception("releasing a durable op failed")
        if not pending and self.journal.shared is None:
            self._syncing = False
        elif self.journal.shared is None:
            self._start_sync()
        else:
            self._want = released + len(pending)
            self._linger = self.loop.call_later(seconds, self._start_sync)

    def when_durable(self: Any, txid: int, callback: Any, value: Any, arg: Any) -> None:
        self._pending.append((txid, callback, value, arg))
        linger = getattr(self, "_linger", None)
        if linger is not None and len(self._pending) >= self._want:
            linger.cancel()
            self._start_sync()
        elif not self._syncing:
            self._syncing = True
            self.loop.call_soon(self._start_sync)

    start_sync = AsyncCommitter._start_sync

    def start(self: Any) -> None:
        self._linger = None
        if not self._pending:
            self._syncing = False
            return
        start_sync(self)

    AsyncCommitter._synced = synced                # type: ignore[method-assign]
    AsyncCommitter.when_durable = when_durable     # type: ignore[method-assign]
    AsyncCommitter._start_sync = start             # type: ignore[method-assign]


def overlapping() -> None:
    from nnlite.durability import durable
    from nnlite.namenode.errors import SharedJournalError
    from nnlite.namenode.journal.journal import Journal

    pool = ThreadPoolExecutor(1, thread_name_prefix="nnlite-local-sync")

    def local(self: Any, data: bytearray) -> None:
        for d, writer in list(self.streams.items()):
            try:
                writer.write(data)
                durable.sync_fd(writer.fd, writer.path)
            except OSError as exc:
                self.drop(d, f"cannot write {writer.path}: {exc}")

    def write_and_sync(self: Any, data: bytearray, end: int) -> None:
        start = time.perf_counter()
        if data and self.shared is not None:
            written = pool.submit(local, self, data)
            try:
                self.shared.append(bytes(data), self.synced_txid + 1, end)
            except Exception as exc:
                written.result()
                failure = exc if isinstance(exc, SharedJournalError) else SharedJournalError(
                    str(exc))
                self.shared_failure = failure
                if self.on_shared_failure is not None:
                    self.on_shared_failure()
                raise failure from exc
            written.result()
        else:
            local(self, data)
        m = self.metrics
        m.syncs += 1
        m.sync_seconds += time.perf_counter() - start
        m.batched += end - self.synced_txid
        m.bytes += len(data)
        if self.streams:
            self.synced_txid = end
        else:
            self.failure = self.failure or "every name directory failed"

    Journal._write_and_sync = write_and_sync       # type: ignore[method-assign]


def install() -> None:
    chosen = experiments()
    if "switch" in chosen:
        sys.setswitchinterval(float(chosen["switch"]))
    if "linger" in chosen:
        lingering(float(chosen["linger"]))
    if "overlap" in chosen:
        overlapping()
    if chosen:
        print(f"ha_experiments: {chosen}", file=sys.stderr, flush=True)


install()
