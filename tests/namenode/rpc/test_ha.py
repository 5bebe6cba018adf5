"""High availability over RPC: a standby answers StandbyException in the RPC response, and
Hadoop's DistributedFileSystem with the HA keys (``ConfiguredFailoverProxyProvider`` on
``hdfs://ns1``) follows the active through a failover; file contents run through a pipeline
of both namenodes' datanodes, so they outlive the active."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.acl import FsPermissionProto
from tests.namenode.ha.haset import NAMESERVICE
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import wait_for

MIB = 1 << 20


def ha_conf(jvm, haset):
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.hdfs.impl.disable.cache", "true")
    conf.set("dfs.nameservices", NAMESERVICE)
    conf.set(f"dfs.ha.namenodes.{NAMESERVICE}", ",".join(haset.ids))
    for nn, port in zip(haset.ids, haset.rpc_ports, strict=True):
        conf.set(f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}", f"127.0.0.1:{port}")
    conf.set(f"dfs.client.failover.proxy.provider.{NAMESERVICE}",
             "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider")
    conf.set("dfs.client.failover.sleep.base.millis", "100")
    conf.set("dfs.client.failover.sleep.max.millis", "1000")
    conf.set("dfs.client.failover.max.attempts", "60")
    return conf


def test_a_standby_answers_standby_exception(haset):
    active = haset.start_all()
    standby = 1 - active

    def refusal() -> str:
        with RawClient(haset.rpc_ports[standby]).connect(user="tester") as client:
            header, _ = client.call("getFileInfo", cn.GetFileInfoRequestProto(src="/"))
        return header.exceptionClassName
    # RetriableException while the standby is still joining, then StandbyException
    wait_for(lambda: refusal() == "org.apache.hadoop.ipc.StandbyException", 30,
             "the standby's StandbyException")
    with RawClient(haset.rpc_ports[active]).connect(user="tester") as client:
        assert client.answer("getHAServiceState", cn.HAServiceStateRequestProto()).state == \
            cn.HAServiceStateProto.ACTIVE
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


@pytest.mark.spark
def test_distributed_filesystem_follows_the_active_through_a_failover(haset, spark):
    jvm = spark._jvm
    active = haset.start_all()
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(
        jvm.java.net.URI(f"hdfs://{NAMESERVICE}"), ha_conf(jvm, haset), "tester")
    try:
        path = jvm.org.apache.hadoop.fs.Path
        assert fs.mkdirs(path("/ha/before"))
        haset.kill(active)
        haset.active(excluding=active)
        assert fs.mkdirs(path("/ha/after"))
        names = sorted(s.getPath().getName() for s in fs.listStatus(path("/ha")))
        assert names == ["after", "before"]
    finally:
        fs.close()


# ---------------------------------------------------------------------- the data path

def native_conf(haset) -> dict[str, str]:
    """hdfs-native's HA keys for ``hdfs://ns1`` (the same as Hadoop's)."""
    return {"dfs.nameservices": NAMESERVICE,
            f"dfs.ha.namenodes.{NAMESERVICE}": ",".join(haset.ids),
            **{f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
               for nn, port in zip(haset.ids, haset.rpc_ports, strict=True)}}


def status_bean(haset, i: int) -> dict:
    return next(b for b in haset.jmx_beans(i)
                if b["name"] == "Hadoop:service=NameNode,name=NameNodeStatus")


def names_a_live_standby(haset, active: int) -> bool:
    """The active reads its standby's datanode from the standby's fresh position."""
    standbys = json.loads(status_bean(haset, active)["HAStandbys"])
    return any(p.get("datanode") and p["ageMs"] < 5000 for p in standbys.values())


def started_with_a_live_standby(haset) -> tuple[int, int]:
    """Start the set; (active, standby) once the active names the standby's datanode."""
    active = haset.start_all()
    wait_for(lambda: names_a_live_standby(haset, active), 30, "the standby's datanode named")
    return active, 1 - active


def ha_filesystem(jvm, haset):
    """DistributedFileSystem on hdfs://ns1 as ``tester``."""
    return jvm.org.apache.hadoop.fs.FileSystem.get(
        jvm.java.net.URI(f"hdfs://{NAMESERVICE}"), ha_conf(jvm, haset), "tester")


