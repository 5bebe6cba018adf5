"""A test-side data transfer client on a blocking socket, speaking the protocol only through
``formats/hadoop/datatransfer.py`` (as Hadoop's ``Sender``, ``DataStreamer`` and
``BlockReaderRemote`` do), and ``running_datanode``: a ``DataNodeServer`` on its own event
loop in a thread, on a free loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import Op, Status
from nnlite.formats.hadoop.hdfs import ChecksumTypeProto
from nnlite.formats.hadoop.proto import parse, read_varint
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import BlockStore
from nnlite.namenode.datanode.server import DataNodeServer, block_pool_id
from nnlite.namenode.datanode.tokens import BlockKeys, BlockTokenSecretManager

PACKET = 64 * 1024


class TransferClient:
    """One connection to a datanode's transfer port."""

    def __init__(self, port: int, pool_id: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.rfile = self.sock.makefile("rb")
        self.pool_id = pool_id

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

    def __enter__(self) -> TransferClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ framing

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_message(self, cls: Any) -> Any:
        prefix = bytearray()
        while not prefix or prefix[-1] & 0x80:
            byte = self.rfile.read(1)
            if not byte:
                raise EOFError("the datanode closed the connection")
            prefix += byte
        length, _ = read_varint(prefix)
        return parse(cls, self.rfile.read(length))

    def read_packet(self) -> dt.Packet:
        payload, header_len = dt.packet_lengths(self.rfile.read(dt.PACKET_LENGTHS.size))
        return dt.decode_packet(payload, header_len, self.rfile.read(payload - 4 + header_len))

    def at_eof(self) -> bool:
        return self.rfile.read(1) == b""

    # ------------------------------------------------------------------ requests

    def header(self, block_id: int, num_bytes: int = 0, token: Any = None) -> Any:
        base = dt.BaseHeaderProto(block=self.block(block_id, num_bytes))
        if token is not None:
            base.token.CopyFrom(token)
        return dt.ClientOperationHeaderProto(baseHeader=base, clientName="DFSClient_test")

    def block(self, block_id: int, num_bytes: int = 0) -> Any:
        from nnlite.formats.hadoop.hdfs import ExtendedBlockProto
        return ExtendedBlockProto(poolId=self.pool_id, blockId=block_id, generationStamp=1001,
                                  numBytes=num_bytes)

    def write_request(self, block_id: int, *, kind: int = ChecksumTypeProto.CHECKSUM_CRC32C,
                      stage: int = dt.BlockConstructionStage.PIPELINE_SETUP_CREATE,
                      num_bytes: int = 0, per_checksum: int = 512, token: Any = None,
                      **fields: Any) -> bytes:
        """A WRITE_BLOCK op as DataStreamer.createBlockOutputStream sends it."""
        request = dt.OpWriteBlockProto(
            header=self.header(block_id, num_bytes, token), stage=stage,
            pipelineSize=1 + len(fields.get("targets", ())),
            minBytesRcvd=num_bytes, maxBytesRcvd=num_bytes, latestGenerationStamp=1001,
            requestedChecksum=dt.ChecksumProto(type=kind, bytesPerChecksum=per_checksum),
            **fields)
        return dt.encode_op(Op.WRITE_BLOCK, request)

    def open_write(self, block_id: int, **options: Any) -> Any:
        self.send(self.write_request(block_id, **options))
        return self.read_message(dt.BlockOpResponseProto)

    def packet(self, offset: int, seqno: int, data: bytes, *, last: bool = False,
               sync: bool = False, kind: int = checksum.CRC32C) -> bytes:
        sums = checksum.chunk_crcs(data, kind) if data else b""
        return dt.encode_packet(dt.packet_header(offset, seqno, len(data), last=last,
                                                 sync=sync), sums, data)

    def ack(self) -> tuple[int, list[int]]:
        ack = self.read_message(dt.PipelineAckProto)
        return ack.seqno, dt.ack_statuses(ack)

    def write_block(self, block_id: int, data: bytes, *, packet: int = PACKET,
                    sync_every: int = 0, **options: Any) -> list[tuple[int, list[int]]]:
        """A whole block as DataStreamer sends it: packets, then the empty last one; every
        ack, in order."""
        response = self.open_write(block_id, **options)
        assert response.status == Status.SUCCESS, response.message
        seqno = 0
        for offset in range(0, len(data), packet):
            sync = bool(sync_every) and seqno % sync_every == 0
            self.send(self.packet(offset, seqno, data[offset:offset + packet], sync=sync))
            seqno += 1
        self.send(self.packet(len(data), seqno, b"", last=True))
        return [self.ack() for _ in range(seqno + 1)]

    def open_read(self, block_id: int, offset: int, length: int,
                  send_checksums: bool = True, token: Any = None) -> Any:
        request = dt.OpReadBlockProto(header=self.header(block_id, token=token), offset=offset,
                                      len=length, sendChecksums=send_checksums)
        self.send(dt.encode_op(Op.READ_BLOCK, request))
        return self.read_message(dt.BlockOpResponseProto)

    def read_block(self, block_id: int, offset: int, length: int,
                   token: Any = None) -> tuple[bytes, list]:
        """The bytes of the range, each packet's checksums verified, and the packet headers;
        CHECKSUM_OK sent after the last packet (BlockReaderRemote)."""
        response = self.open_read(block_id, offset, length, token=token)
        assert response.status == Status.SUCCESS, response.message
        info = response.readOpChecksumInfo
        data, headers = bytearray(), []
        while True:
            packet = self.read_packet()
            headers.append(packet.header)
            if packet.header.lastPacketInBlock:
                break
            assert packet.checksums == checksum.chunk_crcs(packet.data, info.checksum.type)
            data += packet.data
        self.send(dt.delimited(dt.ClientReadStatusProto(status=Status.CHECKSUM_OK)))
        skip = offset - info.chunkOffset
        return bytes(data[skip:skip + length]), headers

    def block_checksum(self, block_id: int, num_bytes: int, composite: bool = False,
                       token: Any = None) -> Any:
        request = dt.OpBlockChecksumProto(header=dt.BaseHeaderProto(
            block=self.block(block_id, num_bytes)))
        if token is not None:
            request.header.token.CopyFrom(token)
        if composite:
            request.blockChecksumOptions.blockChecksumType = 2
        self.send(dt.encode_op(Op.BLOCK_CHECKSUM, request))
        return self.read_message(dt.BlockOpResponseProto)


def block_tokens(secret: str, pool_id: str, clock: Any = time.time,
                 lifetime_ms: int = 600_000) -> BlockTokenSecretManager:
    """The block token manager of a set sharing ``secret`` (ten-minute keys and tokens)."""
    return BlockTokenSecretManager(BlockKeys(secret, pool_id, 600_000, lifetime_ms, clock))


@contextlib.contextmanager
def running_datanode(store: BlockStore, secret: str | None = None,
                     **options: Any) -> Iterator[DataNodeServer]:
    """A DataNodeServer on ``store``, served by an event loop in a thread; closed after.
    With ``secret``, it takes the tokens ``block_tokens(secret, ...)`` signs."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-datanode", daemon=True)
    thread.start()
    tokens = None if secret is None else \
        block_tokens(secret, block_pool_id(store.namespace_id))
    server = DataNodeServer(store, tokens, **options)
    try:
        asyncio.run_coroutine_threadsafe(server.start("127.0.0.1", 0), loop).result(30)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
