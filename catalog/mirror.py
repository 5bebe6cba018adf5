"""One reconciliation pass of a local Structured Streaming checkpoint directory into nnlite.

``Mirror.sync()`` compares the local tree with the remote copy and makes the remote one equal,
in commit order. It is what ``nnlite catalog watch`` runs on every change and every interval
(``catalog/watch.py`` owns the daemon: events, retries, signals, progress).

Invariants (each pass keeps them at every instant, even when killed between two requests):

* **Restorable at its latest commit.** A remote ``commits/N`` is published only after
  ``metadata``, ``offsets/N``, every source-log entry up to ``N`` and every state file of
  version ``N + 1`` (batch ``N`` commits state version ``N + 1``) that the same local scan saw
  are published. Files are published in ``order_key`` order and a pass stops at its first
  failure, so nothing after a missing prerequisite is published; ``Mirror._ready`` applies the
  rule again before each commit (a prerequisite that vanished or changed while we copied makes
  the commit wait for the next pass).
* **The scan cannot see a commit without its prerequisites.** ``commits/`` is listed *before*
  the rest of the tree: Spark writes a batch's offsets and state files before its commit file,
  so any commit the scan lists has its prerequisites on disk by the time the rest is listed.
* **Atomic files.** Each file is uploaded to ``.<name>.<random>.mirror.tmp`` in its final
  directory, given the local mtime (SETTIMES), then renamed over the final name. A remote final
  name therefore always holds a complete file; a temp left by a crash is deleted by a later pass.
* **Already mirrored** means: the remote file has the local length and its modificationTime
  equals the local mtime in ms. A restart therefore recopies nothing already there.
* **Deletions wait.** A remote file that is gone locally (Spark's own retention) is deleted only
  after every upload of the pass succeeded *and* the local last commit (listed again) equals the
  remote last commit: Spark removes only what its last commit no longer needs, so the remote
  last commit does not need it either. A local directory that was emptied or wiped (no commit)
  never empties the remote copy.

Skipped locally: dot-files (Spark's ``.<name>.<uuid>.tmp`` and the local file system's
``.<name>.crc``) and anything ending in ``.crc`` or ``.tmp``, but a state file's checksum
sidecar ``<file>.crc`` (ChecksumCheckpointFileManager, checkpoint format version 2): it is
mirrored with its file, a prerequisite of the commit as its file is (a restore reads the two
together).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from nnlite.catalog.layout import CHECKSUM_SUFFIX, source_batch, state_file
from nnlite.client.errors import InternalError, PathNotFoundError
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.durability import faults

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".mirror.tmp"
COMMITS = "commits"
# Kinds, in the order a batch's files are published: a batch's commit comes last.
SUPPORT, OFFSETS, SOURCES, STATE, COMMIT = range(5)


@dataclass(frozen=True, slots=True)
class LocalFile:
    """A local file as scanned: ``rel`` is its '/'-separated path under the local root."""
    rel: str
    size: int
    mtime_ms: int
    kind: int
    rank: int            # the batch it belongs to; -1: needed before any commit

    @property
    def order_key(self) -> tuple:
        return (self.rank, self.kind, self.rel)


@dataclass(frozen=True, slots=True)
class RemoteFile:
    length: int
    mtime_ms: int


@dataclass
class PassResult:
    """What one ``sync()`` did. ``complete``: the remote copy equals the local scan."""
    uploaded: int = 0
    uploaded_bytes: int = 0
    already: int = 0
    skipped: int = 0        # vanished or changed while we copied, and commits waiting on them
    deleted: int = 0
    deferred: list[str] = field(default_factory=list)   # remote-only files kept, and why
    last_commit: int | None = None                       # the remote copy's last commit
    complete: bool = False


def classify(rel: str) -> tuple[int, int]:
    """(kind, rank) of a checkpoint file from its relative path (see module docstring)."""
    parts = rel.split("/")
    name = parts[-1]
    if len(parts) == 2 and name.isdigit() and parts[0] in (COMMITS, "offsets"):
        return (COMMIT if parts[0] == COMMITS else OFFSETS), int(name)
    if parts[0] == "sources" and len(parts) == 3 and (batch := source_batch(name)) is not None:
        return SOURCES, batch
    if parts[0] == "state" and (version := state_file(name) or sidecar_of(name)) is not None:
        return STATE, version[0] - 1
    return SUPPORT, -1      # metadata, state/<op>/_metadata, RocksDB SSTs, anything else


def skipped(name: str) -> bool:
    """Dot-files, temps, and ``.crc`` files but a state file's sidecar (``sidecar_of``)."""
    if name.startswith(".") or name.endswith(".tmp"):
        return True
    return name.endswith(CHECKSUM_SUFFIX) and sidecar_of(name) is None


def sidecar_of(name: str) -> tuple[int, str] | None:
    """``(version, kind)`` of the state file whose ``.crc`` sidecar ``name`` is
    (ChecksumCheckpointFileManager's ``<file>.crc``, beside each state file with checkpoint
    format version 2), else None."""
    return state_file(name[:-len(CHECKSUM_SUFFIX)]) if name.endswith(CHECKSUM_SUFFIX) \
        else None


