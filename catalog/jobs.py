"""Checkpoints of batch pipelines, with the lifecycle Flink's checkpoint coordinator uses.

Layout under a job directory::

    <job>/chk-<id>.inprogress/part-*    begun; Spark tasks write their part files here
    <job>/chk-<id>/part-*, _SUCCESS     complete (renamed in place by ``complete``)
    xattr user.nnlite.catalog.last-id   the last id handed out (ids are never reused)
    xattr user.nnlite.catalog.pinned    on a chk-<id> directory: a savepoint, never retained

* ``begin`` raises the counter and creates the in-progress directory (ops logged together).
* ``complete`` checks the parts (the expected count, or Spark's ``_SUCCESS`` marker; no
  ``_temporary`` left, no file still open) and renames ``chk-<id>.inprogress`` to
  ``chk-<id>``: one RENAME op, so a checkpoint is complete or not, across any crash.
* ``abort`` deletes the in-progress directory (one op). A driver that dies between begin and
  complete leaves an in-progress directory that ``latest`` never returns.
* ``retain`` keeps the newest ``keep`` complete checkpoints, the pinned ones and the newest,
  and deletes the rest with one DELETE_MANY op.

Each function is a namespace request: ``(result, ops)``, run under the namesystem lock by
the service, which logs the ops and waits for them to be durable.
"""

from __future__ import annotations

from nnlite.catalog.errors import (
    CheckpointNotFoundError,
    IncompleteCheckpointError,
    InvalidRequestError,
    NotACheckpointError,
)
from nnlite.catalog.layout import IN_PROGRESS, JOB, JOB_PREFIX, tree_usage
from nnlite.namenode.namespace import paths, permission
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE

LAST_ID_XATTR = "user.nnlite.catalog.last-id"
PINNED_XATTR = "user.nnlite.catalog.pinned"
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


def _job_node(ns, job: str, caller):
    """The job directory, which every request lists: READ_EXECUTE on it, as LISTSTATUS."""
    node = ns.status(job, caller)
    if not node.is_dir:
        raise NotACheckpointError(f"{job} is a file, not a job checkpoint directory", path=job)
    permission.check(caller, node, permission.READ | permission.EXECUTE, job)
    return node


# ---------------------------------------------------------------------------- requests

def begin(ns, job: str, caller):
    """Allocate the next id and its in-progress directory: ``{"id", "path"}``."""
    job = paths.normalize(job)
    node = ns.lookup(paths.split(job))
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


def complete(ns, job: str, chk_id: int, expected_parts: int | None, caller):
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
    _, ops = ns.rename(where, chk_path(job, chk_id), False, caller)
    return {"id": chk_id, "path": chk_path(job, chk_id), "parts": parts}, ops


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


def abort(ns, job: str, chk_id: int, caller):
    """Discard an in-progress checkpoint (one DELETE op)."""
    _job_node(ns, job, caller)
    where = chk_path(job, chk_id, in_progress=True)
    if ns.lookup(paths.split(where)) is None:
        raise CheckpointNotFoundError(f"{job}: checkpoint {chk_id} is not in progress",
                                      path=job)
    _, ops = ns.delete(where, True, caller)
    return {"id": chk_id, "aborted": True}, ops


def latest(node, job: str) -> dict | None:
    ids = complete_ids(node)
    if not ids:
        return None
    return {"id": ids[-1], "path": chk_path(job, ids[-1])}


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


def retain(ns, job: str, keep: int, caller):
    node = _job_node(ns, job, caller)
    doomed, kept = plan_retain(node, job, keep)
    count, ops = ns.delete_many(doomed, caller)
    return {"kept": kept, "deleted": count}, ops


def set_pin(ns, job: str, chk_id: int, on: bool, caller):
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
    for chk_id, pending in sorted([(i, False) for i in complete_ids(node)]
                                  + [(i, True) for i in in_progress_ids(node)]):
        child = node.children[f"{JOB_PREFIX}{chk_id}{IN_PROGRESS if pending else ''}"]
        files, total, newest, writing = tree_usage(child)
        rows.append({"id": chk_id, "path": chk_path(job, chk_id, pending),
                     "complete": not pending, "parts": _parts(child), "files": files,
                     "bytes": total, "lastUpdate": newest, "writing": writing,
                     "pinned": chk_id in pins})
    best = latest(node, job)
    return {"path": paths.normalize(job), "kind": JOB, "checkpoints": rows,
            "latest": best["id"] if best else None}


def summary(node, job: str, files: int, total: int, newest: int) -> dict:
    ids, pending = complete_ids(node), in_progress_ids(node)
    if pending and (not ids or pending[-1] > ids[-1]):
        state = "writing"           # begun and not yet complete or aborted
    else:
        state = "ok" if ids else "empty"
    return {"path": job, "kind": JOB, "lastBatch": ids[-1] if ids else None,
            "restorableBatch": ids[-1] if ids else None, "stateBytes": total, "bytes": total,
            "files": files, "lastUpdate": newest, "health": state,
            "pinned": sorted(pinned(node)), "inProgress": pending}
