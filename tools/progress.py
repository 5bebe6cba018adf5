"""A progress bar for long scans: redrawn in place on a terminal, periodic log lines otherwise.

    with Progress(total=meta.inode_count, what="inodes", label="oiv") as progress:
        for batch in batches:
            ...
            progress.advance(batch.num_rows)

On a terminal the bar is redrawn at most every ``redraw`` seconds; elsewhere (a pipe, a log file,
CliRunner) one INFO line is logged every ``interval`` seconds. Both end with one summary line.
"""

from __future__ import annotations

import logging
import sys
import time

log = logging.getLogger(__name__)

BAR_WIDTH = 30
REDRAW_SECONDS = 0.2
LOG_INTERVAL_SECONDS = 10.0


class Progress:
    def __init__(self, total: int, *, what: str = "rows", label: str = "", stream=None,
                 tty: bool | None = None, clock=time.monotonic,
                 interval: float = LOG_INTERVAL_SECONDS, redraw: float = REDRAW_SECONDS):
        self.total = max(int(total), 0)
        self.what = what
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.clock = clock
        self.period = redraw if self.tty else interval
        self.done = 0
        self.start = clock()
        self._last = self.start

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.finish(failed=exc_type is not None)

    def advance(self, n: int) -> None:
        self.done += n
        now = self.clock()
        if now - self._last >= self.period:
            self._last = now
            self._show(now)

    def finish(self, failed: bool = False) -> None:
        now = self.clock()
        if self.tty:
            self._draw(now)
            self.stream.write("\n")
            self.stream.flush()
        elapsed = now - self.start
        log.info("%s%s %s %s in %.1f s (%s/s)", self._prefix(), "stopped after" if failed
                 else "done:", f"{self.done:,}", self.what, elapsed, _rate_text(self._rate(now)))

    def _show(self, now: float) -> None:
        if self.tty:
            self._draw(now)
        else:
            log.info("%s%s", self._prefix(), self.status(now))

    def _draw(self, now: float) -> None:
        fraction = min(self.done / self.total, 1.0) if self.total else 1.0
        filled = int(fraction * BAR_WIDTH)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.stream.write(f"\r{self._prefix()}[{bar}] {self.status(now)}\x1b[K")
        self.stream.flush()

    def status(self, now: float) -> str:
        """``450,000/1,000,000 inodes (45.0%), 120,000/s, ETA 5 s``."""
        rate = self._rate(now)
        text = f"{self.done:,}/{self.total:,} {self.what}"
        if self.total:
            text += f" ({100.0 * self.done / self.total:.1f}%)"
        text += f", {_rate_text(rate)}/s"
        if rate > 0 and self.total > self.done:
            text += f", ETA {(self.total - self.done) / rate:.0f} s"
        return text

    def _rate(self, now: float) -> float:
        elapsed = now - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def _prefix(self) -> str:
        return f"{self.label}: " if self.label else ""


def _rate_text(rate: float) -> str:
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
