"""sender.py's checked reads for WebHDFS's OPEN: a VerifiedRange reads byte ranges across
published blocks, then the bytes of a block being written, every chunk checked against its
stored CRC a batch at a time; a damaged chunk is a ChecksumError where its batch is read
(``prime`` reads the first ahead), and the chunks around it still read."""

from __future__ import annotations

import pytest

from nnlite.namenode.blocks.streams import segments
from nnlite.namenode.datanode.errors import ChecksumError
from nnlite.namenode.datanode.sender import BlockSender, VerifiedRange
from tests.namenode.blocks.helpers import CONTENT, written


def verified_range(store, blocks, offset: int, length: int, tail: bytes = b"",
                   batch: int = VerifiedRange.BATCH) -> VerifiedRange:
    senders = [BlockSender(store, b[0], start, n) for b, start, n in
               segments(blocks, offset, length)]
    for sender in senders:
        sender.open()
    reader = VerifiedRange(senders, tail)
    reader.BATCH = batch
    return reader


def drained(reader: VerifiedRange, size: int = 100) -> bytes:
    out, buf = b"", bytearray(size)
    while n := reader.readinto(buf):
        out += buf[:n]
    return out


def damage(store, block_id: int, at: int) -> None:
    with open(store.data_path(block_id), "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 1]))


def test_a_verified_range_reads_across_blocks_then_the_tail(store):
    sealed = written(store, CONTENT[:3100], 1024)
    reader = verified_range(store, sealed.blocks, 1000, 2100, tail=b"being written")
    assert drained(reader) == CONTENT[1000:3100] + b"being written"
    assert reader.seek(reader.consumed) == 2100 + 13
    with pytest.raises(OSError):
        reader.seek(0)
    reader.close()
    reader = verified_range(store, sealed.blocks, 10, 3000, batch=1024)
    assert reader.read(50) == CONTENT[10:60] and reader.read() == CONTENT[60:3010]
    reader.close()


def test_a_damaged_chunk_is_an_error_where_its_batch_is_read(store):
    sealed = written(store, CONTENT, 4096)
    damage(store, sealed.blocks[1][0], 1000)            # the file's byte 5096: chunk 4608
    reader = verified_range(store, sealed.blocks, 0, len(CONTENT), batch=2048)
    reader.prime()
    with pytest.raises(ChecksumError, match="at offset 512") as info:
        drained(reader)
    assert (info.value.block_id, info.value.position) == (sealed.blocks[1][0], 512)
    assert reader.consumed == 4096                      # the first block, nothing after
    reader.close()
    reader = verified_range(store, sealed.blocks, 5000, 200)
    with pytest.raises(ChecksumError):
        reader.prime()
    reader.close()
    for offset, length in ((0, 4608), (5120, 5125), (4096, 512)):
        reader = verified_range(store, sealed.blocks, offset, length)
        assert drained(reader) == CONTENT[offset:offset + length]
        reader.close()
