"""The built-in datanode over real TCP (namenode/datanode/): WRITE_BLOCK, READ_BLOCK and
BLOCK_CHECKSUM as Hadoop's clients send them, spoken by the test client of client.py
through formats/hadoop/datatransfer.py; refusals and cut connections."""

from __future__ import annotations

import os

import pytest

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import Op, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.namenode.blocks import checksum, rwr
from nnlite.namenode.datanode.errors import ChecksumError, DataTransferError
from nnlite.namenode.datanode.server import UUID_FILE, DataNodeServer
from tests.namenode.blocks.helpers import reference_checksum
from tests.namenode.datanode.client import TransferClient, block_tokens, running_datanode
from tests.servers import wait_for

DATA = os.urandom(200_000) + b"tail"          # 390 chunks and a partial one, 4 packets


def wait_until(condition, timeout: float = 10.0) -> None:
    """tests/servers.py's wait_for, polled every 10 ms: the datanode's steps are quick."""
    wait_for(condition, timeout, "the datanode's condition", interval=0.01)


def rbw_files(store) -> list[str]:
    return sorted(os.listdir(store.rbw))


def assert_serving(store, datanode, connect) -> None:
    """The server goes on serving: a new block is written and published."""
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA[:10])
    assert store.data_path(block_id).read_bytes() == DATA[:10]


def start_write(store, datanode, connect):
    """A block the namenode allocated and a connection whose WRITE_BLOCK was accepted."""
    block_id = store.allocate()
    datanode.expect(block_id)
    client = connect()
    assert client.open_write(block_id).status == Status.SUCCESS
    return block_id, client


def webhdfs_block(store, data: bytes) -> tuple[int, tuple[int, bytes, int]]:
    """The same bytes written as WebHDFS's data path writes them (BlockWriter)."""
    writer = store.writer(block_size=1 << 27)
    writer.write(data)
    sealed = writer.seal()
    writer.close()
    return sealed.blocks[0][0], sealed.digests[0]


