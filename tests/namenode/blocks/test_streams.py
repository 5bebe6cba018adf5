"""streams.py: a BlockWriter cuts a stream into block files with their CRCs, appends to a
partial last block by copying it, discards what it wrote; ``segments`` cut a byte range
across blocks (sender.py's VerifiedRange reads them: tests/namenode/datanode/test_sender.py)."""

from __future__ import annotations

from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.streams import segments
from tests.namenode.blocks.helpers import CONTENT, content, files_in, reference, written


def test_a_writer_cuts_blocks_and_records_their_crcs(store):
    sealed = written(store, CONTENT, 4096)
    assert [b[1] for b in sealed.blocks] == [4096, 4096, 2053]
    assert content(store, sealed.blocks) == CONTENT
    for block in sealed.blocks:
        data = store.data_path(block[0]).read_bytes()
        assert store.meta_path(block[0]).read_bytes() == \
            checksum.meta_header() + checksum.chunk_crcs(data)
    assert checksum.file_checksum(sealed.digests)[:28] == reference(CONTENT, 4096)
    assert list(store.tmp.iterdir()) == [] and store.held() == set()


def test_appending_to_a_partial_block_copies_it_into_a_new_block(store):
    first = written(store, CONTENT[:1500], 4096)
    tail = first.blocks[-1]
    rest = written(store, CONTENT[1500:], 4096, pieces=(7, 4000), tail=tail)
    assert rest.replaces_tail and rest.length == len(CONTENT) - 1500
    assert [b[1] for b in rest.blocks] == [4096, 4096, 2053]
    assert tail[0] not in [b[0] for b in rest.blocks]
    assert content(store, rest.blocks) == CONTENT
    assert store.data_path(tail[0]).read_bytes() == CONTENT[:1500]    # the old block is intact
    merged = store.data_path(rest.blocks[0][0]).read_bytes()
    assert store.meta_path(rest.blocks[0][0]).read_bytes() == \
        checksum.meta_header() + checksum.chunk_crcs(merged)
    assert checksum.file_checksum(rest.digests)[:28] == reference(CONTENT, 4096)


def test_an_append_continues_an_old_crc32_block_in_crc32_and_starts_new_ones_in_crc32c(store):
    first = written(store, CONTENT[:1500], 4096)
    tail = first.blocks[-1]
    # the meta file as nnlite wrote it before CRC32C: CRC32s, no header
    store.meta_path(tail[0]).write_bytes(checksum.chunk_crcs(CONTENT[:1536], checksum.CRC32)[:8])
    assert store.read_crcs(tail[0], 1500) == (
        checksum.chunk_crcs(CONTENT[:1500], checksum.CRC32), checksum.CRC32)
    rest = written(store, CONTENT[1500:], 4096, tail=tail)
    assert [d[2] for d in rest.digests] == [checksum.CRC32, checksum.CRC32C, checksum.CRC32C]
    assert checksum.algorithm(checksum.file_checksum(rest.digests)) == \
        "MD5-of-8MD5-of-512MIXED"
    merged = store.data_path(rest.blocks[0][0]).read_bytes()
    assert store.read_crcs(rest.blocks[0][0], 4096) == (
        checksum.chunk_crcs(merged, checksum.CRC32), checksum.CRC32)


def test_a_full_last_block_is_not_continued(store):
    first = written(store, CONTENT[:4096], 4096)
    rest = written(store, b"x" * 10, 4096, tail=first.blocks[-1])
    assert not rest.replaces_tail and [b[1] for b in rest.blocks] == [10]


def test_discard_deletes_written_and_published_blocks(store):
    writer = store.writer(1024)
    writer.write(CONTENT[:3000])
    assert len(files_in(store)) == 5                  # 2 full blocks with meta, 1 open
    writer.discard()
    writer.close()
    assert files_in(store) == [] and store.held() == set()
    writer = store.writer(1024)
    writer.write(CONTENT[:3000])
    writer.seal()
    writer.discard()
    writer.close()
    assert files_in(store) == []


def test_segments_span_blocks(store):
    sealed = written(store, CONTENT, 1024)
    parts = segments(sealed.blocks, 1000, 2100)
    assert [(p[1], p[2]) for p in parts] == [(1000, 24), (0, 1024), (0, 1024), (0, 28)]
