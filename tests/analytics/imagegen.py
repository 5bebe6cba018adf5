"""A synthetic fsimage for the analytics tests and bench: columns generated directly (no
namespace), written with formats.fsimage.write_image.

Shape: a root with a few top-level dirs, a random tree of nested dirs (parents always listed
before their children), Structured Streaming checkpoints (``offsets/``, ``commits/``,
``state/``, ``sources/``) under ``/spark/streaming`` (one not yet committed, one known only by
its pins, one holding a ``chk-1`` directory that must not count on its own), RDD checkpoint
dirs (``rdd-<n>``) under ``/spark/rdd/<app>``, job checkpoints (``chk-<n>``) under
``/spark/jobs``, DStream checkpoints (``checkpoint-<ms>``) under ``/spark/dstream``, two
decoys that must not count (an ``offsets/`` alone, an ``rdd-old``), and files spread over
every dir with mixed owners, replications, sizes and times.
Deterministic for a given seed.
"""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pyarrow as pa

from nnlite.catalog.layout import PINS_XATTR
from nnlite.formats.fsimage.layout import (
    BLOCK_TYPE,
    LAYOUT_VERSION,
    MD5_SUFFIX,
    NO_QUOTA,
    SCHEMA,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
)
from nnlite.formats.fsimage.md5 import md5_sidecar_text
from nnlite.formats.fsimage.write import write_image

ROOT_ID = 16385
AS_OF_MS = 1_760_000_000_000          # the image's creation time: ages are measured from it
YEAR_MS = 365 * 86_400_000
OWNERS = ("hdfs", "alice", "bob", "carol", "etl", "spark", "hive", "dave")
OWNER_WEIGHTS = (2, 5, 4, 3, 8, 6, 3, 1)
TOP_DIRS = ("user", "data", "tmp", "spark", "flink", "warehouse")


class _Builder:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.next_id = ROOT_ID
        self.dirs = []      # (id, parent_id, name, owner, depth)
        self.files = []     # (parent_id, name, owner, replication, length, mtime, atime, client)
        self.xattrs = {}    # dir id -> [(name, value)]
        self.dir(0, "", "hdfs", -1)

    def dir(self, parent: int, name: str, owner: str, parent_depth: int) -> int:
        inode_id = self.next_id
        self.next_id += 1
        self.dirs.append((inode_id, parent, name, owner, parent_depth + 1))
        return inode_id

    def file(self, parent: int, name: str, length: int | None = None,
             owner: str | None = None) -> None:
        rng = self.rng
        owner = owner or rng.choices(OWNERS, OWNER_WEIGHTS)[0]
        if length is None:
            kind = rng.random()
            length = (0 if kind < 0.08 else int(2 ** rng.uniform(0, 20)) if kind < 0.5
                      else int(2 ** rng.uniform(20, 28)) if kind < 0.95
                      else int(2 ** rng.uniform(28, 32.5)))
        mtime = AS_OF_MS - int(rng.random() ** 2 * 5 * YEAR_MS)
        atime = 0 if rng.random() < 0.1 else min(AS_OF_MS, mtime + int(rng.random() * YEAR_MS))
        replication = rng.choices((1, 2, 3, 10), (20, 10, 65, 1))[0]
        client = "DFSClient_7" if rng.random() < 0.002 else None
        self.files.append((parent, name, owner, replication, length, mtime, atime, client))

    def depth(self, index: int) -> int:
        return self.dirs[index][4]


