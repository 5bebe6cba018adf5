"""Flink checkpoints and savepoints kept in nnlite: which restore, and what each one needs.

Flink's file-system checkpoint storage (``FsCheckpointStorageAccess``) lays a job out as::

    <checkpoint dir>/<job id>/chk-<n>/_metadata    checkpoint n, complete once its metadata is
                                                   written (``CheckpointCoordinator`` writes it
                                                   last, after every task acknowledged)
    <checkpoint dir>/<job id>/chk-<n>/<uuid>       state files exclusive to checkpoint n
    <checkpoint dir>/<job id>/shared/<uuid>        state shared by several checkpoints
                                                   (RocksDB incremental checkpoints)
    <checkpoint dir>/<job id>/taskowned/<uuid>     state the tasks own (never the coordinator)
    <savepoint dir>/savepoint-<job id[:6]>-<12 hex>/_metadata and its files

Rules (each is what Flink's restore does, ``Checkpoints.loadAndValidateCheckpoint``):

* A checkpoint or savepoint restores when its ``_metadata`` parses (a metadata version the
  installed Flink writes: ``formats/flink_metadata.py``) and every file it references exists
  with the size recorded in it. State small enough to sit inline in ``_metadata``
  (``ByteStreamStateHandle``) needs no file, although it carries a file-like name.
* ``latest`` is the newest checkpoint that restores; Flink takes it as
  ``execution.state-recovery.path`` (or ``flink run -s``). A job that was restored runs under
  a new job id, so ``latest`` of a checkpoint directory looks at every job id in it.
* Retention keeps the newest ``keep`` complete checkpoints and the pinned ones. It removes the
  other ``chk-<n>`` directories, and a ``shared/`` file only when no kept checkpoint references
  it and it is older than the newest kept checkpoint's metadata (a newer one may belong to a
  checkpoint still being taken, which no metadata names yet).

``scan`` captures a job's structure from inodes under the namesystem lock (plain values, no
I/O); the rest is pure, given the contents of the ``_metadata`` files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nnlite.catalog import verdicts as rules
from nnlite.catalog.errors import CatalogError
from nnlite.catalog.layout import (
    FLINK,
    SAVEPOINT,
    FileRef,
    read_pins,
    ref,
    tree_usage,
    walk_files,
)
from nnlite.formats import flink_metadata
from nnlite.formats.errors import FormatError

METADATA = "_metadata"
_CHK = re.compile(r"chk-(\d+)")


@dataclass
class Checkpoint:
    """One ``chk-<n>`` directory (or a savepoint directory, ``id`` from its metadata)."""
    id: int | None
    path: str
    metadata: FileRef | None = None
    files: dict[str, FileRef] = field(default_factory=dict)    # path -> file, this dir only
    newest: int = 0
    writing: bool = False


@dataclass
class Job:
    """A Flink job's checkpoint directory (``kind == FLINK``) or one savepoint (``SAVEPOINT``)."""
    path: str
    kind: str
    checkpoints: dict[int, Checkpoint] = field(default_factory=dict)
    savepoint: Checkpoint | None = None
    shared: dict[str, FileRef] = field(default_factory=dict)       # shared/ and taskowned/
    pins: frozenset[int] = frozenset()
    files: int = 0
    bytes: int = 0
    newest: int = 0
    writing: bool = False

    def complete(self) -> list[int]:
        return sorted(i for i, c in self.checkpoints.items() if c.metadata is not None)

    def every_file(self) -> dict[str, FileRef]:
        out = dict(self.shared)
        for chk in self.checkpoints.values():
            out.update(chk.files)
        if self.savepoint is not None:
            out.update(self.savepoint.files)
        return out


def scan(node, path: str, kind: str) -> Job:
    """The structure of the job (or savepoint) directory ``node`` at ``path``. Under the lock."""
    base = path.rstrip("/") or "/"
    files, total, newest, writing = tree_usage(node)
    job = Job(base, kind, pins=read_pins(node), files=files, bytes=total, newest=newest,
              writing=writing)
    if kind == SAVEPOINT:
        job.savepoint = _checkpoint(node, base, None)
        return job
    for name, child in node.children.items():
        where = f"{base}/{name}"
        match = _CHK.fullmatch(name)
        if match and child.is_dir:
            job.checkpoints[int(match.group(1))] = _checkpoint(child, where, int(match.group(1)))
        elif name in ("shared", "taskowned") and child.is_dir:
            _files(child, where, job.shared)
    return job


