"""File checksums as HDFS computes them: MD5-of-MD5-of-CRC32C by default (``dfs.checksum.type``
CRC32C, ``MD5MD5CRC32CastagnoliFileChecksum``), CRC32 for blocks written before nnlite wrote
CRC32C (``MD5MD5CRC32GzipFileChecksum``).

Per block (a DataNode's ``BlockChecksumHelper``): the CRC of each 512-byte chunk of the block,
the last chunk possibly shorter, each as 4 big-endian bytes, in order; the block's digest is
the MD5 of those bytes (its meta file without the header). The CRC is CRC32C (Castagnoli,
DataChecksum.Type id 2) for new blocks, CRC32 (zlib's, id 1) for old ones.

Meta file: HDFS's ``BlockMetadataHeader`` -- version u16 (1), checksum type u8, bytes per
checksum u32, all big-endian (7 bytes) -- then the CRCs. A meta file without it (its length a
multiple of 4; nnlite's first layout) holds CRC32s.

Per file (the client's ``FileChecksumHelper``): the block MD5s are written one after another
into a ``DataOutputBuffer`` and the file MD5 is ``MD5Hash.digest(buffer.getData())``, i.e. over
the buffer's whole backing array: 16 bytes per block, zero-padded to the array's capacity,
which starts at 32 bytes and doubles as it fills (one or two blocks: 32 bytes; three or four:
64; ...). ``crcPerBlock`` is the CRC count of the first block when the file has more than one
block, else 0. The serialised checksum (``MD5MD5CRC32FileChecksum.write``) is 28 bytes::

    bytesPerCRC  int32  big-endian   512 (0 for an empty file)
    crcPerBlock  int64  big-endian
    md5          16 bytes

and its algorithm name is ``MD5-of-<crcPerBlock>MD5-of-<bytesPerCRC><type>``, the type that
of every block, or MIXED when they differ (``FileChecksumHelper``). nnlite records a file's
checksum as those 28 bytes, followed by the type id unless it is CRC32 (so a checksum
recorded before CRC32C is read as CRC32). An empty file (no blocks) has Hadoop's "magic"
checksum: 0, 0, the MD5 of 32 zero bytes, CRC32. WebHDFS sends
``{"FileChecksum": {"algorithm": ..., "bytes": <hex>, "length": 28}}``.
"""

from __future__ import annotations

import functools
import hashlib
import struct
import threading
import zlib
from collections.abc import Iterable

from crc32c import crc32c

BYTES_PER_CRC = 512
CRC_SIZE = 4
CHECKSUM_LENGTH = 28
HEADER = struct.Struct(">iq")
EMPTY_BUFFER = 32           # DataOutputBuffer's initial capacity (ByteArrayOutputStream's)
CRC32, CRC32C, MIXED = 1, 2, 4          # DataChecksum.Type ids
NAMES = {CRC32: "CRC32", CRC32C: "CRC32C", MIXED: "MIXED"}
DEFAULT = CRC32C                        # dfs.checksum.type
META_HEADER = struct.Struct(">HBI")     # BlockMetadataHeader: version, type, bytes per CRC
META_VERSION = 1
RUN_CHUNKS = 512                        # chunks_match's run: 256 KiB
_FUNCTIONS = {CRC32: zlib.crc32, CRC32C: crc32c}
_SCRATCH = threading.local()


def meta_header(kind: int = DEFAULT) -> bytes:
    return META_HEADER.pack(META_VERSION, kind, BYTES_PER_CRC)


def meta_layout(head: bytes, size: int) -> tuple[int, int]:
    """``(checksum type, offset of the first CRC)`` of a meta file of ``size`` bytes that
    begins with ``head``: with HDFS's header, its type; without (a length that is a multiple
    of 4), CRC32 from byte 0."""
    if size % CRC_SIZE == META_HEADER.size % CRC_SIZE and len(head) >= META_HEADER.size:
        version, kind, per_crc = META_HEADER.unpack_from(head)
        if version == META_VERSION and kind in _FUNCTIONS and per_crc == BYTES_PER_CRC:
            return kind, META_HEADER.size
    return CRC32, 0


