"""Hadoop's own FileSystem clients (from PySpark's jars) against a real namenode process, each
test over both schemes: ``WebHdfsFileSystem`` (webhdfs://) and ``DistributedFileSystem``
(hdfs://).

The Java client is the reference: over webhdfs:// it parses our JSON with Hadoop's
JsonUtilClient and turns each RemoteException back into the Java class named by
``javaClassName``; over hdfs:// it decodes our protobuf answers and unwraps the RPC answer's
exception class the same way. A field it cannot parse, or an exception class it re-raises
wrongly, fails here even when the Python clients are happy.

One namenode and one FileSystem per user and scheme serve the whole module (JVM calls are
cheap, server and client start-up are not); each test works under its own directory. The
files these metadata tests need are created in the name dir before the server starts.
"""

from __future__ import annotations

import time

import pytest

from tests.namenode.java import java_error, java_exception, shell
from tests.servers import TEST_USERS

pytestmark = pytest.mark.spark

FILE = "/fixture/file"                   # an empty file owned by "tester", 0644
FILE_PARENT_CHILD = FILE + "/child"      # a path whose parent is a file
SAME_NAME = "/fixture/same/same"         # a file named as its directory
LIST_LIMIT = 3                           # dfs.ls.limit: LISTSTATUS_BATCH pages of 3

# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def server(start_module_namenode, tmp_path_factory):
    from nnlite.namenode.fsnamesystem import FSNamesystem, Identity, format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    name_dir = str(tmp_path_factory.mktemp("java-client") / "name")
    format_dirs([NameDir(name_dir)])
    with FSNamesystem.open([name_dir], Identity(groups=Identity.parse_mapping(TEST_USERS))) as fs:
        for path in (FILE, SAME_NAME):
            fs.create(path, "tester")
    return start_module_namenode("-D", f"dfs.ls.limit={LIST_LIMIT}", name_dirs=[name_dir])


def names(statuses) -> list[str]:
    return [s.getPath().getName() for s in statuses]


# --------------------------------------------------------------------------- the client

# The one check of its own per scheme: the class Hadoop's FileSystem.get picks for it.
FILE_SYSTEM_CLASSES = {"webhdfs": "org.apache.hadoop.hdfs.web.WebHdfsFileSystem",
                       "hdfs": "org.apache.hadoop.hdfs.DistributedFileSystem"}


def test_the_client_is_hadoops_file_system_of_the_scheme(fs, java):
    assert fs.getClass().getName() == FILE_SYSTEM_CLASSES[java.scheme]
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

def test_mkdirs_then_list_status_names_types_permissions_owner(fs, java, d):
    assert fs.mkdirs(java.path(d + "/b/deep/er"))
    assert fs.mkdirs(java.path(d + "/a"), java.permission("700"))
    statuses = fs.listStatus(java.path(d))
    assert names(statuses) == ["a", "b"]
    a, b = statuses
    assert a.isDirectory() and not a.isFile()
    assert a.getPath().toString() == java.qualified(d + "/a")
    assert a.getPermission().toString() == "rwx------"
    assert b.getPermission().toString() == "rwxr-xr-x"   # 777 under the client's umask 022
    assert a.getOwner() == b.getOwner() == "tester"
    assert a.getGroup() == fs.getFileStatus(java.path(d)).getGroup()   # inherited


def test_list_status_iterator_pages_with_list_status_batch(fs, java, d):
    expected = [f"d{i:02}" for i in range(2 * LIST_LIMIT + 1)]
    for name in reversed(expected):
        assert fs.mkdirs(java.path(f"{d}/{name}"))
    it = fs.listStatusIterator(java.path(d))
    seen = []
    while it.hasNext():
        seen.append(it.next().getPath().getName())
    assert seen == expected
    # LISTSTATUS: one answer, streamed a page of dfs.ls.limit at a time (getListingStream)
    assert names(fs.listStatus(java.path(d))) == expected


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


def test_get_file_status_fields(fs, java, d):
    before = int(time.time() * 1000)
    assert fs.mkdirs(java.path(d + "/d"))
    status = fs.getFileStatus(java.path(d + "/d"))
    assert status.getPath().toString() == java.qualified(d + "/d")
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