def block_files(haset, i: int) -> dict[str, int]:
    """The block files (not meta) of namenode ``i``'s store, name -> size."""
    root = Path(haset.dirs[i] + "-data")
    return {p.name: p.stat().st_size for p in root.rglob("blk_*")
            if not p.name.endswith(".meta")}


def read_all(jvm, fs, path: str) -> bytes:
    stream = fs.open(jvm.org.apache.hadoop.fs.Path(path))
    try:
        return java_read(jvm, stream)
    finally:
        stream.close()


def java_read(jvm, stream) -> bytes:
    out = jvm.java.io.ByteArrayOutputStream()
    jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, out, 65536, False)
    return bytes(out.toByteArray())


@pytest.mark.spark
def test_blocks_run_through_both_datanodes_and_outlive_the_active(haset, spark):
    """HDFS's pipeline in an HA set: a file written over hdfs://ns1 (Hadoop's
    DistributedFileSystem and hdfs-native) has each block on the active's datanode and the
    standby's, the block locations name both; with the active SIGKILLed, a reader that
    opened the file before reads it from the other copy, and the new active serves the same
    bytes and checksum over hdfs:// and webhdfs://."""
    hdfs_native = pytest.importorskip("hdfs_native")
    jvm = spark._jvm
    active, standby = started_with_a_live_standby(haset)
    fs = ha_filesystem(jvm, haset)
    native = hdfs_native.Client(f"hdfs://{NAMESERVICE}", native_conf(haset))
    try:
        path = jvm.org.apache.hadoop.fs.Path
        data = os.urandom(3 * MIB + 12345)
        out = fs.create(path("/ha/jvm.bin"), True, 65536, 2, MIB)
        out.write(bytearray(data))
        out.close()
        small = os.urandom(200_000)
        with native.create("/ha/native.bin") as writer:
            writer.write(small)
        status = fs.getFileStatus(path("/ha/jvm.bin"))
        locations = fs.getFileBlockLocations(status, 0, status.getLen())
        assert len(locations) == 4
        assert all(len(list(loc.getNames())) == 2 for loc in locations)
        # every block file of the active is on the standby, byte for byte as long
        assert block_files(haset, active) == block_files(haset, standby)
        assert len(block_files(haset, active)) == 5
        assert int(haset.jmx(active)["UnderReplicatedBlocks"]) == 0
        checksum = fs.getFileChecksum(path("/ha/jvm.bin")).toString()
        # readers that opened the files know both locations; the first dies with the active
        jvm_reader = fs.open(path("/ha/jvm.bin"))
        native_reader = native.read("/ha/native.bin")
        haset.kill(active)
        try:
            assert java_read(jvm, jvm_reader) == data
        finally:
            jvm_reader.close()
        assert native_reader.read() == small
        native_reader.close()
        # the new active serves the file over both schemes
        assert haset.active(excluding=active) == standby
        assert read_all(jvm, fs, "/ha/jvm.bin") == data
        assert native.read("/ha/native.bin").read() == small
        assert fs.getFileChecksum(path("/ha/jvm.bin")).toString() == checksum
        web = jvm.org.apache.hadoop.fs.FileSystem.get(
            jvm.java.net.URI(f"webhdfs://127.0.0.1:{haset.ports[standby]}"),
            jvm.org.apache.hadoop.conf.Configuration(), "tester")
        try:
            assert read_all(jvm, web, "/ha/jvm.bin") == data
            assert web.getFileChecksum(path("/ha/jvm.bin")).toString() == checksum
        finally:
            web.close()
    finally:
        fs.close()


