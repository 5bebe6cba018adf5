"""Write pipelines through two built-in datanodes (an HA set's, each on its own block
store): the first forwards every packet to the second and acknowledges a packet with both
replies (DataXceiver's mirror, PacketResponder); a second datanode that cannot be reached
or refuses is named as the first bad link; one that dies mid-block is reported in every
later ack while the first goes on."""

from __future__ import annotations

import socket

import pytest

from nnlite.formats.hadoop.datatransfer import Status
from nnlite.formats.hadoop.hdfs import DatanodeIDProto, DatanodeInfoProto
from nnlite.namenode.datanode.tokens import BlockTokens
from tests.namenode.datanode.client import TransferClient, running_datanode
from tests.namenode.datanode.test_server import DATA, tmp_files

SECRET = "shared by the HA set"


def info(port: int) -> DatanodeInfoProto:
    return DatanodeInfoProto(id=DatanodeIDProto(
        ipAddr="127.0.0.1", hostName="localhost", datanodeUuid="dn2", xferPort=port,
        infoPort=0, ipcPort=0))


@pytest.fixture
def pipeline(store, second_store):
    with running_datanode(store, SECRET) as first, \
            running_datanode(second_store, SECRET) as second:
        yield first, second


def test_a_block_goes_through_both_datanodes(store, second_store, pipeline):
    first, second = pipeline
    block_id = store.allocate()
    first.expect(block_id)
    token = BlockTokens(SECRET, first.pool_id).issue(block_id)
    with TransferClient(first.xfer_port, first.pool_id) as client:
        acks = client.write_block(block_id, DATA, token=token, targets=[info(second.xfer_port)])
    assert acks == [(n, [Status.SUCCESS, Status.SUCCESS]) for n in range(5)]
    assert store.data_path(block_id).read_bytes() == DATA
    assert second_store.data_path(block_id).read_bytes() == DATA
    assert store.meta_path(block_id).read_bytes() == second_store.meta_path(block_id).read_bytes()
    assert first.finalized(block_id) == len(DATA)
    with TransferClient(second.xfer_port, second.pool_id) as reader:
        assert reader.read_block(block_id, 0, len(DATA))[0] == DATA


def test_an_unreachable_second_datanode_is_the_first_bad_link(store, pipeline):
    first, _ = pipeline
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    block_id = store.allocate()
    first.expect(block_id)
    with TransferClient(first.xfer_port, first.pool_id) as client:
        response = client.open_write(block_id, targets=[info(closed)])
    assert (response.status, response.firstBadLink) == (Status.ERROR, f"127.0.0.1:{closed}")
    assert tmp_files(store) == [] and not store.has(block_id)
    with TransferClient(first.xfer_port, first.pool_id) as client:      # the client retries
        client.write_block(block_id, DATA[:10])
    assert store.has(block_id)


def test_a_second_datanode_that_refuses_is_the_first_bad_link(store, second_store, pipeline):
    first, second = pipeline
    block_id = store.allocate()
    first.expect(block_id)                  # no token: the second datanode refuses
    with TransferClient(first.xfer_port, first.pool_id) as client:
        response = client.open_write(block_id, targets=[info(second.xfer_port)])
    assert response.status == Status.ERROR_INVALID
    assert response.firstBadLink == f"127.0.0.1:{second.xfer_port}"
    assert "refused" in response.message
    assert tmp_files(store) == tmp_files(second_store) == []


def test_a_second_datanode_that_dies_mid_block_is_reported_in_every_ack(store, second_store):
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        token = BlockTokens(SECRET, first.pool_id).issue(block_id)
        client = TransferClient(first.xfer_port, first.pool_id)
        try:
            with running_datanode(second_store, SECRET) as second:
                response = client.open_write(block_id, token=token,
                                             targets=[info(second.xfer_port)])
                assert response.status == Status.SUCCESS
                client.send(client.packet(0, 0, DATA[:4096]))
                assert client.ack() == (0, [Status.SUCCESS, Status.SUCCESS])
            # the second datanode stopped (its replica removed): the first goes on alone
            client.send(client.packet(4096, 1, DATA[4096:8192]))
            assert client.ack() == (1, [Status.SUCCESS, Status.ERROR])
            client.send(client.packet(8192, 2, b"", last=True))
            assert client.ack() == (2, [Status.SUCCESS, Status.ERROR])
        finally:
            client.close()
        assert store.data_path(block_id).read_bytes() == DATA[:8192]
        assert not second_store.has(block_id) and tmp_files(second_store) == []
