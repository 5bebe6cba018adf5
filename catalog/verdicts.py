"""What ``ls``, ``latest`` and ``validate`` say about a checkpoint that keeps whole checkpoints
side by side, from one verdict per checkpoint: job checkpoints (``jobs.py``), the RDDs of an
RDD checkpoint directory and the times of a DStream checkpoint (``others.py``), Flink
checkpoints and savepoints (``flink.py``). (A streaming checkpoint's batches restore through
one another; ``report.py`` judges those.)

The rules, the same for every kind, so the three answers always agree:

* ``latest`` answers the newest checkpoint that restores (``newest_restorable``): what a reader
  or a restart should take. It is ``restorableBatch`` in ``ls`` and ``validate``.
* ``validate`` says restorable *as it is* when the newest complete checkpoint restores (for an
  RDD directory: every RDD in it, as each may still be read), and exits 0 only then. Each
  problem of the newest complete one is an error, of an older one a warning; an attempt that
  never completed is a warning (it is never read).
* ``health`` in ``ls``: ``ok`` (restorable as it is), ``degraded`` (an older one restores),
  ``broken`` (complete ones, none restores), ``empty`` (none complete yet).

Pure functions over ``Verdict``s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

ERROR, WARNING = "error", "warning"


@dataclass
class Verdict:
    """One checkpoint (a ``chk-<id>``, an ``rdd-<id>``, a DStream time, a savepoint) judged."""
    id: int | None
    path: str
    restorable: bool
    problems: list[str] = field(default_factory=list)
    complete: bool = True       # False: begun and never finished; reported, never judged


def newest_restorable(judged: Sequence[Verdict]) -> Verdict | None:
    good = [v for v in judged if v.restorable]
    return good[-1] if good else None


def _newest_complete(judged: Sequence[Verdict]) -> Verdict | None:
    done = [v for v in judged if v.complete]
    return done[-1] if done else None


def _judged(judged: Sequence[Verdict], every: bool) -> list[Verdict]:
    """The verdicts restorability as it is depends on: the newest complete one, or with
    ``every`` all complete ones."""
    if every:
        return [v for v in judged if v.complete]
    newest = _newest_complete(judged)
    return [newest] if newest else []


def restorable(judged: Sequence[Verdict], every: bool = False) -> bool:
    counted = _judged(judged, every)
    return bool(counted) and all(v.restorable for v in counted)


def health(judged: Sequence[Verdict], every: bool = False) -> str:
    if _newest_complete(judged) is None:
        return "empty"
    if restorable(judged, every):
        return "ok"
    return "degraded" if newest_restorable(judged) else "broken"


def latest(judged: list[Verdict]) -> dict | None:
    """``latest``'s answer: the newest checkpoint that restores, ``{"id", "path"}``."""
    best = newest_restorable(judged)
    return None if best is None else {"id": best.id, "path": best.path}


def validation(path: str, kind: str, judged: Sequence[Verdict], *, every: bool = False,
               warnings: tuple[dict, ...] = (),
               advice: Callable[[Verdict, Verdict], str] | None = None) -> dict:
    """``validate``'s answer. ``warnings``: more issues of the kind's own (already
    ``issue``s); ``advice(best, newest)``: what to do when ``best``, the newest checkpoint
    that restores, is not what a restart as it is would take."""
    counted = {id(v) for v in _judged(judged, every)}
    newest = _newest_complete(judged)
    issues = []
    for v in judged:
        if not v.complete:
            issues += [issue(WARNING, "incomplete-checkpoint", v.path, p) for p in v.problems]
            continue
        level = ERROR if id(v) in counted else WARNING
        issues += [issue(level, "unrestorable-checkpoint", v.path, p) for p in v.problems]
    best = newest_restorable(judged)
    ok = restorable(judged, every)
    return {"path": path, "kind": kind, "restorable": ok,
            "lastBatch": newest.id if newest else None,
            "restorableBatch": best.id if best else None,
            "issues": issues + list(warnings),
            # best restores, so it is complete: newest (the newest complete one) is there too
            "advice": advice(best, newest) if advice and best and newest and not ok else None}


def issue(level: str, code: str, path: str, message: str) -> dict:
    return {"level": level, "code": code, "path": path, "message": message}
