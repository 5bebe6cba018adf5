"""Group commit for an asyncio event loop: ops are applied on the loop, synced in a thread.

A request is applied and logged at once by one of ``FSNamesystem``'s writes, in txid order on the
loop, which returns it ``Logged``. Its waiter then joins the pending list, which stays in txid order
because nothing awaits between a log and the call that adds the waiter. One sync runs at a time, in
the committer's own thread (``Journal.sync`` up to the newest pending txid). When it returns, every
waiter up to that txid is released in one pass on the loop, and if more ops arrived meanwhile the
next sync starts at once. A batch therefore holds every op that arrived during the previous fsync.

Two ways to wait:

- ``durable(txid, value)`` returns a ``Durable``. The HTTP layer answers a WebHDFS write with
  ``then(callback, arg)``: the callback runs straight from the release pass, so a write costs
  no future, task or callback handle.
- ``await committer.wait(logged)`` (or awaiting a ``Durable``) is for coroutines; it costs one
  future.

The sync thread is a plain thread fed by a queue, not an executor: it hands each result back
with one ``call_soon_threadsafe`` and no future of its own.

With no sync running, the first op does not start one at once: it schedules the start with
``call_soon``, so it runs after every callback already due in this turn of the loop. The
callers woken by the previous batch each log their next op first and the sync takes them
all; started at once it would take one op and leave the others waiting a whole fsync.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Generator
from queue import SimpleQueue
from typing import Any, TypeVar

from nnlite.namenode.journal.journal import Journal, Logged

log = logging.getLogger(__name__)

T = TypeVar("T")
# What a waiter is called with once its txid is durable: (value, error, arg), error None
# after the sync, else the sync's exception.
Release = Callable[[Any, Exception | None, Any], object]


class Durable:
    """A write's answer, released once its ops are durable: ``then(callback, arg)`` calls
    ``callback(value, error, arg)`` on the loop exactly once, with ``error`` None after the
    sync, or the sync's exception. Cheaper than a future: no callback handle per op."""

    __slots__ = ("committer", "txid", "value")

    def __init__(self, committer: AsyncCommitter, txid: int, value: Any) -> None:
        self.committer = committer
        self.txid = txid
        self.value = value

    def then(self, callback: Release, arg: Any = None) -> None:
        self.committer.when_durable(self.txid, callback, self.value, arg)

    def __await__(self) -> Generator[Any, None, Any]:
        future = self.committer.loop.create_future()
        self.then(_settle, future)
        return future.__await__()


def _settle(value: Any, error: Exception | None, future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(error) if error else future.set_result(value)


class AsyncCommitter:
    """Group commit of one journal on one event loop (``FSNamesystem.async_committer``)."""

    def __init__(self, journal: Journal,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.journal = journal
        self.loop = loop or asyncio.get_running_loop()
        self._pending: deque[tuple[int, Release, Any, Any]] = deque()
        self._syncing = False     # a sync is running or scheduled to start
        self.syncs_started = 0    # each one covers at least one op nothing synced before
        self._targets: SimpleQueue[int | None] = SimpleQueue()
        self._thread = threading.Thread(target=self._sync_loop, name="nnlite-sync", daemon=True)
        self._thread.start()
        # Called once on the loop when a sync fails and no name directory is left: the
        # daemon stops serving there (fail-stop, namenode/daemon.py).
        self.on_journal_failure: Callable[[Exception], None] | None = None
        # answers held behind ops the shared journal refused, redone once they are dropped
        self._after_reload: list[Callable[[], object]] = []

    def after_reload(self, generation: int, then: Callable[[], object]) -> None:
        """On the loop: call ``then`` once the journal has dropped the ops it held at
        ``generation`` (``FSNamesystem.reload`` after a refused batch), at once if it has."""
        if self.journal.generation != generation:
            then()
        else:
            self._after_reload.append(then)

    def reloaded(self) -> None:
        """From any thread, once the namesystem has reloaded: run what waited for it."""
        self.loop.call_soon_threadsafe(self._run_after_reload)

    def _run_after_reload(self) -> None:
        waiting, self._after_reload = self._after_reload, []
        for then in waiting:
            then()

    async def wait(self, logged: Logged[T]) -> T:
        """``logged``'s value once its txid is durable (at once when it logged nothing)."""
        if logged.txid:
            await Durable(self, logged.txid, None)
        return logged.value

    def durable(self, txid: int, value: Any = None) -> Durable:
        """``value``, released once ``txid`` is durable (``Durable.then``). ``txid`` was logged
        on this loop after every pending one (the pending list stays in txid order: nothing
        awaits between a log and this call)."""
        return Durable(self, txid, value)

    def when_durable(self, txid: int, callback: Release, value: Any, arg: Any) -> None:
        """Call ``callback(value, error, arg)`` on the loop once ``txid`` is durable."""
        self._pending.append((txid, callback, value, arg))
        if not self._syncing:
            self._syncing = True
            self.loop.call_soon(self._start_sync)

    def _start_sync(self) -> None:
        if not self._pending:       # fail_all released them before this start ran
            self._syncing = False
            return
        self._syncing = True
        self.syncs_started += 1
        self._targets.put(self._pending[-1][0])

    def _sync_loop(self) -> None:
        """The sync thread: one ``Journal.sync`` per target, the result handed to the loop."""
        while (target := self._targets.get()) is not None:
            try:
                self.journal.sync(target)
                error = None
            except Exception as exc:    # handed to every waiter of this batch
                error = exc
            try:
                self.loop.call_soon_threadsafe(self._synced, target, error)
            except RuntimeError:        # the loop is closed: nobody is waiting any more
                return

    def _synced(self, target: int, error: Exception | None) -> None:
        # Still "syncing" while the batch is released: an op that a callback logs (the next
        # pipelined request of a connection) joins the pending list and the sync started
        # below, rather than scheduling a second start of its own.
        if error is not None and not self.journal.writable and self.on_journal_failure:
            failed, self.on_journal_failure = self.on_journal_failure, None
            failed(error)
        pending = self._pending
        while pending and pending[0][0] <= target:
            _, callback, value, arg = pending.popleft()
            try:
                callback(value, error, arg)
            except Exception:   # one waiter's failure must not strand the rest of the batch
                log.exception("releasing a durable op failed")
        if pending:
            self._start_sync()
        else:
            self._syncing = False

    def fail_all(self, error: Exception) -> None:
        """From another thread: release every pending waiter with ``error`` and return once
        done (an HA namenode that drops its unsynced ops: none of them may be acknowledged
        by a later sync that reaches their txids)."""
        done = threading.Event()

        def release() -> None:
            try:
                pending, self._pending = self._pending, deque()
                for _, callback, value, arg in pending:
                    try:
                        callback(value, error, arg)
                    except Exception:
                        log.exception("releasing a dropped op failed")
            finally:
                done.set()
        try:
            self.loop.call_soon_threadsafe(release)
        except RuntimeError:        # the loop is closed: nobody is waiting any more
            return
        done.wait()

    def close(self) -> None:
        self._targets.put(None)
        self._thread.join()
