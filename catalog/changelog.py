"""The lineage a RocksDB changelog of checkpoint format version 2 records, read from its head,
and the whole changelog read as Spark's restore reads it.

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
and LZ4 output is never much shorter than its input. A snappy changelog's head decodes
chunk by chunk as well; a zstd one only as a whole frame. Pure functions (the codecs
snappy and zstd through pyarrow's).
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
    if head.startswith(LZ4_MAGIC):
        pieces = _frames(head, what)
    elif head.startswith((SNAPPY_MAGIC, ZSTD_MAGIC)):
        # snappy decodes chunk by chunk, so a head does; a zstd frame only whole (a cut
        # one decodes to nothing here), so a head short of its end is CutShort
        pieces = iter([decoded(head, what)[0]])
    else:
        raise UnknownCodec(f"{what} is not an lz4, snappy or zstd stream (another "
                           f"stateStore.compression.codec?): its lineage is not read")
    data = b""
    for frame in pieces:
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
    checksum differs: "Stream is corrupted"; no end mark: "Stream ended prematurely"); a
    snappy or zstd one decoded as far as it goes and its records read (``check_records``);
    UnknownCodec for another codec."""
    if not data.startswith(LZ4_MAGIC):
        plain, stopped = decoded(data, what)
        check_records(plain, what, stopped)
        return
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


# ----------------------------------------------------------- snappy and zstd, and the records
# Spark's other codecs carry no checksum of the data: a damaged stream either fails to decode
# or decodes to other bytes, and then the changelog reader meets what it cannot parse (or
# not, and the restore goes on with them, as Spark's does). So these are decoded as far as
# they go and their records read as StateStoreChangelogReaderV1-V4 read them.
SNAPPY_MAGIC = b"\x82SNAPPY\x00"       # snappy-java's SnappyCodec.MAGIC_HEADER
_SNAPPY_HEADER = len(SNAPPY_MAGIC) + 8  # then the version and the compatible version (int32)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"        # a zstd frame (little-endian 0xFD2FB528)
_ZSTD_READ = 1 << 16


def decoded(data: bytes, what: str) -> tuple[bytes, str]:
    """A snappy or zstd changelog decoded as far as Spark's read of it gets: ``(bytes,
    why it stopped early or "")``. Snappy is snappy-java's ``SnappyOutputStream`` (Spark's
    SnappyCompressionCodec): the 16-byte header, then chunks of a big-endian int32 length
    and one raw snappy block (``SnappyInputStream.hasNextChunk``: "failed to read chunk",
    "failed to uncompress the chunk"); zstd is zstd-jni's frames
    (``ZstdInputStreamNoFinalizer``, no checksum by default). UnknownCodec for another."""
    if data.startswith(SNAPPY_MAGIC):
        return _snappy(data)
    if data.startswith(ZSTD_MAGIC):
        return _zstd(data)
    raise UnknownCodec(f"{what} is neither an lz4, a snappy nor a zstd stream")


def _snappy(data: bytes) -> tuple[bytes, str]:
    import pyarrow as pa
    codec, at = pa.Codec("snappy"), _SNAPPY_HEADER
    out: list[bytes] = []
    while at + 4 <= len(data):
        if data.startswith(SNAPPY_MAGIC, at):             # a concatenated stream's header
            at += _SNAPPY_HEADER
            continue
        size = int.from_bytes(data[at:at + 4], "big", signed=True)
        chunk = data[at + 4:at + 4 + size] if size >= 0 else b""
        if size < 0 or len(chunk) < size:
            return b"".join(out), f"snappy chunk at byte {at} cut short (failed to read chunk)"
        try:
            length, _ = _varint(chunk)
            out.append(codec.decompress(chunk, decompressed_size=length).to_pybytes())
        except (ValueError, OSError, IndexError):
            return b"".join(out), f"the snappy chunk at byte {at} does not decode (failed " \
                                  f"to uncompress the chunk)"
        at += 4 + size
    if at != len(data):
        return b"".join(out), f"snappy chunk at byte {at} cut short (failed to read chunk)"
    return b"".join(out), ""


def _varint(chunk: bytes) -> tuple[int, int]:
    """A raw snappy block's preamble: its uncompressed length, a little-endian varint."""
    value = shift = i = 0
    while True:
        byte = chunk[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 28:
            raise ValueError("snappy length too long")


def _zstd(data: bytes) -> tuple[bytes, str]:
    import pyarrow as pa
    out = []
    stream = pa.CompressedInputStream(pa.BufferReader(data), "zstd")
    try:
        while piece := stream.read(_ZSTD_READ):
            out.append(piece)
    except OSError as exc:
        return b"".join(out), f"the zstd stream does not decode ({exc})"
    return b"".join(out), ""


def check_records(plain: bytes, what: str, stopped: str = "") -> int:
    """Read a decoded changelog as Spark's ``StateStoreChangelogReaderFactory`` and its
    readers do: the version (``readUTF``: "v2"-"v4"; anything else is version 1), the
    lineage of v3 and v4, then records up to the end record (V1/V3: ``keySize`` -1; V2/V4:
    record type 0); bytes after it are never read. The number of records, or
    ChangelogError naming where the read fails (``stopped``: why the decoded bytes end,
    when they end early)."""
    def fail(at: int, why: str) -> ChangelogError:
        end = f" ({stopped})" if stopped and at >= len(plain) - 4 else ""
        return ChangelogError(f"{what}: at byte {at} of its decoded records {why}{end}: "
                              f"Spark cannot read it (CANNOT_LOAD_STATE_STORE)")

    def read_int(at: int) -> tuple[int, int]:
        if at + 4 > len(plain):
            raise fail(at, "the stream ends")
        return int.from_bytes(plain[at:at + 4], "big", signed=True), at + 4

    def read_buffer(at: int) -> int:
        size, at = read_int(at)
        if size < 0 or at + size > len(plain):
            raise fail(at, f"a buffer of {size} bytes does not fit")
        return at + size

    version, at = 1, 0
    try:
        text, after = _utf(plain, 0)
        if text in ("v2", "v3", "v4"):
            version, at = int(text[1]), after
    except IndexError:
        pass
    if version >= 3:
        try:
            text, at = _utf(plain, at)
        except IndexError:
            raise fail(at, "the lineage is cut short") from None
        _items(text, what)
    count = 0
    while True:
        if version in (1, 3):
            size, at = read_int(at)
            if size == -1:
                return count
            if size < 0:
                raise fail(at - 4, f"a key size of {size}")
            at += size
            if at > len(plain):
                raise fail(at, "the stream ends inside a key")
            value, at = read_int(at)
            if value >= 0:
                at += value
                if at > len(plain):
                    raise fail(at, "the stream ends inside a value")
        else:
            if at >= len(plain):
                raise fail(at, "the stream ends")
            kind = plain[at]
            at += 1
            if kind == 0x00:
                return count
            if kind in (0x01, 0x11):                        # put, merge
                at = read_buffer(read_buffer(at))
            elif kind == 0x10:                              # delete: the key, then -1
                at = read_buffer(at)
                value, at = read_int(at)
                if value != -1:
                    raise fail(at - 4, f"a delete record with value size {value}")
            else:
                raise fail(at - 1, f"record type {kind:#x} (Found invalid record type)")
        count += 1


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
