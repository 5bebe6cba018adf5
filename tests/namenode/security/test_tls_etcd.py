"""The HA journal's etcd over TLS with client certificates (``tls.etcd_context``): etcd 3.4
members run with ``--client-cert-auth --trusted-ca-file`` on https endpoints. nnlite's etcd
client with the configured CA, certificate and key talks to them; without a client
certificate the member refuses the handshake; an HA set of two namenodes elects, writes and
fails over on such a cluster."""

from __future__ import annotations

import pytest

from nnlite.client.errors import EtcdUnavailableError
from nnlite.client.etcd.client import Etcd, tls_context
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security import tls
from tests.etcd_cluster import INSTALL, EtcdCluster, etcd_binary
from tests.namenode.ha.haset import HASet, request
from tests.servers import wait_for
from tests.tls_certs import Certificates

pytestmark = [pytest.mark.etcd, pytest.mark.skipif(etcd_binary() is None, reason=INSTALL)]


@pytest.fixture
def certs(tmp_path) -> Certificates:
    return Certificates.make(tmp_path / "tls")


@pytest.fixture
def etcd_tls(tmp_path, certs):
    cluster = EtcdCluster(tmp_path / "etcd", 1, tls=certs)
    try:
        yield cluster.start()
    finally:
        cluster.close()


def settings(cluster: EtcdCluster, certs: Certificates) -> dict[str, str]:
    cert, key = cluster.client_cert
    return {"nnlite.ha.etcd.ssl.ca": str(certs.ca), "nnlite.ha.etcd.ssl.cert": str(cert),
            "nnlite.ha.etcd.ssl.key": str(key)}


def test_the_context_comes_from_the_three_keys(certs, tmp_path):
    assert tls.etcd_context(Config.load(None, [])) is None
    with pytest.raises(ConfigError, match="needs nnlite.ha.etcd.ssl.key"):
        tls.etcd_context(Config.load(None, [f"nnlite.ha.etcd.ssl.cert={certs.server_cert}"]))
    with pytest.raises(ConfigError, match="etcd's TLS files cannot be used"):
        tls.etcd_context(Config.load(None, [f"nnlite.ha.etcd.ssl.ca={tmp_path / 'none'}"]))


def test_a_client_certificate_is_needed_to_talk_to_the_members(etcd_tls, certs):
    assert etcd_tls.endpoints[0].startswith("https://")
    config = Config.load(None, [f"{k}={v}" for k, v in settings(etcd_tls, certs).items()])
    with Etcd(etcd_tls.endpoints, timeout=5, tls=tls.etcd_context(config)) as etcd:
        etcd.put(b"/tls/key", b"value")
        found = etcd.get(b"/tls/key")
        assert found is not None and found.value == b"value"
    anonymous = tls_context(str(certs.ca), "", "")
    with (Etcd(etcd_tls.endpoints, timeout=5, tls=anonymous) as etcd,
          pytest.raises(EtcdUnavailableError)):
        etcd.get(b"/tls/key")


def test_an_ha_set_elects_writes_and_fails_over_on_etcd_over_tls(tmp_path, etcd_tls, certs):
    ha = HASet(tmp_path, etcd_tls, settings=settings(etcd_tls, certs))
    try:
        active = ha.start_all()
        status, body = request(ha.url(active), "PUT",
                               "/webhdfs/v1/over-tls?op=MKDIRS&user.name=tester")
        assert status == 200, body
        ha.kill(active)
        survivor = ha.active(excluding=active)
        wait_for(lambda: request(ha.url(survivor), "GET",
                                 "/webhdfs/v1/over-tls?op=GETFILESTATUS&user.name=tester"
                                 )[0] == 200, 60, "the directory on the new active")
    finally:
        ha.close()
