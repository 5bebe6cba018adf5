"""tools/progress.py: a bar redrawn in place on a terminal, periodic log lines elsewhere."""

from __future__ import annotations

import io
import logging

from nnlite.tools.progress import Progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_terminal_bar_is_redrawn_in_place_and_ends_with_a_newline(caplog):
    clock, stream = Clock(), io.StringIO()
    with (caplog.at_level(logging.INFO, logger="nnlite.tools.progress"),
          Progress(1000, what="inodes", label="oiv", stream=stream, tty=True, clock=clock,
                   redraw=0.2) as bar):
        bar.advance(100)                       # too soon after the start: not drawn
        clock.now += 1
        bar.advance(150)
        clock.now += 1
        bar.advance(250)
    frames = stream.getvalue().split("\r")[1:]
    assert frames[0] == ("oiv: [#######-----------------------] 250/1,000 inodes (25.0%), "
                         "250/s, ETA 3 s\x1b[K")
    assert frames[1].startswith("oiv: [###############---------------] 500/1,000 inodes (50.0%)")
    assert stream.getvalue().endswith("\n")
    assert caplog.messages == ["oiv: done: 500 inodes in 2.0 s (250/s)"]


def test_without_a_terminal_it_logs_a_line_per_interval(caplog):
    clock, stream = Clock(), io.StringIO()
    with caplog.at_level(logging.INFO, logger="nnlite.tools.progress"):
        bar = Progress(4, what="rows", stream=stream, clock=clock, interval=10)
        for _ in range(4):
            clock.now += 6
            bar.advance(1)
        bar.finish()
    assert stream.getvalue() == ""                  # a StringIO is not a terminal
    assert caplog.messages == ["2/4 rows (50.0%), 0.17/s, ETA 12 s", "4/4 rows (100.0%), 0.17/s",
                               "done: 4 rows in 24.0 s (0.17/s)"]


def test_a_failure_is_logged_as_stopped(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, logger="nnlite.tools.progress"):
        try:
            with Progress(10, stream=io.StringIO(), clock=clock) as bar:
                bar.advance(3)
                raise KeyError("boom")
        except KeyError:
            pass
    assert caplog.messages == ["stopped after 3 rows in 0.0 s (0/s)"]


def test_zero_total_does_not_divide_by_zero():
    bar = Progress(0, stream=io.StringIO(), tty=True, clock=Clock(), redraw=0)
    bar.advance(5)
    bar.finish()
    assert "5/0 rows" in bar.stream.getvalue()