class CrcChunker:
    """CRC32 of consecutive 512-byte chunks of a byte stream, fed in pieces of any size.

    ``prefix`` primes the first chunk with bytes that belong to it but are not fed (the
    partial last chunk of a block being continued). ``crcs`` holds the CRCs of the chunks
    completed so far; ``finish()`` adds the CRC of a partial last chunk."""

    def __init__(self, prefix: bytes = b"", kind: int = DEFAULT):
        if len(prefix) >= BYTES_PER_CRC:
            raise ValueError("a chunk prefix must be shorter than one chunk")
        self.pending = bytearray(prefix)
        self.crcs = bytearray()
        self.kind = kind
        self.crc = _FUNCTIONS[kind]

    def feed(self, data) -> None:
        view = memoryview(data)
        if self.pending:
            take = BYTES_PER_CRC - len(self.pending)
            self.pending += view[:take]
            view = view[take:]
            if len(self.pending) < BYTES_PER_CRC:
                return
            self.crcs += self.crc(self.pending).to_bytes(CRC_SIZE, "big")
            self.pending.clear()
        full = len(view) - len(view) % BYTES_PER_CRC
        if full:
            crc = self.crc
            self.crcs += struct.pack(f">{full // BYTES_PER_CRC}I",
                                     *(crc(view[i:i + BYTES_PER_CRC])
                                       for i in range(0, full, BYTES_PER_CRC)))
        self.pending += view[full:]

    def finish(self) -> bytes:
        """Every chunk's CRC, the partial last chunk's included."""
        if not self.pending:
            return bytes(self.crcs)
        return bytes(self.crcs) + self.crc(self.pending).to_bytes(CRC_SIZE, "big")


def chunk_crcs(data: bytes | bytearray | memoryview, kind: int = DEFAULT) -> bytes:
    chunker = CrcChunker(kind=kind)
    chunker.feed(data)
    return chunker.finish()


