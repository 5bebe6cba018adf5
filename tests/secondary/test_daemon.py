"""``nnlite secondary``: --checkpoint-now and --geteditsize through CliRunner, and the daemon
as a real process (checkpoints on the txns threshold, /status and /jmx, a clean SIGTERM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite.cli import main
from nnlite.namenode.listen import ANNOUNCE_ENV
from tests.secondary.conftest import mkdirs
from tests.servers import ROOT, announced_port, wait_for


def token(server) -> str:
    return str(Path(server.name_dirs[0]) / "checkpoint.token")


def secondary(*args: str):
    """In this process: nice 0, or the rest of the test session would run niced."""
    return CliRunner().invoke(main, ["secondary", "-D", "nnlite.secondary.nice=0", *args])


def test_geteditsize_prints_the_uncheckpointed_txns(nn):
    mkdirs(nn, "/a", "/b")
    result = secondary("--namenode", nn.url, "--secret-file", token(nn), "--geteditsize")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "3"


def test_checkpoint_now(nn, tmp_path):
    mkdirs(nn, "/a")
    args = ["--namenode", nn.url, "--checkpoint-dir", str(tmp_path / "ckpt"),
            "--secret-file", token(nn)]
    result = secondary(*args, "--checkpoint-now")
    assert result.exit_code == 0, result.output
    assert "Checkpoint done: image txid 3" in result.stdout
    after = secondary("--namenode", nn.url, "--secret-file", token(nn), "--geteditsize")
    assert after.stdout.strip() == "1"            # the START_LOG_SEGMENT of the new edits


def test_an_unreachable_namenode_is_one_line_and_exit_3(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    result = secondary("--namenode", "http://127.0.0.1:9", "--checkpoint-dir",
                       str(tmp_path / "ckpt"), "--secret-file", str(secret), "--checkpoint-now",
                       "-D", "dfs.image.transfer.timeout=2000")
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines()[-1].startswith(
        "nnlite: NamenodeUnreachableError: cannot reach the namenode at http://127.0.0.1:9")


@pytest.mark.parametrize("args, message", [
    (["--checkpoint-now"], "no shared secret"),
    (["--checkpoint-now", "-D", "nnlite.checkpoint.secret=x", "--namenode", "ftp://h"],
     "must be http://HOST:PORT"),
    (["--geteditsize", "--checkpoint-now", "-D", "nnlite.checkpoint.secret=x"],
     "exclude each other"),
    (["--checkpoint-now", "-D", "nnlite.checkpoint.secret=x", "-D", "nnlite.secondary.nice=25"],
     "nnlite.secondary.nice must be within 0..19, not 25"),
])
def test_usage_errors(tmp_path, args, message):
    result = secondary("--checkpoint-dir", str(tmp_path / "ckpt"), *args)
    assert result.exit_code == 2 and message in result.stderr


# ------------------------------------------------------------------------------ the daemon

def start_daemon(nn, ckpt: Path, log: Path, *defines: str) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", nn.url,
           "--checkpoint-dir", str(ckpt), "--secret-file", token(nn), "--port", "0"]
    for define in defines:
        cmd += ["-D", define]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, ANNOUNCE_ENV: "1"})
    try:
        port = announced_port(proc, log, "NNLITE_SECONDARY_HTTP_PORT", 20, "the secondary")
    except (RuntimeError, TimeoutError):
        proc.kill()
        proc.wait()
        raise
    return proc, f"http://127.0.0.1:{port}"


def thread_niceness(pid: int) -> set[int]:
    """The nice values of a live process's threads (field 19 of /proc/PID/task/TID/stat)."""
    values = set()
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        values.add(int(stat.read_text().rsplit(")", 1)[1].split()[16]))
    return values


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.load(resp)


def test_daemon_checkpoints_on_txns_and_reports_it(nn, tmp_path):
    proc, url = start_daemon(nn, tmp_path / "ckpt", tmp_path / "secondary.log",
                             "checkpoint.check.period=0.1", "checkpoint.txns=5")
    try:
        assert get_json(url + "/status")["lastCheckpoint"] is None
        mkdirs(nn, "/a", "/b", "/c", "/d")        # txid 5: 5 uncheckpointed
        done = wait_for(lambda: get_json(url + "/status")["lastCheckpoint"], 15,
                        "the daemon's first checkpoint", 0.05)
        assert (done["reason"], done["last_txid"]) == ("txns", 6)
        assert set(done["phases"]) == {"roll", "download", "load", "replay", "save", "upload"}

        beans = get_json(url + "/jmx")["beans"]
        info = get_json(url + "/jmx?qry=Hadoop:service=SecondaryNameNode,"
                              "name=SecondaryNameNodeInfo")["beans"]
        assert [b["name"] for b in info] == [beans[0]["name"]]
        assert info[0]["CheckpointDirectories"] == [str(tmp_path / "ckpt")]
        assert info[0]["LastCheckpointTime"] > 0
        assert beans[1]["Checkpoints"] == 1 and beans[1]["LastCheckpointTxid"] == 6
        # every thread, the pool threads the merge started included, runs at the default
        # nnlite.secondary.nice: the checkpoint yields the CPU to the namenode
        assert thread_niceness(proc.pid) == {10}
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(15)
    assert code == 0, (tmp_path / "secondary.log").read_text()
    assert "checkpoint done (txns): txids 1-6" in (tmp_path / "secondary.log").read_text()
