"""``/.reserved`` paths through Hadoop's own clients (PySpark's jars), each test over
``webhdfs://`` and ``hdfs://``: inode paths (``/.reserved/.inodes/<fileId>``, the fileId of
the client's HdfsFileStatus) stat, open, list, rename and delete the inode wherever it is,
raw paths are the plain ones, ``/.reserved`` stats and lists as HDFS answers, and the name
``.reserved`` is refused at the root, with HDFS's exception classes and messages.

The PathHandle cases follow Hadoop's ``AbstractContractPathHandleTest`` (run by HDFS as
``TestHDFSContractPathHandle``; its test classes are not in PySpark's jars), each named after
its case and run for every option set of its ``params()`` (exact, content, path, reference),
the handle used as it is and serialized (``RawPathHandle``), with HDFS's contract options
(``supports-file-reference`` and ``supports-content-check`` true). WebHdfsFileSystem has no
PathHandle (``getPathHandle`` is UnsupportedOperationException, so the contract skips); over
``hdfs://`` DistributedFileSystem.getPathHandle names the file by ``/.reserved/.inodes/<id>``
when it may move, which is what the namenode resolves."""

from __future__ import annotations

import pytest

from tests.namenode.java import java_error, java_exception, shell

pytestmark = pytest.mark.spark

FNF = "java.io.FileNotFoundException"
ACE = "org.apache.hadoop.security.AccessControlException"
INVALID_HANDLE = "org.apache.hadoop.fs.InvalidPathHandleException"
B1 = bytes((43 + i) % 255 for i in range(4096))        # ContractTestUtils.dataset(len, 43, 255)
B2 = bytes((44 + i) % 255 for i in range(4096))
HANDLE_OPTS = ("exact", "content", "path", "reference")  # AbstractContractPathHandleTest.params
# HandleOpt.<name>(): (changed allowed, moved allowed), as Options.HandleOpt defines them
ALLOWS = {"exact": (False, False), "content": (False, True), "path": (True, False),
          "reference": (True, True)}


# A call of DistributedFileSystem's that WebHdfsFileSystem lacks (PathHandles, recoverLease):
# the case is generated for hdfs:// only (the module's ``java`` fixture takes that one scheme),
# so a run reports no skipped case for the client that has no such call.
hdfs_only = pytest.mark.parametrize("java", ["hdfs"], indirect=True, scope="module")
webhdfs_only = pytest.mark.parametrize("java", ["webhdfs"], indirect=True, scope="module")


def put(fs, java, path: str, data: bytes) -> None:
    java.write(fs.create(java.path(path), False), data)


def file_id(fs, java, path: str) -> int:
    """HdfsFileStatus.getFileId of ``path``: the inode id, over either client."""
    return fs.getFileStatus(java.path(path)).getFileId()


def inode(fs, java, path: str) -> str:
    return f"/.reserved/.inodes/{file_id(fs, java, path)}"


# --------------------------------------------------------------------------- inode paths

def test_an_inode_path_stats_opens_and_lists(fs, java, d):
    put(fs, java, d + "/f", B1)
    status = fs.getFileStatus(java.path(inode(fs, java, d + "/f")))
    assert status.getLen() == len(B1) and status.isFile()
    assert status.getFileId() == file_id(fs, java, d + "/f")
    assert java.read(fs, inode(fs, java, d + "/f")) == B1
    listed = fs.listStatus(java.path(inode(fs, java, d)))
    assert [s.getPath().getName() for s in listed] == ["f"]
    assert java.read(fs, inode(fs, java, d) + "/f") == B1


def test_an_inode_path_follows_a_rename_and_deletes(fs, java, d):
    put(fs, java, d + "/f", B1)
    by_id = inode(fs, java, d + "/f")
    assert fs.rename(java.path(by_id), java.path(d + "/g"))
    assert not fs.exists(java.path(d + "/f"))
    assert java.read(fs, by_id) == B1
    assert fs.getFileStatus(java.path(by_id)).getLen() == len(B1)
    assert fs.delete(java.path(by_id), False)
    assert not fs.exists(java.path(d + "/g"))
    error = java_exception(fs.getFileStatus, java.path(by_id))
    assert error.getClass().getName() == FNF
    assert f"File for given inode path does not exist: {by_id}" in error.getMessage()


