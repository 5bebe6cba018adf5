"""Hadoop's own ``WebHdfsFileSystem`` (from PySpark's jars) against a real namenode process.

The Java client is the reference: it parses our JSON with Hadoop's JsonUtilClient and turns
each RemoteException back into the Java class named by ``javaClassName``. A field it cannot
parse, or an exception class it re-raises wrongly, fails here even when the Python clients
are happy.

One namenode and one FileSystem per user serve the whole module (JVM calls are cheap, server
and client start-up are not); each test works under its own directory. Files cannot be
written over WebHDFS by this module (the data path is not its concern), so a few are created
in the name dir before the server starts.
"""

from __future__ import annotations

import itertools
import time

import pytest

from tests.namenode.http.java import java_error, shell
from tests.servers import TEST_USERS

pytestmark = pytest.mark.spark

FILE = "/fixture/file"                   # an empty file owned by "tester", 0644
FILE_PARENT_CHILD = FILE + "/child"      # a path whose parent is a file
RENAME_FILES = ("/fixture/rename/f1", "/fixture/rename/f2", "/fixture/rename/f3")
SAME_NAME = "/fixture/same/same"         # a file named as its directory
LIST_LIMIT = 3                           # dfs.ls.limit: LISTSTATUS_BATCH pages of 3

_dirs = itertools.count()


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def server(start_module_namenode, tmp_path_factory):
    from nnlite.namenode.fsnamesystem import FSNamesystem, Identity, format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    name_dir = str(tmp_path_factory.mktemp("java-client") / "name")
    format_dirs([NameDir(name_dir)])
    with FSNamesystem.open([name_dir], Identity(groups=Identity.parse_mapping(TEST_USERS))) as fs:
        fs.mkdirs("/fixture/rename", 0o777, "tester")
        for path in (FILE, *RENAME_FILES, SAME_NAME):
            fs.create(path, "tester")
    return start_module_namenode("-D", f"dfs.ls.limit={LIST_LIMIT}", name_dirs=[name_dir])


@pytest.fixture(scope="module")
def alice_fs(java):
    handle = java.open("alice")
    try:
        yield handle
    finally:
        handle.close()


@pytest.fixture
def base(fs, java) -> str:
    """A fresh directory for one test, owned by tester."""
    path = f"/t{next(_dirs)}"
    assert fs.mkdirs(java.path(path))
    return path


def names(statuses) -> list[str]:
    return [s.getPath().getName() for s in statuses]


# --------------------------------------------------------------------------- the client

def test_the_client_is_hadoops_webhdfs_file_system(fs, java):
    assert fs.getClass().getName() == "org.apache.hadoop.hdfs.web.WebHdfsFileSystem"
    assert fs.getUri().toString() == java.uri


def test_home_directory_and_trash_root_are_per_user(fs, alice_fs, java):
    assert fs.getHomeDirectory().toString() == java.qualified("/user/tester")
    assert alice_fs.getHomeDirectory().toString() == java.qualified("/user/alice")
    assert fs.getTrashRoot(java.path("/x")).toString() == java.qualified("/user/tester/.Trash")


def test_server_defaults(fs):
    defaults = fs.getServerDefaults()
    assert defaults.getBlockSize() == 128 << 20
    assert defaults.getReplication() == 1
    assert defaults.getBytesPerChecksum() == 512


# --------------------------------------------------------------------------- reads

def test_mkdirs_then_list_status_names_types_permissions_owner(fs, java, base):
    assert fs.mkdirs(java.path(base + "/b/deep/er"))
    assert fs.mkdirs(java.path(base + "/a"), java.permission("700"))
    statuses = fs.listStatus(java.path(base))
    assert names(statuses) == ["a", "b"]
    a, b = statuses
    assert a.isDirectory() and not a.isFile()
    assert a.getPath().toString() == java.qualified(base + "/a")
    assert a.getPermission().toString() == "rwx------"
    assert b.getPermission().toString() == "rwxr-xr-x"   # 777 under the client's umask 022
    assert a.getOwner() == b.getOwner() == "tester"
    assert a.getGroup() == fs.getFileStatus(java.path(base)).getGroup()   # inherited