def test_exists_is_false_for_a_missing_path(fs, java, d):
    assert not fs.exists(java.path(d + "/missing"))
    assert not fs.exists(java.path("/no/such/deep/path"))
    assert fs.exists(java.path(d))
    assert java_error(fs.getFileStatus, java.path(d + "/missing")) == \
        "java.io.FileNotFoundException"
    assert java_error(fs.listStatus, java.path(d + "/missing")) == \
        "java.io.FileNotFoundException"


def test_content_summary_and_quota_usage(fs, java, d):
    for sub in ("x/y", "x/z", "w"):
        assert fs.mkdirs(java.path(f"{d}/{sub}"))
    summary = fs.getContentSummary(java.path(d))
    assert summary.getDirectoryCount() == 5   # d, x, x/y, x/z, w
    assert summary.getFileCount() == 0 and summary.getLength() == 0
    assert summary.getQuota() == -1 and summary.getSpaceQuota() == -1

    fs.setQuota(java.path(d), 100, 1 << 30)
    usage = fs.getQuotaUsage(java.path(d))
    assert usage.getQuota() == 100 and usage.getSpaceQuota() == 1 << 30
    assert usage.getFileAndDirectoryCount() == 5
    summary = fs.getContentSummary(java.path(d))
    assert summary.getQuota() == 100 and summary.getSpaceQuota() == 1 << 30


# --------------------------------------------------------------------------- rename

def test_rename_returns_true_and_moves(fs, java, d):
    assert fs.mkdirs(java.path(d + "/src/child"))
    assert fs.rename(java.path(d + "/src"), java.path(d + "/dst")) is True
    assert not fs.exists(java.path(d + "/src"))
    assert fs.exists(java.path(d + "/dst/child"))


def test_rename_into_an_existing_directory_moves_under_it(fs, java, d):
    assert fs.mkdirs(java.path(d + "/src"))
    assert fs.mkdirs(java.path(d + "/into"))
    assert fs.rename(java.path(d + "/src"), java.path(d + "/into")) is True
    assert names(fs.listStatus(java.path(d + "/into"))) == ["src"]


def test_rename_answers_false_where_hdfs_does(fs, java, d):
    assert fs.mkdirs(java.path(d + "/src/sub"))
    p = java.path
    assert fs.rename(p(d + "/missing"), p(d + "/x")) is False
    assert fs.rename(p(d + "/src"), p(d + "/src/sub/inside")) is False
    assert fs.rename(p(d + "/src"), p(d + "/no/parent")) is False
    assert fs.rename(p(d + "/src"), p(FILE)) is False   # onto an existing file
    assert fs.exists(p(d + "/src/sub"))


def test_rename_with_overwrite_replaces_an_empty_directory(fs, java, d):
    assert fs.mkdirs(java.path(d + "/src/child"))
    assert fs.mkdirs(java.path(d + "/dst"))
    fs.rename(java.path(d + "/src"), java.path(d + "/dst"),
              java.rename_options("OVERWRITE"))
    assert not fs.exists(java.path(d + "/src"))
    assert names(fs.listStatus(java.path(d + "/dst"))) == ["child"]


def test_rename_with_options_surfaces_java_exceptions(fs, java, d):
    p = java.path
    for sub in ("src", "dst/full"):
        assert fs.mkdirs(p(f"{d}/{sub}"))
    none, overwrite = java.rename_options("NONE"), java.rename_options("OVERWRITE")
    assert java_error(fs.rename, p(d + "/src"), p(d + "/dst"), none) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    assert java_error(fs.rename, p(d + "/missing"), p(d + "/x"), none) == \
        "java.io.FileNotFoundException"
    assert java_error(fs.rename, p(d + "/src"), p(d + "/dst"), overwrite) == \
        "java.io.IOException"   # HDFS: "rename destination directory is not empty"
    assert java_error(fs.rename, p(d + "/src"), p(FILE_PARENT_CHILD), none) == \
        "org.apache.hadoop.fs.ParentNotDirectoryException"
    assert fs.exists(p(d + "/src")) and fs.exists(p(d + "/dst/full"))