def test_the_root_and_an_unknown_or_invalid_id(fs, java):
    assert fs.getFileStatus(java.path("/.reserved/.inodes/16385")).isDirectory()
    error = java_exception(fs.getFileStatus, java.path("/.reserved/.inodes/99999999"))
    assert error.getClass().getName() == FNF
    assert "File for given inode path does not exist: /.reserved/.inodes/99999999" in \
        error.getMessage()
    error = java_exception(fs.listStatus, java.path("/.reserved/.inodes/nope"))
    assert error.getClass().getName() == FNF
    assert "Invalid inode path: /.reserved/.inodes/nope" in error.getMessage()


def test_an_inode_path_writes_and_appends(fs, java, d):
    """create under a directory's inode path and append to a file's: the lease is the
    inode's own path's, so the file reads back by its path."""
    java.write(fs.create(java.path(inode(fs, java, d) + "/new"), False), B1)
    java.write(fs.append(java.path(inode(fs, java, d + "/new"))), B2)
    assert java.read(fs, d + "/new") == B1 + B2


def test_concat_and_truncate_by_inode_paths(fs, java, d):
    """FSDirConcatOp and FSDirTruncateOp resolve their paths; the leases they check are the
    inodes' own paths'."""
    put(fs, java, d + "/t", B1)
    put(fs, java, d + "/s", B2)
    sources = java.array(java.fs_pkg.Path, [java.path(inode(fs, java, d + "/s"))])
    fs.concat(java.path(inode(fs, java, d + "/t")), sources)
    assert java.read(fs, d + "/t") == B1 + B2
    assert not fs.exists(java.path(d + "/s"))
    assert fs.truncate(java.path(inode(fs, java, d + "/t")), 10)
    assert java.read(fs, d + "/t") == B1[:10]


def test_an_inode_path_into_a_snapshot(fs, java, d):
    """``<dir inode path>/.snapshot/<s>/...`` reads the snapshot; a file's inode path is
    its current path; a deleted file that the snapshot keeps names its old place (HDFS's
    INodeMap keeps it, parent link and all)."""
    put(fs, java, d + "/f", B1)
    fs.allowSnapshot(java.path(d))
    fs.createSnapshot(java.path(d), "s1")
    old = inode(fs, java, d + "/f")
    fs.delete(java.path(d + "/f"), False)
    error = java_exception(fs.getFileStatus, java.path(old))    # kept: its place is empty
    assert error.getClass().getName() == FNF
    assert f"File does not exist: {old}" in error.getMessage()
    put(fs, java, d + "/f", B2)
    assert java.read(fs, inode(fs, java, d) + "/.snapshot/s1/f") == B1
    assert java.read(fs, inode(fs, java, d + "/f")) == B2
    assert java.read(fs, old) == B2          # HDFS: the kept inode's place, as it is now
    report = fs.getSnapshotDiffReport(java.path(inode(fs, java, d)), "s1", "")
    assert report.getSnapshotRoot() == d                  # the directory's own path
    assert java_error(fs.delete, java.path(inode(fs, java, d) + "/.snapshot/s1/f"), False) == \
        "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException"
    fs.deleteSnapshot(java.path(inode(fs, java, d)), "s1")
    assert list(fs.listStatus(java.path(d + "/.snapshot"))) == []


@hdfs_only
def test_recover_lease_by_inode_path(fs, java, d):
    """recoverLease resolves its path (FSNamesystem.recoverLease: resolvePath, WRITE): the
    lease it takes back is the one the writer holds on the inode's own path."""
    out = fs.create(java.path(d + "/w"), True)
    out.write(bytearray(B1))
    out.hflush()
    other = java.open("tester")
    try:
        by_id = java.path(inode(other, java, d + "/w"))
        assert not other.isFileClosed(by_id)
        assert other.recoverLease(by_id)
        assert other.isFileClosed(by_id)
        assert other.getFileStatus(by_id).getLen() == len(B1)
    finally:
        other.close()


