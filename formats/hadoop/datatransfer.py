"""Hadoop's data transfer protocol (``datatransfer.proto``, protobuf package ``hadoop.hdfs``):
the messages a client and a DataNode exchange on the DataNode's transfer port, and their byte
framing. Field numbers and types are Hadoop 3's (``OpWriteBlockProto`` with ``storageId`` =
16, ``OpBlockChecksumProto`` with ``blockChecksumOptions``, ``OpBlockChecksumResponseProto``
whose field 3 is ``blockChecksum``, ``DataTransferTraceInfoProto`` with ``spanContext``).
``OpWriteBlockProto.BlockConstructionStage`` is the top-level enum
``OpWriteBlockBlockConstructionStage`` (``proto.py``: every name is top level).

Framing, as Hadoop's ``Sender``, ``Receiver``, ``PacketHeader``, ``PacketReceiver`` and
``PipelineAck`` write and read it (all integers big-endian)::

    op request   version u16 (DATA_TRANSFER_VERSION, 28) | op code u8 (``Op``) |
                 varint length | Op...Proto                                    (Sender.send)
    response     varint length | BlockOpResponseProto (a write's, a read's, a checksum's)
    packet       PLEN u32 | HLEN u16 | PacketHeaderProto (HLEN bytes) | checksums | data
                 PLEN = 4 + len(checksums) + len(data): it counts itself, not the header
                 (PacketHeader.write); header.dataLen = len(data), so the checksums are
                 PLEN - 4 - dataLen bytes: one per ``bytesPerChecksum`` chunk of the data,
                 counted from the packet's first byte, the last chunk possibly shorter
    ack          varint length | PipelineAckProto (PipelineAck.write)
    read status  varint length | ClientReadStatusProto (the client, after a whole read)

With ``dfs.data.transfer.protection`` in secure mode a connection opens with the SASL
handshake before its first op (``SaslDataTransferClient``, ``SaslDataTransferServer``)::

    handshake    SASL_TRANSFER_MAGIC u32 (0xDEADBEEF) | then, each way in turn,
                 varint length | DataTransferEncryptorMessageProto (the mechanism's bytes
                 in ``payload``; ``status`` ERROR and ``message`` on a refusal)
    wrapped      u32 length | the SASL layer's wrapped bytes, for every later byte each
                 way once the qop is integrity or privacy (``SaslOutputStream``)

A packet longer than ``MAX_PACKET_SIZE`` (16 MiB: PLEN + HLEN, ``PacketReceiver``) or whose
``dataLen`` exceeds what PLEN leaves is malformed. A writer's heartbeat is a packet of no data
with seqno ``HEART_BEAT_SEQNO`` (-1); the last packet of a block has ``lastPacketInBlock``
and, from Hadoop's clients, no data. An ack's ``flag`` repeats each reply's status in its
low 4 bits (``PipelineAck.StatusFormat``: status 4 bits, 1 reserved, ECN 2, SLOW 1); a reader
takes the status from ``flag`` when it is present, else from ``reply``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from nnlite.formats.hadoop.hdfs import S as HDFS
from nnlite.formats.hadoop.proto import ProtoError, Schema, delimited, parse
from nnlite.formats.hadoop.security import S as SECURITY

DATA_TRANSFER_VERSION = 28          # DataTransferProtocol.DATA_TRANSFER_VERSION
OP_HEAD = struct.Struct(">HB")      # version, op code
PACKET_LENGTHS = struct.Struct(">IH")   # PLEN, HLEN
MAX_PACKET_SIZE = 16 << 20          # PacketReceiver.MAX_PACKET_SIZE
HEART_BEAT_SEQNO = -1               # DataStreamer / PipelineAck
STATUS_BITS = 0x0F                  # PipelineAck.StatusFormat.STATUS
SASL_TRANSFER_MAGIC = 0xDEADBEEF    # DataTransferSaslUtil.SASL_TRANSFER_MAGIC_NUMBER


class Op(IntEnum):
    """``org.apache.hadoop.hdfs.protocol.datatransfer.Op``: one byte after the version."""
    WRITE_BLOCK = 80
    READ_BLOCK = 81
    READ_METADATA = 82
    REPLACE_BLOCK = 83
    COPY_BLOCK = 84
    BLOCK_CHECKSUM = 85
    TRANSFER_BLOCK = 86
    REQUEST_SHORT_CIRCUIT_FDS = 87
    RELEASE_SHORT_CIRCUIT_FDS = 88
    REQUEST_SHORT_CIRCUIT_SHM = 89
    BLOCK_GROUP_CHECKSUM = 90
    CUSTOM = 127


S = Schema("nnlite.hadoop.datatransfer", uses=[HDFS, SECURITY])

Status = S.enum("Status", SUCCESS=0, ERROR=1, ERROR_CHECKSUM=2, ERROR_INVALID=3,
                ERROR_EXISTS=4, ERROR_ACCESS_TOKEN=5, CHECKSUM_OK=6, ERROR_UNSUPPORTED=7,
                OOB_RESTART=8, OOB_RESERVED1=9, OOB_RESERVED2=10, OOB_RESERVED3=11,
                IN_PROGRESS=12, ERROR_BLOCK_PINNED=13)
BlockConstructionStage = S.enum(
    "OpWriteBlockBlockConstructionStage", PIPELINE_SETUP_APPEND=0,
    PIPELINE_SETUP_APPEND_RECOVERY=1, DATA_STREAMING=2, PIPELINE_SETUP_STREAMING_RECOVERY=3,
    PIPELINE_CLOSE=4, PIPELINE_CLOSE_RECOVERY=5, PIPELINE_SETUP_CREATE=6, TRANSFER_RBW=7,
    TRANSFER_FINALIZED=8)

S.message("DataTransferTraceInfoProto",
          "optional uint64 traceId = 1",
          "optional uint64 parentId = 2",
          "optional bytes spanContext = 3")
S.message("BaseHeaderProto",
          "required ExtendedBlockProto block = 1",
          "optional TokenProto token = 2",
          "optional DataTransferTraceInfoProto traceInfo = 3")
S.message("ClientOperationHeaderProto",
          "required BaseHeaderProto baseHeader = 1",
          "required string clientName = 2")
S.message("CachingStrategyProto",
          "optional bool dropBehind = 1",
          "optional int64 readahead = 2")
S.message("OpReadBlockProto",
          "required ClientOperationHeaderProto header = 1",
          "required uint64 offset = 2",
          "required uint64 len = 3",
          "optional bool sendChecksums = 4 [default = true]",
          "optional CachingStrategyProto cachingStrategy = 5")
S.message("ChecksumProto",
          "required ChecksumTypeProto type = 1",
          "required uint32 bytesPerChecksum = 2")
S.message("OpWriteBlockProto",
          "required ClientOperationHeaderProto header = 1",
          "repeated DatanodeInfoProto targets = 2",
          "optional DatanodeInfoProto source = 3",
          "required OpWriteBlockBlockConstructionStage stage = 4",
          "required uint32 pipelineSize = 5",
          "required uint64 minBytesRcvd = 6",
          "required uint64 maxBytesRcvd = 7",
          "required uint64 latestGenerationStamp = 8",
          "required ChecksumProto requestedChecksum = 9",
          "optional CachingStrategyProto cachingStrategy = 10",
          "optional StorageTypeProto storageType = 11 [default = DISK]",
          "repeated StorageTypeProto targetStorageTypes = 12",
          "optional bool allowLazyPersist = 13 [default = false]",
          "optional bool pinning = 14 [default = false]",
          "repeated bool targetPinnings = 15",
          "optional string storageId = 16",
          "repeated string targetStorageIds = 17")
S.message("OpTransferBlockProto",
          "required ClientOperationHeaderProto header = 1",
          "repeated DatanodeInfoProto targets = 2",
          "repeated StorageTypeProto targetStorageTypes = 3",
          "repeated string targetStorageIds = 4")
S.message("OpCopyBlockProto",
          "required BaseHeaderProto header = 1")
S.message("OpBlockChecksumProto",
          "required BaseHeaderProto header = 1",
          "optional BlockChecksumOptionsProto blockChecksumOptions = 2")
S.message("PacketHeaderProto",             # every field fixed-length (PacketHeader)
          "required sfixed64 offsetInBlock = 1",
          "required sfixed64 seqno = 2",
          "required bool lastPacketInBlock = 3",
          "required sfixed32 dataLen = 4",
          "optional bool syncBlock = 5 [default = false]")
S.message("PipelineAckProto",
          "required sint64 seqno = 1",
          "repeated Status reply = 2",
          "optional uint64 downstreamAckTimeNanos = 3 [default = 0]",
          "repeated uint32 flag = 4 [packed=true]")
S.message("ReadOpChecksumInfoProto",
          "required ChecksumProto checksum = 1",
          "required uint64 chunkOffset = 2")
S.message("OpBlockChecksumResponseProto",
          "required uint32 bytesPerCrc = 1",
          "required uint64 crcPerBlock = 2",
          "required bytes blockChecksum = 3",
          "optional ChecksumTypeProto crcType = 4",
          "optional BlockChecksumOptionsProto blockChecksumOptions = 5")
S.message("BlockOpResponseProto",
          "required Status status = 1",
          "optional string firstBadLink = 2",
          "optional OpBlockChecksumResponseProto checksumResponse = 3",
          "optional ReadOpChecksumInfoProto readOpChecksumInfo = 4",
          "optional string message = 5",
          "optional uint32 shortCircuitAccessVersion = 6")
S.message("ClientReadStatusProto",
          "required Status status = 1")
S.message("DNTransferAckProto",
          "required Status status = 1")
# the data port's SASL handshake (SaslDataTransferServer / DataTransferSaslUtil)
DataTransferEncryptorStatus = S.enum("DataTransferEncryptorStatus", SUCCESS=0,
                                     ERROR_UNKNOWN_KEY=1, ERROR=2)
S.message("HandshakeSecretProto",
          "required bytes secret = 1",
          "required string bpid = 2")
S.message("DataTransferEncryptorMessageProto",
          "required DataTransferEncryptorStatus status = 1",
          "optional bytes payload = 2",
          "optional string message = 3",
          "repeated CipherOptionProto cipherOption = 4",
          "optional HandshakeSecretProto handshakeSecret = 5",
          "optional bool accessTokenError = 6")

_CLASSES = S.build()
DataTransferTraceInfoProto = _CLASSES["DataTransferTraceInfoProto"]
BaseHeaderProto = _CLASSES["BaseHeaderProto"]
ClientOperationHeaderProto = _CLASSES["ClientOperationHeaderProto"]
CachingStrategyProto = _CLASSES["CachingStrategyProto"]
OpReadBlockProto = _CLASSES["OpReadBlockProto"]
ChecksumProto = _CLASSES["ChecksumProto"]
OpWriteBlockProto = _CLASSES["OpWriteBlockProto"]
OpTransferBlockProto = _CLASSES["OpTransferBlockProto"]
OpCopyBlockProto = _CLASSES["OpCopyBlockProto"]
OpBlockChecksumProto = _CLASSES["OpBlockChecksumProto"]
PacketHeaderProto = _CLASSES["PacketHeaderProto"]
PipelineAckProto = _CLASSES["PipelineAckProto"]
ReadOpChecksumInfoProto = _CLASSES["ReadOpChecksumInfoProto"]
OpBlockChecksumResponseProto = _CLASSES["OpBlockChecksumResponseProto"]
BlockOpResponseProto = _CLASSES["BlockOpResponseProto"]
ClientReadStatusProto = _CLASSES["ClientReadStatusProto"]
DNTransferAckProto = _CLASSES["DNTransferAckProto"]
HandshakeSecretProto = _CLASSES["HandshakeSecretProto"]
DataTransferEncryptorMessageProto = _CLASSES["DataTransferEncryptorMessageProto"]

# The request message of each op (Receiver.processOp)
REQUESTS: dict[Op, Any] = {
    Op.WRITE_BLOCK: OpWriteBlockProto,
    Op.READ_BLOCK: OpReadBlockProto,
    Op.COPY_BLOCK: OpCopyBlockProto,
    Op.BLOCK_CHECKSUM: OpBlockChecksumProto,
    Op.TRANSFER_BLOCK: OpTransferBlockProto,
}


# ---------------------------------------------------------------------- op requests

def encode_op(op: Op, request: Any) -> bytes:
    """An op request as ``Sender.send`` writes it: version, op code, delimited message."""
    return OP_HEAD.pack(DATA_TRANSFER_VERSION, op) + delimited(request)


def decode_op_head(head: bytes) -> int:
    """The op code of a request's 3-byte head; ProtoError on another version
    (``Receiver.readOp``: "Version Mismatch")."""
    version, code = OP_HEAD.unpack(head)
    if version != DATA_TRANSFER_VERSION:
        raise ProtoError(f"Version Mismatch (Expected: {DATA_TRANSFER_VERSION}, "
                         f"Received: {version})")
    return code


# ---------------------------------------------------------------------- packets

@dataclass(frozen=True, slots=True)
class Packet:
    """One decoded packet: its header, the checksum bytes and the data."""
    header: Any                 # PacketHeaderProto
    checksums: bytes
    data: bytes


def packet_header(offset: int, seqno: int, data_len: int, *, last: bool = False,
                  sync: bool = False) -> Any:
    header = PacketHeaderProto(offsetInBlock=offset, seqno=seqno, lastPacketInBlock=last,
                               dataLen=data_len)
    if sync:
        header.syncBlock = True
    return header


def encode_packet(header: Any, checksums: bytes, data: bytes) -> bytes:
    """PLEN, HLEN, the header, the checksums, the data (``PacketHeader.write``)."""
    head = header.SerializeToString()
    payload = 4 + len(checksums) + len(data)
    return b"".join((PACKET_LENGTHS.pack(payload, len(head)), head, checksums, data))


def packet_lengths(prefix: bytes) -> tuple[int, int]:
    """``(PLEN, HLEN)`` from a packet's first 6 bytes; ProtoError when they cannot be a
    packet's (``PacketReceiver.doRead``). The rest of the packet is ``PLEN - 4 + HLEN``
    bytes."""
    payload, header_len = PACKET_LENGTHS.unpack(prefix)
    if payload < 4:
        raise ProtoError(f"Invalid payload length {payload}")
    if payload + header_len > MAX_PACKET_SIZE:
        raise ProtoError(f"Incorrect value for packet payload size: {payload} (with a "
                         f"header of {header_len} bytes, over {MAX_PACKET_SIZE})")
    return payload, header_len


def decode_packet(payload: int, header_len: int, rest: bytes | bytearray | memoryview) -> Packet:
    """The packet whose lengths ``packet_lengths`` read, from the ``rest`` of its bytes."""
    if len(rest) != payload - 4 + header_len:
        raise ProtoError(f"a packet of {payload - 4 + header_len} bytes after its lengths "
                         f"is cut short ({len(rest)} present)")
    header = parse(PacketHeaderProto, rest[:header_len])
    both = payload - 4
    if not 0 <= header.dataLen <= both:
        raise ProtoError("Invalid packet: data length in packet header exceeds data length "
                         f"received. dataPlusChecksumLen={both} header: dataLen="
                         f"{header.dataLen}")
    checksums_end = header_len + both - header.dataLen
    return Packet(header, bytes(rest[header_len:checksums_end]), bytes(rest[checksums_end:]))


# ---------------------------------------------------------------------- acks

def encode_ack(seqno: int, *statuses: int) -> bytes:
    """A PipelineAckProto, delimited, with each status in ``reply`` and in ``flag`` (ECN
    disabled, not slow: the flag is the status), as Hadoop 3's ``PipelineAck`` sends."""
    return delimited(PipelineAckProto(seqno=seqno, reply=list(statuses), flag=list(statuses)))


def ack_statuses(ack: Any) -> list[int]:
    """The status of each reply of an ack (``PipelineAck.getHeaderFlag``)."""
    if len(ack.flag):
        return [flag & STATUS_BITS for flag in ack.flag]
    return list(ack.reply)