def chunks_match(data, crcs: bytes, kind: int = DEFAULT) -> bool:
    """Whether ``crcs`` are the CRCs of ``data``'s 512-byte chunks (``chunk_crcs``), checked
    with two calls per run of up to ``RUN_CHUNKS`` chunks instead of one per chunk. The CRCs
    are reflected and linear: XORing 4 bytes into a message at some position XORs their
    little-endian value into the CRC register there. So the CRC of a run followed by 4 zero
    bytes, XORed with the CRC of as many zero bytes holding each chunk's stored CRC where
    the next chunk begins, is a constant of the run's length when every chunk matches
    (``_run_residue``), and a chunk that does not moves it, as its own CRC would have
    (shifting the register is invertible). Only damage to several chunks of a run that
    cancels out could pass, with odds of 2^-32. The partial last chunk is checked alone."""
    if len(crcs) != CRC_SIZE * -(-len(data) // BYTES_PER_CRC):
        return False
    view, full = memoryview(data), len(data) // BYTES_PER_CRC
    for first in range(0, full, RUN_CHUNKS):
        n = min(RUN_CHUNKS, full - first)
        run = view[first * BYTES_PER_CRC:(first + n) * BYTES_PER_CRC]
        if _run_crc(run, crcs[first * CRC_SIZE:(first + n) * CRC_SIZE], kind) != \
                _run_residue(n, kind):
            return False
    whole = full * BYTES_PER_CRC
    return whole == len(data) or chunk_crcs(view[whole:], kind) == crcs[full * CRC_SIZE:]


def _run_crc(data, crcs: bytes, kind: int) -> int:
    """The CRC of ``data`` (whole chunks) and 4 zero bytes, XORed with the CRC of the stored
    CRCs placed little-endian where each chunk ends (``chunks_match``)."""
    crc = _FUNCTIONS[kind]
    stored = _scratch(len(data) + CRC_SIZE)
    for k in range(CRC_SIZE):   # byte k of each little-endian CRC: byte 3 - k of the stored
        stored[BYTES_PER_CRC + k::BYTES_PER_CRC] = crcs[CRC_SIZE - 1 - k::CRC_SIZE]
    return crc(bytes(CRC_SIZE), crc(data)) ^ crc(stored)


def _scratch(size: int) -> bytearray:
    """A zeroed buffer of ``size`` bytes for ``_run_crc``, kept per thread and size (a few):
    every call writes the same places, so the rest stays zero (a new one per run costs more
    than its CRC)."""
    buffers = _SCRATCH.__dict__.setdefault("buffers", {})
    if size not in buffers:
        if len(buffers) >= 4:
            buffers.clear()
        buffers[size] = bytearray(size)
    return buffers[size]


@functools.lru_cache(maxsize=2 * RUN_CHUNKS)
def _run_residue(chunks: int, kind: int) -> int:
    """``_run_crc`` of ``chunks`` matching chunks (zeros and their CRCs)."""
    zeros = bytes(chunks * BYTES_PER_CRC)
    return _run_crc(zeros, _FUNCTIONS[kind](zeros[:BYTES_PER_CRC]).to_bytes(
        CRC_SIZE, "big") * chunks, kind)


def block_digest(crcs: bytes, kind: int = DEFAULT) -> tuple[int, bytes, int]:
    """(number of CRCs, MD5 of the CRC bytes, checksum type) of one block."""
    return len(crcs) // CRC_SIZE, hashlib.md5(crcs).digest(), kind


def file_checksum(digests: Iterable[tuple[int, bytes, int]]) -> bytes:
    """The recorded checksum of a file from its blocks' ``block_digest``s (the module
    docstring's layout: 28 bytes, then the type unless CRC32)."""
    digests = list(digests)
    if not digests:
        return HEADER.pack(0, 0) + hashlib.md5(bytes(EMPTY_BUFFER)).digest()
    md5s = b"".join(d[1] for d in digests)
    capacity = EMPTY_BUFFER
    while capacity < len(md5s):
        capacity *= 2
    crc_per_block = digests[0][0] if len(digests) > 1 else 0
    md5 = hashlib.md5(md5s + bytes(capacity - len(md5s))).digest()
    kinds = {d[2] for d in digests}
    kind = kinds.pop() if len(kinds) == 1 else MIXED
    value = HEADER.pack(BYTES_PER_CRC, crc_per_block) + md5
    return value if kind == CRC32 else value + bytes([kind])


def is_checksum(value) -> bool:
    return isinstance(value, bytes) and (
        len(value) == CHECKSUM_LENGTH or
        (len(value) == CHECKSUM_LENGTH + 1 and value[-1] in NAMES))


def algorithm(checksum: bytes) -> str:
    bytes_per_crc, crc_per_block = HEADER.unpack_from(checksum)
    kind = checksum[CHECKSUM_LENGTH] if len(checksum) > CHECKSUM_LENGTH else CRC32
    return f"MD5-of-{crc_per_block}MD5-of-{bytes_per_crc}{NAMES[kind]}"


def to_json(checksum: bytes) -> dict:
    """Hadoop's JsonUtil.toJsonMap(MD5MD5CRC32FileChecksum): the 28 serialised bytes."""
    return {"FileChecksum": {"algorithm": algorithm(checksum),
                             "bytes": checksum[:CHECKSUM_LENGTH].hex(),
                             "length": CHECKSUM_LENGTH}}


def composite_json(kind: int, crc: int) -> dict:
    """JsonUtil.toJsonMap(CompositeCrcFileChecksum): ``COMPOSITE-<type>``, the CRC as 4
    big-endian bytes (CrcUtil.intToBytes)."""
    return {"FileChecksum": {"algorithm": f"COMPOSITE-{NAMES[kind]}",
                             "bytes": crc.to_bytes(4, "big").hex(), "length": 4}}


def crc_update(kind: int, data, value: int) -> int:
    """Continue the CRC of ``kind`` over ``data``."""
    return _FUNCTIONS[kind](data, value)
