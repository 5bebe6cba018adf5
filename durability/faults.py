"""Named fault-injection points (as Hadoop's CheckpointFaultInjector), off unless configured.

Code calls ``faults.hit("journal.before-sync")`` at a point worth testing; nothing happens
unless the process was started with ``NNLITE_FAULTS`` naming that point::

    NNLITE_FAULTS="journal.partial-write=kill@200,checkpoint.after-roll=kill"

``POINT=kill`` SIGKILLs the process the first time the point is reached; ``kill@N`` the N-th time;
``sleep:S`` sleeps S seconds there; ``error`` raises OSError(EIO) there, every time from the N-th on
(a failing disk). ``configure(spec)`` replaces the configuration in-process, for tests that run the
store in the test process. A point that must do part of its work first (a partial write) asks
``faults.due(name)``, does that part, then calls ``faults.act(name)``. Tests use real processes with
this variable set; no internals are patched.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import threading
import time

log = logging.getLogger(__name__)

ENV = "NNLITE_FAULTS"


def _parse(text: str) -> dict[str, tuple[str, int, float]]:
    points = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, action = item.partition("=")
        action, _, nth = action.partition("@")
        kind, _, arg = action.partition(":")
        points[name.strip()] = (kind or "kill", int(nth or 1), float(arg or 0))
    return points


_points = _parse(os.environ.get(ENV, ""))


def configure(spec: str) -> None:
    """Replace the active fault points (same syntax as NNLITE_FAULTS); "" turns them off."""
    global _points
    with _lock:
        _points = _parse(spec)
        _counts.clear()
_counts: dict[str, int] = {}
_lock = threading.Lock()


def due(name: str) -> bool:
    """Count one pass through ``name``; True when its fault should act now."""
    spec = _points.get(name)
    if spec is None:
        return False
    with _lock:
        _counts[name] = _counts.get(name, 0) + 1
        return _counts[name] >= spec[1]


def act(name: str) -> None:
    """Perform the configured fault of ``name`` (kill, or sleep)."""
    kind, _, arg = _points[name]
    log.warning("fault injection: %s at %s", kind, name)
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "sleep":
        time.sleep(arg)
    elif kind == "error":
        raise OSError(errno.EIO, f"injected I/O error at {name}")


def hit(name: str) -> None:
    """A plain fault point: act when due."""
    if _points and due(name):
        act(name)
