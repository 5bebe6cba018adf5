"""Checkpoints of batch pipelines, with the lifecycle Flink's checkpoint coordinator uses.

Layout under a job directory::

    <job>/chk-<id>.inprogress/part-*    begun; Spark tasks write their part files here
    <job>/chk-<id>/part-*, _SUCCESS     complete (renamed in place by ``complete``)
    xattr user.nnlite.catalog.last-id   the last id handed out (ids are never reused)
    xattr user.nnlite.catalog.pinned    on a chk-<id> directory: a savepoint, never retained
    xattr user.nnlite.catalog.manifest  on a chk-<id> directory: every file in it and its
                                        length when it completed (``encode_manifest``)

* ``begin`` raises the counter and creates the in-progress directory (ops logged together).
* ``complete`` checks the parts (the expected count, or Spark's ``_SUCCESS`` marker; no
  ``_temporary`` left, no file still open), records the manifest on ``chk-<id>.inprogress``
  and renames it to ``chk-<id>``: the RENAME is the one op that completes it, so a
  checkpoint is complete or not, across any crash.
* ``abort`` deletes the in-progress directory (one op). A driver that dies between begin and
  complete leaves an in-progress directory that ``latest`` never returns.
* ``retain`` keeps the newest ``keep`` complete checkpoints, the pinned ones and the newest,
  and deletes the rest with one DELETE_MANY op.

A complete checkpoint restores when it still holds what its manifest lists, each file with
the length recorded, and nothing more (a reader of the directory reads every file in it);
``latest`` answers the newest that restores, ``validate`` judges by the rules of
``verdicts.py``. A checkpoint completed before manifests were recorded is checked by its
structure only (and ``validate`` says so).

Each function is a namespace request on the catalog's view of the namespace
(``CatalogView``): ``(result, ops)``, run under the namesystem lock by the service, which logs
the ops and waits for them to be durable.
"""

from __future__ import annotations

import json
import zlib

from nnlite.catalog import verdicts
from nnlite.catalog.errors import (
    CheckpointNotFoundError,
    IncompleteCheckpointError,
    InvalidRequestError,
    NotACheckpointError,
)
from nnlite.catalog.layout import IN_PROGRESS, JOB, JOB_PREFIX, tree_usage, walk_files
from nnlite.namenode.namespace import paths, permission
from nnlite.namenode.namespace.catalog_view import CatalogView
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE

LAST_ID_XATTR = "user.nnlite.catalog.last-id"
PINNED_XATTR = "user.nnlite.catalog.pinned"
MANIFEST_XATTR = "user.nnlite.catalog.manifest"
MANIFEST_VERSION = 1
MAX_NAMED = 10          # problems named one by one per checkpoint; the rest are counted
SUCCESS = "_SUCCESS"
TEMPORARY = "_temporary"
DIR_PERMISSION = 0o755


class Partial:
    """A multi-step request that failed after some steps applied: the applied ops must
    still be logged (the tree already holds them); the service logs them, then raises."""

    def __init__(self, error: Exception):
        self.error = error


def steps(*calls):
    """Run request steps in order; returns the last result and every op. A step that fails
    after others applied yields ``Partial`` so those ops are logged, never lost."""
    result, done = None, []
    for call in calls:
        try:
            result, ops = call()
        except Exception as exc:
            if done:
                return Partial(exc), done
            raise
        done += ops
    return result, done


def complete_ids(node) -> list[int]:
    return sorted(i for i in (_id(n, False) for n, c in node.children.items() if c.is_dir)
                  if i is not None)


def in_progress_ids(node) -> list[int]:
    return sorted(i for i in (_id(n, True) for n, c in node.children.items() if c.is_dir)
                  if i is not None)


def _id(name: str, in_progress: bool) -> int | None:
    if not name.startswith(JOB_PREFIX) or name.endswith(IN_PROGRESS) != in_progress:
        return None
    core = name[len(JOB_PREFIX):len(name) - (len(IN_PROGRESS) if in_progress else 0)]
    return int(core) if core.isdigit() else None


def chk_path(job: str, chk_id: int, in_progress: bool = False) -> str:
    return f"{paths.normalize(job).rstrip('/')}/{JOB_PREFIX}{chk_id}" + (
        IN_PROGRESS if in_progress else "")


def _job_node(ns: CatalogView, job: str, caller):
    """The job directory, which every request lists: READ_EXECUTE on it, as LISTSTATUS."""
    node = ns.status(job, caller)
    if not node.is_dir:
        raise NotACheckpointError(f"{job} is a file, not a job checkpoint directory", path=job)
    permission.check(caller, node, permission.READ | permission.EXECUTE, job)
    return node


