"""The README's main job: ``nnlite run`` starts the namenode and its secondary, checkpoints,
and stops both cleanly on SIGTERM."""

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.servers import wait_for

ROOT = Path(__file__).resolve().parents[1]


def test_run_starts_namenode_and_secondary_and_checkpoints(tmp_path):
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "run", "--name-dir", str(tmp_path / "name"),
             "-D", "dfs.namenode.http-address=127.0.0.1:0",
             "-D", "dfs.namenode.secondary.http-address=127.0.0.1:0",
             "-D", "checkpoint.check.period=0.2", "-D", "checkpoint.txns=5"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        port = int(wait_for(lambda: re.search(r"namenode up at http://127.0.0.1:(\d+)",
                                              log.read_text()), 60, "namenode up").group(1))
        for i in range(8):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/webhdfs/v1/run/d{i}?op=MKDIRS&user.name=root",
                method="PUT")
            assert json.load(urllib.request.urlopen(request)) == {"boolean": True}
        wait_for(lambda: "checkpoint installed" in log.read_text(), 60, "a checkpoint")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "namenode stopped cleanly" in text and "nnlite run stopped (cleanly)" in text
    assert (tmp_path / "namesecondary" / "current" / "fsimage").exists()