def test_a_block_written_in_packets_reads_back_with_its_checksums(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    acks = connect().write_block(block_id, DATA)
    assert acks == [(seqno, [Status.SUCCESS]) for seqno in range(5)]
    assert datanode.finalized(block_id) == len(DATA)
    assert store.data_path(block_id).read_bytes() == DATA
    assert rbw_files(store) == []
    data, headers = connect().read_block(block_id, 0, len(DATA))
    assert data == DATA
    assert [h.seqno for h in headers] == list(range(len(headers)))
    assert [h.offsetInBlock for h in headers[:3]] == [0, 65536, 131072]
    assert headers[-1].lastPacketInBlock and headers[-1].dataLen == 0


def test_the_block_and_its_meta_are_those_webhdfs_writes(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA, packet=4096)
    other, digest = webhdfs_block(store, DATA)
    assert store.meta_path(block_id).read_bytes() == store.meta_path(other).read_bytes()
    assert datanode.digest(block_id) == digest == store.digest(block_id, len(DATA))


def test_block_checksum_is_the_webhdfs_one(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    client = connect()
    client.write_block(block_id, DATA)
    answer = client.block_checksum(block_id, len(DATA))
    assert answer.status == Status.SUCCESS
    response = answer.checksumResponse
    crcs = -(-len(DATA) // 512)
    assert (response.bytesPerCrc, response.crcPerBlock, response.crcType) == \
        (512, crcs, ChecksumTypeProto.CHECKSUM_CRC32C)
    _, digest = webhdfs_block(store, DATA)
    assert response.blockChecksum == digest[1]
    # what a client makes of one block's answer is the file checksum WebHDFS answers
    assert checksum.file_checksum([(crcs, response.blockChecksum, response.crcType)]) == \
        store.file_checksum([(block_id, len(DATA), 1001)]) == reference_checksum([DATA])[:28] \
        + bytes([checksum.CRC32C])


def test_block_checksum_of_a_prefix_and_composite(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    client = connect()
    client.write_block(block_id, DATA)
    prefix = client.block_checksum(block_id, 1000).checksumResponse
    assert prefix.blockChecksum == checksum.block_digest(checksum.chunk_crcs(DATA[:1000]))[1]
    assert prefix.crcPerBlock == -(-len(DATA) // 512)       # the meta file's count
    composite = client.block_checksum(block_id, len(DATA), composite=True).checksumResponse
    assert composite.blockChecksum == checksum.crc_update(checksum.CRC32C, DATA, 0).to_bytes(
        4, "big")


@pytest.mark.parametrize("offset,length", [(0, 1), (511, 2), (700, 70_000), (199_999, 5),
                                           (len(DATA), 0), (1024, 0)])
def test_a_range_starts_at_its_chunk(store, datanode, connect, offset, length):
    block_id = store.allocate()
    datanode.expect(block_id)
    client = connect()
    client.write_block(block_id, DATA)
    response = client.open_read(block_id, offset, length)
    assert response.readOpChecksumInfo.chunkOffset == offset - offset % 512
    client.close()
    data, headers = connect().read_block(block_id, offset, length)
    assert data == DATA[offset:offset + length]
    assert headers[0].offsetInBlock == offset - offset % 512


def test_a_range_outside_the_block_is_refused(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA)
    client = connect()
    response = client.open_read(block_id, len(DATA) - 1, 2)
    assert response.status == Status.ERROR_INVALID
    assert "don't match block" in response.message
    assert client.at_eof()
    missing = connect().open_read(block_id + 1000, 0, 1)
    assert missing.status == Status.ERROR and "Replica not found" in missing.message


def test_reads_without_checksums(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA)
    client = connect()
    response = client.open_read(block_id, 10, 1000, send_checksums=False)
    assert response.readOpChecksumInfo.checksum.type == ChecksumTypeProto.CHECKSUM_NULL
    packet = client.read_packet()
    assert packet.checksums == b"" and packet.data == DATA[:1024]


def test_one_connection_carries_op_after_op(store, datanode, connect):
    first, second = store.allocate(), store.allocate()
    datanode.expect(first)
    datanode.expect(second)
    client = connect()
    client.write_block(first, DATA[:1000])
    client.write_block(second, DATA[1000:3000])
    assert client.read_block(first, 0, 1000)[0] == DATA[:1000]
    assert client.read_block(second, 0, 2000)[0] == DATA[1000:3000]
    assert client.block_checksum(first, 1000).status == Status.SUCCESS


def test_heartbeats_syncs_and_a_resent_partial_chunk(store, datanode, connect):
    """hflush sends a partial chunk; the next packet sends that chunk again from its start
    (DFSOutputStream), as a packet with syncBlock does for hsync."""
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, dt.HEART_BEAT_SEQNO, b""))
    assert client.ack() == (-1, [Status.SUCCESS])
    client.send(client.packet(0, 0, DATA[:700], sync=True))
    assert client.ack() == (0, [Status.SUCCESS])
    assert os.path.getsize(store.rbw_path(block_id)) == 700     # synced in rbw/
    assert not store.has(block_id)
    client.send(client.packet(512, 1, DATA[512:3000]))
    client.send(client.packet(3000, 2, b"", last=True))
    assert [client.ack(), client.ack()] == [(1, [Status.SUCCESS]), (2, [Status.SUCCESS])]
    assert store.data_path(block_id).read_bytes() == DATA[:3000]
    assert datanode.digest(block_id)[1] == checksum.block_digest(
        checksum.chunk_crcs(DATA[:3000]))[1]


def test_the_meta_file_follows_every_packet(store, datanode, connect):
    """No hsync: after each acknowledged packet rbw/ holds its bytes and their CRCs (the
    partial chunk's too), what a restart finds (blocks/rwr.py); a partial chunk sent again
    keeps the bytes on disk (BlockReceiver's onDiskLen: the replica never shrinks)."""
    block_id, client = start_write(store, datanode, connect)
    meta = store.rbw_path(block_id, meta=True)
    for seqno, (start, end) in enumerate([(0, 700), (512, 3000), (3000, 3000 + 65_000)]):
        client.send(client.packet(start, seqno, DATA[start:end]))
        assert client.ack() == (seqno, [Status.SUCCESS])
        assert store.rbw_path(block_id).read_bytes() == DATA[:end]
        assert meta.read_bytes() == checksum.meta_header() + checksum.chunk_crcs(DATA[:end])
        assert rwr.valid_length(store, block_id)[0] == end


def test_an_append_continues_a_copy_of_the_old_block(store, datanode, connect):
    old, digest = webhdfs_block(store, DATA[:1000])
    new = store.allocate()
    datanode.expect(new, tail=(old, 1000))
    client = connect()
    response = client.open_write(new, stage=dt.BlockConstructionStage.PIPELINE_SETUP_APPEND,
                                 num_bytes=1000)
    assert response.status == Status.SUCCESS, response.message
    # hdfs-native's append: first a packet up to the chunk's end, then whole chunks
    client.send(client.packet(1000, 0, DATA[1000:1024]))
    client.send(client.packet(1024, 1, DATA[1024:5000]))
    client.send(client.packet(5000, 2, b"", last=True))
    assert [client.ack()[1] for _ in range(3)] == [[Status.SUCCESS]] * 3
    assert store.data_path(new).read_bytes() == DATA[:5000]
    assert store.data_path(old).read_bytes() == DATA[:1000]        # never changed
    assert datanode.digest(new) == checksum.block_digest(checksum.chunk_crcs(DATA[:5000]))


def test_a_wrong_checksum_is_refused_and_nothing_published(store, datanode, connect):
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, 0, DATA[:4096]))
    good = client.packet(4096, 1, DATA[4096:8192])
    bad = bytearray(good)
    bad[-100] ^= 1                      # a data byte of the packet's last chunk
    client.send(bytes(bad))
    assert client.ack() == (0, [Status.SUCCESS])
    assert client.ack() == (1, [Status.ERROR_CHECKSUM])
    assert client.at_eof()
    assert not store.has(block_id) and datanode.finalized(block_id) is None
    assert rbw_files(store) == []
    assert_serving(store, datanode, connect)


def test_a_replica_that_cannot_be_created_fails_the_first_packet(store, datanode, connect):
    """The replica's files are created while WRITE_BLOCK is answered, off its path: a
    failure there (here ``rbw/`` is gone) is the first packet's ERROR ack, and the write
    ends with nothing published."""
    store.rbw.rmdir()
    try:
        block_id, client = start_write(store, datanode, connect)
        client.send(client.packet(0, 0, DATA[:4096]))
        assert client.ack() == (0, [Status.ERROR])
        assert client.at_eof()
        assert not store.has(block_id) and datanode.finalized(block_id) is None
    finally:
        store.rbw.mkdir()
    assert_serving(store, datanode, connect)


def test_a_connection_cut_mid_packet_publishes_nothing(store, datanode, connect):
    """A pipeline of one cut after an acknowledged packet: the replica waits in ``rbw/`` for
    the namenode (its lease recovery, or ``forget``, which discards it); nothing is
    published meanwhile."""
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, 0, DATA[:4096]))
    assert client.ack() == (0, [Status.SUCCESS])
    client.send(client.packet(4096, 1, DATA[4096:8192])[:3000])
    wait_until(lambda: os.path.exists(store.rbw_path(block_id)))
    client.close()
    wait_until(lambda: datanode.replicas.parked(block_id))
    assert not store.has(block_id) and datanode.finalized(block_id) is None
    datanode.forget(block_id)
    assert rbw_files(store) == [] and not store.has(block_id)
    assert_serving(store, datanode, connect)


