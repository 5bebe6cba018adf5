"""An HA set in secure mode: its namenodes reach each other's service endpoints as
``nn/localhost`` from their keytabs (``security/services.py``, ``client/peer.py``'s
``ServiceLogin``) -- the standby's checkpoint upload, the active's block copies, and the cede
of a graceful failover -- while a user principal is refused 403. Real etcd, real KDC, real
namenode processes."""

from __future__ import annotations

import http.client

import pytest

from nnlite.client.peer import Peer, PeerRefusedError
from nnlite.namenode.security import services
from nnlite.namenode.security.services import NOT_A_SERVICE
from tests.namenode.ha.haset import HASet
from tests.servers import wait_for

pytestmark = pytest.mark.crash

REALM = "NNLITE.TEST"
NN = f"nn/localhost@{REALM}"


@pytest.fixture
def secure_set(tmp_path, etcd_single, kdc):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"))
    ha = HASet(tmp_path, etcd_single, settings={
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
        "dfs.namenode.keytab.file": str(keytab),
        "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
        "dfs.web.authentication.kerberos.keytab": str(keytab),
        "checkpoint.txns": "5", "checkpoint.period": "3600"})
    ha.keytab = keytab
    try:
        yield ha
    finally:
        ha.close()


def call(login, url: str, method: str, target: str, body: bytes = b"") -> tuple[int, dict, bytes]:
    """One request with a fresh SPNEGO token of ``login``."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(method, target, body=body or None,
                     headers={"Authorization": login.negotiate(host)})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_the_set_checkpoints_copies_blocks_and_fails_over_as_its_service(secure_set, kdc):
    as_nn = services.login(NN, str(secure_set.keytab))
    active = secure_set.start_all()
    standby = 1 - active
    url, other = secure_set.url(active), secure_set.url(standby)
    for i in range(8):                     # past checkpoint.txns: the standby checkpoints
        status, _, body = call(as_nn, url, "PUT", f"/webhdfs/v1/d{i}?op=MKDIRS")
        assert status == 200, body
    wait_for(lambda: Peer(url, as_nn).status()["lastCheckpointTxid"] > 1, 60,
             "the standby's checkpoint, uploaded as nn/localhost")
    # a file's close copies its block to the standby first (the replicator, as nn/localhost)
    status, headers, body = call(as_nn, url, "PUT", "/webhdfs/v1/f?op=CREATE")
    assert status == 307, body
    location = headers["Location"]
    status, _, body = call(as_nn, url, "PUT", location[location.index("/data/"):], b"x" * 100)
    assert status == 201, body
    with Peer(other, as_nn) as peer:
        wait_for(lambda: len(peer.block_report()) == 1, 30, "the block on the standby")
    alice = kdc.user("alice")
    with (Peer(other, services.login(alice.name, str(alice.keytab))) as peer,
          pytest.raises(PeerRefusedError) as refused):
        peer.block_report()
    assert refused.value.status == 403 and NOT_A_SERVICE in refused.value.message
    # a graceful failover: the standby asks the active to cede, as nn/localhost
    status, _, body = call(as_nn, other, "POST", "/admin?op=FAILOVER")
    assert status == 200, body
    assert secure_set.active(excluding=active) == standby
