"""An HA set under ``dfs.http.policy=HTTPS_ONLY``: no plain port is bound, so its namenodes
name each other by ``dfs.namenode.https-address.<ns>.<nn>`` and call each other over TLS,
trusting ssl-client.xml's truststore -- the standby's pulse of the active (TLS on the probe
socket), its checkpoint upload, the active's block copies -- and a client and the secondary
following the nameservice find the active over https, before and after the active is
SIGKILLed. Real etcd, real namenode processes, certificates signed by a test CA."""

from __future__ import annotations

import http.client
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnlite.client import connection
from nnlite.client.failover import Nameservice
from nnlite.client.peer import Peer
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.commands.support import load_config, namenode_address
from nnlite.namenode.config import HA_KEY, Config
from nnlite.namenode.listen import ANNOUNCE_ENV
from tests.commands.helpers import nnlite, ok
from tests.etcd_cluster import EtcdCluster, free_ports
from tests.namenode.ha.haset import NAMESERVICE, USER, HASet
from tests.servers import ROOT, NamenodeProcess, announced_port, wait_for
from tests.tls_certs import Certificates

pytestmark = pytest.mark.crash

SECRET = "ha-set-secret"
# far longer than the takeover may take: a SIGKILLed active is seen at its port's refusal
# (the pulse over TLS), not when its lease runs out
LEASE_TTL = "60"


class HttpsSet(HASet):
    """``HASet`` with HTTPS_ONLY: each namenode's https-address is where it is reached."""

    def __init__(self, tmp_path: Path, etcd: EtcdCluster, certs: Certificates):
        self.ca = certs.ca
        self.https_ports = free_ports(2)
        super().__init__(tmp_path, etcd, settings={
            "dfs.http.policy": "HTTPS_ONLY",
            "ssl.server.keystore.location": str(certs.server_pem),
            "ssl.server.keystore.type": "pem",
            "ssl.client.truststore.location": str(certs.ca),
            **{f"dfs.namenode.https-address.{NAMESERVICE}.nn{i + 1}": f"127.0.0.1:{port}"
               for i, port in enumerate(self.https_ports)},
            "nnlite.ha.lease.ttl": LEASE_TTL,
            "checkpoint.txns": "5", "checkpoint.period": "3600"})

    def url(self, i: int) -> str:
        return f"https://127.0.0.1:{self.https_ports[i]}"

    def start(self, i: int, timeout: float = 30) -> NamenodeProcess:
        """The namenode's process, once it announced its HTTPS port and is ready (no HTTP
        port is announced: ``NamenodeProcess.start`` waits for one)."""
        log = self.root / f"namenode-{time.monotonic_ns()}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "nnlite.cli", "namenode", "--name-dir", self.dirs[i],
                 "--port", str(self.ports[i]), "--rpc-port", str(self.rpc_ports[i]),
                 "--conf", str(self.conf), "-D", f"dfs.ha.namenode.id={self.ids[i]}"],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, ANNOUNCE_ENV: "1", "PYTHONFAULTHANDLER": "1"})
        node = NamenodeProcess(proc, 0, [self.dirs[i]], log)
        self.nodes[i] = node
        node.port = announced_port(proc, log, "NNLITE_HTTPS_PORT", timeout, "namenode")
        wait_for(lambda: proc.poll() is not None
                 or "namenode ready:" in log.read_text(errors="replace"), timeout,
                 "the namenode ready")
        assert proc.poll() is None, log.read_text(errors="replace")
        return node

    def is_active(self, i: int) -> bool:
        if not self.running(i):
            return False
        try:
            return get(self, i, "/isActive")[0] == 200
        except OSError:
            return False


