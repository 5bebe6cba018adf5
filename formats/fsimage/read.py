"""The fsimage reader: opens one path, checks its footer against the layout and reads or streams
its rows.

Before a row is returned the file has passed, in this order: the digest (when the caller gives one),
the leading and trailing Parquet magic, the ``nnlite.format`` key, a layout version in
READABLE_VERSIONS (anything else is UnsupportedVersionError), every META_KEYS integer, exactly the
schema of its version (``schema_for``), and a row count equal to ``inode_count``. Rows come out in
the current SCHEMA whatever the version: a column the file's version predates is null. Page CRCs are
checked as pages are decoded. Whatever pyarrow raises on damaged bytes becomes ImageCorruptError
with the path; a missing or unreadable file keeps its OSError.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.parquet as pq

from nnlite.formats.errors import ImageCorruptError, UnsupportedVersionError
from nnlite.formats.fsimage.layout import (
    COLUMNS,
    EXTRA_PREFIX,
    FORMAT_KEY,
    FORMAT_VALUE,
    KEY_PREFIX,
    META_KEYS,
    PARQUET_MAGIC,
    READABLE_VERSIONS,
    SCHEMA,
    SECTION_PREFIX,
    ImageMeta,
    schema_for,
)
from nnlite.formats.fsimage.md5 import verify_md5


def read_meta(path) -> ImageMeta:
    """The image's metadata from the Parquet footer alone, after checking schema and row count."""
    parquet, meta = _open(os.fspath(path))
    parquet.close()
    return meta


def read_image(path, *, expected_md5: str | None,
               columns=None) -> tuple[pa.Table, ImageMeta]:
    """Read a whole image (or some of its columns) into a table without schema metadata.

    With ``expected_md5`` the file's digest is checked before any byte is parsed.
    """
    path = os.fspath(path)
    if expected_md5 is not None:
        verify_md5(path, expected_md5)
    selected = _select(columns)
    parquet, meta = _open(path)
    present, absent = _split(selected, meta.layout_version)
    with parquet, _reading(path, "cannot decode fsimage"):
        table = parquet.read(columns=present, use_threads=True)
    if absent:
        names = selected or list(COLUMNS)
        table = pa.Table.from_arrays(
            [table.column(n) if n not in absent
             else pa.nulls(table.num_rows, SCHEMA.field(n).type) for n in names],
            schema=pa.schema([SCHEMA.field(n) for n in names]))
    return table.replace_schema_metadata(None), meta


def iter_batches(path, *, batch_size: int = 65536, columns=None,
                 expected_md5: str | None = None) -> Iterator[pa.RecordBatch]:
    """Stream an image as record batches, holding about one row group in memory.

    The footer is checked (and the digest, if given) when this is called, not at the first batch.
    """
    path = os.fspath(path)
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, not {batch_size}")
    if expected_md5 is not None:
        verify_md5(path, expected_md5)
    selected = _select(columns)
    parquet, meta = _open(path)
    return _batches(parquet, path, batch_size, selected, meta.layout_version)


def _batches(parquet: pq.ParquetFile, path: str, batch_size: int, selected,
             version: int) -> Iterator[pa.RecordBatch]:
    present, absent = _split(selected, version)
    names = selected or list(COLUMNS)
    with parquet, _reading(path, "cannot decode fsimage"):
        for batch in parquet.iter_batches(batch_size=batch_size, columns=present,
                                          use_threads=True):
            if absent:
                columns = {n: batch.column(i) for i, n in enumerate(batch.schema.names)}
                batch = pa.RecordBatch.from_arrays(
                    [columns.get(n) if n in columns
                     else pa.nulls(batch.num_rows, SCHEMA.field(n).type) for n in names],
                    schema=pa.schema([SCHEMA.field(n) for n in names]))
            yield batch


def _split(selected, version: int) -> tuple[list[str] | None, list[str]]:
    """The selected columns the file holds (None: all it has) and those its version
    predates, which the reader supplies as nulls."""
    names = selected or list(COLUMNS)
    held = set(schema_for(version).names)
    absent = [n for n in names if n not in held]
    if not absent:
        return selected, []
    return [n for n in names if n in held], absent


