"""The Python WebHDFS clients with their own Kerberos support, unmodified, against a secure
namenode and the tests' KDC: HdfsCLI's ``KerberosClient`` and fsspec's ``webhdfs`` with
``kerberos=True`` (both through requests-kerberos) log in from the user's ticket cache, write
and read files through the data step's token, and meet the permission checks as the
principal's short name."""

from __future__ import annotations

import pytest

from tests.namenode.http.secure import kerberos_session, secure_args, server_env

pytest.importorskip("requests_kerberos")
hdfs = pytest.importorskip("hdfs")
fsspec = pytest.importorskip("fsspec")

from hdfs.ext.kerberos import KerberosClient  # noqa: E402
from hdfs.util import HdfsError  # noqa: E402

USERS = "tester=supergroup;alice=staff;bob=staff"


@pytest.fixture(scope="module")
def nn(kdc, start_module_namenode):
    server = start_module_namenode(*secure_args(kdc), env=server_env(kdc), users=USERS)
    tester = kerberos_session(kdc.user("tester"))
    base = f"http://localhost:{server.port}/webhdfs/v1"
    for user in ("alice", "bob"):
        assert tester.put(f"{base}/user/{user}?op=MKDIRS").ok
        assert tester.put(f"{base}/user/{user}?op=SETOWNER&owner={user}").ok
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