def test_list_status_iterator_pages_with_list_status_batch(fs, java, base):
    expected = [f"d{i:02}" for i in range(2 * LIST_LIMIT + 1)]
    for name in reversed(expected):
        assert fs.mkdirs(java.path(f"{base}/{name}"))
    it = fs.listStatusIterator(java.path(base))
    seen = []
    while it.hasNext():
        seen.append(it.next().getPath().getName())
    assert seen == expected
    # LISTSTATUS: one answer, streamed a page of dfs.ls.limit at a time (getListingStream)
    assert names(fs.listStatus(java.path(base))) == expected


def listed_paths(fs, java, path: str) -> tuple[list[str], list[str]]:
    """(LISTSTATUS, LISTSTATUS_BATCH) of ``path`` as qualified path strings."""
    it = fs.listStatusIterator(java.path(path))
    batched = []
    while it.hasNext():
        batched.append(it.next().getPath().toString())
    return [s.getPath().toString() for s in fs.listStatus(java.path(path))], batched


def test_list_status_of_a_file_is_the_file_itself(fs, java):
    (status,) = fs.listStatus(java.path(FILE))
    assert status.isFile()
    assert listed_paths(fs, java, FILE) == ([java.qualified(FILE)], [java.qualified(FILE)])


def test_a_file_named_as_its_directory_lists_under_it(fs, java):
    parent = SAME_NAME.rsplit("/", 1)[0]
    expected = [java.qualified(SAME_NAME)]
    assert listed_paths(fs, java, parent) == (expected, expected)
    assert listed_paths(fs, java, SAME_NAME) == (expected, expected)


def test_get_file_status_fields(fs, java, base):
    before = int(time.time() * 1000)
    assert fs.mkdirs(java.path(base + "/d"))
    status = fs.getFileStatus(java.path(base + "/d"))
    assert status.getPath().toString() == java.qualified(base + "/d")
    assert status.isDirectory()
    assert status.getLen() == 0
    assert status.getOwner() == "tester"
    assert status.getPermission().toShort() == 0o755
    assert before - 1000 <= status.getModificationTime() <= int(time.time() * 1000) + 1000
    assert status.getReplication() == 0 and status.getBlockSize() == 0
    assert not status.isSymlink() and not status.isEncrypted() and not status.hasAcl()

    file_status = fs.getFileStatus(java.path(FILE))
    assert file_status.isFile() and file_status.getLen() == 0
    assert file_status.getOwner() == "tester"
    assert file_status.getPermission().toString() == "rw-r--r--"
    assert file_status.getReplication() >= 1 and file_status.getBlockSize() > 0


def test_exists_is_false_for_a_missing_path(fs, java, base):
    assert not fs.exists(java.path(base + "/missing"))
    assert not fs.exists(java.path("/no/such/deep/path"))
    assert fs.exists(java.path(base))
    assert java_error(fs.getFileStatus, java.path(base + "/missing")) == \
        "java.io.FileNotFoundException"
    assert java_error(fs.listStatus, java.path(base + "/missing")) == \
        "java.io.FileNotFoundException"


def test_content_summary_and_quota_usage(fs, java, base):
    for sub in ("x/y", "x/z", "w"):
        assert fs.mkdirs(java.path(f"{base}/{sub}"))
    summary = fs.getContentSummary(java.path(base))
    assert summary.getDirectoryCount() == 5   # base, x, x/y, x/z, w
    assert summary.getFileCount() == 0 and summary.getLength() == 0
    assert summary.getQuota() == -1 and summary.getSpaceQuota() == -1

    fs.setQuota(java.path(base), 100, 1 << 30)
    usage = fs.getQuotaUsage(java.path(base))
    assert usage.getQuota() == 100 and usage.getSpaceQuota() == 1 << 30
    assert usage.getFileAndDirectoryCount() == 5
    summary = fs.getContentSummary(java.path(base))
    assert summary.getQuota() == 100 and summary.getSpaceQuota() == 1 << 30