def get(ha: HttpsSet, i: int, target: str, method: str = "GET") -> tuple[int, bytes]:
    """``GET`` (or ``method``) ``target`` on namenode ``i`` over https, verified against the
    test CA."""
    context = ssl.create_default_context(cafile=str(ha.ca))
    conn = http.client.HTTPSConnection("127.0.0.1", ha.https_ports[i], timeout=10,
                                       context=context)
    try:
        conn.request(method, target)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_https_only_names_the_peers_by_their_https_addresses():
    ha = [f"dfs.nameservices={NAMESERVICE}", f"dfs.ha.namenodes.{NAMESERVICE}=nn1,nn2",
          *(f"dfs.namenode.{kind}-address.{NAMESERVICE}.nn{i}=127.0.0.1:{port + i}"
            for kind, port in (("http", 9870), ("https", 9880)) for i in (1, 2))]
    plain = Config.load(None, ["dfs.http.policy=HTTP_AND_HTTPS", *ha])
    assert plain.ha_urls() == {"nn1": "http://127.0.0.1:9871", "nn2": "http://127.0.0.1:9872"}
    assert plain.namenode_url() == "http://127.0.0.1:9870"
    secure = Config.load(None, ["dfs.http.policy=HTTPS_ONLY", *ha])
    assert secure.ha_namenodes() == {"nn1": "127.0.0.1:9881", "nn2": "127.0.0.1:9882"}
    assert secure.ha_urls() == {"nn1": "https://127.0.0.1:9881",
                                "nn2": "https://127.0.0.1:9882"}
    assert secure.namenode_url() == "https://127.0.0.1:9871"
    assert all(HA_KEY.match(item.partition("=")[0]) for item in ha[1:])


@pytest.fixture
def https_set(tmp_path, etcd_single):
    ha = HttpsSet(tmp_path, etcd_single, Certificates.make(tmp_path / "tls"))
    try:
        yield ha
    finally:
        ha.close()
        connection.trust(None)


def test_an_https_only_set_writes_checkpoints_and_fails_over_over_tls(https_set):
    ha = https_set
    # the client's way: the nameservice of --conf, trusting its truststore
    config = load_config(str(ha.conf), [])
    address = namenode_address(None, config, "")
    assert isinstance(address, Nameservice)
    assert list(address.namenodes.values()) == [ha.url(0), ha.url(1)]
    active = ha.start_all()
    standby = 1 - active
    with WebHdfsClient(address, USER) as client:
        for i in range(8):             # past checkpoint.txns: the standby checkpoints
            assert client.mkdirs(f"/over-https/d{i}")
        client.create("/over-https/f", b"x" * 100)
    # the active's block copy, over https
    with Peer(ha.url(standby), SECRET) as peer:
        wait_for(lambda: len(peer.block_report()) == 1, 30, "the block on the standby")
    # the standby's checkpoint, uploaded over https
    wait_for(lambda: Peer(ha.url(active), SECRET).status()["lastCheckpointTxid"] > 1, 60,
             "the standby's checkpoint, uploaded over https")
    # the standby's status page links to the active's over https
    status, page = get(ha, standby, "/")
    assert status == 200
    assert f'href="https://127.0.0.1:{ha.https_ports[active]}/"' in page.decode()
    # the standby's pulse of the active, over TLS, answers
    with WebHdfsClient(ha.url(standby), USER) as client:
        wait_for(lambda: client.service_state()["activeAlive"], 30, "the standby's pulse")
    ha.kill(active)
    # taken over long before the lease of LEASE_TTL s ends: the pulse saw the refusal
    assert ha.active(timeout=40, excluding=active) == standby
    with WebHdfsClient(address, USER) as client:
        assert {s["pathSuffix"] for s in client.list("/over-https")} == \
            {f"d{i}" for i in range(8)} | {"f"}
        assert b"".join(client.read("/over-https/f")) == b"x" * 100
        assert client.url == ha.url(standby)
    # the secondary follows the nameservice over https too, to the new active
    (line,) = ok(nnlite(None, "secondary", "--namenode", NAMESERVICE, "--conf", str(ha.conf),
                        "--checkpoint-dir", str(ha.root / "ckpt"), "--checkpoint-now"))
    assert line.startswith("Checkpoint done: image txid ")
    # the killed namenode back as a standby, then a graceful failover to it: it asks the
    # active to cede, and the cede, the fence and its takeover cross the https addresses
    ha.start(active)
    wait_for(lambda: get(ha, active, "/isActive")[0] == 405, 30, "the standby back")
    status, body = get(ha, active, f"/admin?op=FAILOVER&user.name={USER}", "POST")
    assert status == 200, body
    assert ha.active(timeout=60) == active
    with WebHdfsClient(address, USER) as client:
        assert b"".join(client.read("/over-https/f")) == b"x" * 100
