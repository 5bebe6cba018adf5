"""Synthetic fsimages built column by column (no namespace), fast enough for 1,000,000 inodes.

The tree: a root, then ``dirs - 1`` directories in a 8-ary tree (each directory's parent comes
before it), then ``inodes - dirs`` files spread evenly over the directories, grouped by parent
as the namenode writes them. ``Synthetic`` keeps what a test needs to predict the output.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import pyarrow as pa

from nnlite.formats.fsimage.layout import (
    BLOCK_TYPE,
    COLUMNS,
    LAYOUT_VERSION,
    MD5_SUFFIX,
    NO_QUOTA,
    ROW_GROUP_SIZE,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
)
from nnlite.formats.fsimage.md5 import md5_sidecar_text
from nnlite.formats.fsimage.write import write_image

ROOT_ID = 16385
TS = 1_700_000_000_000
BLOCK_SIZE = 128 << 20
FANOUT = 8


@dataclass(frozen=True)
class Synthetic:
    path: str
    dirs: int
    files: int
    lengths: list[int]          # of the files, in row order
    meta: ImageMeta


def dir_parent(k: int) -> int:
    """Row index of the parent of directory row ``k >= 1``."""
    return (k - 1) // FANOUT


def file_length(j: int) -> int:
    """A deterministic spread of sizes: empty, small, around block multiples, a few huge."""
    if j % 97 == 0:
        return 0
    if j % 1009 == 0:
        return (200 << 30) + j           # above the default 128 GiB maximum
    return (j * 2654435761) % (300 << 20)


def build(path, inodes: int, dirs: int | None = None, *, last_txid: int = 42,
          row_group_size: int = ROW_GROUP_SIZE) -> Synthetic:
    dirs = dirs or max(2, inodes // 50)
    files = inodes - dirs
    ids = array("q", range(ROOT_ID, ROOT_ID + inodes))
    parents = array("q", [0]) + array("q", (ROOT_ID + dir_parent(k) for k in range(1, dirs)))
    per_dir = -(-files // dirs) if files else 1
    parents += array("q", (ROOT_ID + j // per_dir for j in range(files)))
    lengths = [file_length(j) for j in range(files)]
    columns = {
        "id": ids, "parent_id": parents,
        "name": [""] + [f"d{k}" for k in range(1, dirs)] + [f"part-{j:06d}" for j in range(files)],
        "type": array("b", [TYPE_DIRECTORY]) * dirs + array("b", [TYPE_FILE]) * files,
        "permission": array("h", [0o755]) * dirs + array("h", [0o644]) * files,
        "owner": ["spark"] * inodes, "group": ["supergroup"] * inodes,
        "mtime": array("q", (TS + 1000 * i for i in range(inodes))),
        "atime": array("q", [0]) * dirs + array("q", (TS + 7 * j for j in range(files))),
        "replication": array("h", [0]) * dirs + array("h", [3]) * files,
        "block_size": array("q", [0]) * dirs + array("q", [BLOCK_SIZE]) * files,
        "length": array("q", [0]) * dirs + array("q", lengths),
        "blocks": _blocks(dirs, lengths, ROOT_ID + inodes),
        "checksum": [None] * inodes, "xattrs": [None] * inodes,
        "ns_quota": array("q", [NO_QUOTA]) * inodes,
        "ss_quota": array("q", [NO_QUOTA]) * inodes,
        "client_name": [None] * inodes, "client_machine": [None] * inodes,
    }
    meta = ImageMeta(LAYOUT_VERSION, 123456789, last_txid, inodes, TS,
                       {"last_inode_id": ROOT_ID + inodes - 1})
    info = write_image(path, columns, meta, row_group_size=row_group_size)
    with open(str(path) + MD5_SUFFIX, "w") as f:
        f.write(md5_sidecar_text(info.md5_hex))
    return Synthetic(str(path), dirs, files, lengths, meta)


def _blocks(dirs: int, lengths: list[int], first_block: int) -> pa.Array:
    """One block per started BLOCK_SIZE of each file; directories have none."""
    offsets, sizes = array("i", [0]) * (dirs + 1), array("q")
    for length in lengths:
        full, rest = divmod(length, BLOCK_SIZE)
        sizes.extend([BLOCK_SIZE] * full + ([rest] if rest else []))
        offsets.append(len(sizes))
    n = len(sizes)
    block_ids = pa.array(range(first_block, first_block + n), pa.int64())
    structs = pa.StructArray.from_arrays(
        [block_ids, pa.array(sizes, pa.int64()), pa.array([1001] * n, pa.int64())],
        fields=list(BLOCK_TYPE))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), structs)


DEFAULTS = {"permission": 0o755, "owner": "hdfs", "group": "supergroup", "mtime": TS, "atime": 0,
            "replication": 0, "block_size": 0, "length": 0, "blocks": [], "checksum": None,
            "xattrs": None, "ns_quota": NO_QUOTA, "ss_quota": NO_QUOTA, "client_name": None,
            "client_machine": None, "acl": None, "snapshot": None}


def inode(id_: int, parent_id: int, name: str, type_: int = TYPE_DIRECTORY, **kw) -> dict:
    """One row; files get replication 3 and a 128 MiB block size unless told otherwise."""
    row = dict(DEFAULTS, id=id_, parent_id=parent_id, name=name, type=type_)
    if type_ == TYPE_FILE:
        row.update(permission=0o644, replication=3, block_size=BLOCK_SIZE)
    row.update(kw)
    return row


def write_rows(path, rows: list[dict], *, last_txid: int = 7, sidecar: bool = True) -> ImageMeta:
    """An image of exactly these rows, in this order (with its ``.md5`` sidecar)."""
    columns = {name: [row[name] for row in rows] for name in COLUMNS}
    fields = ("block_id", "num_bytes", "genstamp")
    columns["blocks"] = [[dict(zip(fields, b, strict=True)) for b in bl]
                         for bl in columns["blocks"]]
    columns["xattrs"] = [None if x is None else list(x.items()) for x in columns["xattrs"]]
    meta = ImageMeta(LAYOUT_VERSION, 99, last_txid, len(rows), TS)
    info = write_image(path, columns, meta)
    if sidecar:
        with open(str(path) + MD5_SUFFIX, "w") as f:
            f.write(md5_sidecar_text(info.md5_hex))
    return meta