def test_open_file_with_file_status(fs, java, d):
    """``openFile(path).withFileStatus(status)``: the builder's read of a file by its path
    or its inode path, given the status the client has."""
    put(fs, java, d + "/f", B1)
    for path in (d + "/f", inode(fs, java, d + "/f")):
        status = fs.getFileStatus(java.path(path))
        stream = fs.openFile(java.path(path)).withFileStatus(status).build().get()
        try:
            data = bytes(java.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
        assert data == B1


def test_fsshell_by_inode_path(fs, java, d):
    """``hadoop fs -cat`` and ``-ls`` of inode paths: the entries listed under a directory's
    inode path are named under it, as the client names them."""
    put(fs, java, d + "/f", b"hello\n")
    code, printed = shell(java, "tester", "-cat", inode(fs, java, d + "/f"))
    assert (code, printed) == (0, "hello\n"), printed.err
    by_id = inode(fs, java, d)
    code, printed = shell(java, "tester", "-ls", by_id)
    assert code == 0, printed.err
    assert printed.strip().splitlines()[-1].endswith(f" {by_id}/f")


# --------------------------------------------------------------------------- raw paths

def test_a_raw_path_is_the_plain_path(fs, alice_fs, java, d):
    put(fs, java, d + "/f", B1)
    raw = "/.reserved/raw" + d + "/f"
    assert file_id(fs, java, raw) == file_id(fs, java, d + "/f")
    assert java.read(alice_fs, raw) == B1                 # anyone reads through raw
    assert [s.getPath().getName() for s in alice_fs.listStatus(java.path("/.reserved/raw" + d))
            ] == ["f"]
    assert fs.mkdirs(java.path("/.reserved/raw" + d + "/made"))     # tester: supergroup
    assert fs.getFileStatus(java.path(d + "/made")).isDirectory()


def test_only_the_superuser_changes_through_raw(fs, alice_fs, java, d):
    fs.setPermission(java.path(d), java.permission("777"))
    error = java_exception(alice_fs.mkdirs, java.path("/.reserved/raw" + d + "/x"))
    assert error.getClass().getName() == ACE
    assert "Access denied for user alice. Superuser privilege is required" in \
        error.getMessage()
    assert not fs.exists(java.path(d + "/x"))


def test_raw_xattrs_through_raw_paths(fs, java, d):
    """DistCp's -px of raw paths: ``raw.`` xattrs are set and read through /.reserved/raw
    only (XAttrPermissionFilter)."""
    put(fs, java, d + "/f", B1)
    raw = java.path("/.reserved/raw" + d + "/f")
    assert java_error(fs.setXAttr, java.path(d + "/f"), "raw.k", bytearray(b"v")) == ACE
    fs.setXAttr(raw, "raw.k", bytearray(b"v"))
    assert {k: bytes(v) for k, v in fs.getXAttrs(raw).items()} == {"raw.k": b"v"}
    assert dict(fs.getXAttrs(java.path(d + "/f"))) == {}


# --------------------------------------------------------------------------- /.reserved

def test_reserved_stats_and_lists_as_hdfs(fs, alice_fs, java):
    status = alice_fs.getFileStatus(java.path("/.reserved"))
    assert status.isDirectory()
    assert status.getPermission().toShort() == 0o1770
    assert (status.getOwner(), status.getGroup(), status.getModificationTime()) == ("", "", 0)
    assert (status.getFileId(), status.getChildrenNum()) == (-1, 0)      # DOT_RESERVED_STATUS
    listed = alice_fs.listStatus(java.path("/.reserved"))
    assert [s.getPath().getName() for s in listed] == [".inodes", "raw"]
    assert [s.getPermission().toShort() for s in listed] == [0o770, 0o770]
    assert [s.getGroup() for s in listed] == ["supergroup", "supergroup"]
    error = java_exception(fs.listStatus, java.path("/.reserved/.inodes"))
    assert error.getClass().getName() == FNF
    assert "/.reserved/.inodes does not exist" in error.getMessage()      # testListDotReserved


def test_reserved_is_not_found_but_to_stat_and_list(fs, java):
    """FSDirStatAndListingOp makes up /.reserved for getFileInfo and getListing only."""
    error = java_exception(fs.getContentSummary, java.path("/.reserved"))
    assert error.getClass().getName() == FNF
    assert "File does not exist: /.reserved" in error.getMessage()


def test_the_name_reserved_is_refused_at_the_root(fs, java, d):
    assert java_error(fs.mkdirs, java.path("/.reserved")) == \
        "org.apache.hadoop.HadoopIllegalArgumentException"
    assert java_error(fs.create, java.path("/.reserved/x"), False) == \
        "org.apache.hadoop.fs.InvalidPathException"
    assert java_error(fs.delete, java.path("/.reserved"), True) == \
        "org.apache.hadoop.fs.InvalidPathException"                    # FSDirDeleteOp
    assert fs.mkdirs(java.path(d + "/.reserved"))                  # elsewhere: a name
    assert fs.getFileStatus(java.path(d + "/.reserved")).isDirectory()


# --------------------------------------------------------------------------- PathHandle

def handle_opts(java, name: str):
    return getattr(java.jvm.org.apache.hadoop.fs.Options.HandleOpt, name)()


def get_handle(fs, java, status, name: str, serialized: bool):
    """AbstractContractPathHandleTest.getHandleOrSkip (no skip: an unsupported handle fails
    the case over hdfs://)."""
    handle = fs.getPathHandle(status, handle_opts(java, name))
    if serialized:
        return java.jvm.org.apache.hadoop.fs.RawPathHandle(handle.bytes())
    return handle


def read_stream(java, stream) -> bytes:
    try:
        return bytes(java.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


def contract_file(fs, java, d, name: str, data: bytes = B1):
    """AbstractContractPathHandleTest.testFile: the file and its status."""
    path = f"{d}/{name}"
    put(fs, java, path, data)
    return fs.getFileStatus(java.path(path))


def handle_cases():
    return [pytest.param(name, serialized, id=f"{name}-{'serialized' if serialized else 'ref'}")
            for name in HANDLE_OPTS for serialized in (True, False)]


@webhdfs_only
def test_webhdfs_has_no_path_handle(fs, java, d):
    """What makes the contract skip every case over webhdfs:// (getHandleOrSkip)."""
    status = contract_file(fs, java, d, "f")
    with pytest.raises(Exception) as info:       # PySpark re-raises it as its own class
        fs.getPathHandle(status, handle_opts(java, "exact"))
    assert type(info.value).__name__ == "UnsupportedOperationException"


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_ident(fs, java, d, opts, serialized):                 # testIdent
    status = contract_file(fs, java, d, "testIdent")
    handle = get_handle(fs, java, status, opts, serialized)
    assert java.read(fs, d + "/testIdent") == B1
    assert read_stream(java, fs.open(handle)) == B1


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_changed(fs, java, d, opts, serialized):               # testChanged
    changed, _ = ALLOWS[opts]
    status = contract_file(fs, java, d, "testChanged")
    java.write(fs.append(status.getPath()), B2)
    assert java.read(fs, d + "/testChanged") == B1 + B2
    handle = get_handle(fs, java, status, opts, serialized)     # after the change
    if changed:
        assert read_stream(java, fs.open(handle)) == B1 + B2
    else:
        assert java_error(fs.open, handle) == INVALID_HANDLE


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_moved(fs, java, d, opts, serialized):                 # testMoved
    _, moved = ALLOWS[opts]
    status = contract_file(fs, java, d, "testMoved")
    assert fs.rename(status.getPath(), java.path(d + "/testMoved2"))
    handle = get_handle(fs, java, status, opts, serialized)
    if moved:
        assert read_stream(java, fs.open(handle)) == B1
    else:
        error = java_exception(fs.open, handle)
        assert error.getClass().getName() == INVALID_HANDLE
        assert "Could not resolve handle" in error.getMessage()


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_changed_and_moved(fs, java, d, opts, serialized):     # testChangedAndMoved
    changed, moved = ALLOWS[opts]
    status = contract_file(fs, java, d, "testChangedAndMoved")
    dst = java.path(d + "/testChangedAndMoved2")
    assert fs.rename(status.getPath(), dst)
    java.write(fs.append(dst), B2)
    handle = get_handle(fs, java, status, opts, serialized)
    if changed and moved:
        assert read_stream(java, fs.open(handle)) == B1 + B2
    else:
        assert java_error(fs.open, handle) == INVALID_HANDLE


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_open_file_apply_read(fs, java, d, opts, serialized):  # testOpenFileApplyRead
    handle = get_handle(fs, java, contract_file(fs, java, d, "testOpenFileApplyRead"), opts,
                        serialized)
    assert read_stream(java, fs.openFile(handle).build().get()) == B1


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_open_file_delete(fs, java, d, opts, serialized):      # testOpenFileDelete
    status = contract_file(fs, java, d, "testOpenFileDelete")
    handle = get_handle(fs, java, status, opts, serialized)
    assert fs.delete(status.getPath(), False)
    future = fs.openFile(handle).opt("fs.test.something", True).build()   # no failure yet
    cause = java_exception(future.get).getCause()
    assert cause.getClass().getName() in (FNF, INVALID_HANDLE)


@pytest.mark.parametrize(("opts", "serialized"), handle_cases())
@hdfs_only
def test_open_file_lazy_fail(fs, java, d, opts, serialized):   # testOpenFileLazyFail
    handle = get_handle(fs, java, contract_file(fs, java, d, "testOpenFileLazyFail"), opts,
                        serialized)
    assert read_stream(java, fs.openFile(handle).build().get()) == B1
