"""The README's "High availability" blocks, pasted into bash in order as ``tests/test_readme.py``
pastes the "Using it" ones: ``run-ha`` started in the background by the first block, a write,
the active namenode killed, the write retried until the other took over, a plain WebHDFS write
to it, the killed one back as a standby, and the stop. Only the places change: the set's base
dir is the test's own, not ``~/.nnlite/ha``, and its namenodes listen on free ports, not 9870
and 9871 (HTTP) and 8020 and 8021 (hdfs://)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.etcd_cluster import INSTALL, etcd_binary, free_ports
from tests.servers import wait_for
from tests.test_readme import paste, section_blocks

pytestmark = [pytest.mark.crash,
              pytest.mark.skipif(etcd_binary() is None, reason=INSTALL)]


def stop_leftovers(base: Path) -> None:
    """What a block that failed left running: run-ha (SIGTERM), then whatever child of it
    still has a pid file (SIGKILL)."""
    pid_file = base / "run-ha.pid"
    try:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
            wait_for(lambda: not pid_file.exists(), 120, "run-ha to stop")
    except (ProcessLookupError, ValueError):
        pass
    finally:
        for child in base.glob("*/pid"):
            try:
                os.kill(int(child.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def test_every_block_is_a_shell_block():
    blocks = section_blocks("High availability")
    assert len(blocks) == 3 and {lang for lang, _ in blocks} == {"sh"}


def test_the_blocks_run_as_pasted(tmp_path):
    base = tmp_path / "ha"
    port, other = free_ports(2)
    server = SimpleNamespace(url=f"http://127.0.0.1:{port}", port=port)
    places = {"nnlite run-ha ": f"nnlite run-ha --base-dir {base} --port {port} --port {other} "
                                f"--rpc-port 0 --rpc-port 0 ",
              "~/.nnlite/ha": str(base), "127.0.0.1:9871": f"127.0.0.1:{other}"}
    try:
        started, failover, stopped = paste(section_blocks("High availability"), server,
                                           tmp_path, **places)
    finally:
        stop_leftovers(base)
    assert "HA set ns1 is up" in started and f"127.0.0.1:{other}" in started
    lines = failover.splitlines()
    assert lines[:3] == ["active", "standby", "active"], failover
    assert '{"boolean":true}' in failover
    assert [line.rsplit(" ", 1)[-1] for line in lines if " /ha/" in line] == [
        "/ha/after", "/ha/before", "/ha/curl"], failover
    assert "nn1 (pid " in stopped and "was killed by SIGKILL" in stopped
    assert "nn2 is active now" in stopped and "nn1 started again" in stopped
    assert stopped.splitlines()[-1].endswith("stopped cleanly"), stopped
    assert not list(base.glob("*/pid"))
