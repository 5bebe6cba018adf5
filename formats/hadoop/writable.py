"""Hadoop's ``Writable`` primitives, as bytes: what a token's identifier, a token and a
delegation key are written with (``org.apache.hadoop.io.WritableUtils``, ``Text``).

Grammar::

    vlong   := b                        -- one byte, when -112 <= value <= 127
             | n b[k]                   -- n = -112 - k (value >= 0) or -120 - k (value < 0),
                                           k in 1..8 big-endian bytes of the value (of its
                                           one's complement when negative)
    vint    := vlong                    -- in range of a Java int
    text    := vint(len) utf8[len]      -- Text.write
    bytes   := vint(len) byte[len]      -- a token's identifier and password (Token.write)

A truncated or out-of-range field is a ``WritableError`` naming the offset where it starts.
"""

from __future__ import annotations

from nnlite.formats.errors import FormatError

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


class WritableError(FormatError):
    """Bytes that are not the Writable they should be (truncated, out of range, bad UTF-8)."""


def vlong(value: int) -> bytes:
    """``WritableUtils.writeVLong``."""
    if not LONG_MIN <= value <= LONG_MAX:
        raise WritableError(f"{value} does not fit a Java long")
    if -112 <= value <= 127:
        return (value & 0xFF).to_bytes(1, "big")
    head = -112
    if value < 0:
        value = ~value
        head = -120
    size = (value.bit_length() + 7) // 8
    return ((head - size) & 0xFF).to_bytes(1, "big") + value.to_bytes(size, "big")


def vint(value: int) -> bytes:
    """``WritableUtils.writeVInt``: a vlong in range of a Java int."""
    if not INT_MIN <= value <= INT_MAX:
        raise WritableError(f"{value} does not fit a Java int")
    return vlong(value)


def text(value: str) -> bytes:
    """``Text.write``: the UTF-8 length as a vint, then the bytes."""
    raw = value.encode("utf-8")
    return vint(len(raw)) + raw


def blob(value: bytes) -> bytes:
    """A vint length and the bytes (a token's identifier and password)."""
    return vint(len(value)) + value


class Reader:
    """Reads Writable fields off ``data`` from ``offset`` on."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes, offset: int = 0):
        self.data = data
        self.offset = offset

    def byte(self) -> int:
        """One signed byte (``DataInput.readByte``)."""
        return int.from_bytes(self._take(1), "big", signed=True)

    def vlong(self) -> int:
        start = self.offset
        first = self.byte()
        if first >= -112:
            return first
        negative = first < -120
        size = (-120 - first) if negative else (-112 - first)
        value = int.from_bytes(self._take(size), "big")
        if value > LONG_MAX:
            raise WritableError("vlong out of range", offset=start)
        return ~value if negative else value

    def vint(self) -> int:
        start = self.offset
        value = self.vlong()
        if not INT_MIN <= value <= INT_MAX:
            raise WritableError(f"vint {value} out of range", offset=start)
        return value

    def text(self) -> str:
        start = self.offset
        raw = self.blob()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WritableError("Text is not UTF-8", offset=start) from error

    def blob(self) -> bytes:
        start = self.offset
        size = self.vint()
        if size < 0:
            raise WritableError(f"negative length {size}", offset=start)
        return self._take(size)

    def at_end(self) -> bool:
        return self.offset >= len(self.data)

    def _take(self, size: int) -> bytes:
        end = self.offset + size
        if end > len(self.data):
            raise WritableError(f"{size} bytes needed, {len(self.data) - self.offset} left",
                                offset=self.offset)
        chunk = bytes(self.data[self.offset:end])
        self.offset = end
        return chunk