def _checkpoint(node, path: str, chk_id: int | None) -> Checkpoint:
    chk = Checkpoint(chk_id, path, newest=node.mtime)
    _files(node, path, chk.files)
    meta = node.children.get(METADATA)
    if meta is not None and not meta.is_dir and meta.client_name is None:
        chk.metadata = chk.files.pop(f"{path}/{METADATA}")
    for f in chk.files.values():
        chk.newest = max(chk.newest, f.mtime)
    chk.writing = any(c.client_name is not None for c in node.children.values()
                      if not c.is_dir)
    return chk


def _files(node, path: str, out: dict[str, FileRef]) -> None:
    out.update((where, ref(child, where)) for where, child in walk_files(node, path))


# ---------------------------------------------------------------------------- verdicts

@dataclass
class Verdict(rules.Verdict):
    """What one checkpoint's metadata says and whether everything it needs is there."""
    referenced: dict[str, int] = field(default_factory=dict)   # path -> recorded size
    inline_bytes: int = 0
    version: int | None = None


def verdict(job: Job, chk: Checkpoint, contents: bytes | Exception | None) -> Verdict:
    """``chk`` against the files of ``job``, given its ``_metadata`` bytes (or the error that
    reading them raised, or None when there is no metadata)."""
    if chk.metadata is None:
        return Verdict(chk.id, chk.path, False, [f"{chk.path}/{METADATA} is missing: the "
                                                  f"checkpoint never completed"],
                       complete=False)
    if isinstance(contents, Exception):
        return Verdict(chk.id, chk.path, False, [f"{chk.metadata.path} cannot be read: "
                                                  f"{contents}"])
    if contents is None:        # verdicts reads the metadata of every complete checkpoint
        raise CatalogError(f"{chk.metadata.path} was not read", path=chk.path)
    try:
        meta = flink_metadata.parse(contents)
    except FormatError as exc:
        return Verdict(chk.id, chk.path, False, [f"{chk.metadata.path}: {exc}"])
    present = job.every_file()
    referenced, problems = {}, []
    for handle in meta.files:
        where = flink_metadata.resolve(handle.path, chk.path)
        referenced[where] = handle.size
        found = present.get(where)
        if found is None:
            problems.append(f"{where} is missing (referenced by {chk.metadata.path})")
        elif handle.size is not None and found.length != handle.size:
            problems.append(f"{where} holds {found.length} bytes, {handle.size} recorded in "
                            f"{chk.metadata.path}")
    if chk.id is not None and meta.checkpoint_id != chk.id:
        problems.append(f"{chk.metadata.path} is checkpoint {meta.checkpoint_id}, not {chk.id}")
    return Verdict(meta.checkpoint_id if chk.id is None else chk.id, chk.path, not problems,
                   problems, referenced=referenced, inline_bytes=meta.inline_bytes,
                   version=meta.version)


def summary(job: Job) -> dict:
    """One ``ls`` row from the structure alone (no metadata read): the newest complete
    checkpoint, which ``show``/``validate`` then check file by file."""
    ids = job.complete()
    if job.kind == SAVEPOINT:
        ids = [0] if job.savepoint is not None and job.savepoint.metadata is not None else []
    last = ids[-1] if ids else None
    health = "writing" if job.writing else ("ok" if ids else "empty")
    return {"path": job.path, "kind": job.kind, "lastBatch": last if job.kind == FLINK else None,
            "restorableBatch": last if job.kind == FLINK else None, "stateBytes": job.bytes,
            "bytes": job.bytes, "files": job.files, "lastUpdate": job.newest, "health": health,
            "pinned": sorted(job.pins)}


