"""``nnlite analyze``: a PySpark job over an fsimage (the Parquet of ``formats/fsimage/``).

``analyze(image, spark=...)`` returns an ``Analysis``: totals and these tables (small pyarrow
Tables, in this order; every size is in bytes, every time in ms since the epoch):

    size_distribution   bucket, label, files, bytes           (SIZE_BUCKETS, all of them)
    small_files_by_dir  path, small_files, small_bytes, files, bytes     (top N by small_files;
                        a small file is one shorter than ``small_bytes``, 1 MiB by default)
    usage_by_owner      owner, files, dirs, bytes, raw_bytes   (raw = length x replication)
    usage_by_top_dir    top_dir, files, dirs, bytes, raw_bytes, small_files   ("/" = files
                        directly in the root; dirs counts the top dir and every dir below it)
    replication         replication, files, bytes, raw_bytes
    untouched_age       bucket, label, files, bytes   (age of max(atime, mtime) at ``as_of``)
    oldest_files        path, owner, length, replication, mtime, atime, last_touched, age_days
                        (top N, least recently touched first)
    checkpoints         path, kind, files, bytes, raw_bytes, last_modified
                        The checkpoints ``nnlite catalog ls /`` lists, by the same rule
                        (``catalog.layout.classify``): Spark's kinds streaming, job, rdd (the
                        SparkContext's directory holding ``rdd-<n>``), dstream, and Flink's
                        flink (a job's checkpoint directory) and savepoint
                        (``layout.KIND_NAMES`` names them for people). Bytes are file
                        lengths below the checkpoint directory.

``as_of`` defaults to the image's creation time, so a report describes the image, not the day
it was read.

How full paths are built, in Spark only (no tree on the driver): pointer jumping over the
directory rows. Every directory starts as ``(id, anc = parent_id, suffix = "/" + name,
chain = [id])`` (the root: ``anc = 0, suffix = "", chain = [id]``). Each round self-joins the
table on ``anc = id`` and replaces a row's ``anc`` by its ancestor's ``anc``, prepending the
ancestor's ``suffix`` and ``chain``; a row is done when ``anc`` is 0. So a tree of depth d
needs about log2(d) rounds, each a join whose result is cached and computed at once. ``chain``
(the directory ids from the root down to the directory) is then what places a file below a
checkpoint root, by one explode over the directories that hold files. File paths are
joined on only for the rows reported (oldest files). A parent that is missing (a damaged
image) ends its rows with ``anc = -1`` and a path under ``/.orphaned``.

Per-file figures are aggregated by Spark into one small *facts* table (owner x replication x
size bucket x age bucket) that the driver rolls up into the tables; per-directory figures are
aggregated by Spark (and cached: three tables use them) and only the top N rows are
collected. The image itself is not cached: Spark reads its few columns again for each
aggregation, which measured faster than caching a million rows of strings.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from nnlite.catalog.layout import MARKER_PATTERN, PINS_XATTR, classify
from nnlite.formats.fsimage.layout import (
    IMAGE_NAME,
    MD5_SUFFIX,
    TYPE_DIRECTORY,
    TYPE_FILE,
    ImageMeta,
)
from nnlite.formats.fsimage.md5 import parse_md5_sidecar, verify_md5
from nnlite.formats.fsimage.read import read_meta

log = logging.getLogger(__name__)

SMALL_FILE_BYTES = 1 << 20
DEFAULT_TOP = 20
DEFAULT_MASTER = "local[2]"
MAX_ROUNDS = 64
DAY_MS = 86_400_000
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
# (label, lower bound inclusive); a bucket ends where the next one starts.
SIZE_BUCKETS = (("0 B", 0), ("1 B - 1 KiB", 1), ("1 KiB - 64 KiB", KiB),
                ("64 KiB - 1 MiB", 64 * KiB), ("1 MiB - 16 MiB", MiB),
                ("16 MiB - 128 MiB", 16 * MiB), ("128 MiB - 1 GiB", 128 * MiB),
                (">= 1 GiB", GiB))
AGE_BUCKETS = (("< 7 days", None), ("7 - 30 days", 7 * DAY_MS), ("30 - 90 days", 30 * DAY_MS),
               ("90 days - 1 year", 90 * DAY_MS), ("1 - 3 years", 365 * DAY_MS),
               (">= 3 years", 3 * 365 * DAY_MS))
CHECKPOINT_SCHEMA = pa.schema([("path", pa.string()), ("kind", pa.string()),
                               ("files", pa.int64()), ("bytes", pa.int64()),
                               ("raw_bytes", pa.int64()), ("last_modified", pa.int64())])
ORPHANED = "/.orphaned"


@dataclass
class Analysis:
    image: str
    meta: ImageMeta
    as_of_ms: int
    small_bytes: int
    top: int
    totals: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)      # name -> pa.Table, in report order
    seconds: float = 0.0


# ------------------------------------------------------------------------------ entry

def find_image(path: str | Path) -> Path:
    """An image file, or the image of a name/checkpoint dir (``current/fsimage``, ``fsimage``)."""
    path = Path(path)
    if path.is_dir():
        for candidate in (path / "current" / IMAGE_NAME, path / IMAGE_NAME):
            if candidate.is_file():
                return candidate
        raise FileNotFoundError(f"no fsimage in {path} (nor in {path / 'current'})")
    return path


def check_image(path: Path) -> ImageMeta:
    """The footer's metadata; the digest too when a sidecar lies beside the image."""
    sidecar = path.with_name(path.name + MD5_SUFFIX)
    if sidecar.is_file():
        verify_md5(path, parse_md5_sidecar(sidecar.read_text(), path=str(sidecar)))
    return read_meta(path)


