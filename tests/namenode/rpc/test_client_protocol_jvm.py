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
def hdfs(javas):
    """The Java handles over hdfs:// (tests/namenode/conftest.py)."""
    return javas["hdfs"]


@pytest.fixture(scope="module")
def dfs(hdfs):
    fs = hdfs.open("tester")
    yield fs
    fs.close()


def test_located_listing_block_locations_append_truncate(hdfs, dfs):
    P = hdfs.path
    out = dfs.create(P("/jvm/data/f"))
    out.write(bytearray(b"x" * 1000))
    out.hflush()
    out.write(bytearray(b"y"))
    out.close()
    listed = dfs.listLocatedStatus(P("/jvm/data"))
    status = listed.next()
    assert not listed.hasNext() and status.getLen() == 1001
    [location] = status.getBlockLocations()
    assert (location.getOffset(), location.getLength()) == (0, 1001)
    assert list(location.getHosts()) == ["127.0.0.1"]
    hdfs.write(dfs.append(P("/jvm/data/f")), b"zz")
    assert dfs.getFileStatus(P("/jvm/data/f")).getLen() == 1003
    # nnlite's append starts a block after the file's own (rpc/writes.py's Writes.append);
    # HDFS's goes on in the last block unless CreateFlag.NEW_BLOCK (FSDirAppendOp)
    assert len(dfs.getFileBlockLocations(P("/jvm/data/f"), 0, 1003)) == 2
    assert dfs.truncate(P("/jvm/data/f"), 5)
    assert dfs.getFileStatus(P("/jvm/data/f")).getLen() == 5
    assert hdfs.read(dfs, "/jvm/data/f") == b"xxxxx"


def test_recover_lease_keeps_the_blocks_the_datanode_finalized(hdfs, dfs):
    """A writer that went silent after its first block: another client's recoverLease closes
    the file with that block (HDFS's lease recovery), not empty."""
    block = 1 << 20
    out = dfs.create(hdfs.path("/jvm/recover"), True, 4096, 1, block)
    out.write(bytearray(b"a" * (block + 1000)))
    out.hflush()                                    # the first block is full and finalized
    other = hdfs.open("tester")
    try:
        assert other.recoverLease(hdfs.path("/jvm/recover"))
        assert other.isFileClosed(hdfs.path("/jvm/recover"))
        assert other.getFileStatus(hdfs.path("/jvm/recover")).getLen() >= block
    finally:
        other.close()


def test_a_reader_sees_what_a_writer_hflushed(hdfs, dfs):
    """DFSInputStream on a file still being written: the completed blocks from the namenode,
    the last block's visible length from the datanode's IPC port (getReplicaVisibleLength)."""
    block = 1 << 20
    out = dfs.create(hdfs.path("/jvm/tail"), True, 4096, 1, block)
    out.write(bytearray(b"a" * (block + 10)))
    out.hflush()
    reader = hdfs.open("tester")
    try:
        assert hdfs.read(reader, "/jvm/tail") == b"a" * (block + 10)
    finally:
        reader.close()
        out.close()
    assert dfs.getFileStatus(hdfs.path("/jvm/tail")).getLen() == block + 10