def test_a_connection_cut_before_any_ack_keeps_nothing(store, datanode, connect):
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, 0, DATA[:4096])[:3000])
    wait_until(lambda: os.path.exists(store.rbw_path(block_id)))
    client.close()
    wait_until(lambda: rbw_files(store) == [])
    assert datanode.recover(block_id) is None and not store.has(block_id)


def test_lease_recovery_finalizes_a_broken_write_at_its_acknowledged_bytes(
        store, datanode, connect):
    """``recover`` (block recovery: initReplicaRecovery, updateReplicaUnderRecovery): the
    bytes of the acknowledged packets are published, a packet cut off is not."""
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, 0, DATA[:5000], sync=True))
    assert client.ack() == (0, [Status.SUCCESS])
    client.send(client.packet(4608, 1, DATA[4608:9000])[:-10])     # never acknowledged
    client.close()
    wait_until(lambda: datanode.replicas.parked(block_id))
    assert datanode.recover(block_id) == 5000
    assert store.data_path(block_id).read_bytes() == DATA[:5000]
    assert rbw_files(store) == [] and datanode.finalized(block_id) == 5000
    assert datanode.digest(block_id) == checksum.block_digest(checksum.chunk_crcs(DATA[:5000]))
    assert datanode.recover(block_id) == 5000                       # asked again: the same
    assert connect().read_block(block_id, 0, 5000)[0] == DATA[:5000]


