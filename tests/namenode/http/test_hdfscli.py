"""HdfsCLI (``hdfs`` on PyPI), unmodified, against a live namenode: the metadata calls a
pipeline owner makes. File contents come in a later issue; the files here are seeded into the
name dir before the service starts."""

from __future__ import annotations

import itertools

import pytest

hdfs = pytest.importorskip("hdfs")

from hdfs.util import HdfsError  # noqa: E402

FILES = {"/data/part-0": 100, "/data/part-1": 250, "/data/sub/part-2": 50}
_ids = itertools.count()


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode("-D", "hadoop.proxyuser.tester.users=alice",
                                 "-D", "hadoop.proxyuser.tester.hosts=127.0.0.1", files=FILES)


@pytest.fixture(scope="module")
def client(nn):
    return hdfs.InsecureClient(nn.url, user="tester")


@pytest.fixture
def d(client) -> str:
    path = f"/t/d{next(_ids)}"
    client.makedirs(path)
    return path


def test_makedirs_list_and_status(client, d):
    client.makedirs(d + "/a/b", permission="750")
    client.makedirs(d + "/c")
    assert client.list(d) == ["a", "c"]
    listed = dict(client.list(d, status=True))
    assert listed["a"]["type"] == "DIRECTORY" and listed["a"]["childrenNum"] == 1
    status = client.status(d + "/a/b")
    assert (status["type"], status["permission"], status["owner"]) == \
        ("DIRECTORY", "750", "tester")
    assert status["pathSuffix"] == ""
    client.makedirs(d + "/a/b")                       # exists: fine
    assert client.list(d + "/a/b") == []


def test_status_of_missing_paths(client, d):
    assert client.status(d + "/nope", strict=False) is None
    with pytest.raises(HdfsError) as info:
        client.status(d + "/nope")
    assert info.value.exception == "FileNotFoundException"
    assert client.content(d + "/nope", strict=False) is None


def test_files_status_listing_and_content(client):
    status = client.status("/data/part-1")
    assert (status["type"], status["length"], status["replication"]) == ("FILE", 250, 1)
    assert client.list("/data") == ["part-0", "part-1", "sub"]
    with pytest.raises(HdfsError, match="is not a directory"):
        client.list("/data/part-0")
    summary = client.content("/data")
    assert (summary["directoryCount"], summary["fileCount"], summary["length"]) == (2, 3, 400)
    assert summary["spaceConsumed"] == 400 and summary["quota"] == -1
    assert client.content("/data/part-0")["length"] == 100


def test_walk(client):
    walked = list(client.walk("/data"))
    assert walked == [("/data", ["sub"], ["part-0", "part-1"]),
                      ("/data/sub", [], ["part-2"])]
    assert list(client.walk("/data/part-0")) == []


def test_rename(client, d):
    client.makedirs(d + "/a/x")
    client.makedirs(d + "/into")
    client.rename(d + "/a", d + "/b")
    assert client.list(d) == ["b", "into"]
    client.rename(d + "/b", d + "/into")              # into an existing directory
    assert client.list(d + "/into") == ["b"] and client.list(d + "/into/b") == ["x"]
    with pytest.raises(HdfsError, match="Unable to rename"):
        client.rename(d + "/missing", d + "/z")
    with pytest.raises(HdfsError, match="Unable to rename"):
        client.rename(d + "/into", d + "/no/parent/here")


def test_delete(client, d):
    client.makedirs(d + "/full/x")
    client.makedirs(d + "/empty")
    with pytest.raises(HdfsError) as info:
        client.delete(d + "/full")
    assert info.value.exception == "PathIsNotEmptyDirectoryException"
    assert client.delete(d + "/empty") is True
    assert client.delete(d + "/full", recursive=True) is True
    assert client.delete(d + "/full", recursive=True) is False
    assert client.list(d) == []


def test_delete_to_trash(client, d):
    """skip_trash=False: GETTRASHROOT, MKDIRS under it, RENAME into it."""
    client.makedirs(d + "/old/x")
    assert client.delete(d + "/old", recursive=True, skip_trash=False) is True
    assert client.list(d) == []
    [stamp] = client.list("/user/tester/.Trash/Current")
    assert client.list(f"/user/tester/.Trash/Current/{stamp}") == ["old"]
    assert client.list(f"/user/tester/.Trash/Current/{stamp}/old") == ["x"]


def test_relative_paths_resolve_against_the_home_directory(nn, d):
    relative = hdfs.InsecureClient(nn.url, user="tester", root="rel")
    relative.makedirs("a/b")
    assert relative.resolve("a") == "/user/tester/rel/a"
    assert relative.list("a") == ["b"]


def test_latest_marker(client, d):
    for name, mtime in (("old", 1000), ("new", 3000), ("mid", 2000)):
        client.makedirs(f"{d}/{name}")
        client.set_times(f"{d}/{name}", modification_time=mtime)
    assert client.resolve(d + "/#LATEST") == d + "/new"