def scan_local(root: str) -> tuple[dict[str, LocalFile], set[str]]:
    """Files and directories under ``root`` (relative paths); ``commits/`` listed first."""
    files: dict[str, LocalFile] = {}
    dirs: set[str] = set()
    _walk(root, COMMITS, files, dirs)
    for entry in _entries(root):
        if entry.name != COMMITS:
            _visit(root, entry, entry.name, files, dirs)
    return files, dirs


def _entries(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []       # removed while we scan: it is simply not there


def _walk(root: str, rel: str, files: dict, dirs: set) -> None:
    path = os.path.join(root, rel)
    if not os.path.isdir(path):
        return
    dirs.add(rel)
    for entry in _entries(path):
        _visit(root, entry, f"{rel}/{entry.name}", files, dirs)


def _visit(root: str, entry: os.DirEntry, rel: str, files: dict, dirs: set) -> None:
    if skipped(entry.name):
        return
    try:
        if entry.is_dir(follow_symlinks=False):
            return _walk(root, rel, files, dirs)
        st = entry.stat(follow_symlinks=False)
    except FileNotFoundError:
        return
    kind, rank = classify(rel)
    files[rel] = LocalFile(rel, st.st_size, st.st_mtime_ns // 1_000_000, kind, rank)


def scan_remote(client: WebHdfsClient, root: str) -> tuple[dict[str, RemoteFile], set[str]]:
    """Files and directories under the remote ``root`` (relative paths); empty if missing."""
    files: dict[str, RemoteFile] = {}
    dirs: set[str] = set()
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            listing = client.list(_join(root, rel))
        except PathNotFoundError:
            continue
        for st in listing:
            child = f"{rel}/{st['pathSuffix']}" if rel else st["pathSuffix"]
            if st["type"] == "DIRECTORY":
                dirs.add(child)
                pending.append(child)
            else:
                files[child] = RemoteFile(st["length"], st["modificationTime"])
    return files, dirs


def _join(root: str, rel: str) -> str:
    return f"{root.rstrip('/')}/{rel}" if rel else root


def last_commit(names) -> int | None:
    ids = [int(n.split("/")[1]) for n in names
           if n.startswith(COMMITS + "/") and n.split("/")[1].isdigit()]
    return max(ids, default=None)


class Mirror:
    """Keeps ``remote_root`` (in nnlite) equal to ``local_root``, one ``sync()`` at a time.

    ``on_change(action, rel, size)`` is called after each remote change ("publish" or
    "delete"): the daemon's progress display and the tests' ordering checks hook in there;
    ``on_plan(files, bytes)`` is told what a pass is about to upload. Fault points
    (``NNLITE_FAULTS``): ``watch.before-rename`` (a temp uploaded, not yet renamed) and
    ``watch.after-publish``. ``should_stop()`` is asked between files.
    """

    def __init__(self, client: WebHdfsClient, local_root: str, remote_root: str, *,
                 on_change: Callable[[str, str, int], None] | None = None,
                 on_plan: Callable[[int, int], None] | None = None,
                 should_stop: Callable[[], bool] = lambda: False):
        self.client = client
        self.local_root = local_root
        self.remote_root = "/" + remote_root.strip("/")
        self.on_change = on_change or (lambda action, rel, size: None)
        self.on_plan = on_plan or (lambda files, size: None)
        self.should_stop = should_stop
        self.remote: dict[str, RemoteFile] | None = None     # cached view; None: list again
        self.remote_dirs: set[str] = set()
        self._batch_files = self._batch_bytes = 0

    def forget_remote(self) -> None:
        """Re-list the remote copy on the next pass (after an error, or as a safety net)."""
        self.remote = None

    def plan(self) -> tuple[dict[str, LocalFile], set[str], list[LocalFile]]:
        """(local files, local dirs, the files to upload in publish order)."""
        if self.remote is None:
            self.client.mkdirs(self.remote_root)
            self.remote, self.remote_dirs = scan_remote(self.client, self.remote_root)
        files, dirs = scan_local(self.local_root)
        todo = [f for f in files.values() if not self.mirrored(f)]
        return files, dirs, sorted(todo, key=lambda f: f.order_key)

    def _listed(self) -> dict[str, RemoteFile]:
        """The remote copy's files as this pass knows them (``plan`` lists them first)."""
        if self.remote is None:
            raise InternalError(f"{self.remote_root}: the remote copy was not listed")
        return self.remote

    def mirrored(self, f: LocalFile) -> bool:
        r = self._listed().get(f.rel)
        return r is not None and r.length == f.size and r.mtime_ms == f.mtime_ms

    def sync(self) -> PassResult:
        """One pass: directories, uploads in commit order, then the deletions that are safe.
        A failure (namenode, network, local I/O) propagates after forgetting the remote view;
        what was published stays published and is not uploaded again."""
        try:
            return self._sync()
        except BaseException:
            self.remote = None
            raise

    def _sync(self) -> PassResult:
        files, dirs, todo = self.plan()
        result = PassResult(already=len(files) - len(todo))
        self.on_plan(len(todo), sum(f.size for f in todo))
        self._make_dirs(dirs)
        pending = Counter(f.rank for f in todo if f.kind != COMMIT)
        for f in todo:
            if self.should_stop():
                return self._finish(result, complete=False)
            if (f.kind == COMMIT and not self._ready(f, pending)) or not self._publish(f):
                result.skipped += 1
                continue
            result.uploaded += 1
            result.uploaded_bytes += f.size
            if f.kind != COMMIT:
                pending[f.rank] -= 1
        self._delete_stale(files, dirs, result)
        return self._finish(result, complete=not (result.deferred or result.skipped))

    def _finish(self, result: PassResult, *, complete: bool) -> PassResult:
        result.last_commit = last_commit(self._listed())
        result.complete = complete
        return result

    @staticmethod
    def _ready(commit: LocalFile, pending: Counter) -> bool:
        """The ordering rule, stated where it is applied: every file of the scan with a rank
        up to this commit's batch is published. Publish order makes that so, except when a
        prerequisite vanished or changed under us (``_publish`` returned False): then this
        commit waits for the next pass, whose fresh scan decides again."""
        waiting = [rank for rank, n in pending.items() if n > 0 and rank <= commit.rank]
        if waiting:
            log.debug("%s waits: files of batch %d were not published", commit.rel,
                      min(waiting))
        return not waiting

    def _make_dirs(self, dirs: set[str]) -> None:
        for rel in sorted(d for d in dirs if d not in self.remote_dirs):
            self.client.mkdirs(_join(self.remote_root, rel))
            self.remote_dirs.add(rel)

    def _publish(self, f: LocalFile) -> bool:
        """Upload to a temp name, set its mtime, rename it over the final name. False when
        the local file vanished or changed meanwhile (a later pass sees it again)."""
        final = _join(self.remote_root, f.rel)
        head, _, name = final.rpartition("/")
        temp = f"{head}/.{name}.{uuid.uuid4().hex[:12]}{TEMP_SUFFIX}"
        try:
            with open(os.path.join(self.local_root, f.rel), "rb") as body:
                st = os.fstat(body.fileno())
                if (st.st_size, st.st_mtime_ns // 1_000_000) != (f.size, f.mtime_ms):
                    return False        # replaced since the scan: the next pass has it
                self.client.create(temp, body, overwrite=True)
        except FileNotFoundError:
            return False                # Spark deleted it: no longer anyone's prerequisite
        self.client.set_times(temp, mtime=f.mtime_ms)
        faults.hit("watch.before-rename")
        self.client.rename_options(temp, final, overwrite=True)
        self._listed()[f.rel] = RemoteFile(f.size, f.mtime_ms)
        faults.hit("watch.after-publish")
        self._count_batch(f)
        self.on_change("publish", f.rel, f.size)
        return True

    def _count_batch(self, f: LocalFile) -> None:
        self._batch_files += 1
        self._batch_bytes += f.size
        if f.kind == COMMIT:
            log.info("batch %d mirrored: %d files, %d bytes", f.rank, self._batch_files,
                     self._batch_bytes)
            self._batch_files = self._batch_bytes = 0

    # ------------------------------------------------------------------ deletions

    def _delete_stale(self, files: dict, dirs: set, result: PassResult) -> None:
        """Remote temps always go; remote files and dirs gone locally only when safe."""
        remote = self._listed()
        temps = [rel for rel in remote if rel.rsplit("/", 1)[-1].endswith(TEMP_SUFFIX)]
        for rel in temps:
            self._delete(rel)
        stale = sorted(rel for rel in remote if rel not in files)
        stale_dirs = sorted((d for d in self.remote_dirs if d not in dirs), reverse=True)
        if not stale and not stale_dirs:
            return
        local_last = last_commit(f"{COMMITS}/{n}" for n in _names(self.local_root, COMMITS))
        remote_last = last_commit(remote)
        if result.skipped or (remote_last is not None and local_last != remote_last):
            why = (f"the local last commit ({_batch(local_last)}) is not yet the remote "
                   f"copy's ({_batch(remote_last)})" if not result.skipped
                   else "files of this pass were skipped")
            result.deferred = [f"{rel} (kept: {why})" for rel in stale + stale_dirs]
            return
        for rel in stale:
            self._delete(rel)
            result.deleted += 1
        for rel in stale_dirs:
            self.client.delete(_join(self.remote_root, rel), recursive=False)
            self.remote_dirs.discard(rel)

    def _delete(self, rel: str) -> None:
        self.client.delete(_join(self.remote_root, rel))
        self._listed().pop(rel, None)
        self.on_change("delete", rel, 0)


def _names(root: str, rel: str) -> list[str]:
    return [e.name for e in _entries(os.path.join(root, rel))]


def _batch(n: int | None) -> str:
    return "none" if n is None else f"batch {n}"
