"""The lineage a RocksDB changelog of checkpoint format version 2 records, read from its head.

A changelog (``<version>_<uniqueId>.changelog``) is one compressed stream
(``spark.sql.streaming.stateStore.compression.codec``, ``lz4`` by default: lz4-java's
``LZ4BlockOutputStream``) of a ``DataOutputStream``: ``writeUTF("v3")`` or ``"v4"``, then
``writeUTF`` of the lineage as JSON, ``[{"version": v, "checkpointUniqueId": id}, ...]``
(``StateStoreChangelogWriterV3/V4.writeLineage``), then the records. A restore of that
version without its own snapshot replays it onto the newest snapshot of that lineage, or
onto the empty store when the lineage starts at version 1, and fails otherwise
(``RocksDB.loadWithCheckpointId``, ``cannotFindBaseSnapshotCheckpoint``).

``LZ4BlockOutputStream``'s frames: ``LZ4Block`` (8 bytes), a token (method: 0x10 raw,
0x20 LZ4; level in the low bits), the compressed and the original length (little-endian
int32), a checksum (int32, not checked here), then the block. Only the frames the head
needs are decoded, the last of them as far as the bytes read go (an LZ4 block decodes from
its start), so ``HEAD`` bytes always hold the lineage: ``writeUTF`` caps it at 65535 bytes,
and LZ4 output is never much shorter than its input. Pure functions.
"""

from __future__ import annotations

import json
import struct

LZ4_MAGIC = b"LZ4Block"
_HEADER = struct.Struct("<Bii4x")           # token, compressed, original, (checksum)
_RAW, _LZ4 = 0x10, 0x20
LINEAGE_VERSIONS = ("v3", "v4")             # the changelog versions that carry one
HEAD = 80 << 10                             # bytes of a changelog that hold its lineage


class ChangelogError(ValueError):
    pass


class UnknownCodec(ChangelogError):
    """Not an lz4 stream: another codec, whose lineage this module does not read."""


class CutShort(ChangelogError):
    """The bytes given end before the lineage does (a longer head holds it, or the file is
    truncated)."""


def lineage(head: bytes, what: str) -> list[tuple[int, str]]:
    """``(version, unique id)`` of each lineage item of the changelog whose first bytes are
    ``head`` (enough of them for its first frames). ChangelogError, naming ``what``, when
    it is not an lz4 stream, not version 3 or 4, or cut short."""
    if not head.startswith(LZ4_MAGIC):
        raise UnknownCodec(f"{what} is not an lz4 stream (another stateStore.compression."
                             f"codec?): its lineage is not read")
    data = b""
    for frame in _frames(head, what):
        data += frame
        try:
            version, rest = _utf(data, 0)
            if version not in LINEAGE_VERSIONS:
                raise ChangelogError(f"{what} is changelog version {version!r}, which "
                                     f"records no lineage")
            text, _ = _utf(data, rest)
        except IndexError:
            continue                        # the head spans the next frame
        return _items(text, what)
    raise CutShort(f"{what}: the lineage is cut short")


def _items(text: str, what: str) -> list[tuple[int, str]]:
    try:
        items = json.loads(text)
        return [(int(i["version"]), str(i["checkpointUniqueId"])) for i in items]
    except (ValueError, TypeError, KeyError) as exc:
        raise ChangelogError(f"{what}: the lineage is not [{{version, "
                             f"checkpointUniqueId}}, ...]") from exc


def _utf(data: bytes, at: int) -> tuple[str, int]:
    """``DataInputStream.readUTF`` (the lineage is ASCII JSON): IndexError when short."""
    if at + 2 > len(data):
        raise IndexError(at)
    size = int.from_bytes(data[at:at + 2], "big")
    if at + 2 + size > len(data):
        raise IndexError(at)
    return data[at + 2:at + 2 + size].decode("utf-8", "replace"), at + 2 + size


def _frames(head: bytes, what: str):
    at = 0
    while head.startswith(LZ4_MAGIC, at) and at + len(LZ4_MAGIC) + _HEADER.size <= len(head):
        token, compressed, original = _HEADER.unpack_from(head, at + len(LZ4_MAGIC))
        start = at + len(LZ4_MAGIC) + _HEADER.size
        block = head[start:start + compressed]
        whole = len(block) == compressed    # else the frame goes past the bytes read
        method = token & 0xF0
        if method == _RAW:
            yield block
        elif method == _LZ4:
            yield decompress(block, original, what, prefix=not whole)
        else:
            raise ChangelogError(f"{what}: an lz4 frame of unknown method {method:#x}")
        if not whole:
            return
        at = start + compressed