def new_session(master: str = DEFAULT_MASTER):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master(master).appName("nnlite-analyze")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("WARN")
    return session


def _session(spark, master: str):
    """``(session, whether it is ours to stop)``."""
    if spark is not None:
        return spark, False
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    return new_session(master), True


def analyze(image: str | Path, *, spark=None, master: str = DEFAULT_MASTER,
            top: int = DEFAULT_TOP, small_bytes: int = SMALL_FILE_BYTES,
            as_of_ms: int | None = None) -> Analysis:
    """Analyse an image with ``spark``; without one, with the active SparkSession if there
    is one (both are left running), else with a session of its own on ``master``, stopped at
    the end."""
    if top <= 0 or small_bytes <= 0:
        raise ValueError("top and small_bytes must be positive")
    path = find_image(image)
    meta = check_image(path)
    result = Analysis(str(path), meta, meta.creation_time if as_of_ms is None else as_of_ms,
                      small_bytes, top)
    spark, own = _session(spark, master)
    start = time.perf_counter()
    try:
        _Job(spark, result).run()
    finally:
        if own:
            spark.stop()
    result.seconds = time.perf_counter() - start
    return result


# ------------------------------------------------------------------------------ spark

def dir_paths(dirs):
    """Directory rows ``(id, parent_id, name)`` -> ``(id, path, depth, chain)`` by pointer
    jumping (see the module docstring). The result is cached; the caller unpersists it."""
    from pyspark.sql import functions as S
    state = _materialized(dirs.select(
        "id",
        S.col("parent_id").alias("anc"),
        S.when(S.col("parent_id") == 0, S.lit("")).otherwise(
            S.concat(S.lit("/"), S.col("name"))).alias("suffix"),
        S.array("id").alias("chain")))
    for _ in range(MAX_ROUNDS):
        if state.filter(S.col("anc") > 0).isEmpty():
            break
        state, previous = _materialized(_jump(state)), state
        previous.unpersist()
    else:
        log.warning("directory parents still unresolved after %d rounds: a cycle in the "
                    "image; those directories are reported under %s", MAX_ROUNDS, ORPHANED)
    orphan = S.col("anc") != 0
    paths = _materialized(state.select(
        "id",
        S.when(orphan, S.concat(S.lit(ORPHANED), S.col("suffix")))
         .when(S.col("suffix") == "", S.lit("/")).otherwise(S.col("suffix")).alias("path"),
        (S.size("chain") - 1).alias("depth"), "chain"))
    state.unpersist()
    return paths


def _materialized(df):
    """Cache ``df`` and compute it now, so the next round reads it from memory."""
    df = df.cache()
    df.count()
    return df