# --------------------------------------------------------------------------- rename

def test_rename_returns_true_and_moves(fs, java, base):
    assert fs.mkdirs(java.path(base + "/src/child"))
    assert fs.rename(java.path(base + "/src"), java.path(base + "/dst")) is True
    assert not fs.exists(java.path(base + "/src"))
    assert fs.exists(java.path(base + "/dst/child"))


def test_rename_into_an_existing_directory_moves_under_it(fs, java, base):
    assert fs.mkdirs(java.path(base + "/src"))
    assert fs.mkdirs(java.path(base + "/into"))
    assert fs.rename(java.path(base + "/src"), java.path(base + "/into")) is True
    assert names(fs.listStatus(java.path(base + "/into"))) == ["src"]


def test_rename_answers_false_where_hdfs_does(fs, java, base):
    assert fs.mkdirs(java.path(base + "/src/sub"))
    p = java.path
    assert fs.rename(p(base + "/missing"), p(base + "/x")) is False
    assert fs.rename(p(base + "/src"), p(base + "/src/sub/inside")) is False
    assert fs.rename(p(base + "/src"), p(base + "/no/parent")) is False
    assert fs.rename(p(base + "/src"), p(FILE)) is False   # onto an existing file
    assert fs.exists(p(base + "/src/sub"))


def test_rename_with_overwrite_replaces_an_empty_directory(fs, java, base):
    assert fs.mkdirs(java.path(base + "/src/child"))
    assert fs.mkdirs(java.path(base + "/dst"))
    fs.rename(java.path(base + "/src"), java.path(base + "/dst"),
              java.rename_options("OVERWRITE"))
    assert not fs.exists(java.path(base + "/src"))
    assert names(fs.listStatus(java.path(base + "/dst"))) == ["child"]


def test_rename_with_options_surfaces_java_exceptions(fs, java, base):
    p = java.path
    for sub in ("src", "dst/full"):
        assert fs.mkdirs(p(f"{base}/{sub}"))
    none, overwrite = java.rename_options("NONE"), java.rename_options("OVERWRITE")
    assert java_error(fs.rename, p(base + "/src"), p(base + "/dst"), none) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    assert java_error(fs.rename, p(base + "/missing"), p(base + "/x"), none) == \
        "java.io.FileNotFoundException"
    assert java_error(fs.rename, p(base + "/src"), p(base + "/dst"), overwrite) == \
        "java.io.IOException"   # HDFS: "rename destination directory is not empty"
    assert java_error(fs.rename, p(base + "/src"), p(FILE_PARENT_CHILD), none) == \
        "org.apache.hadoop.fs.ParentNotDirectoryException"
    assert fs.exists(p(base + "/src")) and fs.exists(p(base + "/dst/full"))


def test_file_context_rename_as_spark_checkpoints_do(java):
    """Spark's FileContextBasedCheckpointFileManager: ``fc.rename(tmp, final, OVERWRITE)``
    (through the AbstractFileSystem ``org.apache.hadoop.fs.WebHdfs``), as the JVM's user."""
    fc = java.fs_pkg.FileContext.getFileContext(java.jvm.java.net.URI(java.uri), java.conf())
    p = java.path
    f1, f2, f3 = RENAME_FILES
    fc.rename(p(f1), p(f2), java.rename_options("OVERWRITE"))
    assert not fc.util().exists(p(f1))
    assert fc.getFileStatus(p(f2)).isFile()
    assert java_error(fc.rename, p(f3), p(f2), java.rename_options("NONE")) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    fc.rename(p(f3), p(f1), java.rename_options("NONE"))
    assert sorted(names(fc.util().listStatus(p("/fixture/rename")))) == ["f1", "f2"]