def generate(path: str | Path, inodes: int, *, seed: int = 7, namespace_id: int = 4242,
             last_txid: int = 99) -> ImageMeta:
    """Write an image of exactly ``inodes`` rows to ``path`` (+ its md5 sidecar)."""
    b = _Builder(seed)
    tops = {name: b.dir(ROOT_ID, name, "hdfs", 0) for name in TOP_DIRS}
    nestable = list(range(1, len(b.dirs)))     # checkpoint dirs get no random subdirs
    _spark_checkpoints(b, tops["spark"], max(2, inodes // 20_000))
    _flink_checkpoints(b, tops["flink"])
    _decoys(b, tops["data"])
    n_dirs = max(10, inodes // 12)
    rng = b.rng
    while len(b.dirs) < n_dirs:
        parent = nestable[rng.randrange(len(nestable))]
        if b.depth(parent) < 9:
            nestable.append(len(b.dirs))
            b.dir(b.dirs[parent][0], f"d{len(b.dirs)}", rng.choices(OWNERS, OWNER_WEIGHTS)[0],
                  b.depth(parent))
    n_files = inodes - len(b.dirs)
    if n_files <= len(b.files):
        raise ValueError(f"{inodes} inodes are too few for the fixed structure")
    for k in range(n_files - len(b.files) - 1):
        b.file(b.dirs[rng.randrange(len(b.dirs))][0], f"part-{k:06d}")
    b.files.append((ROOT_ID, "README", "hdfs", 3, 1234, AS_OF_MS - YEAR_MS, 0, None))
    meta = ImageMeta(LAYOUT_VERSION, namespace_id, last_txid, inodes, AS_OF_MS,
                       {"last_inode_id": b.next_id + len(b.files), "last_block_id": 0})
    info = write_image(str(path), _columns(b), meta)
    Path(str(path) + MD5_SUFFIX).write_text(md5_sidecar_text(info.md5_hex))
    return meta


def _flink_checkpoints(b: _Builder, flink: int) -> None:
    """One job's checkpoint directory (``FsCheckpointStorageAccess``) and one savepoint."""
    job = b.dir(b.dir(flink, "ckpt", "flink", 1), "bca53422186449487288181be5553f68", "flink", 2)
    for n in (4, 5):
        chk = b.dir(job, f"chk-{n}", "flink", 3)
        b.file(chk, "_metadata", 9000 + n, "flink")
        b.file(chk, f"5e1f{n}-exclusive", None, "flink")
    b.file(b.dir(job, "shared", "flink", 3), "86626c24-shared", None, "flink")
    b.dir(job, "taskowned", "flink", 3)
    savepoint = b.dir(b.dir(flink, "savepoints", "flink", 1), "savepoint-bca534-0123456789ab",
                      "flink", 2)
    b.file(savepoint, "_metadata", 12000, "flink")


def _spark_checkpoints(b: _Builder, spark: int, jobs: int) -> None:
    streaming = b.dir(spark, "streaming", "spark", 1)
    for q in range(jobs):
        query = b.dir(streaming, f"query{q}", "spark", 2)
        for sub in ("offsets", "commits", "sources", "state"):
            d = b.dir(query, sub, "spark", 3)
            for batch in range(b.rng.randrange(3, 12)):
                b.file(d, str(batch), 300 + batch if sub != "state" else None, "spark")
        b.file(query, "metadata", 45, "spark")
    inner = b.dir(query, "nested", "spark", 3)       # inside the last query
    b.file(b.dir(inner, "chk-1", "spark", 4), "part-00000", 10, "spark")
    fresh = b.dir(streaming, "fresh", "spark", 2)
    b.file(fresh, "metadata", 45, "spark")
    b.file(b.dir(fresh, "offsets", "spark", 3), "0", 300, "spark")
    pinned = b.dir(streaming, "pinned", "spark", 2)
    b.file(b.dir(pinned, "offsets", "spark", 3), "4", 300, "spark")
    b.xattrs[pinned] = [(PINS_XATTR, b"[4]")]
    job_root = b.dir(spark, "jobs", "spark", 1)
    for j in range(2):
        job = b.dir(job_root, f"etl{j}", "spark", 2)
        for name in ("chk-1", "chk-2", "chk-3.inprogress"):
            b.file(b.dir(job, name, "spark", 3), "part-00000", None, "spark")
    dstream = b.dir(b.dir(spark, "dstream", "spark", 1), "app", "spark", 2)
    for t in (1_700_000_000_000, 1_700_000_010_000):
        b.file(dstream, f"checkpoint-{t}", 2000, "spark")
        b.file(dstream, f"checkpoint-{t}.bk", 1900, "spark")
    rdd = b.dir(spark, "rdd", "spark", 1)
    for app in range(jobs):
        app_dir = b.dir(rdd, f"app-{app:04x}-5e1f", "spark", 2)
        for n in range(b.rng.randrange(1, 4)):
            r = b.dir(app_dir, f"rdd-{n * 7 + 1}", "spark", 3)
            for part in range(b.rng.randrange(2, 6)):
                b.file(r, f"part-{part:05d}", None, "spark")


def _decoys(b: _Builder, data: int) -> None:
    half = b.dir(data, "not-a-checkpoint", "etl", 1)
    b.file(b.dir(half, "offsets", "etl", 2), "0", 100, "etl")
    b.file(b.dir(data, "rdd-old", "etl", 1), "x", 100, "etl")


def _columns(b: _Builder) -> dict:
    nd, nf = len(b.dirs), len(b.files)
    file_ids = range(b.next_id, b.next_id + nf)
    d, f = b.dirs, b.files
    return {
        "id": array("q", [x[0] for x in d]) + array("q", file_ids),
        "parent_id": array("q", [x[1] for x in d] + [x[0] for x in f]),
        "name": [x[2] for x in d] + [x[1] for x in f],
        "type": array("b", [TYPE_DIRECTORY]) * nd + array("b", [TYPE_FILE]) * nf,
        "permission": array("h", [0o755]) * nd + array("h", [0o644]) * nf,
        "owner": [x[3] for x in d] + [x[2] for x in f],
        "group": ["supergroup"] * (nd + nf),
        "mtime": array("q", [AS_OF_MS - YEAR_MS] * nd + [x[5] for x in f]),
        "atime": array("q", [AS_OF_MS - YEAR_MS] * nd + [x[6] for x in f]),
        "replication": array("h", [0]) * nd + array("h", [x[3] for x in f]),
        "block_size": array("q", [0]) * nd + array("q", [128 << 20]) * nf,
        "length": array("q", [0]) * nd + array("q", [x[4] for x in f]),
        "blocks": pa.ListArray.from_arrays(pa.array([0] * (nd + nf + 1), pa.int32()),
                                           pa.array([], BLOCK_TYPE),
                                           type=SCHEMA.field("blocks").type),
        "checksum": [None] * (nd + nf),
        "xattrs": pa.array([b.xattrs.get(x[0]) for x in d] + [None] * nf,
                           SCHEMA.field("xattrs").type),
        "ns_quota": array("q", [NO_QUOTA]) * (nd + nf),
        "ss_quota": array("q", [NO_QUOTA]) * (nd + nf),
        "client_name": [None] * nd + [x[7] for x in f],
        "client_machine": [None] * nd + [None if x[7] is None else "10.0.0.7" for x in f],
    }