def decompress(block: bytes, size: int, what: str = "block", prefix: bool = False) -> bytes:
    """One raw LZ4 block (the LZ4 block format: sequences of literals and back-references)
    into its ``size`` bytes; with ``prefix``, ``block`` is the start of one and what it
    decodes to is returned (a sequence is decoded as the bytes come)."""
    out = bytearray()
    i = 0
    try:
        while i < len(block):
            token = block[i]
            i += 1
            literals, i = _length(block, i, token >> 4)
            out += block[i:i + literals]
            i += literals
            if i >= len(block):
                break                       # the last sequence has literals only
            offset = block[i] | block[i + 1] << 8
            i += 2
            match, i = _length(block, i, token & 0x0F)
            match += 4
            if not 0 < offset <= len(out):
                raise ChangelogError(f"{what}: an lz4 back-reference past its start")
            for _ in range(match):
                out.append(out[-offset])
    except IndexError as exc:
        if prefix:
            return bytes(out)
        raise ChangelogError(f"{what}: an lz4 block cut short") from exc
    if prefix:
        return bytes(out)
    if len(out) != size:
        raise ChangelogError(f"{what}: an lz4 block of {len(out)} bytes, not {size}")
    return bytes(out)


def _length(block: bytes, i: int, nibble: int) -> tuple[int, int]:
    length = nibble
    if nibble == 15:
        while True:
            extra = block[i]
            i += 1
            length += extra
            if extra != 255:
                break
    return length, i


# lz4-java's LZ4BlockOutputStream as Spark's LZ4CompressionCodec builds it: each frame's
# checksum is XXHash32 (seed 0x9747b28c) of the frame's decompressed bytes, masked to 28 bits
# (StreamingXXHash32.asChecksum), and close() writes an empty raw frame as the end mark.
XXHASH_SEED = 0x9747B28C
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M = 0xFFFFFFFF


def verify(data: bytes, what: str) -> None:
    """Read a whole lz4 changelog as ``LZ4BlockInputStream`` does: ChangelogError, naming
    ``what``, where Spark's read fails (a frame that does not decode to its length or whose
    checksum differs: "Stream is corrupted"; no end mark: "Stream ended prematurely");
    UnknownCodec for another codec."""
    if not data.startswith(LZ4_MAGIC):
        raise UnknownCodec(f"{what} is not an lz4 stream: it is not decoded")
    at, header = 0, len(LZ4_MAGIC) + _HEADER.size
    while at + header <= len(data) and data.startswith(LZ4_MAGIC, at):
        token, compressed, original = _HEADER.unpack_from(data, at + len(LZ4_MAGIC))
        check = int.from_bytes(data[at + header - 4:at + header], "little")
        block = data[at + header:at + header + compressed]
        if original == 0 and token & 0xF0 == _RAW:
            return                                      # the end mark
        if len(block) < compressed:
            break
        try:
            frame = block if token & 0xF0 == _RAW else decompress(block, original, what)
        except (ChangelogError, IndexError, ValueError):
            frame = b""
        if len(frame) != original or xxhash32(frame, XXHASH_SEED) & 0xFFFFFFF != check:
            raise ChangelogError(f"{what}: the lz4 frame at byte {at} is corrupted "
                                 f"(LZ4BlockInputStream: Stream is corrupted)")
        at += header + compressed
    raise ChangelogError(f"{what} ends at byte {len(data)} without lz4's end mark "
                         f"(LZ4BlockInputStream: Stream ended prematurely)")


def xxhash32(data: bytes, seed: int = 0) -> int:
    """XXH32 of ``data``."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        stripes = n - n % 16
        for lanes in struct.iter_unpack("<4I", data[:stripes]):
            v = [_rotl((x + lane * _P2) & _M, 13) * _P1 & _M
                 for x, lane in zip(v, lanes, strict=True)]
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        i = stripes
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 4 <= n:
        h = _rotl((h + int.from_bytes(data[i:i + 4], "little") * _P3) & _M, 17) * _P4 & _M
        i += 4
    while i < n:
        h = _rotl((h + data[i] * _P5) & _M, 11) * _P1 & _M
        i += 1
    h ^= h >> 15
    h = h * _P2 & _M
    h ^= h >> 13
    h = h * _P3 & _M
    return h ^ (h >> 16)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M
