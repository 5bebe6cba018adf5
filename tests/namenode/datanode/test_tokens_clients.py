"""Block access tokens end to end (dfs.block.access.token.enable = true, simple
authentication: a combination Hadoop supports): a real namenode process signs a READ token
in every located block of getBlockLocations and a WRITE token in addBlock's; its datanode
serves the ops that show them and refuses, with ERROR_ACCESS_TOKEN, the ones that show
none or another op's; hdfs-native writes and reads a file of several blocks through them,
and WebHDFS reads the same bytes."""

from __future__ import annotations

import os

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.datatransfer import Status
from tests.namenode.datanode.client import TransferClient
from tests.namenode.rpc.rawclient import RawClient

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


def located(nn, path: str):
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
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
