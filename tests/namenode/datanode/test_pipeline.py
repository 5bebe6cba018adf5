"""Write pipelines through two built-in datanodes (an HA set's, each on its own block
store): the first forwards every packet to the second and acknowledges a packet with both
replies (DataXceiver's mirror, PacketResponder); a second datanode that cannot be reached
or refuses is named as the first bad link; one that dies mid-block is reported in every
later ack while the first goes on."""

from __future__ import annotations

import socket

import pytest

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import Status
from nnlite.formats.hadoop.hdfs import DatanodeIDProto, DatanodeInfoProto
from nnlite.namenode.blocks import rwr
from nnlite.namenode.datanode import replicas
from tests.namenode.datanode.client import TransferClient, block_tokens, running_datanode
from tests.namenode.datanode.test_server import DATA, rbw_files, wait_until

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
    token = block_tokens(SECRET, first.pool_id).token(block_id, "WRITE")
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
    assert rbw_files(store) == [] and not store.has(block_id)
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
    assert rbw_files(store) == rbw_files(second_store) == []


def test_a_second_datanode_that_dies_mid_block_is_reported_in_every_ack(store, second_store):
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        token = block_tokens(SECRET, first.pool_id).token(block_id, "WRITE")
        client = TransferClient(first.xfer_port, first.pool_id)
        try:
            with running_datanode(second_store, SECRET) as second:
                response = client.open_write(block_id, token=token,
                                             targets=[info(second.xfer_port)])
                assert response.status == Status.SUCCESS
                client.send(client.packet(0, 0, DATA[:4096]))
                assert client.ack() == (0, [Status.SUCCESS, Status.SUCCESS])
            # the second datanode stopped (its replica kept in rbw/): the first goes on alone
            client.send(client.packet(4096, 1, DATA[4096:8192]))
            assert client.ack() == (1, [Status.SUCCESS, Status.ERROR])
            client.send(client.packet(8192, 2, b"", last=True))
            assert client.ack() == (2, [Status.SUCCESS, Status.ERROR])
        finally:
            client.close()
        assert store.data_path(block_id).read_bytes() == DATA[:8192]
        assert not second_store.has(block_id)
        assert rbw_files(second_store) == [f"blk_{block_id}", f"blk_{block_id}.meta"]


def recovery(client: TransferClient, block_id: int, acked: int, stage=None, **fields) -> int:
    """DataStreamer.setupPipelineForAppendOrRecovery's WRITE_BLOCK: the status."""
    stage = dt.BlockConstructionStage.PIPELINE_SETUP_STREAMING_RECOVERY if stage is None \
        else stage
    return client.open_write(block_id, stage=stage, num_bytes=acked, **fields).status


def broken_pipeline(store, second_store, first, block_id: int) -> TransferClient:
    """Packet 0 through both datanodes, then the second one stops: the client has its
    ack with the second datanode's ERROR for packet 1 and drops the connection."""
    token = block_tokens(SECRET, first.pool_id).token(block_id, "WRITE")
    client = TransferClient(first.xfer_port, first.pool_id)
    with running_datanode(second_store, SECRET) as second:
        assert client.open_write(block_id, token=token,
                                 targets=[info(second.xfer_port)]).status == Status.SUCCESS
        client.send(client.packet(0, 0, DATA[:4096]))
        assert client.ack() == (0, [Status.SUCCESS, Status.SUCCESS])
    client.send(client.packet(4096, 1, DATA[4096:8192]))
    assert client.ack() == (1, [Status.SUCCESS, Status.ERROR])
    client.close()
    return client


def test_a_broken_pipeline_is_recovered_on_the_datanode_left(store, second_store):
    """DataStreamer's recovery after the second datanode died: the first keeps its replica
    (its acknowledged bytes), takes the packets sent again and publishes the whole block."""
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        broken_pipeline(store, second_store, first, block_id)
        wait_until(lambda: first.replicas.parked(block_id))
        assert first.visible_length(block_id) == 8192
        with TransferClient(first.xfer_port, first.pool_id) as client:
            assert recovery(client, block_id, 8192) == Status.SUCCESS
            client.send(client.packet(8192, 2, DATA[8192:20000]))
            client.send(client.packet(20000, 3, b"", last=True))
            assert [client.ack() for _ in range(2)] == [(2, [Status.SUCCESS]),
                                                       (3, [Status.SUCCESS])]
        assert store.data_path(block_id).read_bytes() == DATA[:20000]
        assert first.finalized(block_id) == 20000
        assert rbw_files(store) == []


def test_a_parked_replica_not_recovered_is_discarded(store, second_store, monkeypatch):
    monkeypatch.setattr(replicas, "RECOVERY_GRACE", 0.2)
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        broken_pipeline(store, second_store, first, block_id)
        wait_until(lambda: first.replicas.being_written(block_id) is None)
        wait_until(lambda: rbw_files(store) == [])
        with TransferClient(first.xfer_port, first.pool_id) as client:
            assert recovery(client, block_id, 8192) == Status.ERROR
        assert not store.has(block_id)


def test_recovery_needs_the_bytes_the_client_had_acknowledged(store, second_store):
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        broken_pipeline(store, second_store, first, block_id)
        with TransferClient(first.xfer_port, first.pool_id) as client:
            assert recovery(client, block_id, 9000) == Status.ERROR
        with TransferClient(first.xfer_port, first.pool_id) as client:
            assert recovery(client, block_id + 1, 0) == Status.ERROR       # nothing to recover


def test_a_close_recovery_of_a_published_block(store, datanode, connect):
    """The last ack was lost: the client recovers PIPELINE_CLOSE and sends the last packet
    again; the block stays as published."""
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA[:3000])
    client = connect()
    stage = dt.BlockConstructionStage.PIPELINE_CLOSE_RECOVERY
    assert recovery(client, block_id, 3000, stage) == Status.SUCCESS
    client.send(client.packet(3000, 1, b"", last=True))
    assert client.ack() == (1, [Status.SUCCESS])
    assert store.data_path(block_id).read_bytes() == DATA[:3000]


def test_a_datanode_that_stops_keeps_its_parked_replicas_in_rbw(store, second_store):
    """As a DataNode keeps its RBW replicas when it stops: the next start's lease recovery
    finalizes them (blocks/rwr.py)."""
    with running_datanode(store, SECRET) as first:
        block_id = store.allocate()
        first.expect(block_id)
        broken_pipeline(store, second_store, first, block_id)
        wait_until(lambda: first.replicas.parked(block_id))
        parked = rbw_files(store)
        assert parked != []
    assert rbw_files(store) == parked and not store.has(block_id)
    assert rwr.finalize(store, block_id)
