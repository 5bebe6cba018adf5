"""The fsimage layout as code: the constants, the Arrow SCHEMA and the footer record that the
spec in ``formats/fsimage/__init__.py`` names.

Both halves of the format build on this module alone: ``write.py`` encodes exactly these
columns and keys, ``read.py`` refuses anything else. Invariants: SCHEMA lists the spec's
columns in the spec's order with the spec's nullability; META_KEYS are the required integer keys
of the footer, each stored as ``KEY_PREFIX + name``; changing any of it takes a new
LAYOUT_VERSION.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

LAYOUT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
IMAGE_NAME = "fsimage"
MD5_SUFFIX = ".md5"
FORMAT_KEY = b"nnlite.format"
FORMAT_VALUE = b"fsimage"
KEY_PREFIX = "nnlite."
EXTRA_PREFIX = "nnlite.extra."
SECTION_PREFIX = "nnlite.section."
TYPE_DIRECTORY = 1
TYPE_FILE = 2
NO_QUOTA = -1
ROW_GROUP_SIZE = 131072
PARQUET_MAGIC = b"PAR1"

BLOCK_TYPE = pa.struct([pa.field("block_id", pa.int64(), nullable=False),
                        pa.field("num_bytes", pa.int64(), nullable=False),
                        pa.field("genstamp", pa.int64(), nullable=False)])
XATTRS_TYPE = pa.map_(pa.string(), pa.binary())
ACL_TYPE = pa.list_(pa.field("item", pa.string(), nullable=False))


def _required(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


SCHEMA = pa.schema([
    _required("id", pa.int64()),
    _required("parent_id", pa.int64()),
    _required("name", pa.string()),
    _required("type", pa.int8()),
    _required("permission", pa.int16()),
    _required("owner", pa.string()),
    _required("group", pa.string()),
    _required("mtime", pa.int64()),
    _required("atime", pa.int64()),
    _required("replication", pa.int16()),
    _required("block_size", pa.int64()),
    _required("length", pa.int64()),
    _required("blocks", pa.list_(pa.field("item", BLOCK_TYPE, nullable=False))),
    pa.field("checksum", pa.binary()),
    pa.field("xattrs", XATTRS_TYPE),
    _required("ns_quota", pa.int64()),
    _required("ss_quota", pa.int64()),
    pa.field("client_name", pa.string()),
    pa.field("client_machine", pa.string()),
    pa.field("acl", ACL_TYPE),
    pa.field("snapshot", pa.string()),
])
COLUMNS = tuple(SCHEMA.names)
# Columns a later version added (name -> that version). Each is nullable: a writer may leave
# it out (all null) and a reader gives it as null when the file is older.
ADDED = {"acl": 2, "snapshot": 2}


def schema_for(version: int) -> pa.Schema:
    """The columns an image of ``version`` holds."""
    return pa.schema([f for f in SCHEMA if ADDED.get(f.name, 1) <= version])

META_KEYS = ("layout_version", "namespace_id", "last_txid", "inode_count", "creation_time")


@dataclass(frozen=True, slots=True)
class ImageMeta:
    """The footer metadata of an image; ``extra`` holds the ``nnlite.extra.*`` integers,
    ``sections`` the ``nnlite.section.*`` byte strings (version 3)."""

    layout_version: int
    namespace_id: int
    last_txid: int
    inode_count: int
    creation_time: int
    extra: dict[str, int] = field(default_factory=dict)
    sections: dict[str, bytes] = field(default_factory=dict)