def test_file_context_rename_as_spark_checkpoints_do(fs, java, d):
    """Spark's FileContextBasedCheckpointFileManager: ``fc.rename(tmp, final, OVERWRITE)``
    (through the AbstractFileSystem ``org.apache.hadoop.fs.WebHdfs`` or ``Hdfs``), as the
    JVM's user, in a world-writable directory."""
    fc = java.fs_pkg.FileContext.getFileContext(java.jvm.java.net.URI(java.uri), java.conf())
    p = java.path
    fs.setPermission(p(d), java.permission("777"))
    f1, f2, f3 = (f"{d}/{name}" for name in ("f1", "f2", "f3"))
    for name in (f1, f2, f3):
        fs.create(p(name), False).close()
    fc.rename(p(f1), p(f2), java.rename_options("OVERWRITE"))
    assert not fc.util().exists(p(f1))
    assert fc.getFileStatus(p(f2)).isFile()
    assert java_error(fc.rename, p(f3), p(f2), java.rename_options("NONE")) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    fc.rename(p(f3), p(f1), java.rename_options("NONE"))
    assert sorted(names(fc.util().listStatus(p(d)))) == ["f1", "f2"]


def test_names_with_special_characters_round_trip(fs, java, d):
    p = java.path
    odd = ["sp ace", "plus+sign", "per%25cent", "hash#tag", "semi;colon", "amp&eq=",
           "\u00fcnic\u00f8de-\u6587\u4ef6", "q?uestion"]
    for name in odd:
        assert fs.mkdirs(p(f"{d}/{name}"))
    assert sorted(names(fs.listStatus(p(d)))) == sorted(odd)
    for name in odd:
        assert fs.rename(p(f"{d}/{name}"), p(f"{d}/{name} moved+{name}")) is True
    moved = [f"{name} moved+{name}" for name in odd]
    assert sorted(names(fs.listStatus(p(d)))) == sorted(moved)
    for name in moved:
        assert fs.getFileStatus(p(f"{d}/{name}")).isDirectory()
        fs.rename(p(f"{d}/{name}"), p(f"{d}/again {name}"), java.rename_options("NONE"))
    assert sorted(names(fs.listStatus(p(d)))) == sorted(f"again {n}" for n in moved)


# --------------------------------------------------------------------------- delete

def test_delete_recursive_and_not(fs, java, d):
    p = java.path
    assert fs.mkdirs(p(d + "/empty"))
    assert fs.mkdirs(p(d + "/full/child"))
    assert fs.delete(p(d + "/empty"), False) is True
    assert java_error(fs.delete, p(d + "/full"), False) == \
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    assert fs.exists(p(d + "/full/child"))
    assert fs.delete(p(d + "/full"), True) is True
    assert not fs.exists(p(d + "/full"))
    assert fs.delete(p(d + "/missing"), True) is False
    assert fs.delete(p(d + "/missing"), False) is False


# --------------------------------------------------------------------------- xattrs

def test_xattrs_round_trip(fs, java, d):
    p = java.path(d)
    fs.setXAttr(p, "user.a", b"\x00\x01binary\xff")
    fs.setXAttr(p, "user.b", b"text")
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

def test_set_permission_round_trip(fs, java, d):
    p = java.path(d)
    for mode, shown in (("750", "rwxr-x---"), ("1777", "rwxrwxrwt"), ("000", "---------")):
        fs.setPermission(p, java.permission(mode))
        status = fs.getFileStatus(p)
        assert status.getPermission().toString() == shown
        assert status.getPermission().toShort() == int(mode, 8)


def test_set_owner(fs, java, d):
    p = java.path(d)
    fs.setOwner(p, "alice", "staff")
    status = fs.getFileStatus(p)
    assert (status.getOwner(), status.getGroup()) == ("alice", "staff")
    fs.setOwner(p, None, "other")   # group only
    status = fs.getFileStatus(p)
    assert (status.getOwner(), status.getGroup()) == ("alice", "other")


def test_set_times(fs, java, d):
    p = java.path(d)
    mtime = 1_600_000_000_123
    fs.setTimes(p, mtime, -1)
    assert fs.getFileStatus(p).getModificationTime() == mtime
    fs.setTimes(java.path(FILE), 1_500_000_000_000, 1_500_000_000_456)
    status = fs.getFileStatus(java.path(FILE))
    assert status.getModificationTime() == 1_500_000_000_000
    assert status.getAccessTime() == 1_500_000_000_456
    fs.setTimes(java.path(FILE), -1, -1)   # -1 leaves a time as it is
    assert fs.getFileStatus(java.path(FILE)).getModificationTime() == 1_500_000_000_000


def test_set_replication(fs, java, d):
    assert fs.setReplication(java.path(d), 3) is False   # directories have none
    assert fs.setReplication(java.path(FILE), 2) is True
    assert fs.getFileStatus(java.path(FILE)).getReplication() == 2
    assert java_error(fs.setReplication, java.path(d + "/missing"), 2) == \
        "java.io.FileNotFoundException"


