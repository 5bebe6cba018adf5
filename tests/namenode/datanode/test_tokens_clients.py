"""Block access tokens end to end (dfs.block.access.token.enable = true, simple
authentication: a combination Hadoop supports): a real namenode process signs a READ token
in every located block of getBlockLocations and a WRITE token in addBlock's; its datanode
serves the ops that show them and refuses, with ERROR_ACCESS_TOKEN, the ones that show
none or another op's; hdfs-native writes and reads a file of several blocks through them,
and WebHDFS reads the same bytes. In an HA set both datanodes take the tokens the active
signed -- the pipeline's WRITE tokens and the readers' READ tokens -- and still do after
the active is killed and the standby takes over."""

from __future__ import annotations

import os

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.datatransfer import Status
from tests.namenode.datanode.client import TransferClient
from tests.namenode.ha.haset import NAMESERVICE, HASet
from tests.namenode.rpc.rawclient import RawClient
from tests.namenode.rpc.test_ha import native_conf, started_with_a_live_standby

hdfs_native = pytest.importorskip("hdfs_native")

BLOCK = 1 << 20
DATA = os.urandom(2 * BLOCK + 4_321)


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode("-D", "dfs.block.access.token.enable=true")


@pytest.fixture(scope="module")
def written(nn):
    client = hdfs_native.Client(nn.hdfs)
    with client.create("/tokens/f", hdfs_native.WriteOptions(block_size=BLOCK)) as stream:
        stream.write(DATA)
    return client


def located(nn, path: str, rpc_port: int | None = None):
    with RawClient(rpc_port or nn.rpc_port).connect(user="tester") as raw:
        return raw.answer("getBlockLocations", cn.GetBlockLocationsRequestProto(
            src=path, offset=0, length=1 << 40)).locations.blocks


def test_hdfs_native_writes_and_reads_through_block_tokens(nn, written):
    with written.read("/tokens/f") as stream:
        assert stream.read() == DATA
    webhdfs = WebHdfsClient(nn.url, user="tester")
    try:
        assert b"".join(webhdfs.read("/tokens/f")) == DATA
    finally:
        webhdfs.close()


def test_every_located_block_carries_its_read_token(nn, written):
    blocks = located(nn, "/tokens/f")
    assert len(blocks) == 3
    for block in blocks:
        ident = BlockTokenIdentifier.decode(block.blockToken.identifier)
        assert (ident.block_id, ident.block_pool_id, ident.modes, ident.user_id) == \
            (block.b.blockId, block.b.poolId, {"READ"}, "tester")    # the caller
        assert block.blockToken.kind == "HDFS_BLOCK_TOKEN"


def test_the_data_port_serves_a_read_token_and_refuses_the_rest(nn, written):
    first, second = located(nn, "/tokens/f")[:2]
    port, pool = first.locs[0].id.xferPort, first.b.poolId
    with TransferClient(port, pool) as client:
        data, _ = client.read_block(first.b.blockId, 0, 1000, token=first.blockToken)
        assert data == DATA[:1000]
        answer = client.block_checksum(first.b.blockId, first.b.numBytes,
                                       token=first.blockToken)
        assert answer.status == Status.SUCCESS
    for token in (None, second.blockToken):        # none; another block's
        with TransferClient(port, pool) as client:
            refused = client.open_read(first.b.blockId, 0, 1000, token=token)
            assert refused.status == Status.ERROR_ACCESS_TOKEN
    with TransferClient(port, pool) as client:     # a read token is no write token
        refused = client.open_write(first.b.blockId + 100, token=first.blockToken)
        assert refused.status == Status.ERROR_ACCESS_TOKEN
        assert refused.firstBadLink == f"127.0.0.1:{port}"


def test_an_ha_set_s_datanodes_take_the_active_s_tokens_through_a_failover(tmp_path,
                                                                            etcd_cluster):
    haset = HASet(tmp_path, etcd_cluster, settings={"dfs.block.access.token.enable": "true"})
    try:
        active, standby = started_with_a_live_standby(haset)
        client = hdfs_native.Client(f"hdfs://{NAMESERVICE}", native_conf(haset))
        with client.create("/ha/f", hdfs_native.WriteOptions(block_size=BLOCK)) as stream:
            stream.write(DATA)
        blocks = located(None, "/ha/f", haset.rpc_ports[active])
        assert [len(b.locs) for b in blocks] == [2, 2, 2]     # the pipeline's two copies
        for datanode in (0, 1):
            assert read_each(blocks, datanode) == DATA
        standby_node = blocks[0].locs[1].id                   # which wants tokens too
        with TransferClient(standby_node.xferPort, blocks[0].b.poolId) as raw:
            refused = raw.open_read(blocks[0].b.blockId, 0, 100)
            assert refused.status == Status.ERROR_ACCESS_TOKEN
        haset.kill(active)
        assert haset.active(excluding=active) == standby
        # the dead active's READ tokens, on the new active's datanode (its second location)
        assert read_each(blocks, 1) == DATA
        with client.read("/ha/f") as stream:
            assert stream.read() == DATA
    finally:
        haset.close()


def read_each(blocks, datanode: int) -> bytes:
    """The blocks read from their ``datanode``-th location with their own READ token."""
    out = b""
    for block in blocks:
        node = block.locs[datanode].id
        with TransferClient(node.xferPort, block.b.poolId) as client:
            data, _ = client.read_block(block.b.blockId, 0, block.b.numBytes,
                                        token=block.blockToken)
        out += data
    return out
