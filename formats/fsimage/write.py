"""The fsimage writer: checks a namespace's columns against the layout and writes them to one
path as Parquet, hashing every byte on its way to disk.

Invariants it keeps: nothing reaches the file unless it has SCHEMA's types, no null in a
not-null field (nested ones included, which Parquet would write as zeros), only TYPE_DIRECTORY
and TYPE_FILE in ``type``, and footer metadata whose ``inode_count`` is the row count. Encoding
(see ``__init__.py``): zstd pages with page CRCs, row groups of ROW_GROUP_SIZE rows,
dictionaries on the repetitive string columns, statistics on ``id`` and ``parent_id`` only.
Temp names, fsync and rename are the caller's.
"""

from __future__ import annotations

import array
import base64
import os
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nnlite.formats.fsimage.layout import (
    ADDED,
    COLUMNS,
    EXTRA_PREFIX,
    FORMAT_KEY,
    FORMAT_VALUE,
    KEY_PREFIX,
    LAYOUT_VERSION,
    META_KEYS,
    ROW_GROUP_SIZE,
    SCHEMA,
    SECTION_PREFIX,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
)
from nnlite.formats.fsimage.md5 import new_md5

_EXTRA_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# array.array typecodes whose buffers are exactly the Arrow type: taken without a copy.
_TYPECODES = {pa.int64(): "q", pa.int16(): "h", pa.int8(): "b"}
_WRITE_OPTIONS = dict(
    compression="zstd",
    use_dictionary=["owner", "group", "client_name", "client_machine"],
    write_statistics=["id", "parent_id"],
    write_page_checksum=True,
)


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What the writer saw go to disk: the MD5 of every byte written and their number."""

    md5_hex: str
    size: int


def write_image(path, columns: dict[str, list] | pa.Table, meta: ImageMeta, *,
                row_group_size: int = ROW_GROUP_SIZE) -> ImageInfo:
    """Write an image to exactly ``path`` and return its digest and size.

    ``columns`` maps every name of COLUMNS (those in ADDED may be left out: all null) to a list, a
    pyarrow array or, for fixed-width integer columns, an ``array.array`` of the matching typecode
    (taken without a copy); or it is a ``pyarrow.Table`` with those columns. Bad input raises
    ValueError before or while writing; the partial file is then the caller's temp file to remove.
    """
    path = os.fspath(path)
    if row_group_size <= 0:
        raise ValueError(f"row_group_size must be positive, not {row_group_size}")
    table = _to_table(columns)
    _check_meta_for(meta, table)
    table = table.replace_schema_metadata(_encode_meta(meta))
    with open(path, "wb") as raw:
        sink = _HashingSink(raw)
        try:
            with pq.ParquetWriter(sink, table.schema, **_WRITE_OPTIONS) as writer:
                writer.write_table(table, row_group_size=row_group_size)
        except pa.ArrowInvalid as exc:  # e.g. a null inside a not-null nested field
            raise ValueError(f"cannot write fsimage {path}: {exc}") from exc
    return ImageInfo(sink.hexdigest(), sink.size)


def _to_table(columns: dict[str, list] | pa.Table) -> pa.Table:
    names = columns.column_names if isinstance(columns, pa.Table) else list(columns)
    _check_names(names, "image columns")
    if isinstance(columns, pa.Table):
        for name in ADDED:
            if name not in names:
                columns = columns.append_column(
                    SCHEMA.field(name), pa.nulls(columns.num_rows, SCHEMA.field(name).type))
        return _conform(columns.select(COLUMNS), "table")
    rows = len(next(iter(columns.values()))) if columns else 0
    arrays = [_to_array(columns[f.name], f) if f.name in columns
              else pa.nulls(rows, f.type) for f in SCHEMA]
    _check_lengths(arrays)
    return _conform(pa.Table.from_arrays(arrays, schema=SCHEMA), "columns")


def _check_names(names, what: str) -> None:
    missing = [n for n in COLUMNS if n not in names and n not in ADDED]
    unknown = [n for n in names if n not in COLUMNS]
    if missing or unknown:
        raise ValueError(f"{what}: missing {missing}, unknown {unknown}")


def _check_lengths(arrays: list) -> None:
    lengths = {f.name: len(a) for f, a in zip(SCHEMA, arrays, strict=True)}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns differ in length: {lengths}")


def _to_array(values, field_: pa.Field) -> pa.Array | pa.ChunkedArray:
    try:
        if isinstance(values, (pa.Array, pa.ChunkedArray)):
            return values if values.type == field_.type else values.cast(field_.type)
        if isinstance(values, array.array) and values.typecode == _TYPECODES.get(field_.type):
            return pa.Array.from_buffers(field_.type, len(values), [None, pa.py_buffer(values)])
        return pa.array(values, type=field_.type)
    except (pa.ArrowException, TypeError, OverflowError) as exc:
        raise ValueError(f"column {field_.name}: {exc}") from exc


def _conform(table: pa.Table, what: str) -> pa.Table:
    """Cast to SCHEMA, then check what pyarrow leaves unchecked: nested nulls, inode types."""
    try:
        if not table.schema.equals(SCHEMA):
            table = table.cast(SCHEMA)
    except (pa.ArrowException, ValueError) as exc:
        raise ValueError(f"{what} do not fit the fsimage schema: {exc}") from exc
    _check_nulls(table)
    _check_inode_types(table)
    return table


def _check_nulls(table: pa.Table) -> None:
    for f in SCHEMA:
        for chunk in table.column(f.name).chunks:
            where = _null_in_required(f, chunk, f.name)
            if where:
                raise ValueError(f"column {where} is not nullable but holds nulls")


def _check_inode_types(table: pa.Table) -> None:
    types = pa.array([TYPE_DIRECTORY, TYPE_FILE], pa.int8())
    if len(table) and not pc.all(pc.is_in(table.column("type"), value_set=types)).as_py():
        raise ValueError(f"column type holds values other than {TYPE_DIRECTORY} and {TYPE_FILE}")


def _null_in_required(field_: pa.Field, values: pa.Array, where: str) -> str | None:
    """Where a null sits in a not-null field, nested ones included.

    Parquet refuses top-level nulls in a required column but writes nested ones as zeros.
    """
    if not field_.nullable and values.null_count:
        return where
    if pa.types.is_list(field_.type):
        return _null_in_required(field_.type.value_field, values.flatten(), where + "[]")
    if pa.types.is_struct(field_.type):
        for i, child in enumerate(field_.type):
            found = _null_in_required(child, values.field(i), f"{where}.{child.name}")
            if found:
                return found
    return None


def _check_meta_for(meta: ImageMeta, table: pa.Table) -> None:
    if meta.layout_version != LAYOUT_VERSION:
        raise ValueError(f"this code writes layout version {LAYOUT_VERSION} only, "
                         f"not {meta.layout_version}")
    if meta.inode_count != table.num_rows:
        raise ValueError(f"inode_count {meta.inode_count} != {table.num_rows} rows")


def _encode_meta(meta: ImageMeta) -> dict[bytes, bytes]:
    pairs = {KEY_PREFIX + k: getattr(meta, k) for k in META_KEYS}
    for name, value in meta.extra.items():
        if not isinstance(name, str) or not _EXTRA_NAME.fullmatch(name):
            raise ValueError(f"extra metadata name {name!r} is not [A-Za-z0-9_.-]+")
        pairs[EXTRA_PREFIX + name] = value
    for key, value in pairs.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"metadata {key} must be an int, not {value!r}")
    encoded = {k.encode(): str(v).encode() for k, v in pairs.items()}
    for name, data in meta.sections.items():
        if not isinstance(name, str) or not _EXTRA_NAME.fullmatch(name):
            raise ValueError(f"section name {name!r} is not [A-Za-z0-9_.-]+")
        encoded[(SECTION_PREFIX + name).encode()] = base64.b64encode(data)
    return {FORMAT_KEY: FORMAT_VALUE, **encoded}


class _HashingSink:
    """A write-only file object that hashes every byte on its way to ``raw``: no second read."""

    closed = False

    def __init__(self, raw):
        self._raw = raw
        self._md5 = new_md5()
        self.size = 0

    def write(self, data) -> int:
        self._md5.update(data)
        written = self._raw.write(data)
        self.size += written
        return written

    def flush(self) -> None:
        self._raw.flush()

    def hexdigest(self) -> str:
        return self._md5.hexdigest()
