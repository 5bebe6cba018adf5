"""checksum.py: chunk CRCs however the bytes arrive, and file checksums as HDFS computes them
(MD5-of-MD5-of-CRC, CRC32C by default, CRC32 for blocks written before it), compared with
tests/namenode/blocks/helpers.py's reference."""

from __future__ import annotations

import zlib

import pytest
from crc32c import crc32c

from nnlite.namenode.blocks import checksum
from tests.namenode.blocks.helpers import CONTENT, reference


@pytest.mark.parametrize("kind, crc", [(checksum.CRC32C, crc32c), (checksum.CRC32, zlib.crc32)])
@pytest.mark.parametrize("pieces", [(1,), (511, 2), (512,), (513, 1000), (10**6,)])
def test_chunk_crcs_do_not_depend_on_how_the_bytes_arrive(pieces, kind, crc):
    chunker = checksum.CrcChunker(kind=kind)
    pos, i = 0, 0
    while pos < len(CONTENT):
        chunker.feed(CONTENT[pos:pos + pieces[i % len(pieces)]])
        pos, i = pos + pieces[i % len(pieces)], i + 1
    expected = b"".join(crc(CONTENT[i:i + 512]).to_bytes(4, "big")
                        for i in range(0, len(CONTENT), 512))
    assert chunker.finish() == expected == checksum.chunk_crcs(CONTENT, kind)


def test_the_empty_file_has_hadoops_magic_checksum():
    value = checksum.file_checksum([])
    assert checksum.to_json(value) == {"FileChecksum": {
        "algorithm": "MD5-of-0MD5-of-0CRC32", "length": 28,
        "bytes": "00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"}}


@pytest.mark.parametrize("size,block_size", [(1, 1024), (1024, 1024), (3000, 1024),
                                             (4096, 1024), (5000, 1024), (10245, 512)])
def test_file_checksum_pads_the_block_md5s_as_hadoops_buffer_does(size, block_size):
    data = CONTENT[:size]
    digests = [checksum.block_digest(checksum.chunk_crcs(data[i:i + block_size]))
               for i in range(0, size, block_size)]
    value = checksum.file_checksum(digests)
    assert value == reference(data, block_size) + bytes([checksum.CRC32C])
    blocks = len(digests)
    assert checksum.algorithm(value) == \
        f"MD5-of-{block_size // 512 if blocks > 1 else 0}MD5-of-512CRC32C"


def test_a_file_of_crc32_and_crc32c_blocks_is_mixed_and_an_old_checksum_stays_crc32():
    old = checksum.block_digest(checksum.chunk_crcs(CONTENT[:1024], checksum.CRC32),
                                checksum.CRC32)
    new = checksum.block_digest(checksum.chunk_crcs(CONTENT[1024:2048]))
    assert checksum.algorithm(checksum.file_checksum([old, new])) == "MD5-of-2MD5-of-512MIXED"
    recorded = checksum.file_checksum([old])             # 28 bytes, as nnlite recorded before
    assert len(recorded) == 28 and checksum.to_json(recorded)["FileChecksum"][
        "algorithm"] == "MD5-of-0MD5-of-512CRC32"


@pytest.mark.parametrize("kind", [checksum.CRC32C, checksum.CRC32])
@pytest.mark.parametrize("length", [0, 1, 511, 512, 513, 4096, 10245, 65536 + 700])
def test_chunks_match_as_one_crc_per_chunk_would(kind, length):
    """Runs of chunks checked two calls at a time agree with chunk_crcs: every chunk matches,
    and any one flipped bit of the data or of a stored CRC is caught, in every chunk."""
    data = (CONTENT * 7)[:length]
    crcs = checksum.chunk_crcs(data, kind)
    assert checksum.chunks_match(data, crcs, kind)
    assert not checksum.chunks_match(data, crcs[:-4], kind) or not data
    for at in range(0, length, 509):
        damaged = bytearray(data)
        damaged[at] ^= 1 << at % 8
        assert not checksum.chunks_match(bytes(damaged), crcs, kind), at
    for at in range(0, len(crcs), 7):
        damaged = bytearray(crcs)
        damaged[at] ^= 0x80
        assert not checksum.chunks_match(data, bytes(damaged), kind), at
