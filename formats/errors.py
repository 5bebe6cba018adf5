"""Typed errors of the byte formats.

Every error names the file and, where it applies, the byte offset and txid, so that a person
reading the message knows where to look. Readers turn every lower-level exception (msgpack,
pyarrow, struct) into one of these with ``raise ... from``.
"""

from __future__ import annotations


class FormatError(Exception):
    """Root of every error raised by ``formats``."""

    def __init__(self, message: str, *, path: str | None = None, offset: int | None = None,
                 txid: int | None = None):
        self.path = path
        self.offset = offset
        self.txid = txid
        where = []
        if path is not None:
            where.append(f"file {path}")
        if offset is not None:
            where.append(f"offset {offset}")
        if txid is not None:
            where.append(f"txid {txid}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class BadHeaderError(FormatError):
    """The file does not start with a valid header (wrong magic, version or header CRC)."""


class UnsupportedVersionError(BadHeaderError):
    """The layout version is newer or older than this code understands."""


class CorruptRecordError(FormatError):
    """A record fails its CRC or cannot be decoded, and more data follows it."""


class RecordTooLargeError(CorruptRecordError):
    """A record header claims more bytes than the configured maximum."""


class TxidGapError(FormatError):
    """Txids are not contiguous: a gap, a duplicate or a step backwards."""


class ImageCorruptError(FormatError):
    """An fsimage fails its digest or cannot be read as the documented Parquet schema."""


class FlinkMetadataError(FormatError):
    """A Flink ``_metadata`` file that cannot be read as the layout Flink writes."""
