"""A RocksDB state store's snapshot (``<version>[_<uniqueId>].zip``) read as Spark's restore
reads it, for a zip that has no ``.crc`` sidecar to check (file checksums off, or the sidecar
lost: Spark only warns).

Spark unzips a snapshot with ``java.util.zip.ZipInputStream`` (``Utils.unzipFilesFromFile``,
called by ``RocksDBFileManager.loadCheckpointFromDfs``): it walks the local file headers from
the start and never reads the central directory. Per entry (APPNOTE 4.3.7, little-endian):
``PK\\x03\\x04``, version (2), flags (2), method (2), time and date (4), CRC-32 (4),
compressed and uncompressed size (4 each), name and extra lengths (2 each), the name, the
extra field, the data; with flag bit 3 (``ZipOutputStream`` writes every DEFLATED entry so)
the CRC and sizes follow the data in a descriptor, its ``PK\\x07\\x08`` signature optional.
``ZipInputStream`` inflates an entry to its end and refuses a CRC or size that differs
("invalid entry CRC", "invalid entry size", "invalid entry compressed size"); at a header
that is not a local one its list of entries ends. A healthy snapshot's list ends at the
central directory (``PK\\x01\\x02``, or the end record ``PK\\x05\\x06`` of an empty zip); a
list that ends anywhere else has lost the entries after that point, so the files RocksDB
opens are not all there.
"""

from __future__ import annotations

import struct
import zlib

LOCAL = b"PK\x03\x04"
DESCRIPTOR = b"PK\x07\x08"
ENDS = (b"PK\x01\x02", b"PK\x05\x06")       # the central directory, or an empty zip's end
_LOCAL = struct.Struct("<4sHHHI3I2H")        # signature ... name and extra lengths
STORED, DEFLATED = 0, 8


class SnapshotZipError(ValueError):
    """The zip fails Spark's unzip: why, naming the file and the byte."""


def verify(data: bytes, what: str) -> list[str]:
    """The names of the entries Spark's unzip of ``data`` extracts, in order;
    SnapshotZipError where its read fails or its entries end before the central
    directory."""
    names, at, view = [], 0, memoryview(data)     # each entry inflated without a copy
    while data.startswith(LOCAL, at):
        if at + _LOCAL.size > len(data):
            raise SnapshotZipError(f"{what}: a local header at byte {at} is cut short")
        (_, _, flags, method, _, crc, csize, size, name_len,
         extra_len) = _LOCAL.unpack_from(data, at)
        start = at + _LOCAL.size + name_len + extra_len
        name = data[at + _LOCAL.size:at + _LOCAL.size + name_len].decode("utf-8", "replace")
        if method == DEFLATED:
            inflater = zlib.decompressobj(-15)
            try:
                plain = inflater.decompress(view[start:])
            except zlib.error as exc:
                raise SnapshotZipError(f"{what}: entry {name} at byte {at} does not inflate "
                                       f"({exc})") from None
            if not inflater.eof:
                raise SnapshotZipError(f"{what}: entry {name} at byte {at} ends before its "
                                       f"deflate stream (Unexpected end of ZLIB input stream)")
            end = len(data) - len(inflater.unused_data)
        elif method == STORED:
            if flags & 8:
                raise SnapshotZipError(f"{what}: entry {name} at byte {at} is STORED with a "
                                       f"data descriptor (only DEFLATED entries can have EXT "
                                       f"descriptor)")
            end = start + csize
            plain = data[start:end]
            if end > len(data):
                raise SnapshotZipError(f"{what}: entry {name} at byte {at} is cut short")
        else:
            raise SnapshotZipError(f"{what}: entry {name} at byte {at} has compression "
                                   f"method {method} (invalid compression method)")
        compressed, next_at = end - start, end
        if flags & 8:                        # ZipInputStream.readEnd: the data descriptor
            at_descriptor = end + (4 if data.startswith(DESCRIPTOR, end) else 0)
            if at_descriptor + 12 > len(data):
                raise SnapshotZipError(f"{what}: entry {name}'s data descriptor is cut short")
            crc, csize, size = struct.unpack_from("<3I", data, at_descriptor)
            next_at = at_descriptor + 12
        if size != len(plain):
            raise SnapshotZipError(f"{what}: entry {name} is {len(plain)} bytes, not {size} "
                                   f"(invalid entry size)")
        if method == DEFLATED and csize != compressed:
            raise SnapshotZipError(f"{what}: entry {name} has {compressed} compressed bytes, "
                                   f"not {csize} (invalid entry compressed size)")
        if zlib.crc32(plain) != crc:
            raise SnapshotZipError(f"{what}: entry {name} fails its CRC-32 (invalid entry "
                                   f"CRC)")
        names.append(name)
        at = next_at
    if not data.startswith(ENDS, at):
        raise SnapshotZipError(f"{what}: its entries end at byte {at}, before the central "
                               f"directory: the files after it are not extracted")
    return names
