"""Build edits logs as bytes and damage them one way at a time (etcd's ``corruptFunc``).

A ``Log`` is the bytes of a valid log plus what it holds: its ``(txid, op)`` records and the
``(start, end)`` byte span of each. Every damaging function takes bytes and returns new bytes,
so a test reads as: build, damage one way, write, read back, check.
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from dataclasses import dataclass

import msgpack

from nnlite.formats.edits import (
    HEADER,
    LAYOUT_VERSION,
    MAGIC,
    RECORD_HEADER_SIZE,
    Op,
    encode_header,
    encode_record,
    frame,
    read_all,
)


@dataclass(frozen=True)
class Log:
    data: bytes
    first_txid: int
    records: list[tuple[int, Op]]
    spans: list[tuple[int, int]]

    def start(self, index: int) -> int:
        return self.spans[index][0]

    def field(self, index: int, name: str) -> range:
        """Byte offsets of one part of a record: ``length``, ``crc`` or ``payload``."""
        start, end = self.spans[index]
        return {"length": range(start, start + 4), "crc": range(start + 4, start + 8),
                "payload": range(start + RECORD_HEADER_SIZE, end)}[name]


def build(ops, first_txid: int = 1, txids=None) -> Log:
    """A log of ``ops`` with contiguous txids from ``first_txid`` (or exactly ``txids``)."""
    txids = list(txids) if txids is not None else range(first_txid, first_txid + len(ops))
    data, spans = bytearray(encode_header(first_txid)), []
    for txid, op in zip(txids, ops, strict=True):
        start = len(data)
        data += encode_record(txid, op)
        spans.append((start, len(data)))
    return Log(bytes(data), first_txid, list(zip(txids, ops, strict=True)), spans)


def raw_record(obj) -> bytes:
    """A correctly framed record whose payload is any msgpack-able object."""
    return frame(msgpack.packb(obj, use_bin_type=True))


def header(magic: bytes = MAGIC, version: int = LAYOUT_VERSION, first_txid: int = 1,
           crc: int | None = None) -> bytes:
    """A header with any field overridden; its CRC is correct unless ``crc`` is given."""
    head = HEADER.pack(magic, version, first_txid)
    return head + struct.pack("<I", zlib.crc32(head) if crc is None else crc)


# ------------------------------------------------------------------------ ways to damage a log

def truncate(data: bytes, length: int) -> bytes:
    return data[:length]


def flip_bit(data: bytes, offset: int, bit: int) -> bytes:
    return xor_byte(data, offset, 1 << bit)


def xor_byte(data: bytes, offset: int, mask: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= mask
    return bytes(out)


def put_u32(data: bytes, offset: int, value: int) -> bytes:
    """Overwrite a little-endian u32 (a record's length or CRC field)."""
    return data[:offset] + struct.pack("<I", value) + data[offset + 4:]


def append(data: bytes, extra: bytes) -> bytes:
    return data + extra


def zero_from(data: bytes, offset: int, pad: int = 0) -> bytes:
    """Zero everything from ``offset`` on, then add ``pad`` zero bytes: a torn write into a
    preallocated (zero-filled) file."""
    return data[:offset] + bytes(len(data) - offset + pad)


# ------------------------------------------------------------------------ files

def write(path, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def read_bytes(data: bytes, **kw):
    """Write ``data`` to a scratch file and read it: ``(records, reader)``. For hypothesis
    tests, which cannot use function-scoped fixtures such as ``tmp_path``."""
    with tempfile.TemporaryDirectory() as tmp:
        return read_all(write(os.path.join(tmp, "edits"), data), **kw)

