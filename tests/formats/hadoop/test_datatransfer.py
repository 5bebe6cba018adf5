"""The data transfer protocol's bytes (formats/hadoop/datatransfer.py): op requests, packets
and acks, byte for byte as Hadoop's Sender, PacketHeader and PipelineAck write them, and the
malformed frames PacketReceiver refuses."""

import pytest

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import Op, Status
from nnlite.formats.hadoop.hdfs import ExtendedBlockProto
from nnlite.formats.hadoop.proto import ProtoError, parse, parse_delimited


def read_request(block_id=5):
    block = ExtendedBlockProto(poolId="BP-1", blockId=block_id, generationStamp=1001,
                               numBytes=0)
    return dt.OpReadBlockProto(
        header=dt.ClientOperationHeaderProto(baseHeader=dt.BaseHeaderProto(block=block),
                                             clientName="c"),
        offset=512, len=100)


def test_an_op_request_is_version_code_and_a_delimited_message():
    request = read_request()
    body = request.SerializeToString()
    wire = dt.encode_op(Op.READ_BLOCK, request)
    assert wire[:3] == bytes([0, 28, 81])
    assert wire[3] == len(body) and wire[4:] == body
    assert dt.decode_op_head(wire[:3]) == Op.READ_BLOCK
    assert parse_delimited(dt.OpReadBlockProto, wire, 3) == (request, len(wire))


def test_op_codes_are_hadoop_s():
    assert (Op.WRITE_BLOCK, Op.READ_BLOCK, Op.BLOCK_CHECKSUM, Op.TRANSFER_BLOCK) == \
        (80, 81, 85, 86)


def test_another_version_is_refused():
    with pytest.raises(ProtoError, match=r"Version Mismatch \(Expected: 28, Received: 27\)"):
        dt.decode_op_head(bytes([0, 27, 81]))


def test_read_block_defaults_to_sending_checksums():
    assert read_request().sendChecksums is True


def test_a_packet_layout():
    header = dt.packet_header(1024, 7, 3, sync=True)
    wire = dt.encode_packet(header, b"\x01\x02\x03\x04", b"xyz")
    head = header.SerializeToString()
    # PLEN counts itself, the checksums and the data; HLEN the header alone
    assert wire[:6] == (4 + 4 + 3).to_bytes(4, "big") + len(head).to_bytes(2, "big")
    assert wire[6:6 + len(head)] == head and wire[6 + len(head):] == b"\x01\x02\x03\x04xyz"
    # every field fixed-length: offset, seqno (sfixed64), last (bool), dataLen (sfixed32)
    assert head == (b"\x09" + (1024).to_bytes(8, "little") + b"\x11" + (7).to_bytes(8, "little")
                    + b"\x18\x00" + b"\x25" + (3).to_bytes(4, "little") + b"\x28\x01")
    payload, header_len = dt.packet_lengths(wire[:6])
    packet = dt.decode_packet(payload, header_len, wire[6:])
    assert (packet.header, packet.checksums, packet.data) == (header, b"\x01\x02\x03\x04", b"xyz")


def test_the_last_packet_is_empty():
    wire = dt.encode_packet(dt.packet_header(4096, 9, 0, last=True), b"", b"")
    packet = dt.decode_packet(*dt.packet_lengths(wire[:6]), wire[6:])
    assert packet.header.lastPacketInBlock and (packet.checksums, packet.data) == (b"", b"")
    assert int.from_bytes(wire[:4], "big") == 4


@pytest.mark.parametrize("prefix,says", [
    ((3).to_bytes(4, "big") + b"\x00\x10", "Invalid payload length 3"),
    ((16 << 20).to_bytes(4, "big") + b"\x00\x19", "Incorrect value for packet payload size"),
], ids=["payload-under-4", "over-16-MiB"])
def test_impossible_lengths(prefix, says):
    with pytest.raises(ProtoError, match=says):
        dt.packet_lengths(prefix)


def test_a_data_length_beyond_the_payload():
    header = dt.packet_header(0, 1, 10)
    wire = dt.encode_packet(header, b"", b"abc")
    with pytest.raises(ProtoError, match="data length in packet header exceeds"):
        dt.decode_packet(*dt.packet_lengths(wire[:6]), wire[6:])


def test_a_cut_packet_and_a_bad_header():
    wire = dt.encode_packet(dt.packet_header(0, 1, 3), b"", b"abc")
    with pytest.raises(ProtoError, match="cut short"):
        dt.decode_packet(*dt.packet_lengths(wire[:6]), wire[6:-1])
    payload, header_len = dt.packet_lengths(wire[:6])
    with pytest.raises(ProtoError, match="malformed PacketHeaderProto"):
        dt.decode_packet(payload, header_len, b"\xff" * (len(wire) - 6))


def test_an_ack_carries_each_status_in_reply_and_flag():
    wire = dt.encode_ack(3, Status.SUCCESS)
    assert wire == bytes([7, 0x08, 6, 0x10, 0, 0x22, 1, 0])    # seqno zigzag: 6
    ack, _ = parse_delimited(dt.PipelineAckProto, wire)
    assert (ack.seqno, list(ack.reply), list(ack.flag)) == (3, [0], [0])
    assert dt.ack_statuses(ack) == [Status.SUCCESS]
    heartbeat, _ = parse_delimited(dt.PipelineAckProto, dt.encode_ack(dt.HEART_BEAT_SEQNO, 0))
    assert heartbeat.seqno == -1


def test_ack_statuses_from_flags_or_replies():
    # a flag's status is its low 4 bits (ECN and SLOW above); old DataNodes send only reply
    assert dt.ack_statuses(dt.PipelineAckProto(seqno=1, reply=[0], flag=[0x20 | 2])) == [2]
    assert dt.ack_statuses(dt.PipelineAckProto(seqno=1, reply=[Status.ERROR_CHECKSUM])) == [2]


def test_a_block_op_response_round_trips():
    checksum = dt.OpBlockChecksumResponseProto(bytesPerCrc=512, crcPerBlock=3,
                                               blockChecksum=b"m" * 16, crcType=2)
    response = dt.BlockOpResponseProto(status=Status.SUCCESS, checksumResponse=checksum)
    assert parse(dt.BlockOpResponseProto, response.SerializeToString()) == response
    with pytest.raises(ProtoError, match="required status missing"):
        parse(dt.BlockOpResponseProto, b"")