def _select(columns) -> list[str] | None:
    if columns is None:
        return None
    selected = list(columns)
    unknown = [c for c in selected if c not in COLUMNS]
    if unknown:
        raise ValueError(f"unknown fsimage columns {unknown}")
    return selected


def _open(path: str) -> tuple[pq.ParquetFile, ImageMeta]:
    """Open the file and check its footer: format key, version, keys, schema, row count."""
    _check_leading_magic(path)
    with _reading(path, "not a readable Parquet file"):
        parquet = pq.ParquetFile(path, page_checksum_verification=True,
                                  pre_buffer=False)  # else buffered reads grow with the image
    try:
        with _reading(path, "unreadable Parquet footer"):
            footer, schema = parquet.metadata, parquet.schema_arrow
        meta = _decode_meta(footer.metadata or {}, path)
        _check_schema(schema, path, meta.layout_version)
        if footer.num_rows != meta.inode_count:
            raise ImageCorruptError(f"{footer.num_rows} rows but inode_count {meta.inode_count}",
                                    path=path)
    except BaseException:
        parquet.close()
        raise
    return parquet, meta


def _check_leading_magic(path: str) -> None:
    # pyarrow reads only the trailing magic; a damaged leading one would otherwise go unnoticed.
    with open(path, "rb") as f:
        head = f.read(len(PARQUET_MAGIC))
    if head != PARQUET_MAGIC:
        raise ImageCorruptError(f"not a readable Parquet file: starts with {head!r}", path=path)


@contextmanager
def _reading(path: str, what: str):
    """Turn what pyarrow raises on damaged bytes into ImageCorruptError; a missing file stays."""
    try:
        yield
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ImageCorruptError(f"{what}: {exc}", path=path) from exc


def _decode_meta(pairs: dict[bytes, bytes], path: str) -> ImageMeta:
    if pairs.get(FORMAT_KEY) != FORMAT_VALUE:
        raise ImageCorruptError(f"not an nnlite fsimage: {FORMAT_KEY.decode()} is "
                                f"{pairs.get(FORMAT_KEY)!r}", path=path)
    version = _int_value(pairs, KEY_PREFIX + "layout_version", path)
    if version not in READABLE_VERSIONS:
        raise UnsupportedVersionError(
            f"fsimage layout version {version}; this code reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}", path=path)
    values = {k: _int_value(pairs, KEY_PREFIX + k, path) for k in META_KEYS}
    prefix = EXTRA_PREFIX.encode()
    extra = {_text(k[len(prefix):], path): _int_value(pairs, _text(k, path), path)
             for k in pairs if k.startswith(prefix)}
    sections = {_text(k[len(SECTION_PREFIX):], path): _section(pairs[k], k, path)
                for k in pairs if k.startswith(SECTION_PREFIX.encode())}
    return ImageMeta(**values, extra=extra, sections=sections)


def _section(raw: bytes, key: bytes, path: str) -> bytes:
    try:
        return base64.b64decode(raw, validate=True)
    except ValueError as exc:
        raise ImageCorruptError(f"metadata {key[:40]!r} is not base64", path=path) from exc


def _int_value(pairs: dict[bytes, bytes], key: str, path: str) -> int:
    raw = pairs.get(key.encode())
    if raw is None:
        raise ImageCorruptError(f"metadata key {key} missing", path=path)
    if not re.fullmatch(rb"-?[0-9]+", raw):
        raise ImageCorruptError(f"metadata {key} is not an integer: {raw[:40]!r}", path=path)
    return int(raw)


def _text(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImageCorruptError(f"metadata key {raw[:40]!r} is not UTF-8", path=path) from exc


def _check_schema(schema: pa.Schema, path: str, version: int) -> None:
    expected = schema_for(version)
    if schema.names != expected.names:
        raise ImageCorruptError(f"columns {schema.names}, expected {expected.names}", path=path)
    for got, want in zip(schema, expected, strict=True):
        if not got.equals(want):
            raise ImageCorruptError(f"column {want.name} is {got}, expected {want}", path=path)