def test_names_with_special_characters_round_trip(fs, java, base):
    p = java.path
    odd = ["sp ace", "plus+sign", "per%25cent", "hash#tag", "semi;colon", "amp&eq=",
           "\u00fcnic\u00f8de-\u6587\u4ef6", "q?uestion"]
    for name in odd:
        assert fs.mkdirs(p(f"{base}/{name}"))
    assert sorted(names(fs.listStatus(p(base)))) == sorted(odd)
    for name in odd:
        assert fs.rename(p(f"{base}/{name}"), p(f"{base}/{name} moved+{name}")) is True
    moved = [f"{name} moved+{name}" for name in odd]
    assert sorted(names(fs.listStatus(p(base)))) == sorted(moved)
    for name in moved:
        assert fs.getFileStatus(p(f"{base}/{name}")).isDirectory()
        fs.rename(p(f"{base}/{name}"), p(f"{base}/again {name}"), java.rename_options("NONE"))
    assert sorted(names(fs.listStatus(p(base)))) == sorted(f"again {n}" for n in moved)


# --------------------------------------------------------------------------- delete

def test_delete_recursive_and_not(fs, java, base):
    p = java.path
    assert fs.mkdirs(p(base + "/empty"))
    assert fs.mkdirs(p(base + "/full/child"))
    assert fs.delete(p(base + "/empty"), False) is True
    assert java_error(fs.delete, p(base + "/full"), False) == \
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    assert fs.exists(p(base + "/full/child"))
    assert fs.delete(p(base + "/full"), True) is True
    assert not fs.exists(p(base + "/full"))
    assert fs.delete(p(base + "/missing"), True) is False
    assert fs.delete(p(base + "/missing"), False) is False


# --------------------------------------------------------------------------- xattrs

def test_xattrs_round_trip(fs, java, base):
    p = java.path(base)
    fs.setXAttr(p, "user.a", b"\x00\x01binary\xff")
    fs.setXAttr(p, "user.b", "text".encode())
    assert bytes(fs.getXAttr(p, "user.a")) == b"\x00\x01binary\xff"
    attrs = {k: bytes(v) for k, v in fs.getXAttrs(p).items()}
    assert attrs == {"user.a": b"\x00\x01binary\xff", "user.b": b"text"}
    assert sorted(fs.listXAttrs(p)) == ["user.a", "user.b"]

    fs.setXAttr(p, "user.a", b"new", java.xattr_flags("REPLACE"))
    assert bytes(fs.getXAttr(p, "user.a")) == b"new"
    assert java_error(fs.setXAttr, p, "user.a", b"x", java.xattr_flags("CREATE")) == \
        "java.io.IOException"
    assert java_error(fs.setXAttr, p, "user.c", b"x", java.xattr_flags("REPLACE")) == \
        "java.io.IOException"

    fs.removeXAttr(p, "user.a")
    assert list(fs.listXAttrs(p)) == ["user.b"]
    assert java_error(fs.getXAttr, p, "user.a") == "java.io.IOException"
    assert java_error(fs.removeXAttr, p, "user.a") == "java.io.IOException"


# --------------------------------------------------------------------------- attributes

def test_set_permission_round_trip(fs, java, base):
    p = java.path(base)
    for mode, shown in (("750", "rwxr-x---"), ("1777", "rwxrwxrwt"), ("000", "---------")):
        fs.setPermission(p, java.permission(mode))
        status = fs.getFileStatus(p)
        assert status.getPermission().toString() == shown
        assert status.getPermission().toShort() == int(mode, 8)


def test_set_owner(fs, java, base):
    p = java.path(base)
    fs.setOwner(p, "alice", "staff")
    status = fs.getFileStatus(p)
    assert (status.getOwner(), status.getGroup()) == ("alice", "staff")
    fs.setOwner(p, None, "other")   # group only
    status = fs.getFileStatus(p)
    assert (status.getOwner(), status.getGroup()) == ("alice", "other")


