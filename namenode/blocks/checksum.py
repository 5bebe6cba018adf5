"""File checksums as HDFS computes them: MD5-of-MD5-of-CRC32 (``MD5MD5CRC32GzipFileChecksum``).

Per block (a DataNode's ``BlockChecksumHelper``): the CRC32 (zlib's, Hadoop's type CRC32) of
each 512-byte chunk of the block, the last chunk possibly shorter, each as 4 big-endian bytes,
in order; the block's digest is the MD5 of those bytes (its meta file without the header).

Per file (the client's ``FileChecksumHelper``): the block MD5s are written one after another
into a ``DataOutputBuffer`` and the file MD5 is ``MD5Hash.digest(buffer.getData())``, i.e. over
the buffer's whole backing array: 16 bytes per block, zero-padded to the array's capacity,
which starts at 32 bytes and doubles as it fills (one or two blocks: 32 bytes; three or four:
64; ...). ``crcPerBlock`` is the CRC count of the first block when the file has more than one
block, else 0. The serialised checksum (``MD5MD5CRC32FileChecksum.write``) is 28 bytes::

    bytesPerCRC  int32  big-endian   512 (0 for an empty file)
    crcPerBlock  int64  big-endian
    md5          16 bytes

and its algorithm name is ``MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC>CRC32``. An empty file
(no blocks) has Hadoop's "magic" checksum: 0, 0 and the MD5 of 32 zero bytes. WebHDFS sends
``{"FileChecksum": {"algorithm": ..., "bytes": <hex>, "length": 28}}``.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from typing import Iterable

BYTES_PER_CRC = 512
CRC_SIZE = 4
CHECKSUM_LENGTH = 28
HEADER = struct.Struct(">iq")
EMPTY_BUFFER = 32           # DataOutputBuffer's initial capacity (ByteArrayOutputStream's)


class CrcChunker:
    """CRC32 of consecutive 512-byte chunks of a byte stream, fed in pieces of any size.

    ``prefix`` primes the first chunk with bytes that belong to it but are not fed (the
    partial last chunk of a block being continued). ``crcs`` holds the CRCs of the chunks
    completed so far; ``finish()`` adds the CRC of a partial last chunk."""

    def __init__(self, prefix: bytes = b""):
        if len(prefix) >= BYTES_PER_CRC:
            raise ValueError("a chunk prefix must be shorter than one chunk")
        self.pending = bytearray(prefix)
        self.crcs = bytearray()

    def feed(self, data) -> None:
        view = memoryview(data)
        if self.pending:
            take = BYTES_PER_CRC - len(self.pending)
            self.pending += view[:take]
            view = view[take:]
            if len(self.pending) < BYTES_PER_CRC:
                return
            self.crcs += zlib.crc32(self.pending).to_bytes(CRC_SIZE, "big")
            self.pending.clear()
        full = len(view) - len(view) % BYTES_PER_CRC
        if full:
            crc32 = zlib.crc32
            self.crcs += struct.pack(f">{full // BYTES_PER_CRC}I",
                                     *(crc32(view[i:i + BYTES_PER_CRC])
                                       for i in range(0, full, BYTES_PER_CRC)))
        self.pending += view[full:]

    def finish(self) -> bytes:
        """Every chunk's CRC, the partial last chunk's included."""
        if not self.pending:
            return bytes(self.crcs)
        return bytes(self.crcs) + zlib.crc32(self.pending).to_bytes(CRC_SIZE, "big")


def chunk_crcs(data: bytes) -> bytes:
    chunker = CrcChunker()
    chunker.feed(data)
    return chunker.finish()


def block_digest(crcs: bytes) -> tuple[int, bytes]:
    """(number of CRCs, MD5 of the CRC bytes) of one block."""
    return len(crcs) // CRC_SIZE, hashlib.md5(crcs).digest()


def file_checksum(digests: Iterable[tuple[int, bytes]]) -> bytes:
    """The 28-byte serialised checksum of a file from its blocks' ``block_digest``s."""
    digests = list(digests)
    if not digests:
        return HEADER.pack(0, 0) + hashlib.md5(bytes(EMPTY_BUFFER)).digest()
    md5s = b"".join(md5 for _, md5 in digests)
    capacity = EMPTY_BUFFER
    while capacity < len(md5s):
        capacity *= 2
    crc_per_block = digests[0][0] if len(digests) > 1 else 0
    md5 = hashlib.md5(md5s + bytes(capacity - len(md5s))).digest()
    return HEADER.pack(BYTES_PER_CRC, crc_per_block) + md5


def is_checksum(value) -> bool:
    return isinstance(value, bytes) and len(value) == CHECKSUM_LENGTH


def algorithm(checksum: bytes) -> str:
    bytes_per_crc, crc_per_block = HEADER.unpack_from(checksum)
    return f"MD5-of-{crc_per_block}MD5-of-{bytes_per_crc}CRC32"


def to_json(checksum: bytes) -> dict:
    """Hadoop's JsonUtil.toJsonMap(MD5MD5CRC32FileChecksum)."""
    return {"FileChecksum": {"algorithm": algorithm(checksum), "bytes": checksum.hex(),
                             "length": len(checksum)}}