@pytest.mark.spark
def test_a_block_without_a_standby_copy_is_under_replicated_until_the_resync(haset, spark):
    """The standby is gone (its position may still look fresh for a few seconds): the
    active's datanode fails the pipeline's setup naming the standby's, DataStreamer asks
    addBlock again excluding it, and the file closes with one copy (HDFS's minimum
    replication); its blocks count as under-replicated until the standby is back and the
    resync has copied them."""
    jvm = spark._jvm
    active, standby = started_with_a_live_standby(haset)
    haset.kill(standby)
    fs = ha_filesystem(jvm, haset)
    try:
        data = os.urandom(MIB + MIB // 2)
        out = fs.create(jvm.org.apache.hadoop.fs.Path("/ha/alone.bin"), True, 65536, 2, MIB)
        out.write(bytearray(data))
        out.close()
        assert int(haset.jmx(active)["UnderReplicatedBlocks"]) == 2
        assert read_all(jvm, fs, "/ha/alone.bin") == data
        haset.start(standby)
        wait_for(lambda: int(haset.jmx(active)["UnderReplicatedBlocks"]) == 0, 60,
                 "the resync to copy the blocks")
        assert block_files(haset, standby) == block_files(haset, active)
        assert len(block_files(haset, active)) == 2
    finally:
        fs.close()


# A file of replication 3 makes DataStreamer ask getAdditionalDatanode for a datanode in the
# lost one's place (ReplaceDatanodeOnFailure DEFAULT: r >= 3, n = 1 <= r / 2); the answer
# holds none, and the client goes on without when told to, by either key, as it must on an
# HDFS of two datanodes (DataStreamer.addDatanode2ExistingPipeline: min-replication applies
# to a "no datanode left" answer only, so the call must be served).
LOST_STANDBY_CASES = {
    "replication-2": (2, {}),
    "replication-3-best-effort": (
        3, {"dfs.client.block.write.replace-datanode-on-failure.best-effort": "true"}),
    "replication-3-min-replication": (
        3, {"dfs.client.block.write.replace-datanode-on-failure.min-replication": "1"}),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", list(LOST_STANDBY_CASES))
def test_a_standby_lost_mid_block_leaves_the_write_on_the_active(haset, spark, case):
    """The standby dies while a block runs through it: the active's datanode reports the
    mirror's ERROR, DataStreamer rebuilds the pipeline on the active's datanode alone
    (updateBlockForPipeline, a STREAMING_RECOVERY write of the parked replica,
    updatePipeline) and the file closes whole, its block under-replicated."""
    replication, client_keys = LOST_STANDBY_CASES[case]
    jvm = spark._jvm
    active, standby = started_with_a_live_standby(haset)
    conf = ha_conf(jvm, haset)
    for key, value in client_keys.items():
        conf.set(key, value)
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(
        jvm.java.net.URI(f"hdfs://{NAMESERVICE}"), conf, "tester")
    try:
        first, rest = os.urandom(300_000), os.urandom(400_000)
        out = fs.create(jvm.org.apache.hadoop.fs.Path("/ha/cut.bin"), True, 65536,
                        replication, MIB)
        out.write(bytearray(first))
        out.hflush()
        haset.kill(standby)
        out.write(bytearray(rest))
        out.close()
        assert read_all(jvm, fs, "/ha/cut.bin") == first + rest
        assert int(haset.jmx(active)["UnderReplicatedBlocks"]) == 1
    finally:
        fs.close()


def test_reads_go_on_while_a_write_waits_on_an_etcd_without_quorum(haset, etcd_cluster):
    """Two etcd members killed: a mkdirs waits on the shared journal and is refused with
    RetriableException; getFileInfo calls sent meanwhile, on another connection, are
    answered (a read held behind the refused write is asked again once the namenode has
    dropped it), found or not, never with the write's error and never showing it."""
    active = haset.start_all()
    port = haset.rpc_ports[active]
    with RawClient(port, timeout=120).connect() as client:
        client.answer("mkdirs", cn.MkdirsRequestProto(
            src="/one", masked=FsPermissionProto(perm=0o755), createParent=True))
    etcd_cluster.kill(0)
    etcd_cluster.kill(1)
    answers: list = []

    def write() -> None:
        with RawClient(port, timeout=120).connect() as writer:
            answers.append(writer.call("mkdirs", cn.MkdirsRequestProto(
                src="/two", masked=FsPermissionProto(perm=0o755), createParent=True)))
    writer = threading.Thread(target=write)
    writer.start()
    reads = 0
    with RawClient(port, timeout=120).connect() as reader:
        while writer.is_alive() or reads == 0:
            one = reader.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/one"))
            two = reader.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/two"))
            assert one.HasField("fs") and not two.HasField("fs")
            reads += 1
    writer.join()
    header, _ = answers[0]
    assert header.exceptionClassName == "org.apache.hadoop.ipc.RetriableException", header
