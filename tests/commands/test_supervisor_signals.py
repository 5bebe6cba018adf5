"""``nnlite run`` stops on a burst of SIGTERMs (as when `timeout` forwards one the user also
sent): its handlers set a lock-free ``StopFlag``. With a ``threading.Event`` a signal that
came during the handler of the one before deadlocked the supervisor for good, its children
gone."""

import re
import signal
import subprocess
import sys

from nnlite.commands.supervisor import StopFlag
from tests.servers import ROOT, wait_for


def test_the_flag_is_set_and_waited_for():
    flag = StopFlag()
    assert not flag.is_set() and flag.wait(0.01) is False
    flag.set(signal.SIGTERM, None)                 # as a handler is called
    assert flag.is_set() and flag.wait(10) is True


def test_a_burst_of_sigterms_stops_run(tmp_path):
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "run", "--name-dir", str(tmp_path / "name"),
             "--port", "0", "--secondary-port", "0"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: re.search("secondary status on", log.read_text()), 60,
                 "the secondary")
        for _ in range(200):
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
