"""The Python WebHDFS clients with their own Kerberos support, unmodified, against a secure
namenode and the tests' KDC: HdfsCLI's ``KerberosClient`` and fsspec's ``webhdfs`` with
``kerberos=True`` (both through requests-kerberos) log in from the user's ticket cache, write
and read files through the data step's token, and meet the permission checks as the
principal's short name."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.namenode.http.secure import (
    make_homes,
    secure_args,
    server_env,
)

pytest.importorskip("requests_kerberos")
hdfs = pytest.importorskip("hdfs")
fsspec = pytest.importorskip("fsspec")

from hdfs.ext.kerberos import KerberosClient  # noqa: E402
from hdfs.util import HdfsError  # noqa: E402

USERS = "tester=supergroup;alice=staff;bob=staff"


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    server = start_module_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS)
    make_homes(kdc, server, "alice", "bob")
    return server


@pytest.fixture
def as_alice(kdc, monkeypatch):
    """requests-kerberos reads the ticket cache KRB5CCNAME names."""
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{kdc.user('alice').ccache}")


def test_hdfscli_kerberos_client(nn, as_alice):
    client = KerberosClient(f"http://localhost:{nn.port}")
    client.makedirs("/user/alice/hdfscli/sub")
    client.write("/user/alice/hdfscli/data", data=b"through hdfscli", overwrite=True)
    with client.read("/user/alice/hdfscli/data") as reader:
        assert reader.read() == b"through hdfscli"
    assert sorted(client.list("/user/alice/hdfscli")) == ["data", "sub"]
    assert client.status("/user/alice/hdfscli/data")["owner"] == "alice"
    with pytest.raises(HdfsError, match="Permission denied: user=alice"):
        client.makedirs("/user/bob/not-alices")


def test_fsspec_webhdfs_with_kerberos(nn, as_alice):
    fs = fsspec.filesystem("webhdfs", host="localhost", port=nn.port, kerberos=True,
                           skip_instance_cache=True)
    fs.mkdir("/user/alice/fsspec")
    with fs.open("/user/alice/fsspec/part-0", "wb") as f:
        f.write(b"through fsspec")
    assert fs.cat("/user/alice/fsspec/part-0") == b"through fsspec"
    assert fs.info("/user/alice/fsspec/part-0")["owner"] == "alice"
    assert fs.ls("/user/alice/fsspec", detail=False) == ["/user/alice/fsspec/part-0"]
    with pytest.raises(PermissionError):
        fs.mkdir("/user/bob/not-alices")


def test_without_a_ticket_hdfscli_is_refused(nn, monkeypatch, tmp_path):
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'empty.ccache'}")
    with pytest.raises(HdfsError, match="Authentication failure"):     # HdfsCLI's 401
        KerberosClient(f"http://localhost:{nn.port}").list("/user")


def test_hadoops_webhdfs_filesystem_logged_in_from_a_keytab(kdc, nn):
    """Hadoop's WebHdfsFileSystem with hadoop.security.authentication=kerberos (in a JVM of
    its own, test_sasl's SecureHdfsClient.java on a webhdfs:// URI): SPNEGO from a keytab
    login, a token fetched over SPNEGO and then used alone, renewed, cancelled."""
    from tests.namenode.security.test_sasl import JAVA_CLIENT, jvm
    alice = kdc.user("alice")
    proc = subprocess.run(
        [*jvm(kdc), str(JAVA_CLIENT), f"webhdfs://localhost:{nn.port}", "authentication",
         alice.name, str(alice.keytab), "/user/alice/java"],
        capture_output=True, text=True, timeout=240, env={**os.environ, **kdc.env_for()})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = dict(line.partition("=")[::2] for line in proc.stdout.splitlines() if "=" in line)
    assert out["login"] == "alice@NNLITE.TEST short=alice"
    assert out["ls"] == "f owner=alice len=13"
    assert out["cat"] == "hello, secure"
    assert out["token"].startswith("WEBHDFS delegation service=")
    assert (out["token-cat"], out["token-owner"]) == ("hello, secure", "alice")
    # renewing or getting a token needs Kerberos (WebHDFS sends no token for them): the 401
    assert out["token-renew-error"] == ("org.apache.hadoop.security.AccessControlException:"
                                        "Authentication required")
    assert out["token-get-error"] == ("org.apache.hadoop.security.AccessControlException:"
                                      "Authentication required")
    assert out["renew"] == "true"
    # WebHdfsFileSystem re-raises the InvalidToken inside the SecurityException's message
    assert out["cancelled-cat-error"].startswith(
        "org.apache.hadoop.security.token.SecretManager$InvalidToken:token "
        "(HDFS_DELEGATION_TOKEN token ")
    assert out["cancelled-cat-error"].endswith("for alice with renewer alice) can't be found "
                                               "in cache")
