"""What a namenode process answers while it loads its namespace: RetriableException, on
WebHDFS ("Namenode is in startup mode", as HDFS's NamenodeWebHdfsMethods answers while
``NameNode.isInStartupMode``) and on hdfs:// ("NameNode still not started", as
``NameNodeRpcServer.checkNNStartup``), never SafeModeException or a refused connection; then,
once loaded, the same calls are served. The load is held open by the fault point
``namenode.load`` (a sleep before the image is read), so the window does not depend on how
fast this machine reads a large image."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from nnlite.durability.faults import ENV as FAULTS_ENV
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import ipc
from nnlite.namenode.listen import ANNOUNCE_ENV
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import ROOT, seed, wait_for

RETRIABLE = "org.apache.hadoop.ipc.RetriableException"
HOLD = 8       # s the load is held: far longer than the asking takes


def announced(log, key: str) -> int | None:
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(f"{key}="):
            return int(line.split("=", 1)[1])
    return None


@pytest.fixture
def loading(tmp_path):
    """A namenode process whose load is held for HOLD seconds: (process, http port, rpc
    port, log) once both ports are announced. Killed at the end."""
    name = str(tmp_path / "name")
    seed([name], {"/d/f": 10})
    log = tmp_path / "namenode.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "namenode", "--port", "0", "--rpc-port", "0",
             "--name-dir", name], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, ANNOUNCE_ENV: "1",
                 FAULTS_ENV: f"namenode.load=sleep:{HOLD}"})
    try:
        wait_for(lambda: proc.poll() is not None or announced(log, "NNLITE_RPC_PORT"), 30,
                 "the ports to be announced", interval=0.02)
        assert proc.poll() is None, log.read_text()
        yield proc, announced(log, "NNLITE_HTTP_PORT"), announced(log, "NNLITE_RPC_PORT"), log
    finally:
        proc.kill()
        proc.wait()


def get(port: int, target: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{target}", timeout=10) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def loaded(port: int) -> bool:
    return get(port, "/jmx")[1]["beans"][0]["Loading"] == 0


def test_webhdfs_and_rpc_answer_retriable_while_loading_then_serve(loading):
    proc, http_port, rpc_port, log = loading
    status, body = get(http_port, "/webhdfs/v1/d/f?op=GETFILESTATUS&user.name=tester")
    assert (status, body["RemoteException"]) == (403, {
        "exception": "RetriableException", "javaClassName": RETRIABLE,
        "message": "Namenode is in startup mode"})
    for target in ("/data/v1/d/f?op=OPEN&user.name=tester",
                   "/admin?op=SAFEMODE&action=get&user.name=tester"):
        status, body = get(http_port, target)
        assert (status, body["RemoteException"]["javaClassName"]) == (403, RETRIABLE), target
    assert get(http_port, "/jmx")[1]["beans"][0]["Loading"] == 1
    with RawClient(rpc_port).connect() as client:
        header, _ = client.call("getFileInfo", cn.GetFileInfoRequestProto(src="/d/f"))
        assert header.status == ipc.RpcResponseHeaderRpcStatusProto.ERROR
        assert (header.exceptionClassName, header.errorMsg) == (
            RETRIABLE, "NameNode still not started")
        # the connection stays open: once loaded, the same call on it is served
        wait_for(lambda: loaded(http_port), HOLD + 30, "the namespace to load")
        status = client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/d/f")).fs
        assert status.length == 10
    assert get(http_port, "/webhdfs/v1/d/f?op=GETFILESTATUS&user.name=tester")[1][
        "FileStatus"]["length"] == 10
    assert "Traceback" not in log.read_text()
