"""What checkpoints report: one finished checkpoint (``CheckpointResult``), the last failure
(``Failure``), the running ``Counters``, and the seconds spent per phase (``Phases``).

Plain records, shared by the steps (merge.py), the checkpointer that counts and logs them
(checkpointer.py) and the daemon's status page and JMX bean (daemon.py). ``PHASES`` names the
phases in order; a result's ``phases`` always has every one of them (0.0 when skipped).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

PHASES = ("roll", "download", "load", "replay", "save", "upload")


@dataclass(frozen=True)
class CheckpointResult:
    """One finished checkpoint, as logged and as the status endpoint reports it."""
    reason: str
    first_txid: int            # first txid replayed in this checkpoint (0: none replayed)
    last_txid: int             # the txid of the uploaded image
    ops: int                   # records replayed
    image_size: int
    image_md5: str
    image_downloaded: bool
    phases: dict               # phase -> seconds (0.0 when skipped)
    finished: float            # wall clock, seconds since the epoch

    def to_json(self) -> dict:
        return {**asdict(self), "phases": {k: round(v, 4) for k, v in self.phases.items()}}


@dataclass(frozen=True)
class Failure:
    time: float
    phase: str
    error: str

    def to_json(self) -> dict:
        return asdict(self)


class Phases:
    """Seconds per phase of one checkpoint; ``current`` names the phase a failure hit."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.current = "status"

    @contextmanager
    def __call__(self, name: str):
        self.current = name
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start


@dataclass
class Counters:
    checkpoints: int = 0
    failures: int = 0                  # failed checkpoints, all causes
    failures_in_row: int = 0
    merge_failures_in_row: int = 0
    images_downloaded: int = 0
    edits_downloaded: int = 0
    bytes_downloaded: int = 0
    bytes_uploaded: int = 0