# ---------------------------------------------------------------------------- requests

def begin(ns: CatalogView, job: str, caller):
    """Allocate the next id and its in-progress directory: ``{"id", "path"}``."""
    job = paths.normalize(job)
    node = ns.lookup(job)
    last = 0
    if node is not None:
        node = _job_node(ns, job, caller)
        raw = (node.xattrs or {}).get(LAST_ID_XATTR, b"0")
        last = max([int(raw) if raw.isdigit() else 0, *complete_ids(node),
                    *in_progress_ids(node)])
    chk_id = last + 1
    target = chk_path(job, chk_id, in_progress=True)
    return steps(
        lambda: ns.mkdirs(job, DIR_PERMISSION, caller),
        lambda: ns.set_xattr(job, LAST_ID_XATTR, str(chk_id).encode(),
                             XATTR_CREATE | XATTR_REPLACE, caller),
        lambda: ({"id": chk_id, "path": target}, ns.mkdirs(target, DIR_PERMISSION, caller)[1]))


def complete(ns: CatalogView, job: str, chk_id: int, expected_parts: int | None, caller):
    """Verify the parts of ``chk-<id>.inprogress`` and make it ``chk-<id>`` (one op)."""
    job_node = _job_node(ns, job, caller)
    name = f"{JOB_PREFIX}{chk_id}"
    done = job_node.children.get(name)
    pending = job_node.children.get(name + IN_PROGRESS)
    if pending is None:
        if done is not None:
            return {"id": chk_id, "path": chk_path(job, chk_id), "parts": _parts(done),
                    "alreadyComplete": True}, []
        raise CheckpointNotFoundError(f"{job}: checkpoint {chk_id} was never begun, or was "
                                      f"aborted", path=job)
    parts = _parts(pending)
    where = chk_path(job, chk_id, in_progress=True)
    _check_parts(pending, parts, expected_parts, where)
    files = files_of(pending)
    manifest = encode_manifest({rel: f.length for rel, f in files.items()},
                               ns.max_xattr_size - len(MANIFEST_XATTR.partition(".")[2]))
    done = {"id": chk_id, "path": chk_path(job, chk_id), "parts": parts, "files": len(files),
            "bytes": sum(f.length for f in files.values())}
    return steps(
        lambda: ns.set_xattr(where, MANIFEST_XATTR, manifest, XATTR_CREATE | XATTR_REPLACE,
                             caller),
        lambda: (done, ns.rename(where, chk_path(job, chk_id), False, caller)[1]))


def _parts(node) -> int:
    return sum(1 for n, c in node.children.items()
               if not c.is_dir and n.startswith("part-") and not n.endswith(".crc"))


def _check_parts(node, parts: int, expected: int | None, where: str) -> None:
    if TEMPORARY in node.children:
        raise IncompleteCheckpointError(
            f"{where}/{TEMPORARY} still exists: the job's output commit has not finished",
            path=where)
    open_files = [n for n, c in node.children.items() if not c.is_dir and c.client_name]
    if open_files:
        raise IncompleteCheckpointError(f"{where}: {open_files[0]} is still being written",
                                        path=where)
    if expected is None:
        if SUCCESS not in node.children:
            raise IncompleteCheckpointError(
                f"{where} has no {SUCCESS} marker: the write did not commit (give "
                f"expected_parts to check the part files instead)", path=where)
    elif expected < 0:
        raise InvalidRequestError(f"expected parts must be 0 or more, not {expected}")
    elif parts != expected:
        raise IncompleteCheckpointError(
            f"{where} holds {parts} part files, {expected} expected: a task's output is "
            f"missing", path=where)


def abort(ns: CatalogView, job: str, chk_id: int, caller):
    """Discard an in-progress checkpoint (one DELETE op)."""
    _job_node(ns, job, caller)
    where = chk_path(job, chk_id, in_progress=True)
    if ns.lookup(where) is None:
        raise CheckpointNotFoundError(f"{job}: checkpoint {chk_id} is not in progress",
                                      path=job)
    _, ops = ns.delete(where, True, caller)
    return {"id": chk_id, "aborted": True}, ops


# ---------------------------------------------------------------------------- manifests

def files_of(node) -> dict:
    """Every file below a checkpoint directory, by its path relative to it."""
    return dict(walk_files(node, ""))


