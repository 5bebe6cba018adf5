"""A file ``DistributedFileSystem`` wrote through the built-in datanode (PySpark's
hadoop-client-api jar, hdfs://), with an hflush inside its first block, read back and
checksummed over both schemes: ``DFSOutputStream``'s pipeline (packets, acks, hflush) into
the datanode, ``DFSInputStream``'s block reader out of it, and the file checksum the datanode
computes for each block over hdfs:// and the namenode over webhdfs://, the same. (Each
scheme's own writes, checksums, composite CRCs and ``hadoop fs -checksum`` against Hadoop's
reference: tests/namenode/test_java_data.py.)"""

from __future__ import annotations

import os

import pytest

from tests.namenode.blocks.helpers import cut, reference_checksum

pytestmark = pytest.mark.spark

BLOCK = 1 << 20
DATA = os.urandom(2 * BLOCK + 333_333)


@pytest.fixture(scope="module")
def java_block_size() -> int:
    return BLOCK


@pytest.fixture(scope="module")
def schemes(javas):
    """Java handles for the namenode over hdfs:// and over webhdfs://, 1 MiB blocks."""
    return javas["hdfs"], javas["webhdfs"]


@pytest.fixture(scope="module")
def written(schemes):
    """DATA written through DistributedFileSystem, with an hflush inside the first block."""
    hdfs, _ = schemes
    fs = hdfs.open("tester")
    try:
        stream = fs.create(hdfs.path("/java/f"), False)
        stream.write(bytearray(DATA[:1000]))
        stream.hflush()
        hdfs.write(stream, DATA[1000:])
    finally:
        fs.close()
    return "/java/f"


def test_dfs_writes_and_reads_back_over_both_schemes(schemes, written):
    hdfs, webhdfs = schemes
    for java in (hdfs, webhdfs):
        fs = java.open("tester")
        try:
            assert fs.getFileStatus(java.path(written)).getLen() == len(DATA)
            assert java.read(fs, written) == DATA
            assert java.read(fs, written, offset=BLOCK + 7) == DATA[BLOCK + 7:]
        finally:
            fs.close()


def test_the_file_checksum_is_the_same_over_both_schemes(schemes, written):
    answers = []
    for java in schemes:
        fs = java.open("tester")
        try:
            answers.append(fs.getFileChecksum(java.path(written)))
        finally:
            fs.close()
    hdfs, webhdfs = answers
    assert hdfs.equals(webhdfs)
    # getBytes: the 28 serialised bytes (in a buffer that may be longer)
    assert bytes(hdfs.getBytes())[:28] == reference_checksum(cut(DATA, BLOCK))[:28]
    assert hdfs.getAlgorithmName() == "MD5-of-2048MD5-of-512CRC32C"
