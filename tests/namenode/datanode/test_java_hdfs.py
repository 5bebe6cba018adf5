"""hdfs:// end to end with Hadoop's own ``DistributedFileSystem`` and ``FsShell`` (PySpark's
hadoop-client-api jar) against a real namenode process: ``DFSOutputStream``'s pipeline
(packets, acks, hflush) into the built-in datanode, ``DFSInputStream``'s block reader out
of it, and ``hadoop fs -checksum`` -- which asks the datanode for each block's checksum over
hdfs:// and the namenode for the file's over webhdfs:// -- printing the same checksum."""

from __future__ import annotations

import os

import pytest
from crc32c import crc32c

from tests.namenode.blocks.helpers import cut, reference_checksum
from tests.namenode.http.java import Java, shell

pytestmark = pytest.mark.spark

BLOCK = 1 << 20
DATA = os.urandom(2 * BLOCK + 333_333)


@pytest.fixture(scope="module")
def schemes(spark, module_namenode):
    """Java handles for the namenode over hdfs:// and over webhdfs://, 1 MiB blocks."""
    hdfs = Java(spark, module_namenode.port, block_size=BLOCK)
    hdfs.uri = module_namenode.hdfs
    return hdfs, Java(spark, module_namenode.port, block_size=BLOCK)


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


def test_fs_checksum_prints_the_same_over_both_schemes(schemes, written):
    printed = []
    for java in schemes:
        code, out = shell(java, "tester", "-checksum", java.qualified(written))
        assert code == 0, out.err
        printed.append(out.replace(java.qualified(written), "<f>"))
    assert printed[0] == printed[1]
    assert printed[0].startswith("<f>\tMD5-of-2048MD5-of-512CRC32C\t")


def test_composite_crc_from_the_datanode(schemes, written):
    hdfs, _ = schemes
    conf = hdfs.conf()
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC")
    jvm = hdfs.jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI(hdfs.uri), conf,
                                                         "tester")
    try:
        answer = fs.getFileChecksum(hdfs.path(written))
    finally:
        fs.close()
    assert answer.getAlgorithmName() == "COMPOSITE-CRC32C"
    assert bytes(answer.getBytes()) == crc32c(DATA).to_bytes(4, "big")
