"""readers.py's FileReader: what a reader sees of a file (the blocks the store published, of a
file being written the blocks up to the first it has not), and its bytes read with every
chunk checked: a short range into memory, a long one as a VerifiedRange, past the end an
EOFException, a damaged chunk or a missing block HDFS's BlockMissingException."""

from __future__ import annotations

import asyncio

import pytest

from nnlite.namenode.blocks.streams import BlockMissingError
from nnlite.namenode.datanode.sender import VerifiedRange
from nnlite.namenode.files import readers
from nnlite.namenode.files.readers import EndOfFileError, FileReader
from nnlite.namenode.fsnamesystem import FileBlocks
from tests.namenode.blocks.helpers import CONTENT, written
from tests.namenode.datanode.test_sender import damage


def file_of(blocks, under_construction: bool = False) -> FileBlocks:
    return FileBlocks(1, sum(b[1] for b in blocks), tuple(blocks), None, 4096,
                      under_construction)


def read(reader: FileReader, node: FileBlocks, offset: int, length: int | None):
    return asyncio.run(reader.read("/f", node, offset, length))


def test_a_range_is_read_into_memory_and_a_long_one_streamed(store, monkeypatch):
    sealed = written(store, CONTENT, 4096)
    reader, node = FileReader(store), file_of(sealed.blocks)
    assert read(reader, node, 100, 5000) == CONTENT[100:5100]
    assert read(reader, node, len(CONTENT), None) == b""
    monkeypatch.setattr(readers, "MEMORY_READ", 1000)
    stream, count = read(reader, node, 10, None)
    assert isinstance(stream, VerifiedRange) and count == len(CONTENT) - 10
    assert stream.read() == CONTENT[10:]
    stream.close()


def test_past_the_end_is_an_eof_and_a_damaged_chunk_a_missing_block(store):
    sealed = written(store, CONTENT, 4096)
    reader, node = FileReader(store), file_of(sealed.blocks)
    with pytest.raises(EndOfFileError, match="Cannot seek after EOF"):
        read(reader, node, len(CONTENT) + 1, None)
    damage(store, sealed.blocks[1][0], 10)
    block = sealed.blocks[1]
    with pytest.raises(BlockMissingError,
                       match=f"Could not obtain block: blk_{block[0]}_{block[2]} file=/f"):
        read(reader, node, 0, None)
    assert read(reader, node, 0, 4096) == CONTENT[:4096]       # the first block is whole


def test_a_file_being_written_shows_the_blocks_its_writer_completed(store):
    sealed = written(store, CONTENT, 4096)
    pending = (store.allocate(), 0, sealed.blocks[0][2])
    node = file_of((*sealed.blocks, pending), under_construction=True)
    reader = FileReader(store)
    assert reader.readable(node) == (sealed.blocks, len(CONTENT))
    assert reader.visible(node) == (sealed.blocks, len(CONTENT), None)  # no datanode
    assert reader.readable(file_of(sealed.blocks)) == (sealed.blocks, len(CONTENT))