def _jump(state):
    from pyspark.sql import functions as S
    up = state.select(S.col("id").alias("up_id"), S.col("anc").alias("up_anc"),
                      S.col("suffix").alias("up_suffix"), S.col("chain").alias("up_chain"))
    joined = state.join(up, state["anc"] == up["up_id"], "left")
    jump = (S.col("anc") > 0) & S.col("up_id").isNotNull()
    lost = (S.col("anc") > 0) & S.col("up_id").isNull()
    return joined.select(
        "id",
        S.when(jump, S.col("up_anc")).when(lost, S.lit(-1)).otherwise(S.col("anc")).alias("anc"),
        S.when(jump, S.concat("up_suffix", "suffix")).otherwise(S.col("suffix")).alias("suffix"),
        S.when(jump, S.concat("up_chain", "chain")).otherwise(S.col("chain")).alias("chain"))


def _bucket(value, buckets):
    """The index of the last bucket whose lower bound ``value`` reaches (a Spark column)."""
    from pyspark.sql import functions as S
    expr = S.lit(0)
    for i, (_, lower) in enumerate(buckets):
        if lower is not None and i:
            expr = S.when(value >= lower, S.lit(i)).otherwise(expr)
    return expr


class _Job:
    """One analysis: builds the Spark plans and collects the small results."""

    def __init__(self, spark, result: Analysis):
        self.spark = spark
        self.r = result

    def run(self) -> None:
        from pyspark.sql import functions as S
        inodes = self.spark.read.parquet(self.r.image).select(
            "id", "parent_id", "name", "type", "owner", "replication", "length", "mtime",
            "atime", "client_name")
        dirs = inodes.filter(S.col("type") == TYPE_DIRECTORY)
        files = self._files(inodes.filter(S.col("type") == TYPE_FILE))
        paths = dir_paths(dirs.select("id", "parent_id", "name"))
        per_dir = self._per_dir(files, paths).cache()
        facts = self._collect(self._facts(files))
        dir_owners = self._collect(dirs.groupBy("owner").agg(S.count(S.lit(1)).alias("dirs")))
        tables = self.r.tables
        tables["size_distribution"] = _size_distribution(facts)
        tables["small_files_by_dir"] = self._small_files_by_dir(per_dir)
        tables["usage_by_owner"] = _usage_by_owner(facts, dir_owners)
        tables["usage_by_top_dir"] = self._usage_by_top_dir(per_dir)
        tables["replication"] = _replication(facts)
        tables["untouched_age"] = _untouched_age(facts)
        tables["oldest_files"] = self._oldest_files(files, paths)
        tables["checkpoints"] = self._checkpoints(inodes, per_dir, paths)
        self.r.totals = _totals(facts, dir_owners, paths, tables["checkpoints"])
        per_dir.unpersist()
        paths.unpersist()

    @staticmethod
    def _collect(df) -> pa.Table:
        return df.toArrow()

    def _files(self, files):
        from pyspark.sql import functions as S
        r = self.r
        touched = S.greatest("atime", "mtime")
        return files.select(
            "id", "parent_id", "name", "owner", "replication", "length", "mtime", "atime",
            touched.alias("touched"),
            (S.col("length") * S.col("replication")).alias("raw"),
            (S.col("length") < r.small_bytes).cast("int").alias("small"),
            S.col("client_name").isNotNull().cast("int").alias("open"),
            _bucket(S.col("length"), SIZE_BUCKETS).alias("size_bucket"),
            _bucket(S.lit(r.as_of_ms) - touched, AGE_BUCKETS).alias("age_bucket"))

    @staticmethod
    def _facts(files):
        from pyspark.sql import functions as S
        return files.groupBy("owner", "replication", "size_bucket", "age_bucket").agg(
            S.count(S.lit(1)).alias("files"), S.sum("length").alias("bytes"),
            S.sum("raw").alias("raw_bytes"), S.sum("small").alias("small_files"),
            S.sum(S.col("length") * S.col("small")).alias("small_bytes"),
            S.sum("open").alias("under_construction"))

    @staticmethod
    def _per_dir(files, paths):
        """Every directory with its path, chain and the files directly in it."""
        from pyspark.sql import functions as S
        stats = files.groupBy("parent_id").agg(
            S.count(S.lit(1)).alias("files"), S.sum("length").alias("bytes"),
            S.sum("raw").alias("raw_bytes"), S.sum("small").alias("small_files"),
            S.sum(S.col("length") * S.col("small")).alias("small_bytes"),
            S.max("mtime").alias("last_modified"))
        joined = paths.join(stats, paths["id"] == stats["parent_id"], "left").drop("parent_id")
        return joined.fillna(0, ["files", "bytes", "raw_bytes", "small_files", "small_bytes"])

    def _small_files_by_dir(self, per_dir) -> pa.Table:
        from pyspark.sql import functions as S
        top = (per_dir.filter(S.col("small_files") > 0)
               .orderBy(S.desc("small_files"), "path").limit(self.r.top)
               .select("path", "small_files", "small_bytes", "files", "bytes"))
        return self._collect(top).sort_by([("small_files", "descending"), ("path", "ascending")])

    def _usage_by_top_dir(self, per_dir) -> pa.Table:
        from pyspark.sql import functions as S
        top_dir = S.when(S.col("depth") == 0, S.lit("/")).otherwise(
            S.concat(S.lit("/"), S.split("path", "/").getItem(1)))
        usage = per_dir.groupBy(top_dir.alias("top_dir")).agg(
            S.sum("files").alias("files"), S.sum((S.col("depth") > 0).cast("long")).alias("dirs"),
            S.sum("bytes").alias("bytes"), S.sum("raw_bytes").alias("raw_bytes"),
            S.sum("small_files").alias("small_files"))
        return self._collect(usage).sort_by([("bytes", "descending"), ("top_dir", "ascending")])

    def _oldest_files(self, files, paths) -> pa.Table:
        from pyspark.sql import functions as S
        oldest = files.orderBy("touched", "id").limit(self.r.top)
        named = oldest.join(paths.select(S.col("id").alias("parent_id"), "path", "depth"),
                            "parent_id")
        full = S.when(S.col("depth") == 0, S.concat(S.lit("/"), "name")).otherwise(
            S.concat("path", S.lit("/"), "name"))
        age = ((S.lit(self.r.as_of_ms) - S.col("touched")) / DAY_MS).alias("age_days")
        table = self._collect(named.select(
            full.alias("path"), "owner", "length", "replication", "mtime", "atime",
            S.col("touched").alias("last_touched"), age, "id"))
        return table.sort_by([("last_touched", "ascending"), ("id", "ascending")]).drop(["id"])

    def _checkpoints(self, inodes, per_dir, paths) -> pa.Table:
        from pyspark.sql import functions as S
        located = self._checkpoint_dirs(inodes, paths)
        if not located:
            return CHECKPOINT_SCHEMA.empty_table()
        roots = self.spark.createDataFrame(located, "root_id long, kind string, path string")
        below = (per_dir.filter(S.col("files") > 0)
                 .select(S.explode("chain").alias("anc"), "files", "bytes", "raw_bytes",
                         "last_modified")
                 .join(S.broadcast(roots), S.col("anc") == S.col("root_id"))
                 .groupBy("root_id")
                 .agg(S.sum("files").alias("files"), S.sum("bytes").alias("bytes"),
                      S.sum("raw_bytes").alias("raw_bytes"),
                      S.max("last_modified").alias("last_modified")))
        jobs = (roots.join(below, "root_id", "left")
                .fillna(0, ["files", "bytes", "raw_bytes"])
                .select("path", "kind", "files", "bytes", "raw_bytes", "last_modified"))
        return self._collect(jobs).cast(CHECKPOINT_SCHEMA).sort_by(
            [("bytes", "descending"), ("path", "ascending")])

    def _checkpoint_dirs(self, inodes, paths) -> list[tuple[int, str, str]]:
        """``(dir id, kind, path)`` of every checkpoint ``nnlite catalog ls /`` lists: the
        rows whose names classify (few) are collected and ``layout.classify`` decides, as
        ``layout.discover`` does; a checkpoint inside another is not one of its own."""
        from pyspark.sql import functions as S
        marks = self._collect(inodes.filter(S.col("name").rlike(MARKER_PATTERN)).select(
            "parent_id", "name", (S.col("type") == TYPE_DIRECTORY).alias("is_dir")))
        pinned = set(self._collect(
            self.spark.read.parquet(self.r.image)
            .filter((S.col("type") == TYPE_DIRECTORY)
                    & S.map_contains_key("xattrs", PINS_XATTR)).select("id"))["id"].to_pylist())
        children: dict[int, list] = {}
        for row in marks.to_pylist():
            children.setdefault(row["parent_id"], []).append((row["name"], row["is_dir"]))
        kinds = {dir_id: kind for dir_id, entries in children.items()
                 if (kind := classify(entries, dir_id in pinned)) is not None}
        if not kinds:
            return []
        found = self.spark.createDataFrame(list(kinds.items()), "root_id long, kind string")
        rows = self._collect(paths.join(S.broadcast(found), paths["id"] == found["root_id"])
                             .select("root_id", "kind", "path", "chain")).to_pylist()
        return [(r["root_id"], r["kind"], r["path"]) for r in rows
                if not any(anc in kinds for anc in r["chain"][:-1])]


