"""ClientNamenodeProtocol with Hadoop's own client: what only ``DistributedFileSystem`` (from
PySpark's Hadoop jars, ``FileSystem.get(hdfs://...)``) does against a real namenode process:
a writer's hflush that readers see before the close (block locations of a file under
construction, the last block's visible length from the datanode; over webhdfs:// too), and
lease recovery
(``recoverLease``, ``isFileClosed``), which WebHdfsFileSystem has no call for. What both
clients do -- metadata, files, exceptions, FsShell, snapshots -- runs over both schemes in
tests/namenode/test_java_*.py."""

from __future__ import annotations

import random

import pytest

from nnlite.client.webhdfs import WebHdfsClient

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


def test_webhdfs_reads_what_an_hdfs_writer_hflushed(javas, hdfs, dfs, server):
    """A file being written over hdfs:// read over WebHDFS (Hadoop's WebHdfsFileSystem, and
    plain OPENs with offsets and lengths): every hflushed byte, the block being written's
    from the datanode's replica, as a DataNode's OPEN reads through a DFSInputStream
    (``WebHdfsHandler.onOpen``, ``DFSInputStream.readBlockLength``); more after another
    hflush, all after the close. GETFILESTATUS's length stays the namespace's. Blocks of
    4 MiB: a whole read is streamed (past http/data.py's MEMORY_READ), a range is not."""
    block, path = 4 << 20, "/jvm/open"
    data = random.Random(11).randbytes(2 * block + 5000)
    cuts = (block + 300_001, block + 700_123)
    web = javas["webhdfs"]
    wfs, plain = web.open("tester"), WebHdfsClient(server.url, user="tester")
    out = dfs.create(hdfs.path(path), True, 4096, 1, block)
    try:
        out.write(bytearray(data[:cuts[0]]))
        out.hflush()
        assert web.read(wfs, path) == data[:cuts[0]]
        assert web.read(wfs, path, block + 4097) == data[block + 4097:cuts[0]]
        for offset, length in ((block + 777, 5000), (block - 10, 20), (block, 1),
                               (cuts[0] - 513, 513), (block + 512, 100_000)):
            assert b"".join(plain.read(path, offset, length)) == \
                data[offset:offset + length], (offset, length)
        assert b"".join(plain.read(path, cuts[0] - 3)) == data[cuts[0] - 3:cuts[0]]
        assert wfs.getFileStatus(web.path(path)).getLen() == \
            dfs.getFileStatus(hdfs.path(path)).getLen() <= cuts[0]
        out.write(bytearray(data[cuts[0]:cuts[1]]))
        out.hflush()
        assert web.read(wfs, path) == data[:cuts[1]]
        assert b"".join(plain.read(path, cuts[0] - 100, 200)) == \
            data[cuts[0] - 100:cuts[0] + 100]
        out.write(bytearray(data[cuts[1]:]))
        out.close()
        assert web.read(wfs, path) == data
        assert b"".join(plain.read(path, 2 * block + 1, 4000)) == data[2 * block + 1:][:4000]
    finally:
        plain.close()
        wfs.close()
        out.close()
