"""ClientNamenodeProtocol with a real client: hdfs-native (the Rust client, PyPI
``hdfs-native``) against a real namenode process, its metadata calls over hdfs:// and the
same namespace seen over WebHDFS; errors are the exceptions HDFS's give."""

from __future__ import annotations

import os

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.acl import FsPermissionProto
from tests.namenode.rpc.rawclient import RawClient

hdfs_native = pytest.importorskip("hdfs_native")


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode()


@pytest.fixture(scope="module")
def client(nn):
    """hdfs-native as the namenode's superuser (the user running the tests)."""
    return hdfs_native.Client(nn.hdfs)


@pytest.fixture(scope="module")
def webhdfs(nn):
    web = WebHdfsClient(nn.url, user="tester")
    yield web
    web.close()


def test_mkdirs_then_file_info_and_listing(client, webhdfs):
    client.mkdirs("/meta/a/b", 0o750, create_parent=True)
    status = client.get_file_info("/meta/a")
    assert (status.isdir, status.permission, status.length) == (True, 0o750, 0)
    assert [s.path for s in client.list_status("/meta/a")] == ["/meta/a/b"]
    assert webhdfs.status("/meta/a/b")["type"] == "DIRECTORY"


def test_mkdirs_without_parents_needs_the_parent(client):
    with pytest.raises(FileNotFoundError):
        client.mkdirs("/no/such/parent", 0o755, create_parent=False)


def test_a_missing_path_is_file_not_found(client):
    with pytest.raises(FileNotFoundError):
        client.get_file_info("/meta/missing")
    with pytest.raises(FileNotFoundError):
        list(client.list_status("/meta/missing"))


def test_rename_and_delete(client):
    client.mkdirs("/ren/src", 0o755, True)
    client.rename("/ren/src", "/ren/dst")
    assert [s.path for s in client.list_status("/ren")] == ["/ren/dst"]
    assert client.delete("/ren", recursive=True)
    with pytest.raises(FileNotFoundError):
        client.get_file_info("/ren")


def test_rename_onto_an_existing_file_needs_overwrite(client):
    for name in ("x", "y"):
        with client.create(f"/ow/{name}") as out:
            out.write(name.encode())
    with pytest.raises(Exception, match="FileAlreadyExists|exists"):
        client.rename("/ow/x", "/ow/y")
    client.rename("/ow/x", "/ow/y", overwrite=True)
    with client.read("/ow/y") as f:
        assert f.read() == b"x"


def test_attributes_permission_owner_times_replication(client):
    with client.create("/attrs/f") as out:
        out.write(b"abc")
    client.set_permission("/attrs/f", 0o600)
    client.set_owner("/attrs/f", "tester", "testers")
    client.set_times("/attrs/f", 1_700_000_000_000, 1_700_000_001_000)
    assert client.set_replication("/attrs/f", 2)
    status = client.get_file_info("/attrs/f")
    assert (status.permission, status.owner, status.group) == (0o600, "tester", "testers")
    assert (status.modification_time, status.access_time) == (1_700_000_000_000,
                                                               1_700_000_001_000)
    assert (status.replication, status.length) == (2, 3)


def test_content_summary(client):
    client.mkdirs("/sum/d", 0o755, True)
    with client.create("/sum/d/f") as out:
        out.write(b"12345")
    summary = client.get_content_summary("/sum")
    assert (summary.length, summary.file_count, summary.directory_count) == (5, 1, 2)


def test_an_ordinary_user_is_refused_what_the_permissions_refuse(client, nn):
    """hdfs-native keeps one connection per namenode in a process, so "alice" (of group
    staff, no superuser) speaks over a connection of its own (its context names the user)."""
    client.mkdirs("/private", 0o700, True)
    with RawClient(nn.rpc_port).connect(user="alice") as tester:
        header, _ = tester.call("mkdirs", cn.MkdirsRequestProto(
            src="/private/x", masked=FsPermissionProto(perm=0o755), createParent=True))
        assert header.exceptionClassName == "org.apache.hadoop.security.AccessControlException"
        assert "Permission denied: user=alice, access=WRITE" in header.errorMsg
        header, _ = tester.call("getListing", cn.GetListingRequestProto(
            src="/private", startAfter=b"", needLocation=False))
        assert header.exceptionClassName == "org.apache.hadoop.security.AccessControlException"


def test_a_file_written_over_hdfs_reads_back_over_webhdfs(client, webhdfs):
    data = os.urandom(200_000)
    with client.create("/bytes/f") as out:
        out.write(data)
    client.set_permission("/bytes/f", 0o644)
    assert b"".join(webhdfs.read("/bytes/f")) == data
    with client.append("/bytes/f") as out:
        out.write(b"more")
    with client.read("/bytes/f") as f:
        assert f.read() == data + b"more"


def test_acls(client):
    client.mkdirs("/acl", 0o750, True)
    entry = hdfs_native.AclEntry("user", "access", "r-x", "bob")
    client.modify_acl_entries("/acl", [entry])
    status = client.get_acl_status("/acl")
    assert [(e.type, e.name, e.permissions) for e in status.entries] == \
        [("user", "bob", "r-x"), ("group", "", "r-x")]
    client.remove_acl("/acl")
    assert client.get_acl_status("/acl").entries == []


def test_hdfs_natives_fsspec_filesystem(nn):
    from hdfs_native.fsspec import HdfsFileSystem
    fs = HdfsFileSystem(host="127.0.0.1", port=nn.rpc_port, skip_instance_cache=True)
    fs.makedirs("/fsspec/a", exist_ok=True)
    with fs.open("/fsspec/a/f.txt", "wb") as out:
        out.write(b"via fsspec")
    assert fs.cat("/fsspec/a/f.txt") == b"via fsspec"
    assert fs.info("/fsspec/a/f.txt")["size"] == 10
    assert [e.rsplit("/", 1)[1] for e in fs.ls("/fsspec/a", detail=False)] == ["f.txt"]
    fs.mv("/fsspec/a/f.txt", "/fsspec/a/g.txt")
    fs.rm("/fsspec", recursive=True)
    assert not fs.exists("/fsspec")