def test_set_times(fs, java, base):
    p = java.path(base)
    mtime = 1_600_000_000_123
    fs.setTimes(p, mtime, -1)
    assert fs.getFileStatus(p).getModificationTime() == mtime
    fs.setTimes(java.path(FILE), 1_500_000_000_000, 1_500_000_000_456)
    status = fs.getFileStatus(java.path(FILE))
    assert status.getModificationTime() == 1_500_000_000_000
    assert status.getAccessTime() == 1_500_000_000_456
    fs.setTimes(java.path(FILE), -1, -1)   # -1 leaves a time as it is
    assert fs.getFileStatus(java.path(FILE)).getModificationTime() == 1_500_000_000_000


def test_set_replication(fs, java, base):
    assert fs.setReplication(java.path(base), 3) is False   # directories have none
    assert fs.setReplication(java.path(FILE), 2) is True
    assert fs.getFileStatus(java.path(FILE)).getReplication() == 2
    assert java_error(fs.setReplication, java.path(base + "/missing"), 2) == \
        "java.io.FileNotFoundException"


# --------------------------------------------------------------------------- errors

def test_mkdirs_under_a_file_is_parent_not_directory(fs, java):
    assert java_error(fs.mkdirs, java.path(FILE_PARENT_CHILD)) == \
        "org.apache.hadoop.fs.ParentNotDirectoryException"


def test_mkdirs_over_a_file_is_file_already_exists(fs, java):
    assert java_error(fs.mkdirs, java.path(FILE)) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"


def test_non_superuser_gets_access_control_exception(fs, alice_fs, java, base):
    p = java.path
    assert fs.mkdirs(p(base + "/private"), java.permission("700"))
    denied = "org.apache.hadoop.security.AccessControlException"
    assert java_error(alice_fs.mkdirs, p(base + "/mine")) == denied
    assert java_error(alice_fs.listStatus, p(base + "/private")) == denied
    assert java_error(alice_fs.delete, p(base + "/private"), True) == denied
    assert java_error(alice_fs.rename, p(base + "/private"), p(base + "/x"),
                      java.rename_options("NONE")) == denied
    assert java_error(alice_fs.setPermission, p(base), java.permission("777")) == denied
    assert java_error(alice_fs.setOwner, p(base), "alice", None) == denied
    assert java_error(alice_fs.setXAttr, p(base), "user.x", b"1") == denied
    assert java_error(alice_fs.setTimes, p(FILE), 1, 1) == denied
    assert java_error(alice_fs.setReplication, p(FILE), 3) == denied
    assert alice_fs.getFileStatus(p(base)).getOwner() == "tester"   # reading is allowed
    assert names(fs.listStatus(p(base))) == ["private"]


def test_non_superuser_works_in_a_directory_it_owns(fs, alice_fs, java, base):
    p = java.path
    assert fs.mkdirs(p(base + "/alice"))
    fs.setOwner(p(base + "/alice"), "alice", "staff")
    assert alice_fs.mkdirs(p(base + "/alice/work/a"))
    assert alice_fs.rename(p(base + "/alice/work/a"), p(base + "/alice/work/b")) is True
    status = alice_fs.getFileStatus(p(base + "/alice/work/b"))
    assert status.getOwner() == "alice"
    assert java_error(alice_fs.setOwner, p(base + "/alice/work"), "tester", None) == \
        "org.apache.hadoop.security.AccessControlException"   # only a superuser chowns
    assert alice_fs.delete(p(base + "/alice/work"), True) is True


# ------------------------------------------------------- the rest of the WebHDFS operations

def test_get_status_is_the_volume_the_blocks_live_on(fs, java):
    status = fs.getStatus()
    assert status.getCapacity() > status.getRemaining() > 0 and status.getUsed() >= 0
    code, printed = shell(java, "tester", "-df", "/")
    assert code == 0
    header, row = printed.strip().splitlines()
    assert header.split() == ["Filesystem", "Size", "Used", "Available", "Use%"]
    assert row.split()[0] == java.uri and int(row.split()[1]) == status.getCapacity()


