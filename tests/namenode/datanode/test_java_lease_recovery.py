"""Hadoop's own writer (``DistributedFileSystem`` from PySpark's jars, hdfs://) and a kill -9
of the namenode that hosts the datanode: ``HdfsDataOutputStream.hsync(SyncFlag
.UPDATE_LENGTH)`` sends the last block's length with ``fsync``, which the namenode records
(``FSNamesystem.fsync``: OP_UPDATE_BLOCKS), so ``getFileStatus`` shows it while the file is
open; SIGKILLed with the file open, the restarted namenode's lease recovery keeps every byte
the hsync returned for (the replica being written survives in ``rbw/``: HDFS's RWR
replica), and the file reads back whole."""

from __future__ import annotations

import contextlib
import random

import pytest

from tests.servers import wait_for

pytestmark = pytest.mark.spark
hdfs_native = pytest.importorskip("hdfs_native")
Py4JJavaError = pytest.importorskip("py4j.protocol").Py4JJavaError

BLOCK = 1 << 20
DATA = random.Random(3).randbytes(BLOCK + 200_003)


def filesystem(jvm, url: str):
    """A DistributedFileSystem of its own (no FileSystem cache) as "tester", which gives up
    on a namenode that is gone at once (the test aborts it)."""
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.hdfs.impl.disable.cache", "true")
    conf.set("ipc.client.connect.max.retries", "0")
    return jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(url), conf, "tester")


def test_hsync_with_update_length_then_a_kill_of_the_namenode(spark, start_namenode):
    jvm = spark._jvm
    nn = start_namenode()
    fs = filesystem(jvm, nn.hdfs)
    path = jvm.org.apache.hadoop.fs.Path("/java/open")
    try:
        out = fs.create(path, True, 4096, 1, BLOCK)
        out.write(bytearray(DATA))
        flag = getattr(jvm.org.apache.hadoop.hdfs.client, "HdfsDataOutputStream$SyncFlag")
        out.hsync(jvm.java.util.EnumSet.of(flag.UPDATE_LENGTH))
        assert fs.getFileStatus(path).getLen() == len(DATA)
        nn.kill()
    finally:
        with contextlib.suppress(Py4JJavaError):
            fs.close()          # its open file fails to close: it is the namenode's now
    restarted = start_namenode(name_dirs=nn.name_dirs)
    client = hdfs_native.Client(restarted.hdfs)
    wait_for(lambda: client.recover_lease("/java/open"), 30, "the file to be closed")
    assert client.get_file_info("/java/open").length == len(DATA)
    with client.read("/java/open") as stream:
        assert stream.read() == DATA
