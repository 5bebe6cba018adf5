"""ClientNamenodeProtocol with Hadoop's own client: what only ``DistributedFileSystem`` (from
PySpark's Hadoop jars, ``FileSystem.get(hdfs://...)``) does against a real namenode process:
a writer's hflush that readers see before the close (block locations of a file under
construction, the last block's visible length from the datanode), and lease recovery
(``recoverLease``, ``isFileClosed``), which WebHdfsFileSystem has no call for. What both
clients do -- metadata, files, exceptions, FsShell, snapshots -- runs over both schemes in
tests/namenode/test_java_*.py."""

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


def P(jvm, path: str):
    return jvm.org.apache.hadoop.fs.Path(path)


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