def test_attributes(client, d):
    client.set_permission(d, "1777")
    assert client.status(d)["permission"] == "1777"
    client.set_owner(d, owner="alice", group="staff")
    status = client.status(d)
    assert (status["owner"], status["group"]) == ("alice", "staff")
    client.set_times(d, access_time=1234, modification_time=5678)
    status = client.status(d)
    assert (status["accessTime"], status["modificationTime"]) == (1234, 5678)
    with pytest.raises(HdfsError) as info:
        client.set_permission(d, "999")
    assert info.value.exception == "IllegalArgumentException"


def test_set_replication(client, d):
    with pytest.raises(HdfsError, match="is not a file"):    # a directory answers false
        client.set_replication(d, 2)
    client.set_replication("/data/sub/part-2", 3)
    assert client.status("/data/sub/part-2")["replication"] == 3
    assert client.content("/data/sub")["spaceConsumed"] == 150
    client.set_replication("/data/sub/part-2", 1)


def test_other_users_and_proxies(nn, client, d):
    bob = hdfs.InsecureClient(nn.url, user="bob")
    with pytest.raises(HdfsError) as info:
        bob.makedirs(d + "/x")
    assert info.value.exception == "AccessControlException"
    assert bob.list(d) == []
    client.set_permission(d, "777")
    as_alice = hdfs.InsecureClient(nn.url, user="tester", proxy="alice")
    as_alice.makedirs(d + "/alices")
    assert client.status(d + "/alices")["owner"] == "alice"
    bob_as_alice = hdfs.InsecureClient(nn.url, user="bob", proxy="alice")
    with pytest.raises(HdfsError) as info:
        bob_as_alice.makedirs(d + "/not-alices")
    assert info.value.exception == "SecurityException"
    assert client.list(d) == ["alices"]


def test_acls_through_hdfscli(client, d):
    """HdfsCLI's ACL calls: acl_status, set_acl (SETACL, or MODIFYACLENTRIES with
    clear=False), remove_acl_entries with the entries named as ``type:name:``,
    remove_default_acl and remove_acl."""
    client.makedirs(d + "/a", permission="750")
    assert client.acl_status(d + "/a") == {"entries": [], "group": client.status(d)["group"],
                                           "owner": "tester", "permission": "750",
                                           "stickyBit": False}
    client.set_acl(d + "/a", "user::rwx,user:alice:r-x,group::r--,other::---")
    assert client.acl_status(d + "/a")["entries"] == ["user:alice:r-x", "group::r--"]
    assert client.status(d + "/a")["aclBit"] is True
    assert client.status(d + "/a")["permission"] == "750"              # the mask: r-x
    client.set_acl(d + "/a", "user:bob:rwx,default:user:alice:rwx", clear=False)
    assert client.acl_status(d + "/a")["entries"][:3] == [
        "user:alice:r-x", "user:bob:rwx", "group::r--"]
    client.remove_acl_entries(d + "/a", "user:bob:")
    client.remove_default_acl(d + "/a")
    assert client.acl_status(d + "/a")["entries"] == ["user:alice:r-x", "group::r--"]
    client.remove_acl(d + "/a")
    assert client.acl_status(d + "/a")["entries"] == []
    assert "aclBit" not in client.status(d + "/a")
    assert client.acl_status(d + "/missing", strict=False) is None
    with pytest.raises(HdfsError) as info:
        client.set_acl(d + "/a", "user:alice")             # not in AclPermissionParam's domain
    assert 'Invalid value for webhdfs parameter "aclspec"' in str(info.value)
    with pytest.raises(HdfsError) as info:
        client.set_acl(d + "/a", "user::rwx,group::r-x")
    assert info.value.exception == "AclException"


def test_snapshots_through_hdfscli(nn, client, d):
    """HdfsCLI's snapshot calls; allowing needs the superuser (tester is in supergroup)."""
    client.makedirs(d + "/s")
    client.write(d + "/s/f", b"kept")
    client.allow_snapshot(d + "/s")
    client.allow_snapshot(d + "/s")                          # again: fine
    assert client.create_snapshot(d + "/s", "one") == d + "/s/.snapshot/one"
    client.delete(d + "/s/f")
    with client.read(d + "/s/.snapshot/one/f") as reader:
        assert reader.read() == b"kept"
    client.rename_snapshot(d + "/s", "one", "first")
    assert client.list(d + "/s/.snapshot") == ["first"]
    with pytest.raises(HdfsError) as info:
        client.rename_snapshot(d + "/s", "nope", "x")
    assert info.value.exception == "SnapshotException"
    with pytest.raises(HdfsError) as info:
        client.disallow_snapshot(d + "/s")
    assert "has snapshot(s)" in str(info.value)
    with pytest.raises(HdfsError):
        client.create_snapshot(d + "/missing", "x")
    alice = hdfs.InsecureClient(nn.url, user="alice")
    with pytest.raises(HdfsError) as info:
        alice.allow_snapshot(d)
    assert info.value.exception == "AccessControlException"
    client.delete_snapshot(d + "/s", "first")
    client.disallow_snapshot(d + "/s")
    assert client.delete(d + "/s", recursive=True)
