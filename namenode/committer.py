"""Group commit for an asyncio event loop: ops are applied on the loop, synced in a thread.

Callers on the loop ``await committer.mutate(method, *args)``. The request is applied and
logged at once (``FSNamesystem.apply_and_log``); its future joins the pending list. A caller
that has applied and logged by itself asks ``durable(txid, value)`` for that future: the HTTP
layer answers a WebHDFS write when it resolves, with no task or coroutine per request. One sync
runs at a time in a worker thread (``Journal.sync`` up to the newest pending txid); when it
returns, every future up to that txid is resolved in one pass, and if more ops arrived
meanwhile the next sync starts immediately. A batch therefore holds every op that arrived
during the previous fsync, without a thread per caller.

With no sync running, the first op does not start one at once: it schedules the start with
``call_soon``, so it runs after every callback already due in this turn of the loop. The
callers woken by the previous batch each log their next op first and the sync takes them
all; started at once it would take one op and leave the others waiting a whole fsync.
"""

from __future__ import annotations

import asyncio
from collections import deque
from concurrent.futures import ThreadPoolExecutor


class AsyncCommitter:
    def __init__(self, fs, loop: asyncio.AbstractEventLoop | None = None):
        self.fs = fs
        self.loop = loop or asyncio.get_running_loop()
        self._pending: deque[tuple[int, asyncio.Future, object]] = deque()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="nnlite-sync")
        self._syncing = False     # a sync is running or scheduled to start

    async def mutate(self, method, *args):
        result, txid = self.fs.apply_and_log(method, *args)
        if txid:
            await self.durable(txid)
        return result

    def durable(self, txid: int, value=None) -> asyncio.Future:
        """A future that resolves to ``value`` once ``txid`` is durable, or fails with the
        sync's error. ``txid`` was logged on this loop after every pending one (the pending
        list stays in txid order: nothing awaits between a log and this call)."""
        future = self.loop.create_future()
        self._pending.append((txid, future, value))
        if not self._syncing:
            self._syncing = True
            self.loop.call_soon(self._start_sync)
        return future

    def _start_sync(self) -> None:
        self._syncing = True
        target = self._pending[-1][0]
        task = self.loop.run_in_executor(self._executor, self.fs.journal.sync, target)
        task.add_done_callback(lambda t: self._synced(t, target))

    def _synced(self, task: asyncio.Future, target: int) -> None:
        self._syncing = False
        error = task.exception()
        pending = self._pending
        while pending and pending[0][0] <= target:
            _, future, value = pending.popleft()
            if not future.done():
                future.set_exception(error) if error else future.set_result(value)
        if pending:
            self._start_sync()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