def verdicts(job: Job, contents: dict[str, bytes | Exception]) -> list[Verdict]:
    """Every checkpoint of ``job`` (or its savepoint), oldest first, judged."""
    return [verdict(job, chk, contents.get(chk.metadata.path) if chk.metadata else None)
            for chk in all_checkpoints(job)]


def metadata_files(job: Job) -> list[FileRef]:
    return [c.metadata for c in all_checkpoints(job) if c.metadata is not None]


def show(job: Job, judged: list[Verdict]) -> dict:
    rows = []
    chks = {c.path: c for c in all_checkpoints(job)}
    for v in judged:
        chk = chks[v.path]
        rows.append({"id": v.id, "path": v.path, "complete": chk.metadata is not None,
                     "restorable": v.restorable, "problems": v.problems,
                     "files": len(v.referenced), "bytes": sum(v.referenced.values()),
                     "inlineBytes": v.inline_bytes, "version": v.version,
                     "metadataBytes": chk.metadata.length if chk.metadata else None,
                     "lastUpdate": chk.newest, "pinned": v.id in job.pins})
    best = rules.newest_restorable(judged)
    return {"path": job.path, "kind": job.kind, "checkpoints": rows,
            "sharedFiles": len(job.shared), "sharedBytes": sum(f.length for f in
                                                               job.shared.values()),
            "latest": best.id if best else None}


def all_checkpoints(job: Job) -> list[Checkpoint]:
    return [job.savepoint] if job.savepoint is not None else [
        job.checkpoints[i] for i in sorted(job.checkpoints)]


def validate(job: Job, judged: list[Verdict]) -> dict:
    """By the rules of ``verdicts.py``: restorable as it is when the newest complete
    checkpoint restores (what a restore from the newest would take)."""
    return rules.validation(
        job.path, job.kind, judged,
        advice=lambda best, _: f"restore from {best.path} (execution.state-recovery.path)")


def removal(job: Job, doomed: list[str]) -> dict:
    """What deleting ``doomed`` (``plan_retain``'s paths) removes: the complete and the
    unfinished checkpoints by id, the shared files, and every file with its bytes."""
    chks = {c.path: c for c in job.checkpoints.values()}
    gone = [chks[p] for p in doomed if p in chks]
    files = [f for c in gone for f in (*c.files.values(), *filter(None, [c.metadata]))]
    files += [job.shared[p] for p in doomed if p in job.shared]
    return {"removedCheckpoints": sorted(c.id for c in gone if c.metadata is not None),
            "removedUnfinished": sorted(c.id for c in gone if c.metadata is None),
            "removedSharedFiles": sum(1 for p in doomed if p in job.shared),
            "files": len(files), "bytesFreed": sum(f.length for f in files)}


def plan_retain(job: Job, judged: list[Verdict], keep: int) -> tuple[list[str], list[int]]:
    """``(paths to delete, ids kept)``: the newest ``keep`` complete checkpoints and the
    pinned ones stay with every file they reference; other complete ``chk-<n>`` directories
    go, unfinished ones older than the newest complete one go, and shared files no kept
    checkpoint references that are older than the newest kept metadata go."""
    written = {i: c.metadata for i, c in job.checkpoints.items() if c.metadata is not None}
    complete = [(v.id, v) for v in judged if v.id is not None and v.id in written]
    kept = {i for i, _ in complete[-keep:]} | (set(job.pins) & {i for i, _ in complete})
    doomed = [job.checkpoints[i].path for i, _ in complete if i not in kept]
    needed: set[str] = set()
    for i, v in complete:
        if i in kept:
            if not v.restorable and not v.referenced:
                return [], sorted(kept)          # unreadable metadata: keep every file
            needed |= set(v.referenced)
    horizon = max((written[i].mtime for i in kept), default=0)
    doomed += [p for p, f in job.shared.items() if p not in needed and f.mtime < horizon]
    # An unfinished chk-<n> older than the newest complete one never completes: the
    # coordinator drops a pending checkpoint once a later one completes (it is subsumed).
    newest = max(kept, default=None)
    doomed += [c.path for i, c in job.checkpoints.items()
               if c.metadata is None and newest is not None and i < newest]
    return doomed, sorted(kept)
