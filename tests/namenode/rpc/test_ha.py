"""High availability over RPC: a standby answers StandbyException in the RPC response, and
Hadoop's DistributedFileSystem with the HA keys (``ConfiguredFailoverProxyProvider`` on
``hdfs://ns1``) follows the active through a failover."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from tests.namenode.ha.haset import NAMESERVICE
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import wait_for


def ha_conf(jvm, haset):
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.hdfs.impl.disable.cache", "true")
    conf.set("dfs.nameservices", NAMESERVICE)
    conf.set(f"dfs.ha.namenodes.{NAMESERVICE}", ",".join(haset.ids))
    for nn, port in zip(haset.ids, haset.rpc_ports):
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