# ------------------------------------------------------------------------------ driver side

def _sums(facts: pa.Table, key: str, columns: tuple[str, ...]) -> dict:
    """``{key value: {column: sum}}`` over the facts table (a few thousand rows at most)."""
    out: dict = {}
    for row in facts.select([key, *columns]).to_pylist():
        sums = out.setdefault(row[key], dict.fromkeys(columns, 0))
        for c in columns:
            sums[c] += row[c] or 0
    return out


def _labelled(facts: pa.Table, key: str, buckets) -> pa.Table:
    sums = _sums(facts, key, ("files", "bytes"))
    zero = {"files": 0, "bytes": 0}
    return pa.table({
        "bucket": pa.array(range(len(buckets)), pa.int32()),
        "label": [label for label, _ in buckets],
        "files": pa.array([sums.get(i, zero)["files"] for i in range(len(buckets))], pa.int64()),
        "bytes": pa.array([sums.get(i, zero)["bytes"] for i in range(len(buckets))], pa.int64()),
    })


def _size_distribution(facts: pa.Table) -> pa.Table:
    return _labelled(facts, "size_bucket", SIZE_BUCKETS)


def _untouched_age(facts: pa.Table) -> pa.Table:
    return _labelled(facts, "age_bucket", AGE_BUCKETS)