def test_access_and_test_w_follow_the_permission_checker(fs, java, base):
    action = java.jvm.org.apache.hadoop.fs.permission.FsAction
    assert fs.mkdirs(java.path(base + "/ro"), java.permission("755"))
    alice = java.open("alice")
    try:
        alice.access(java.path(base + "/ro"), action.READ_EXECUTE)
        assert java_error(alice.access, java.path(base + "/ro"), action.WRITE) == \
            "org.apache.hadoop.security.AccessControlException"
        assert java_error(alice.access, java.path(base + "/missing"), action.READ) == \
            "java.io.FileNotFoundException"
    finally:
        alice.close()
    assert shell(java, "tester", "-test", "-w", base + "/ro")[0] == 0
    assert shell(java, "alice", "-test", "-w", base + "/ro")[0] == 1
    assert shell(java, "alice", "-test", "-r", base + "/ro")[0] == 0


def test_storage_policies_as_the_default_suite_has_them(fs, java, base):
    names = [p.getName() for p in fs.getAllStoragePolicies()]
    assert names == ["PROVIDED", "COLD", "WARM", "HOT", "ONE_SSD", "ALL_SSD", "ALL_NVDIMM",
                     "LAZY_PERSIST"]
    assert fs.mkdirs(java.path(base + "/cold/deep"))
    assert fs.getStoragePolicy(java.path(base + "/cold/deep")).getName() == "HOT"   # default
    fs.setStoragePolicy(java.path(base + "/cold"), "COLD")
    assert fs.getStoragePolicy(java.path(base + "/cold/deep")).getName() == "COLD"  # inherited
    # not an IOException, so the client hands it over as a RemoteException naming it
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as info:
        fs.setStoragePolicy(java.path(base + "/cold"), "FROZEN")
    assert info.value.java_exception.getClassName() == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    assert fs.getXAttrs(java.path(base + "/cold")).isEmpty()        # a system xattr: hidden
    fs.unsetStoragePolicy(java.path(base + "/cold"))
    assert fs.getStoragePolicy(java.path(base + "/cold/deep")).getName() == "HOT"
    with pytest.raises(Py4JJavaError) as info:              # the satisfier is off
        fs.satisfyStoragePolicy(java.path(base + "/cold"))
    assert info.value.java_exception.getClassName() == \
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"


def test_trash_roots_and_delegation_tokens(fs, java):
    assert fs.mkdirs(java.path("/user/tester/.Trash"))
    roots = [r.getPath().toString() for r in fs.getTrashRoots(False)]
    assert roots == ["/user/tester/.Trash"] or roots == [java.qualified("/user/tester/.Trash")]
    assert any(r.getPath().getName() == ".Trash" for r in fs.getTrashRoots(True))
    # simple authentication: the NameNode issues no token ({"Token": null}), and the client,
    # which by default will not fall back to an insecure cluster, refuses on that answer
    assert java_error(fs.getDelegationToken, "tester") == \
        "org.apache.hadoop.security.AccessControlException"


def test_erasure_coding_as_a_namenode_with_every_policy_disabled(fs, java, base):
    p = java.path(base)
    infos = list(fs.getAllErasureCodingPolicies())
    assert sorted(i.getPolicy().getName() for i in infos) == [
        "RS-10-4-1024k", "RS-3-2-1024k", "RS-6-3-1024k", "RS-LEGACY-6-3-1024k", "XOR-2-1-1024k"]
    assert {i.getState().toString() for i in infos} == {"DISABLED"}
    assert dict(fs.getAllErasureCodingCodecs())["rs"] == "rs_native, rs_java"
    assert java_error(fs.setErasureCodingPolicy, p, "RS-6-3-1024k") == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    assert java_error(fs.unsetErasureCodingPolicy, p) == \
        "org.apache.hadoop.hdfs.protocol.NoECPolicySetException"
    assert java_error(fs.getErasureCodingPolicy, java.path(base + "/nope")) == \
        "java.io.FileNotFoundException"


def test_quota_by_storage_type_answers_as_disabled(fs, java, base):
    storage = java.jvm.org.apache.hadoop.fs.StorageType
    assert java_error(fs.setQuotaByStorageType, java.path(base), storage.SSD, 10) == \
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"
