"""fsspec's ``webhdfs`` filesystem, unmodified, against a live namenode: metadata only (file
contents come in a later issue; the files here are seeded into the name dir)."""

from __future__ import annotations

import itertools

import pytest

fsspec = pytest.importorskip("fsspec")


FILES = {"/data/part-0": 100, "/data/part-1": 250, "/data/sub/part-2": 50}
_ids = itertools.count()


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode("-D", "hadoop.proxyuser.tester.users=alice",
                                 "-D", "hadoop.proxyuser.tester.hosts=127.0.0.1", files=FILES)


def connect(nn, user: str = "tester", **kw):
    return fsspec.filesystem("webhdfs", host="127.0.0.1", port=nn.port, user=user,
                             skip_instance_cache=True, **kw)


@pytest.fixture(scope="module")
def fs(nn):
    return connect(nn)


@pytest.fixture
def d(fs) -> str:
    path = f"/t/d{next(_ids)}"
    fs.makedirs(path)
    return path


def test_mkdir_makedirs_exists(fs, d):
    fs.mkdir(d + "/a")
    fs.makedirs(d + "/b/c/e")
    fs.makedirs(d + "/b/c", exist_ok=True)
    with pytest.raises(FileExistsError):
        fs.makedirs(d + "/b/c")
    assert fs.exists(d + "/b/c/e") and not fs.exists(d + "/nope")
    assert fs.isdir(d + "/a") and not fs.isfile(d + "/a")


def test_info(fs, d):
    info = fs.info(d)
    assert (info["type"], info["size"], info["name"], info["pathSuffix"]) == \
        ("directory", 0, d, "")
    info = fs.info("/data/part-1")
    assert (info["type"], info["size"], info["replication"]) == ("file", 250, 1)
    assert fs.isfile("/data/part-1")
    with pytest.raises(FileNotFoundError):
        fs.info(d + "/nope")
    assert fs.modified(d).year >= 2024


def test_ls(fs):
    assert fs.ls("/data") == ["/data/part-0", "/data/part-1", "/data/sub"]
    detail = fs.ls("/data", detail=True)
    assert [(i["name"], i["type"], i["size"]) for i in detail] == \
        [("/data/part-0", "file", 100), ("/data/part-1", "file", 250),
         ("/data/sub", "directory", 0)]
    with pytest.raises(FileNotFoundError):
        fs.ls("/data/nope")


def test_find_walk_du(fs):
    assert fs.find("/data") == ["/data/part-0", "/data/part-1", "/data/sub/part-2"]
    assert [(root, sorted(dirs), sorted(files)) for root, dirs, files in fs.walk("/data")] \
        == [("/data", ["sub"], ["part-0", "part-1"]), ("/data/sub", [], ["part-2"])]
    assert fs.du("/data") == 400
    summary = fs.content_summary("/data")
    assert (summary["directoryCount"], summary["fileCount"], summary["length"]) == (2, 3, 400)


def test_mv(fs, d):
    fs.makedirs(d + "/a/x")
    fs.mv(d + "/a", d + "/b")
    assert fs.ls(d) == [d + "/b"] and fs.exists(d + "/b/x")


def test_rm(fs, d):
    fs.makedirs(d + "/full/x/y")
    fs.mkdir(d + "/empty")
    with pytest.raises(RuntimeError, match="is non empty"):
        fs.rm(d + "/full")                           # PathIsNotEmptyDirectoryException
    fs.rm(d + "/empty")
    fs.rm(d + "/full", recursive=True)
    assert fs.ls(d) == []


def test_attributes(fs, d):
    fs.chmod(d, "700")
    assert fs.info(d)["permission"] == "700"
    fs.chown(d, owner="alice", group="staff")
    info = fs.info(d)
    assert (info["owner"], info["group"]) == ("alice", "staff")
    fs.set_replication("/data/sub/part-2", 2)
    assert fs.info("/data/sub/part-2")["replication"] == 2
    fs.set_replication("/data/sub/part-2", 1)
    with pytest.raises(ValueError):                  # IllegalArgumentException
        fs.chmod(d, "99")
    assert fs.home_directory() == "/user/tester"


def test_errors_map_to_python_exceptions(nn, fs, d):
    bob = connect(nn, "bob")
    with pytest.raises(PermissionError):
        bob.mkdir(d + "/x")
    with pytest.raises(PermissionError):
        bob.rm(d, recursive=True)
    assert fs.exists(d) and fs.ls(d) == []
    as_alice = connect(nn, proxy_to="alice")
    fs.chmod(d, "777")
    as_alice.mkdir(d + "/alices")
    assert fs.info(d + "/alices")["owner"] == "alice"
    with pytest.raises(PermissionError):             # SecurityException: bob may not proxy
        connect(nn, "bob", proxy_to="alice").mkdir(d + "/not-alices")
