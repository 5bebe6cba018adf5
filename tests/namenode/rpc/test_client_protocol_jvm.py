"""ClientNamenodeProtocol with Hadoop's own client: ``DistributedFileSystem`` from PySpark's
Hadoop jars (``FileSystem.get(hdfs://...)``) against a real namenode process. Metadata calls,
a file written and read through the built-in datanode, and the exceptions HDFS raises, which
the client unwraps from the RPC answer's exception class."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode()


@pytest.fixture(scope="module")
def jvm(spark):
    return spark._jvm


def filesystem(jvm, nn, user: str):
    """A DistributedFileSystem of its own (no FileSystem cache) acting as ``user``."""
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.hdfs.impl.disable.cache", "true")
    return jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(nn.hdfs), conf, user)


@pytest.fixture(scope="module")
def dfs(jvm, nn):
    fs = filesystem(jvm, nn, "tester")
    yield fs
    fs.close()


@pytest.fixture(scope="module")
def alice(jvm, nn):
    fs = filesystem(jvm, nn, "alice")
    yield fs
    fs.close()


def P(jvm, path: str):
    return jvm.org.apache.hadoop.fs.Path(path)


def java_class(excinfo) -> str:
    return excinfo.value.java_exception.getClass().getName()


def test_it_is_hdfs(dfs):
    assert dfs.getClass().getName() == "org.apache.hadoop.hdfs.DistributedFileSystem"


def test_mkdirs_status_listing_rename_delete(jvm, dfs):
    assert dfs.mkdirs(P(jvm, "/jvm/a/b"))
    status = dfs.getFileStatus(P(jvm, "/jvm/a"))
    assert status.isDirectory() and status.getOwner() == "tester"
    assert [s.getPath().getName() for s in dfs.listStatus(P(jvm, "/jvm/a"))] == ["b"]
    assert dfs.rename(P(jvm, "/jvm/a/b"), P(jvm, "/jvm/a/c"))
    assert not dfs.rename(P(jvm, "/jvm/missing"), P(jvm, "/jvm/a/d"))
    assert [s.getPath().getName() for s in dfs.listStatus(P(jvm, "/jvm/a"))] == ["c"]
    assert dfs.delete(P(jvm, "/jvm/a"), True)
    assert not dfs.exists(P(jvm, "/jvm/a"))


def test_set_permission(jvm, dfs):
    dfs.mkdirs(P(jvm, "/jvm/perm"))
    dfs.setPermission(P(jvm, "/jvm/perm"),
                      jvm.org.apache.hadoop.fs.permission.FsPermission.createImmutable(0o700))
    assert dfs.getFileStatus(P(jvm, "/jvm/perm")).getPermission().toString() == "rwx------"


def test_a_file_written_and_read_through_the_datanode(jvm, dfs):
    out = dfs.create(P(jvm, "/jvm/file.txt"))
    out.write(bytearray(b"hello hdfs"))
    out.close()
    assert dfs.getFileStatus(P(jvm, "/jvm/file.txt")).getLen() == 10
    stream = dfs.open(P(jvm, "/jvm/file.txt"))
    reader = jvm.java.io.BufferedReader(jvm.java.io.InputStreamReader(stream))
    assert reader.readLine() == "hello hdfs"
    reader.close()


def test_located_listing_block_locations_append_truncate(jvm, dfs):
    out = dfs.create(P(jvm, "/jvm/data/f"))
    out.write(bytearray(b"x" * 1000))
    out.hflush()
    out.write(bytearray(b"y"))
    out.close()
    listed = dfs.listLocatedStatus(P(jvm, "/jvm/data"))
    status = listed.next()
    assert not listed.hasNext() and status.getLen() == 1001
    [location] = status.getBlockLocations()
    assert (location.getOffset(), location.getLength()) == (0, 1001)
    assert list(location.getHosts()) == ["127.0.0.1"]
    out = dfs.append(P(jvm, "/jvm/data/f"))
    out.write(bytearray(b"zz"))
    out.close()
    assert dfs.getFileStatus(P(jvm, "/jvm/data/f")).getLen() == 1003
    assert len(dfs.getFileBlockLocations(P(jvm, "/jvm/data/f"), 0, 1003)) == 2
    assert dfs.truncate(P(jvm, "/jvm/data/f"), 5)
    assert dfs.getFileStatus(P(jvm, "/jvm/data/f")).getLen() == 5
    stream = dfs.open(P(jvm, "/jvm/data/f"))
    reader = jvm.java.io.BufferedReader(jvm.java.io.InputStreamReader(stream))
    assert reader.readLine() == "xxxxx"
    reader.close()


def test_a_missing_path_is_file_not_found(jvm, dfs):
    from py4j.protocol import Py4JJavaError
    with pytest.raises(Py4JJavaError) as excinfo:
        dfs.getFileStatus(P(jvm, "/jvm/nope"))
    assert java_class(excinfo) == "java.io.FileNotFoundException"


def test_creating_an_existing_file_without_overwrite(jvm, dfs):
    from py4j.protocol import Py4JJavaError
    dfs.create(P(jvm, "/jvm/exists")).close()
    with pytest.raises(Py4JJavaError) as excinfo:
        dfs.create(P(jvm, "/jvm/exists"), False)
    assert java_class(excinfo) == "org.apache.hadoop.fs.FileAlreadyExistsException"


def test_mkdirs_under_a_file(jvm, dfs):
    from py4j.protocol import Py4JJavaError
    dfs.create(P(jvm, "/jvm/plain")).close()
    with pytest.raises(Py4JJavaError) as excinfo:
        dfs.mkdirs(P(jvm, "/jvm/plain/sub"))
    assert java_class(excinfo) == "org.apache.hadoop.fs.ParentNotDirectoryException"


def test_permission_refusal_is_access_control_exception(jvm, dfs, alice):
    from py4j.protocol import Py4JJavaError
    dfs.mkdirs(P(jvm, "/jvm/closed"))
    dfs.setPermission(P(jvm, "/jvm/closed"),
                      jvm.org.apache.hadoop.fs.permission.FsPermission.createImmutable(0o700))
    with pytest.raises(Py4JJavaError) as excinfo:
        alice.mkdirs(P(jvm, "/jvm/closed/x"))
    assert java_class(excinfo) == "org.apache.hadoop.security.AccessControlException"
    assert "Permission denied: user=alice" in excinfo.value.java_exception.getMessage()


def test_fsshell_commands_over_hdfs(jvm, spark, nn, tmp_path):
    """Hadoop's FsShell (``hadoop fs``) with fs.defaultFS on hdfs://: every command exits 0
    and leaves what HDFS would."""
    local = tmp_path / "local.txt"
    local.write_text("hello shell\n" * 100)
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.defaultFS", nn.hdfs)
    conf.set("fs.hdfs.impl.disable.cache", "true")
    conf.set("fs.trash.interval", "5")
    shell = jvm.org.apache.hadoop.fs.FsShell(conf)

    def run(*args: str) -> int:
        argv = spark.sparkContext._gateway.new_array(jvm.java.lang.String, len(args))
        for i, arg in enumerate(args):
            argv[i] = arg
        return shell.run(argv)

    commands = [
        ("-mkdir", "-p", "/shell/x"), ("-put", str(local), "/shell/x/f.txt"),
        ("-ls", "-R", "/shell"), ("-cat", "/shell/x/f.txt"), ("-checksum", "/shell/x/f.txt"),
        ("-du", "-s", "/shell"), ("-df", "/"), ("-count", "-q", "/shell"),
        ("-setrep", "2", "/shell/x/f.txt"), ("-stat", "%r %b %n", "/shell/x/f.txt"),
        ("-touchz", "/shell/x/empty"), ("-appendToFile", str(local), "/shell/x/f.txt"),
        ("-truncate", "-w", "5", "/shell/x/f.txt"), ("-getfacl", "/shell/x"),
        ("-setfattr", "-n", "user.a", "-v", "b", "/shell/x"), ("-getfattr", "-d", "/shell/x"),
        ("-test", "-d", "/shell/x"), ("-mv", "/shell/x/f.txt", "/shell/x/g.txt"),
        ("-cp", "/shell/x/g.txt", "/shell/x/h.txt"), ("-rm", "/shell/x/empty"),
    ]
    assert [(c, run(*c)) for c in commands] == [(c, 0) for c in commands]
    fs = filesystem(jvm, nn, "tester")
    try:
        assert fs.getFileStatus(P(jvm, "/shell/x/h.txt")).getLen() == 5
        assert not fs.exists(P(jvm, "/shell/x/empty"))
        trash = f"/user/{jvm.java.lang.System.getProperty('user.name')}/.Trash/Current"
        assert fs.exists(P(jvm, f"{trash}/shell/x/empty"))
    finally:
        fs.close()
    assert run("-test", "-e", "/shell/missing") == 1


def test_snapshots_and_their_diff_report(jvm, nn):
    fs = filesystem(jvm, nn, "tester")
    try:
        fs.mkdirs(P(jvm, "/snap/d"))
        fs.allowSnapshot(P(jvm, "/snap"))
        fs.createSnapshot(P(jvm, "/snap"), "s1")
        fs.create(P(jvm, "/snap/d/new")).close()
        fs.rename(P(jvm, "/snap/d"), P(jvm, "/snap/e"))
        fs.createSnapshot(P(jvm, "/snap"), "s2")
        report = fs.getSnapshotDiffReport(P(jvm, "/snap"), "s1", "s2")
        kinds = sorted(e.getType().getLabel() for e in report.getDiffList())
        assert "R" in kinds and "M" in kinds
        assert [s.getDirStatus().getLocalName() for s in fs.getSnapshotListing(
            P(jvm, "/snap"))] == ["s1", "s2"]
        assert [d.getFullPath().toString() for d in fs.getSnapshottableDirListing()] \
            == ["/snap"]
    finally:
        fs.close()


def test_recover_lease_keeps_the_blocks_the_datanode_finalized(jvm, dfs, nn):
    """A writer that went silent after its first block: another client's recoverLease closes
    the file with that block (HDFS's lease recovery), not empty."""
    block = 1 << 20
    out = dfs.create(P(jvm, "/jvm/recover"), True, 4096, 1, block)
    out.write(bytearray(b"a" * (block + 1000)))
    out.hflush()                                    # the first block is full and finalized
    other = filesystem(jvm, nn, "tester")
    try:
        assert other.recoverLease(P(jvm, "/jvm/recover"))
        assert other.isFileClosed(P(jvm, "/jvm/recover"))
        assert other.getFileStatus(P(jvm, "/jvm/recover")).getLen() >= block
    finally:
        other.close()


def test_a_reader_sees_what_a_writer_hflushed(jvm, dfs, nn):
    """DFSInputStream on a file still being written: the completed blocks from the namenode,
    the last block's visible length from the datanode's IPC port (getReplicaVisibleLength)."""
    block = 1 << 20
    out = dfs.create(P(jvm, "/jvm/tail"), True, 4096, 1, block)
    out.write(bytearray(b"a" * (block + 10)))
    out.hflush()
    reader = filesystem(jvm, nn, "tester")
    try:
        stream = reader.open(P(jvm, "/jvm/tail"))
        buffer = spark_bytes(jvm, block + 100)
        total = 0
        while True:
            n = stream.read(buffer, total, block + 100 - total)
            if n <= 0:
                break
            total += n
        stream.close()
        assert total == block + 10
    finally:
        reader.close()
        out.close()
    assert dfs.getFileStatus(P(jvm, "/jvm/tail")).getLen() == block + 10


def spark_bytes(jvm, size: int):
    return jvm.java.lang.reflect.Array.newInstance(jvm.java.lang.Byte.TYPE, size)