# --------------------------------------------------------------------------- errors

def test_mkdirs_under_a_file_is_parent_not_directory(fs, java):
    assert java_error(fs.mkdirs, java.path(FILE_PARENT_CHILD)) == \
        "org.apache.hadoop.fs.ParentNotDirectoryException"


def test_mkdirs_over_a_file_is_file_already_exists(fs, java):
    assert java_error(fs.mkdirs, java.path(FILE)) == \
        "org.apache.hadoop.fs.FileAlreadyExistsException"


def test_non_superuser_gets_access_control_exception(fs, alice_fs, java, d):
    p = java.path
    assert fs.mkdirs(p(d + "/private"), java.permission("700"))
    denied = "org.apache.hadoop.security.AccessControlException"
    refused = java_exception(alice_fs.mkdirs, p(d + "/mine"))
    assert refused.getClass().getName() == denied
    assert "Permission denied: user=alice" in refused.getMessage()
    assert java_error(alice_fs.listStatus, p(d + "/private")) == denied
    assert java_error(alice_fs.delete, p(d + "/private"), True) == denied
    assert java_error(alice_fs.rename, p(d + "/private"), p(d + "/x"),
                      java.rename_options("NONE")) == denied
    assert java_error(alice_fs.setPermission, p(d), java.permission("777")) == denied
    assert java_error(alice_fs.setOwner, p(d), "alice", None) == denied
    assert java_error(alice_fs.setXAttr, p(d), "user.x", b"1") == denied
    assert java_error(alice_fs.setTimes, p(FILE), 1, 1) == denied
    assert java_error(alice_fs.setReplication, p(FILE), 3) == denied
    assert alice_fs.getFileStatus(p(d)).getOwner() == "tester"   # reading is allowed
    assert names(fs.listStatus(p(d))) == ["private"]


def test_non_superuser_works_in_a_directory_it_owns(fs, alice_fs, java, d):
    p = java.path
    assert fs.mkdirs(p(d + "/alice"))
    fs.setOwner(p(d + "/alice"), "alice", "staff")
    assert alice_fs.mkdirs(p(d + "/alice/work/a"))
    assert alice_fs.rename(p(d + "/alice/work/a"), p(d + "/alice/work/b")) is True
    status = alice_fs.getFileStatus(p(d + "/alice/work/b"))
    assert status.getOwner() == "alice"
    assert java_error(alice_fs.setOwner, p(d + "/alice/work"), "tester", None) == \
        "org.apache.hadoop.security.AccessControlException"   # only a superuser chowns
    assert alice_fs.delete(p(d + "/alice/work"), True) is True


# ------------------------------------------------------- the rest of the WebHDFS operations

def test_get_status_is_the_volume_the_blocks_live_on(fs, java):
    status = fs.getStatus()
    assert status.getCapacity() > status.getRemaining() > 0 and status.getUsed() >= 0
    code, printed = shell(java, "tester", "-df", "/")
    assert code == 0
    header, row = printed.strip().splitlines()
    assert header.split() == ["Filesystem", "Size", "Used", "Available", "Use%"]
    assert row.split()[0] == java.uri and int(row.split()[1]) == status.getCapacity()


def test_access_and_test_w_follow_the_permission_checker(fs, java, d):
    action = java.jvm.org.apache.hadoop.fs.permission.FsAction
    assert fs.mkdirs(java.path(d + "/ro"), java.permission("755"))
    alice = java.open("alice")
    try:
        alice.access(java.path(d + "/ro"), action.READ_EXECUTE)
        assert java_error(alice.access, java.path(d + "/ro"), action.WRITE) == \
            "org.apache.hadoop.security.AccessControlException"
        assert java_error(alice.access, java.path(d + "/missing"), action.READ) == \
            "java.io.FileNotFoundException"
    finally:
        alice.close()
    assert shell(java, "tester", "-test", "-w", d + "/ro")[0] == 0
    assert shell(java, "alice", "-test", "-w", d + "/ro")[0] == 1
    assert shell(java, "alice", "-test", "-r", d + "/ro")[0] == 0