def test_lease_recovery_stops_a_write_under_way_and_keeps_its_bytes(store, datanode, connect):
    """A writer still connected (hung, or killed before its connection's end reached the
    datanode): ``recover`` stops it (``initReplicaRecovery`` -> ``stopWriter``), aborting its
    connection, and finalizes what it wrote; the writer's later packets change nothing."""
    block_id, client = start_write(store, datanode, connect)
    client.send(client.packet(0, 0, DATA[:4096], sync=True))
    assert client.ack() == (0, [Status.SUCCESS])
    client.send(client.packet(4096, 1, DATA[4096:6000]))
    assert client.ack() == (1, [Status.SUCCESS])
    assert datanode.recover(block_id) == 6000
    assert store.data_path(block_id).read_bytes() == DATA[:6000]
    assert datanode.finalized(block_id) == 6000 and rbw_files(store) == []
    assert datanode.digest(block_id) == checksum.block_digest(checksum.chunk_crcs(DATA[:6000]))
    with pytest.raises((EOFError, OSError)):
        client.send(client.packet(6000, 2, DATA[6000:7000], last=True))
        client.ack()
    assert store.data_path(block_id).read_bytes() == DATA[:6000]
    assert datanode.recover(block_id) == 6000
    assert_serving(store, datanode, connect)


@pytest.mark.parametrize("head,status,says", [
    (bytes([0, 28, 99]), Status.ERROR_UNSUPPORTED, "Unsupported op 99"),
    (bytes([0, 28, Op.COPY_BLOCK]), Status.ERROR_UNSUPPORTED, "COPY_BLOCK"),
    (bytes([0, 27, Op.READ_BLOCK]), Status.ERROR, "Version Mismatch"),
    (bytes([0, 28, Op.READ_BLOCK, 3, 1, 2, 3]), Status.ERROR, "malformed OpReadBlockProto"),
], ids=["unknown-op", "unsupported-op", "old-version", "garbage-request"])
def test_garbage_gets_an_error_and_the_server_keeps_serving(store, datanode, connect, head,
                                                            status, says):
    client = connect()
    client.send(head + bytes(20))
    response = client.read_message(dt.BlockOpResponseProto)
    assert response.status == status and says in response.message
    assert client.at_eof()
    assert_serving(store, datanode, connect)


def test_an_oversized_packet_is_refused(store, datanode, connect):
    block_id, client = start_write(store, datanode, connect)
    client.send(dt.PACKET_LENGTHS.pack(dt.MAX_PACKET_SIZE, 30))
    assert client.at_eof()
    wait_until(lambda: rbw_files(store) == [])
    assert not store.has(block_id)
    assert_serving(store, datanode, connect)


def test_writes_the_namenode_did_not_allocate_are_refused(store, datanode, connect):
    assert connect().open_write(store.allocate()).status == Status.ERROR_INVALID
    block_id = store.allocate()
    datanode.expect(block_id)
    connect().write_block(block_id, DATA[:10])
    again = connect().open_write(block_id)
    assert again.status == Status.ERROR_EXISTS
    assert store.data_path(block_id).read_bytes() == DATA[:10]
    forgotten = store.allocate()
    datanode.expect(forgotten)
    datanode.forget(forgotten)
    assert connect().open_write(forgotten).status == Status.ERROR_INVALID
    assert rbw_files(store) == []


