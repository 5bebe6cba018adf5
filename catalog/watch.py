"""``nnlite catalog watch``: a daemon that keeps nnlite's copy of a local Structured Streaming
checkpoint directory restorable, for jobs whose ``checkpointLocation`` must stay on local disk.

What one pass does, and the ordering and deletion rules it keeps, are in ``catalog/mirror.py``.
This module decides *when* passes run and what happens around them:

* A local directory that does not exist yet is waited for (said once on stderr): the natural
  order is to start the watcher, then the query that creates it. Its nearest existing parent
  is watched (not recursively; the watch moves down as directories appear) and looked at
  again every ``interval``; a parent that is not a directory, or that cannot be listed,
  fails at once (``LocalDirError``), since the directory could never be seen to appear.
* Then a watchdog ``Observer`` (recursive) is scheduled on the local directory *before*
  the first pass, so a file that appears while that pass copies still wakes another pass.
  The first pass reconciles with the remote listing: files already mirrored (same length,
  modificationTime equal to the local mtime in ms) are not uploaded again.
* Events wake a pass after a short quiet time (a Spark batch writes several files in a burst).
  Every ``interval`` seconds a pass also runs with a fresh remote listing: events can be lost,
  and the remote side may have changed under us.
* A failed pass (namenode down, a transfer cut off, a local read error) is logged with its
  cause and retried with exponential backoff (0.5 s doubling to 30 s). Nothing half-written is
  ever visible under a final remote name; temps are cleaned by a later pass.
* SIGTERM/SIGINT (``run_watch`` installs the handlers) stop it between two files; the pass in
  progress is simply cut short, which is always safe.
* Progress: one log line per committed batch mirrored (logged by ``Mirror``), a summary of the
  initial reconciliation, and on a terminal a live count of files and bytes during it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from nnlite.catalog.errors import CatalogError
from nnlite.catalog.mirror import Mirror, PassResult, skipped
from nnlite.client.errors import ClientError
from nnlite.client.webhdfs import WebHdfsClient

log = logging.getLogger("nnlite.catalog.watch")

DEFAULT_INTERVAL = 10.0
QUIET = 0.2                 # s without events before a woken pass starts
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 30.0
RETRYABLE = (ClientError, OSError)


class WatchError(CatalogError):
    """``catalog watch`` cannot do its job (see the subclasses)."""

    JAVA_CLASS = "org.nnlite.catalog.WatchException"


class LocalDirError(WatchError):
    """LOCAL_DIR is not a directory, or cannot appear where it is named (a parent is a
    file, or cannot be listed); for ``--once``, it does not exist."""


class IncompleteMirrorError(WatchError):
    """``--once`` ended with the remote copy not equal to the local directory."""


class _Wake(FileSystemEventHandler):
    """Any event on a file we mirror sets ``dirty``; checksum and temp files do not (unless
    ``every`` name counts: waiting for the directory to appear)."""

    def __init__(self, dirty: threading.Event, every: bool = False):
        self.dirty = dirty
        self.every = every

    def on_any_event(self, event) -> None:
        for path in (event.src_path, getattr(event, "dest_path", "") or ""):
            name = os.path.basename(os.fsdecode(path))
            if name and (self.every or not skipped(name)):
                self.dirty.set()
                return


def nearest_existing(local_dir: str) -> str:
    """``local_dir`` when it is a directory, else its nearest existing ancestor, which it can
    appear under; ``LocalDirError`` when it exists but is no directory, or the ancestor is
    not a directory or cannot be listed."""
    current = local_dir
    while not os.path.lexists(current):
        current = os.path.dirname(current)
    if not os.path.isdir(current):
        raise LocalDirError(
            f"{local_dir} is not a directory: give the local checkpointLocation of the query "
            f"to mirror" if current == local_dir else
            f"{current} is not a directory, so {local_dir} can never appear under it")
    try:
        os.listdir(current)
    except OSError as exc:
        raise LocalDirError(
            f"cannot list {local_dir} ({exc.strerror}): its files cannot be mirrored"
            if current == local_dir else
            f"cannot list {current} ({exc.strerror}), so {local_dir} cannot be seen appearing "
            f"in it") from exc
    return current


class ReconcileProgress:
    """A live ``files/bytes`` count on a terminal (nothing elsewhere)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.live = bool(getattr(stream, "isatty", lambda: False)())
        self.total_files = self.total_bytes = self.files = self.bytes = 0
        self._shown = 0.0

    def plan(self, files: int, size: int) -> None:
        self.total_files, self.total_bytes = files, size

    def done(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        now = time.monotonic()
        if self.live and (now - self._shown > 0.1 or self.files == self.total_files):
            self._shown = now
            self.stream.write(f"\rinitial reconciliation: {self.files}/{self.total_files} "
                              f"files, {self.bytes}/{self.total_bytes} bytes")
            self.stream.flush()

    def end(self) -> None:
        if self.live and self.files:
            self.stream.write("\n")
            self.stream.flush()


class Watcher:
    """Mirrors ``local_dir`` into ``into`` on the namenode behind ``client`` until stopped.

    ``on_change(action, rel, size)`` is called after every remote change (tests hook ordering
    checks there); ``progress`` makes the initial reconciliation's display (stderr by
    default). ``stop()`` may be called from any thread or a signal handler.
    """

    def __init__(self, client: WebHdfsClient, local_dir: str, into: str, *,
                 interval: float = DEFAULT_INTERVAL,
                 on_change: Callable[[str, str, int], None] | None = None,
                 progress: Callable[[], ReconcileProgress] = ReconcileProgress):
        self.local_dir = os.path.abspath(local_dir)
        nearest_existing(self.local_dir)
        self.interval = interval
        self.dirty = threading.Event()
        self.stopping = threading.Event()
        self.progress: ReconcileProgress | None = None
        self._new_progress = progress
        self._user_hook = on_change or (lambda action, rel, size: None)
        self._warned: str | None = None
        self.mirror = Mirror(client, self.local_dir, into, on_change=self._changed,
                             on_plan=self._planned, should_stop=self.stopping.is_set)

    def stop(self) -> None:
        self.stopping.set()
        self.dirty.set()

    def _changed(self, action: str, rel: str, size: int) -> None:
        if self.progress is not None and action == "publish":
            self.progress.done(size)
        self._user_hook(action, rel, size)

    def _planned(self, files: int, size: int) -> None:
        if self.progress is not None:
            self.progress.plan(files, size)

    # ------------------------------------------------------------------ one pass

    def once(self) -> PassResult:
        """One reconciliation pass; raises ``IncompleteMirrorError`` unless the remote copy
        then equals the local directory."""
        if nearest_existing(self.local_dir) != self.local_dir:
            raise LocalDirError(f"{self.local_dir} does not exist: --once mirrors a directory "
                                f"that is there (without --once, watch waits for it)")
        result = self._initial()
        if not result.complete:
            raise IncompleteMirrorError(_incomplete(result))
        return result

    def _initial(self) -> PassResult:
        self.progress = self._new_progress()
        try:
            result = self.mirror.sync()
        finally:
            self.progress.end()
            self.progress = None
        log.info("reconciled %s into %s%s: uploaded %d files (%d bytes), %d already mirrored, "
                 "%d deleted; the remote copy's last commit is %s", self.local_dir,
                 self.mirror.client.url, self.mirror.remote_root, result.uploaded,
                 result.uploaded_bytes, result.already, result.deleted,
                 _batch(result.last_commit))
        return result

    # ------------------------------------------------------------------ the daemon

    def run(self) -> None:
        """Wait for the local directory if need be, then watch and mirror until ``stop()``."""
        observer = Observer()
        observer.start()
        try:
            if self._appeared(observer):
                observer.schedule(_Wake(self.dirty), self.local_dir, recursive=True)
                self._loop()
        finally:
            observer.stop()
            observer.join(timeout=5)
        log.info("stopped watching %s", self.local_dir)

    def _appeared(self, observer) -> bool:
        """Wait until the local directory exists (True) or ``stop()`` (False), watching its
        nearest existing parent and looking again every ``interval``."""
        watched = watch = None
        while not self.stopping.is_set():
            parent = nearest_existing(self.local_dir)
            if parent == self.local_dir:
                if watch is not None:
                    observer.unschedule(watch)
                return True
            if parent != watched:
                if watch is not None:
                    observer.unschedule(watch)
                else:
                    log.warning("%s does not exist yet: waiting for it to appear (watching "
                                "%s)", self.local_dir, parent)
                watch = observer.schedule(_Wake(self.dirty, every=True), parent)
                watched = parent
                continue            # it may have appeared before the watch was in place
            self.dirty.wait(self.interval)
            self.dirty.clear()
        return False

    def _loop(self) -> None:
        backoff, first = BACKOFF_FIRST, True
        next_rescan = time.monotonic() + self.interval
        while not self.stopping.is_set():
            if not first:
                woke = self.dirty.wait(max(next_rescan - time.monotonic(), 0))
                if self.stopping.is_set():
                    return
                if not woke or time.monotonic() >= next_rescan:
                    self.mirror.forget_remote()         # the safety net: list both sides
                    next_rescan = time.monotonic() + self.interval
                else:
                    self.stopping.wait(QUIET)           # let a burst of writes finish
                self.dirty.clear()
            try:
                self._report(self._initial() if first else self.mirror.sync())
            except RETRYABLE as exc:
                log.warning("mirroring %s failed: %s; retrying in %.1f s", self.local_dir,
                            exc, backoff)
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                self.dirty.set()
                continue
            first, backoff = False, BACKOFF_FIRST

    def _report(self, result: PassResult) -> None:
        if result.skipped:
            self.dirty.set()            # files changed under us: look again soon
        why = result.deferred[0] if result.deferred else None
        if why and why != self._warned:
            log.warning("%d remote files not deleted yet, e.g. %s", len(result.deferred), why)
        self._warned = why
        if result.uploaded or result.deleted:
            log.debug("pass: uploaded %d files (%d bytes), deleted %d", result.uploaded,
                      result.uploaded_bytes, result.deleted)


def run_watch(client: WebHdfsClient, local_dir: str, into: str, *,
              interval: float = DEFAULT_INTERVAL, once: bool = False) -> PassResult | None:
    """The CLI's entry: ``--once`` runs one pass; otherwise the daemon runs until SIGTERM or
    SIGINT (handled here, so the pass in progress stops between two files)."""
    watcher = Watcher(client, local_dir, into, interval=interval)
    if once:
        return watcher.once()
    previous = {sig: signal.signal(sig, lambda *_: watcher.stop())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        watcher.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return None


def _incomplete(result: PassResult) -> str:
    if result.deferred:
        return (f"the remote copy still holds {len(result.deferred)} files the local "
                f"directory no longer has, e.g. {result.deferred[0]}")
    return (f"{result.skipped} files changed or vanished while they were copied (is the query "
            "still running? run again, or run without --once)")


def _batch(n: int | None) -> str:
    return "none" if n is None else f"batch {n}"