def encode_manifest(lengths: dict[str, int], limit: int) -> bytes:
    """The manifest xattr's value: zlib-compressed JSON ``{"v": 1, "files": {path: length}}``
    (paths relative to the checkpoint directory); when that is longer than ``limit`` bytes
    (dfs.namenode.fs-limits.max-xattr-size), ``{"v": 1, "count": n, "bytes": total}``."""
    full = _pack({"v": MANIFEST_VERSION, "files": dict(sorted(lengths.items()))})
    if len(full) <= limit:
        return full
    return _pack({"v": MANIFEST_VERSION, "count": len(lengths),
                  "bytes": sum(lengths.values())})


def _pack(doc: dict) -> bytes:
    return zlib.compress(json.dumps(doc, separators=(",", ":")).encode(), 9)


def decode_manifest(raw: bytes) -> dict:
    """``encode_manifest``'s document; ValueError when it is not one."""
    try:
        doc = json.loads(zlib.decompress(raw))
    except (zlib.error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not a compressed JSON document ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("v") != MANIFEST_VERSION or not (
            isinstance(doc.get("files"), dict) or isinstance(doc.get("count"), int)):
        raise ValueError(f"not a version {MANIFEST_VERSION} manifest")
    return doc


def damage(node, where: str) -> list[str]:
    """Why the complete checkpoint ``node`` at ``where`` would not read as it completed."""
    problems = []
    if TEMPORARY in node.children:
        problems.append(f"{where}/{TEMPORARY} exists: a job wrote into the checkpoint after "
                        f"it completed")
    now = files_of(node)
    problems += [f"{where}/{rel} is being written" for rel, f in sorted(now.items())
                 if f.client_name is not None]
    raw = (node.xattrs or {}).get(MANIFEST_XATTR)
    if raw is None:
        return problems
    try:
        recorded = decode_manifest(raw)
    except ValueError as exc:
        return problems + [f"{where}: its manifest ({MANIFEST_XATTR}) cannot be read: {exc}"]
    if "files" not in recorded:
        count, total = len(now), sum(f.length for f in now.values())
        if (count, total) != (recorded["count"], recorded["bytes"]):
            problems.append(f"{where} holds {count} files of {total} bytes; it held "
                            f"{recorded['count']} files of {recorded['bytes']} bytes when it "
                            f"completed")
        return problems
    for rel, length in sorted(recorded["files"].items()):
        found = now.get(rel)
        if found is None:
            problems.append(f"{where}/{rel} is missing ({length} bytes when the checkpoint "
                            f"completed)")
        elif found.length != length:
            problems.append(f"{where}/{rel} holds {found.length} bytes, {length} when the "
                            f"checkpoint completed")
    problems += [f"{where}/{rel} was not there when the checkpoint completed: a reader of "
                 f"the checkpoint reads it too" for rel in sorted(set(now) - set(
                     recorded["files"]))]
    if len(problems) > MAX_NAMED:
        problems[MAX_NAMED:] = [f"... and {len(problems) - MAX_NAMED} more problems"]
    return problems


# ---------------------------------------------------------------------------- verdicts

def judge(node, job: str) -> list[verdicts.Verdict]:
    """Every checkpoint of the job, oldest first: complete ones judged by ``damage``, begun
    ones as incomplete."""
    out = []
    for chk_id, pending in _all_ids(node):
        child = node.children[f"{JOB_PREFIX}{chk_id}{IN_PROGRESS if pending else ''}"]
        where = chk_path(job, chk_id, pending)
        if pending:
            out.append(verdicts.Verdict(chk_id, where, False, [
                f"{where} was begun and never completed (still being written, or its driver "
                f"died: nnlite catalog abort {paths.normalize(job)} {chk_id} discards it)"],
                complete=False))
        else:
            problems = damage(child, where)
            out.append(verdicts.Verdict(chk_id, where, not problems, problems))
    return out


def _all_ids(node) -> list[tuple[int, bool]]:
    """``(id, in progress)`` of every checkpoint directory, by id."""
    return sorted([(i, False) for i in complete_ids(node)]
                  + [(i, True) for i in in_progress_ids(node)])


def latest(node, job: str) -> dict | None:
    """The newest complete checkpoint that restores: ``{"id", "path"}``."""
    return verdicts.latest(judge(node, job))


def validate(node, job: str) -> dict:
    job = paths.normalize(job)
    unrecorded = [verdicts.issue(
        verdicts.WARNING, "no-manifest", chk_path(job, i),
        f"{chk_path(job, i)} completed before nnlite recorded manifests: the lengths of its "
        f"files cannot be checked") for i in complete_ids(node)
        if MANIFEST_XATTR not in (node.children[f"{JOB_PREFIX}{i}"].xattrs or {})]
    return verdicts.validation(
        job, JOB, judge(node, job), warnings=tuple(unrecorded),
        advice=lambda best, newest: (
            f"catalog latest (and read_latest) answers {best.path}, the newest that restores; "
            f"{newest.path} is newer: write a new checkpoint, or remove it (nnlite dfs rm -r "
            f"{newest.path})"))


def pinned(node) -> set[int]:
    out = set()
    for chk_id in complete_ids(node):
        child = node.children[f"{JOB_PREFIX}{chk_id}"]
        if child.xattrs and PINNED_XATTR in child.xattrs:
            out.add(chk_id)
    return out


def plan_retain(node, job: str, keep: int) -> tuple[list[str], list[int]]:
    """``(paths to delete, ids kept)``."""
    if keep < 1:
        raise InvalidRequestError(f"keep must be at least 1, not {keep}", path=job)
    ids = complete_ids(node)
    kept = set(ids[-keep:]) | pinned(node)
    doomed = [chk_path(job, i) for i in ids if i not in kept]
    return doomed, sorted(kept)


def retain(ns: CatalogView, job: str, keep: int, caller):
    """``{"path", "kept", "deleted" (paths), "removedCheckpoints", "files", "bytesFreed"}``."""
    node = _job_node(ns, job, caller)
    doomed, kept = plan_retain(node, job, keep)
    removed = [i for i in complete_ids(node) if i not in kept]
    usage = [tree_usage(node.children[f"{JOB_PREFIX}{i}"]) for i in removed]
    count, ops = ns.delete_many(doomed, caller)
    return {"path": paths.normalize(job), "kept": kept, "deleted": count,
            "removedCheckpoints": removed, "files": sum(u[0] for u in usage),
            "bytesFreed": sum(u[1] for u in usage)}, ops


def set_pin(ns: CatalogView, job: str, chk_id: int, on: bool, caller):
    node = _job_node(ns, job, caller)
    if chk_id not in complete_ids(node):
        raise CheckpointNotFoundError(f"{job}: no complete checkpoint {chk_id} to pin",
                                      path=job)
    where = chk_path(job, chk_id)
    # a user.* xattr: WRITE on the inode, also for a pin that changes nothing
    permission.check(caller, node.children[f"{JOB_PREFIX}{chk_id}"], permission.WRITE, where)
    if on:
        _, ops = ns.set_xattr(where, PINNED_XATTR, b"1", XATTR_CREATE | XATTR_REPLACE, caller)
    elif PINNED_XATTR in (node.children[f"{JOB_PREFIX}{chk_id}"].xattrs or {}):
        _, ops = ns.remove_xattr(where, PINNED_XATTR, caller)
    else:
        ops = []
    return {"id": chk_id, "pinned": on}, ops


def show(node, job: str) -> dict:
    """``show`` of a job: one row per checkpoint, complete or in progress, oldest first."""
    pins = pinned(node)
    rows = []
    judged = judge(node, job)
    for v in judged:
        child = node.children[v.path.rsplit("/", 1)[1]]
        files, total, newest, writing = tree_usage(child)
        rows.append({"id": v.id, "path": v.path, "complete": v.complete,
                     "parts": _parts(child), "files": files, "bytes": total,
                     "lastUpdate": newest, "writing": writing, "pinned": v.id in pins,
                     "restorable": v.restorable, "problems": v.problems if v.complete else []})
    best = verdicts.newest_restorable(judged)
    return {"path": paths.normalize(job), "kind": JOB, "checkpoints": rows,
            "latest": best.id if best else None}


def summary(node, job: str, files: int, total: int, newest: int) -> dict:
    ids, pending = complete_ids(node), in_progress_ids(node)
    judged = judge(node, job)
    best = verdicts.newest_restorable(judged)
    # begun and not yet complete or aborted
    writing = pending and (not ids or pending[-1] > ids[-1])
    state = "writing" if writing else verdicts.health(judged)
    return {"path": job, "kind": JOB, "lastBatch": ids[-1] if ids else None,
            "restorableBatch": best.id if best else None, "stateBytes": total, "bytes": total,
            "files": files, "lastUpdate": newest, "health": state,
            "pinned": sorted(pinned(node)), "inProgress": pending}