def test_storage_policies_as_the_default_suite_has_them(fs, java, d):
    names = [p.getName() for p in fs.getAllStoragePolicies()]
    assert names == ["PROVIDED", "COLD", "WARM", "HOT", "ONE_SSD", "ALL_SSD", "ALL_NVDIMM",
                     "LAZY_PERSIST"]
    assert fs.mkdirs(java.path(d + "/cold/deep"))
    assert fs.getStoragePolicy(java.path(d + "/cold/deep")).getName() == "HOT"   # default
    fs.setStoragePolicy(java.path(d + "/cold"), "COLD")
    assert fs.getStoragePolicy(java.path(d + "/cold/deep")).getName() == "COLD"  # inherited
    # not an IOException, so the client hands it over as a RemoteException naming it
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as info:
        fs.setStoragePolicy(java.path(d + "/cold"), "FROZEN")
    assert info.value.java_exception.getClassName() == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    assert fs.getXAttrs(java.path(d + "/cold")).isEmpty()        # a system xattr: hidden
    fs.unsetStoragePolicy(java.path(d + "/cold"))
    assert fs.getStoragePolicy(java.path(d + "/cold/deep")).getName() == "HOT"
    with pytest.raises(Py4JJavaError) as info:              # the satisfier is off
        fs.satisfyStoragePolicy(java.path(d + "/cold"))
    assert info.value.java_exception.getClassName() == \
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"


def test_trash_roots_and_delegation_tokens(fs, java):
    assert fs.mkdirs(java.path("/user/tester/.Trash"))
    roots = [r.getPath().toString() for r in fs.getTrashRoots(False)]
    assert roots == ["/user/tester/.Trash"] or roots == [java.qualified("/user/tester/.Trash")]
    assert any(r.getPath().getName() == ".Trash" for r in fs.getTrashRoots(True))
    # simple authentication: the NameNode issues no token (FSNamesystem.getDelegationToken
    # returns null with no secret manager running). Each client then answers as its own
    # code says: DFSClient.getDelegationToken hands the null on, while WebHdfsFileSystem,
    # which by default will not fall back to an insecure cluster, refuses on {"Token": null}.
    if java.scheme == "hdfs":
        assert fs.getDelegationToken("tester") is None
    else:
        assert java_error(fs.getDelegationToken, "tester") == \
            "org.apache.hadoop.security.AccessControlException"


def test_erasure_coding_as_a_namenode_with_every_policy_disabled(fs, alice_fs, java, d):
    p = java.path(d)
    infos = list(fs.getAllErasureCodingPolicies())
    assert sorted(i.getPolicy().getName() for i in infos) == [
        "RS-10-4-1024k", "RS-3-2-1024k", "RS-6-3-1024k", "RS-LEGACY-6-3-1024k", "XOR-2-1-1024k"]
    assert {i.getState().toString() for i in infos} == {"DISABLED"}
    assert dict(fs.getAllErasureCodingCodecs())["rs"] == "rs_native, rs_java"
    assert java_error(fs.setErasureCodingPolicy, p, "RS-6-3-1024k") == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    assert java_error(fs.unsetErasureCodingPolicy, p) == \
        "org.apache.hadoop.hdfs.protocol.NoECPolicySetException"
    missing = java_exception(fs.getErasureCodingPolicy, java.path(d + "/nope"))
    assert missing.getClass().getName() == "java.io.FileNotFoundException"
    assert missing.getMessage() == f"Path not found: {d}/nope"   # FSDirErasureCodingOp's
    assert fs.mkdirs(java.path(d + "/private"), java.permission("700"))   # READ it needs
    assert java_error(alice_fs.getErasureCodingPolicy, java.path(d + "/private")) == \
        "org.apache.hadoop.security.AccessControlException"
    if java.scheme == "webhdfs":
        # WebHdfsFileSystem's FsPathResponseRunner cannot hand on the JSON null of a
        # replicated path ("Missing response"; GETECPOLICY's JSON: tests/namenode/http/), and
        # it has no enable/disableErasureCodingPolicy (ENABLEECPOLICY: the same place).
        return
    assert fs.getErasureCodingPolicy(p) is None          # DFSClient hands on "no policy"
    assert java_error(fs.enableErasureCodingPolicy, "RS-6-3-1024k") == \
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"
    assert java_error(fs.enableErasureCodingPolicy, "NO-SUCH-1k") == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    fs.disableErasureCodingPolicy("XOR-2-1-1024k")                   # disabled already


def test_quota_by_storage_type_answers_as_disabled(fs, java, d):
    storage = java.jvm.org.apache.hadoop.fs.StorageType
    assert java_error(fs.setQuotaByStorageType, java.path(d), storage.SSD, 10) == \
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"