def _usage_by_owner(facts: pa.Table, dir_owners: pa.Table) -> pa.Table:
    sums = _sums(facts, "owner", ("files", "bytes", "raw_bytes"))
    dirs = dict(zip(dir_owners["owner"].to_pylist(), dir_owners["dirs"].to_pylist(), strict=True))
    owners = sorted(set(sums) | set(dirs),
                    key=lambda o: (-sums.get(o, {}).get("bytes", 0), o))
    col = lambda c: pa.array([sums.get(o, {}).get(c, 0) for o in owners], pa.int64())  # noqa
    return pa.table({"owner": owners, "files": col("files"),
                     "dirs": pa.array([dirs.get(o, 0) for o in owners], pa.int64()),
                     "bytes": col("bytes"), "raw_bytes": col("raw_bytes")})


def _replication(facts: pa.Table) -> pa.Table:
    sums = _sums(facts, "replication", ("files", "bytes", "raw_bytes"))
    keys = sorted(sums)
    return pa.table({"replication": pa.array(keys, pa.int16()),
                     **{c: pa.array([sums[k][c] for k in keys], pa.int64())
                        for c in ("files", "bytes", "raw_bytes")}})


def _totals(facts: pa.Table, dir_owners: pa.Table, paths, checkpoints: pa.Table) -> dict:
    from pyspark.sql import functions as S
    columns = ("files", "bytes", "raw_bytes", "small_files", "small_bytes",
               "under_construction")
    totals = {c: sum(v or 0 for v in facts[c].to_pylist()) for c in columns}
    totals["dirs"] = sum(dir_owners["dirs"].to_pylist())
    totals["max_depth"] = paths.agg(S.max("depth")).first()[0] or 0
    totals["checkpoints"] = checkpoints.num_rows
    totals["checkpoint_bytes"] = sum(checkpoints["bytes"].to_pylist())
    return totals
