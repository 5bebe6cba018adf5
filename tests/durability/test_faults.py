"""Named fault points (durability/faults.py): off unless configured; ``error`` fails every pass
from the N-th on, ``kill@N`` SIGKILLs the process at the N-th pass."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from nnlite.durability import faults
from tests.servers import ROOT


@pytest.fixture(autouse=True)
def no_faults():
    faults.configure("")
    yield
    faults.configure("")


def test_a_point_not_configured_does_nothing():
    faults.configure("journal.before-sync=error")
    for _ in range(3):
        faults.hit("checkpoint.after-roll")
        assert not faults.due("checkpoint.after-roll")


def test_error_at_n_fails_every_pass_from_the_nth_on():
    faults.configure("journal.before-sync=error@3")
    faults.hit("journal.before-sync")
    faults.hit("journal.before-sync")
    for _ in range(2):
        with pytest.raises(OSError) as raised:
            faults.hit("journal.before-sync")
        assert raised.value.errno == errno.EIO and "journal.before-sync" in str(raised.value)


def test_configure_replaces_the_points_and_restarts_the_counts():
    faults.configure("p=error@2")
    faults.hit("p")
    faults.configure("p=error@2")
    faults.hit("p")                                 # the first pass again: no fault yet
    faults.configure("")
    faults.hit("p")


def test_kill_at_n_kills_the_process_at_the_nth_pass():
    code = ("from nnlite.durability import faults\n"
            "for i in range(1, 4):\n"
            "    print(i, flush=True)\n"
            "    faults.hit('checkpoint.after-roll')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, faults.ENV: "checkpoint.after-roll=kill@2"})
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.split() == ["1", "2"]
