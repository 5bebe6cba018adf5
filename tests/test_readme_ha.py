"""The README's "High availability" blocks, pasted into bash in order as ``tests/test_readme.py``
pastes the "Using it" ones. The first three: ``run-ha`` started in the background by the first
block, a write, the active namenode killed, the write retried until the other took over, a
plain WebHDFS write to it, the killed one back as a standby, and the stop. The last three, "a
set of your own": one etcd member, the configuration, nn1 formatted and started and nn2
bootstrapped and started by id alone (no ``--port``: each binds the HTTP and RPC addresses
named after it), a write, the stop; no command warns of a key of that configuration. Only the
places change: the set's base dir is the test's own, not ``~/.nnlite/ha``, and every process
listens on free ports, not 9870 and 9871 (HTTP) and 8020 and 8021 (hdfs://), nor 9880, 9881,
8030, 8031 and etcd's 2379 and 2380."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from nnlite.client.etcd.client import Etcd
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.namenode.ha.quorum_journal import Layout, parse_leader
from tests.etcd_cluster import INSTALL, etcd_binary, free_ports
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import wait_for
from tests.test_readme import paste, section_blocks

pytestmark = [pytest.mark.crash, pytest.mark.etcd,
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
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(child.read_text()), signal.SIGKILL)


def test_every_block_is_a_shell_block():
    blocks = section_blocks("High availability")
    assert len(blocks) == 6 and {lang for lang, _ in blocks} == {"sh"}
    assert "run-ha" in blocks[0][1] and "etcd --data-dir" in blocks[3][1]


def test_the_blocks_run_as_pasted(tmp_path):
    base = tmp_path / "ha"
    port, other = free_ports(2)
    server = SimpleNamespace(url=f"http://127.0.0.1:{port}", port=port)
    places = {"nnlite run-ha ": f"nnlite run-ha --base-dir {base} --port {port} --port {other} "
                                f"--rpc-port 0 --rpc-port 0 ",
              "~/.nnlite/ha": str(base), "127.0.0.1:9871": f"127.0.0.1:{other}"}
    try:
        started, failover, stopped = paste(section_blocks("High availability")[:3], server,
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


def stop_pids(base: Path) -> None:
    """SIGKILL whatever a failed own-set block left running (its pid files)."""
    for pid_file in base.glob("*.pid"):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_the_own_set_blocks_run_as_pasted(tmp_path):
    http1, http2, rpc1, rpc2, client, peer = free_ports(6)
    server = SimpleNamespace(url=f"http://127.0.0.1:{http1}", port=http1)
    places = {"127.0.0.1:9880": f"127.0.0.1:{http1}", "127.0.0.1:9881": f"127.0.0.1:{http2}",
              "127.0.0.1:8030": f"127.0.0.1:{rpc1}", "127.0.0.1:8031": f"127.0.0.1:{rpc2}",
              "127.0.0.1:2379": f"127.0.0.1:{client}", "127.0.0.1:2380": f"127.0.0.1:{peer}"}
    start, use, stop = section_blocks("High availability")[3:]
    base = tmp_path / "myha"
    try:
        paste([start], server, tmp_path, **places)
        used = paste([use], server, tmp_path, **places)[0]
        # each namenode bound the addresses named after it, and the leader key says so
        with Etcd([f"http://127.0.0.1:{client}"]) as etcd:
            leader = etcd.get(Layout.of("/nnlite", "ns1").leader)
        assert leader is not None
        assert parse_leader(leader.value) == {"id": "nn1", "http": f"127.0.0.1:{http1}"}
        for port in (rpc1, rpc2):
            with RawClient(port).connect() as rpc:
                header, _ = rpc.call("getFileInfo", cn.GetFileInfoRequestProto(src="/mine"))
                assert header.exceptionClassName in ("", "org.apache.hadoop.ipc."
                                                         "StandbyException"), header
        stopped = paste([stop], server, tmp_path, **places)[0]
    finally:
        stop_pids(base)
    lines = used.splitlines()
    assert lines[:2] == ["active", "standby"], used
    assert '"pathSuffix":"mine"' in used and "I am not Active!" in used, used
    assert "stopped cleanly" in stopped, stopped
    for log in ("nn1.log", "nn2.log"):
        text = (base / log).read_text()
        assert "unknown configuration key" not in text and "Traceback" not in text, text
        assert f"{'nn1' if log == 'nn1.log' else 'nn2'} joined HA set ns1" in text, text
