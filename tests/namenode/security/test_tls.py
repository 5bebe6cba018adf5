"""TLS on the web ports (``dfs.http.policy``, ssl-server.xml's keystore): the context from each
keystore type, and a real namenode answering WebHDFS, its data step, /jmx and the status page
over HTTPS to real clients (requests, HdfsCLI, fsspec, nnlite's CLI) that trust the test's CA,
while an untrusting client is refused at the handshake."""

from __future__ import annotations

import importlib.util
import ssl
import subprocess
import sys

import pytest
import requests

from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security import tls
from tests.tls_certs import Certificates

ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certificates:
    return Certificates.make(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def nn(start_module_namenode, certs):
    defines = [a for d in certs.server_defines() for a in ("-D", d)]
    return start_module_namenode(*defines)


def keystore(**keys: str) -> Config:
    return Config.load(None, [f"ssl.server.keystore.{k}={v}" for k, v in keys.items()])


# --------------------------------------------------------------------------- the keystore

def test_a_pem_keystore_makes_a_server_context(certs):
    context = tls.server_context(keystore(location=str(certs.server_pem), type="pem"))
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def test_a_missing_or_unreadable_keystore_is_one_config_error(certs, tmp_path):
    with pytest.raises(ConfigError, match="ssl.server.keystore.location must name"):
        tls.server_context(keystore(type="pem"))
    with pytest.raises(ConfigError, match="no file"):
        tls.server_context(keystore(location=str(tmp_path / "none.pem"), type="pem"))
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(ConfigError, match="is not a PEM file"):
        tls.server_context(keystore(location=str(tmp_path / "junk.pem"), type="pem"))
    with pytest.raises(ConfigError, match="must be one of pem, pkcs12, jks"):
        tls.server_context(keystore(location=str(certs.server_pem), type="bks"))


def test_a_jks_keystore_names_the_keytool_conversion(certs):
    with pytest.raises(ConfigError, match="keytool -importkeystore .* -deststoretype pkcs12"):
        tls.server_context(keystore(location=str(certs.server_pem), type="jks"))


def test_a_pkcs12_keystore_loads_with_cryptography_or_names_openssl(certs):
    store = certs.pkcs12("changeit")
    config = keystore(location=str(store), type="pkcs12", password="changeit")
    if importlib.util.find_spec("cryptography") is None:
        with pytest.raises(ConfigError, match="openssl pkcs12 -in"):
            tls.server_context(config)
    else:
        tls.server_context(config)


def test_the_policy_names_the_web_ports():
    def ports(policy: str) -> tuple[bool, bool]:
        return tls.web_ports(Config.load(None, [f"dfs.http.policy={policy}"]))
    assert ports("HTTP_ONLY") == (True, False)
    assert ports("https_only") == (False, True)
    assert ports("HTTP_AND_HTTPS") == (True, True)
    with pytest.raises(ConfigError, match="dfs.http.policy must be one of"):
        ports("HTTPS_PLEASE")


# --------------------------------------------------------------------------- a namenode

def test_webhdfs_and_jmx_answer_over_https_to_a_trusting_client(nn, certs):
    base = f"https://127.0.0.1:{nn.https_port}"
    answer = requests.get(f"{base}/webhdfs/v1/?op=GETFILESTATUS&user.name=tester",
                          verify=str(certs.ca), timeout=10)
    assert answer.status_code == 200
    assert answer.json()["FileStatus"]["type"] == "DIRECTORY"
    assert requests.get(f"{base}/jmx", verify=str(certs.ca), timeout=10).json()["beans"]
    assert requests.get(f"{base}/", verify=str(certs.ca), timeout=10).status_code == 200
    # HTTP_AND_HTTPS: the http port serves as before
    assert requests.get(f"{nn.url}/webhdfs/v1/?op=GETFILESTATUS&user.name=tester",
                        timeout=10).status_code == 200


def test_a_client_that_does_not_trust_the_ca_is_refused(nn):
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(f"https://127.0.0.1:{nn.https_port}/jmx", timeout=10)


def test_the_data_step_redirects_to_the_https_port(nn, certs):
    base = f"https://127.0.0.1:{nn.https_port}/webhdfs/v1/tls/redirect"
    create = requests.put(f"{base}?op=CREATE&user.name=tester", allow_redirects=False,
                          verify=str(certs.ca), timeout=10)
    assert create.status_code == 307
    location = create.headers["Location"]
    assert location.startswith(f"https://127.0.0.1:{nn.https_port}/data/v1/tls/redirect?")
    assert requests.put(location, data=b"over tls", verify=str(certs.ca),
                        timeout=10).status_code == 201
    read = requests.get(f"{base}?op=OPEN&user.name=tester", verify=str(certs.ca), timeout=10)
    assert read.content == b"over tls"
    plain = requests.put(f"{nn.url}/webhdfs/v1/tls/plain?op=CREATE&user.name=tester",
                         allow_redirects=False, timeout=10)
    assert plain.headers["Location"].startswith(f"http://127.0.0.1:{nn.port}/data/v1/")


def test_an_upload_refused_before_its_body_is_answered_over_tls(nn, certs, tmp_path):
    """Expect: 100-continue on TLS (no peeking there): the refusal comes back as the answer,
    not as a broken pipe halfway through the body."""
    from nnlite.client import connection
    from nnlite.client.peer import Peer, PeerRefusedError
    image = tmp_path / "fsimage"
    image.write_bytes(b"\0" * (8 << 20))
    connection.trust(str(certs.ca))
    try:
        with pytest.raises(PeerRefusedError) as refused:
            Peer(f"https://127.0.0.1:{nn.https_port}", "not-the-secret").upload_image(
                image, txid=1, namespace_id=1, md5="0" * 32)
    finally:
        connection.trust(None)
    assert refused.value.status == 403 and "shared secret" in refused.value.message


def test_hdfscli_and_fsspec_over_https(nn, certs):
    hdfs = pytest.importorskip("hdfs")
    fsspec = pytest.importorskip("fsspec")
    session = requests.Session()
    session.verify = str(certs.ca)
    session.trust_env = False      # else REQUESTS_CA_BUNDLE overrides verify (requests' rule)
    client = hdfs.InsecureClient(f"https://127.0.0.1:{nn.https_port}", user="tester",
                                 session=session)
    client.write("/tls/hdfscli", data=b"hdfscli over tls")
    with client.read("/tls/hdfscli") as reader:
        assert reader.read() == b"hdfscli over tls"
    fs = fsspec.filesystem("webhdfs", host="127.0.0.1", port=nn.https_port, user="tester",
                           use_https=True, session_verify=str(certs.ca),
                           skip_instance_cache=True)
    fs.session.trust_env = False
    fs.pipe("/tls/fsspec", b"fsspec over tls")
    assert fs.cat("/tls/fsspec") == b"fsspec over tls"
    assert fs.cat("/tls/hdfscli") == b"hdfscli over tls"


def test_nnlite_cli_trusts_the_configured_truststore(nn, certs):
    url = f"https://127.0.0.1:{nn.https_port}"

    def dfs(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "nnlite.cli", "dfs", "--namenode", url,
                               "--user", "tester", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)

    trusted = ("-D", f"ssl.client.truststore.location={certs.ca}")
    made = dfs(*trusted, "mkdir", "-p", "/tls/cli")
    assert made.returncode == 0, made.stderr
    listed = dfs(*trusted, "ls", "/tls")
    assert listed.returncode == 0 and "/tls/cli" in listed.stdout, listed.stderr
    refused = dfs("ls", "/tls")
    assert refused.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    catalog = subprocess.run([sys.executable, "-m", "nnlite.cli", "catalog", "--namenode", url,
                              "--user", "tester", *trusted, "ls", "/tls"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert catalog.returncode == 0, catalog.stderr        # the catalog API, over https


def test_https_only_serves_no_plain_port_and_redirects_over_https(tmp_path, certs):
    from tests.servers import NamenodeInThread
    with NamenodeInThread(str(tmp_path / "name"),
                          *certs.server_defines("HTTPS_ONLY")) as nn:
        service = nn.service
        assert service.port == service.https_port
        base = f"https://127.0.0.1:{service.https_port}"
        create = requests.put(f"{base}/webhdfs/v1/only?op=CREATE&user.name=tester",
                              allow_redirects=False, verify=str(certs.ca), timeout=10)
        assert create.headers["Location"].startswith(f"{base}/data/v1/only?")
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(f"http://127.0.0.1:{service.https_port}/jmx", timeout=10)
