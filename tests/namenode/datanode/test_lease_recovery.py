"""Lease recovery of a file whose writer went away over hdfs://, with real processes: the
Rust client hdfs-native writes in a subprocess, hsyncs, and is killed (SIGKILL) or hangs
(SIGSTOP, its connections left open); another client's recoverLease closes the file with
every byte the writer had flushed, its last block finalized by the built-in datanode where
the replica stood (HDFS's block recovery: ``FSNamesystem.internalReleaseLease``, the
DataNode's ``BlockRecoveryWorker`` / ``FsDatasetImpl.initReplicaRecovery``, which stops a
writer still connected, then ``commitBlockSynchronization``). The namenode (and its
datanode) SIGKILLed while the file is open: the replica being written survives in ``rbw/``
and the restarted namenode's lease recovery keeps what its checksums vouch for (HDFS's RWR
replica, ``BlockPoolSlice.validateIntegrityAndSetLength``)."""

from __future__ import annotations

import random
import select
import signal
import subprocess
import sys

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats.hadoop import client_namenode as cn
from tests.namenode.blocks.helpers import reference_checksum
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import HDFS_LEASES, wait_for

hdfs_native = pytest.importorskip("hdfs_native")

BLOCK = 1 << 20                     # dfs.namenode.fs-limits.min-block-size
SIZE = BLOCK + 300_001              # a full first block, a last block being written

WRITER = f"""
import random, sys
import hdfs_native
url, path, size, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = random.Random(seed).randbytes(size)
stream = hdfs_native.Client(url).create(path, hdfs_native.WriteOptions(block_size={BLOCK}))
stream.write(data)
stream.hsync()
print("flushed", flush=True)
sys.stdin.read()                    # until killed
"""


def data(seed: int) -> bytes:
    return random.Random(seed).randbytes(SIZE)


def start_writer(url: str, path: str, seed: int) -> subprocess.Popen:
    """A writer process that has written and hsynced ``data(seed)`` into ``path``."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, url, path, str(SIZE), str(seed)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready and proc.stdout.readline() == b"flushed\n", "the writer did not flush"
    except BaseException:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        pipe.close()


@pytest.mark.parametrize("how", ["killed", "hung"])
def test_recover_lease_keeps_what_the_writer_hsynced(namenode, how):
    writer = start_writer(namenode.hdfs, "/r/f", seed=1)
    client = hdfs_native.Client(namenode.hdfs)
    try:
        # hdfs-native's hsync sends the last block's length (fsync, UPDATE_LENGTH)
        assert client.get_file_info("/r/f").length == SIZE
        if how == "killed":
            writer.kill()
            writer.wait()
        else:
            writer.send_signal(signal.SIGSTOP)
        wait_for(lambda: client.recover_lease("/r/f"), 30, "recoverLease to close the file")
        assert client.get_file_info("/r/f").length == SIZE
        with client.read("/r/f") as stream:
            assert stream.read() == data(1)
        webhdfs = WebHdfsClient(namenode.url, user="tester")
        try:
            assert b"".join(webhdfs.read("/r/f")) == data(1)
        finally:
            webhdfs.close()
    finally:
        stop(writer)


def test_the_hard_limit_recovers_a_killed_writer_s_file_whole(start_namenode):
    """Nobody calls recoverLease: the lease monitor revokes the lease past its hard limit
    (``LeaseManager.checkLeases``) and the file closes with every hsynced byte."""
    nn = start_namenode(*HDFS_LEASES)
    writer = start_writer(nn.hdfs, "/r/left", seed=4)
    stop(writer)
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        wait_for(lambda: raw.answer("isFileClosed", cn.IsFileClosedRequestProto(
            src="/r/left")).result, 30, "the hard limit to close the file")
    client = hdfs_native.Client(nn.hdfs)
    assert client.get_file_info("/r/left").length == SIZE
    with client.read("/r/left") as stream:
        assert stream.read() == data(4)


def test_webhdfs_reads_what_a_writer_over_hdfs_hsynced(namenode):
    """OPEN over WebHDFS reads the completed blocks and the block being written up to its
    visible bytes, from the datanode's replica (``DFSInputStream.readBlockLength``);
    GETFILECHECKSUM takes the completed blocks (``FileChecksumHelper`` asks no visible
    length)."""
    writer = start_writer(namenode.hdfs, "/r/reading", seed=5)
    webhdfs = WebHdfsClient(namenode.url, user="tester")
    try:
        assert b"".join(webhdfs.read("/r/reading")) == data(5)
        assert b"".join(webhdfs.read("/r/reading", BLOCK + 1001, 70_000)) == \
            data(5)[BLOCK + 1001:BLOCK + 71_001]
        answer = webhdfs._call("GET", "/r/reading", "GETFILECHECKSUM")["FileChecksum"]
        assert bytes.fromhex(answer["bytes"]) == reference_checksum([data(5)[:BLOCK]])[:28]
    finally:
        webhdfs.close()
        stop(writer)


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_replica_being_written_survives_a_restart_of_the_namenode(start_namenode, how):
    """SIGKILL, or SIGTERM (the datanode's stop keeps its replicas in rbw/ too)."""
    nn = start_namenode()
    writer = start_writer(nn.hdfs, "/r/open", seed=2)
    try:
        nn.kill() if how == "killed" else nn.stop()
    finally:
        stop(writer)
    restarted = start_namenode(name_dirs=nn.name_dirs)
    client = hdfs_native.Client(restarted.hdfs)
    wait_for(lambda: client.recover_lease("/r/open"), 30, "the file to be closed")
    assert client.get_file_info("/r/open").length == SIZE
    with client.read("/r/open") as stream:
        assert stream.read() == data(2)