def test_a_checksum_type_it_cannot_store_is_refused(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    response = connect().open_write(block_id, per_checksum=1024)
    assert response.status == Status.ERROR_UNSUPPORTED and "1024 bytes" in response.message


def test_crc32_writes_keep_their_type(store, datanode, connect):
    block_id = store.allocate()
    datanode.expect(block_id)
    client = connect()
    assert client.open_write(block_id, kind=ChecksumTypeProto.CHECKSUM_CRC32).status == \
        Status.SUCCESS
    client.send(client.packet(0, 0, DATA[:3000], kind=checksum.CRC32))
    client.send(client.packet(3000, 1, b"", last=True))
    assert [client.ack()[1] for _ in range(2)] == [[Status.SUCCESS]] * 2
    assert store.read_crcs(block_id, 3000) == (checksum.chunk_crcs(DATA[:3000], checksum.CRC32),
                                               checksum.CRC32)
    data, _ = connect().read_block(block_id, 0, 3000)
    assert data == DATA[:3000]


def test_a_block_of_another_pool_is_refused(store, datanode, connect):
    client = connect()
    client.pool_id = "BP-1-other-0"
    response = client.open_read(1, 0, 1)
    assert response.status == Status.ERROR and "BP-1-other-0" in response.message


def test_the_identity_is_stable_per_data_dir(store, datanode):
    assert datanode.pool_id == "BP-7-nnlite-0"
    assert (store.root / UUID_FILE).read_text().strip() == datanode.datanode_uuid
    assert DataNodeServer(store).datanode_uuid == datanode.datanode_uuid
    assert (datanode.host, datanode.ipc_port) == ("127.0.0.1", 0) and datanode.xfer_port > 0


def test_a_block_being_written_reads_up_to_its_acknowledged_bytes(store, datanode, connect):
    """After an hflush a new reader sees what was flushed (a replica being written)."""
    block_id, writer = start_write(store, datanode, connect)
    assert datanode.visible_length(block_id) == 0
    writer.send(writer.packet(0, 0, DATA[:70_000], sync=True))
    assert writer.ack() == (0, [Status.SUCCESS])
    assert datanode.visible_length(block_id) == 70_000
    data, headers = connect().read_block(block_id, 0, 70_000)       # CRCs checked
    assert data == DATA[:70_000] and headers[-2].dataLen == 70_000 - 65536
    assert connect().read_block(block_id, 69_000, 1000)[0] == DATA[69_000:70_000]
    refused = connect().open_read(block_id, 0, 70_001)
    assert refused.status == Status.ERROR_INVALID
    writer.send(writer.packet(69_632, 1, DATA[69_632:100_000]))      # the partial chunk again
    writer.send(writer.packet(100_000, 2, b"", last=True))
    assert [writer.ack()[1] for _ in range(2)] == [[Status.SUCCESS]] * 2
    assert datanode.visible_length(block_id) == 100_000
    assert connect().read_block(block_id, 0, 100_000)[0] == DATA[:100_000]
    assert datanode.visible_length(store.allocate()) is None


def test_a_reader_in_the_process_reads_a_block_being_written_with_its_crcs(
        store, datanode, connect):
    """WebHDFS's OPEN of a file being written takes the range READ_BLOCK would send
    (``sender``), each chunk checked against the replica's CRCs: a damaged byte on disk is a
    ChecksumError, not data."""
    block_id, writer = start_write(store, datanode, connect)
    writer.send(writer.packet(0, 0, DATA[:70_000], sync=True))
    assert writer.ack() == (0, [Status.SUCCESS])
    assert datanode.sender(block_id, 0, 70_000).read() == DATA[:70_000]
    assert datanode.sender(block_id, 1000, 68_999).read() == DATA[1000:69_999]
    assert datanode.sender(block_id, 69_700, 300).read() == DATA[69_700:70_000]
    with pytest.raises(DataTransferError):
        datanode.sender(block_id, 0, 70_001).read()
    with open(store.rbw_path(block_id), "r+b") as rbw:
        rbw.seek(5000)
        rbw.write(bytes([DATA[5000] ^ 1]))
    with pytest.raises(ChecksumError, match="at offset 4608"):
        datanode.sender(block_id, 4000, 2000).read()
    assert datanode.sender(block_id, 5120, 1000).read() == DATA[5120:6120]


def test_a_write_signed_with_the_shared_secret_needs_no_expect(store):
    """The standby's datanode of an HA set takes a block the active allocated."""
    block_id = 12345
    token = block_tokens("s3cret", "BP-7-nnlite-0").token(block_id, "WRITE")
    forged = block_tokens("other", "BP-7-nnlite-0").token(block_id, "WRITE")
    with running_datanode(store, secret="s3cret") as datanode:
        def client() -> TransferClient:
            return TransferClient(datanode.xfer_port, datanode.pool_id)
        with client() as c:
            assert c.open_write(block_id, token=forged).status == Status.ERROR_INVALID
        with client() as c:
            assert c.open_write(block_id + 1, token=token).status == Status.ERROR_INVALID
        with client() as c:
            assert c.write_block(block_id, DATA[:10], token=token)[-1] == (1, [Status.SUCCESS])
        assert store.data_path(block_id).read_bytes() == DATA[:10]
        assert datanode.finalized(block_id) is None         # its namenode did not ask
        with client() as c:
            assert c.open_write(block_id, token=token).status == Status.ERROR_INVALID


def test_connections_past_the_limit_are_closed(store):
    with running_datanode(store, max_connections=2) as datanode:
        def client() -> TransferClient:
            return TransferClient(datanode.xfer_port, datanode.pool_id)
        with client() as first, client() as second:
            wait_until(lambda: datanode.connection_count == 2)
            with client() as third:
                assert third.at_eof()
            block_id = store.allocate()
            datanode.expect(block_id)
            first.write_block(block_id, DATA[:10])      # the two served go on
            assert second.block_checksum(block_id, 10).status == Status.SUCCESS
