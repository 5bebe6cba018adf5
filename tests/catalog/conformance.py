"""The catalog's verdicts against Spark's own restarts (the conformance matrix): one query per
operator and state-store configuration runs into nnlite, retention thins it (a small keep and
one that keeps everything), and then for every batch the catalog is asked to roll back to, on a
copy of the checkpoint:

* the catalog says it restores: the rollback is applied, Spark restarts, and the result must be
  exactly the uninterrupted one (nothing lost, nothing counted twice);
* the catalog refuses: the same files are removed by hand, Spark restarts, and it must fail or
  get the result wrong -- a refusal Spark would have survived is a finding, not a pass.

Each operator is a query over the same input files (one file per micro-batch) whose every
batch's output is recorded, a ``merge`` that folds recorded batches into the query's result
and the ``expected`` result computed in Python. The restarts find one input file more than
the first run had, so each runs at least one batch and reads the state it restored.
``tests/catalog/test_conformance.py`` runs a representative part in CI; ``bench/conformance.py``
runs the whole matrix and prints its table.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count

from nnlite.catalog.client import CatalogClient, NotRestorable
from nnlite.catalog.layout import ASYNC_PROGRESS_XATTR
from nnlite.client.webhdfs import WebHdfsClient
from tests.spark.test_streaming_checkpoint import expected

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
FORMAT = "spark.sql.streaming.stateStore.checkpointFormatVersion"
OFFSET_LOG = "spark.sql.streaming.offsetLog.formatVersion"
CODEC = "spark.sql.streaming.stateStore.compression.codec"      # lz4 by default
# on by default with checkpoint format version 2 (ChecksumCheckpointFileManager)
FILE_CHECKSUM = "spark.sql.streaming.checkpoint.fileChecksum.enabled"
STORES = {
    "hdfs": {},
    "rocksdb": {PROVIDER: ROCKSDB},
    "rocksdb-changelog": {PROVIDER: ROCKSDB, CHANGELOG: "true"},
    "rocksdb-v2": {PROVIDER: ROCKSDB, CHANGELOG: "true", FORMAT: "2"},
    # format version 2 with file checksums off: no .crc sidecars are written at all
    "rocksdb-v2-no-crc": {PROVIDER: ROCKSDB, CHANGELOG: "true", FORMAT: "2",
                          FILE_CHECKSUM: "false"},
    # the offset log's OffsetMap entries (OffsetSeqLog v2), on the HDFS-backed store
    "hdfs-offsets-v2": {OFFSET_LOG: "2"},
    # format version 2 without changelogs (a <v>_<id>.zip per version, each with its .crc
    # sidecar) and the offset log's version 2
    "rocksdb-v2-zips": {PROVIDER: ROCKSDB, FORMAT: "2", OFFSET_LOG: "2"},
    # format version 2 changelogs of the other codecs: snappy (no check of its own) and
    # zstd, decoded as Spark's read decodes them (catalog/changelog.py)
    "rocksdb-v2-snappy": {PROVIDER: ROCKSDB, CHANGELOG: "true", FORMAT: "2",
                          CODEC: "snappy"},
    "rocksdb-v2-zstd": {PROVIDER: ROCKSDB, CHANGELOG: "true", FORMAT: "2", CODEC: "zstd"},
}
SCHEMA = "key STRING, value LONG"
_names = count()


def feed(src, index: int) -> list[tuple[str, int]]:
    """Input file ``index`` (published atomically): keys a, b and one of its own."""
    rows = [("a", index), ("b", 1), (f"k{index}", 100)]
    tmp = src.parent / f".{src.name}-{index}.tmp"
    tmp.write_text("".join(json.dumps({"key": k, "value": v}) + "\n" for k, v in rows))
    os.utime(tmp, (1_000_000 + index, 1_000_000 + index))
    tmp.rename(src / f"{index:03d}.json")
    return rows


def _stream(spark, src):
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))


def _latest_per_key(batches) -> dict:
    out = {}
    for rows in batches:
        out.update({row[0]: tuple(row[1:]) for row in rows})
    return out


def _distinct_keys(files) -> Counter:
    return Counter({key: 1 for rows in files for key, _ in rows})


class Operator(ABC):
    """One row group of the matrix: ``build`` the streaming DataFrame and its output mode;
    ``merge`` the recorded batches (lists of row tuples) into a result comparable with
    ``expected(files)``. ``stores`` names the state stores it runs on; ``async_progress``
    runs it with Spark's asynchronous progress tracking."""

    name = ""
    stores = tuple(STORES)
    async_progress = False

    @abstractmethod
    def build(self, spark, src):
        """The streaming DataFrame over ``src`` and its output mode."""

    def merge(self, batches):
        return Counter(row for rows in batches for row in rows)

    @abstractmethod
    def expected(self, files):
        """The uninterrupted run's result, computed in Python from the input files."""


class Aggregation(Operator):
    name = "aggregation"

    def build(self, spark, src):
        from pyspark.sql import functions as F
        return _stream(spark, src).groupBy("key").agg(
            F.count("*").alias("n"), F.sum("value").alias("total")), "update"

    def merge(self, batches):
        return _latest_per_key(batches)

    def expected(self, files):
        return expected(*files)


class Deduplication(Operator):
    name = "dropDuplicates"

    def build(self, spark, src):
        return _stream(spark, src).dropDuplicates(["key"]).select("key"), "append"

    def merge(self, batches):
        return Counter(row[0] for rows in batches for row in rows)

    def expected(self, files):
        return _distinct_keys(files)


class WatermarkDeduplication(Deduplication):
    """The event time is the value in seconds; a day's delay lets no key expire."""
    name = "dropDuplicatesWithinWatermark"

    def build(self, spark, src):
        from pyspark.sql import functions as F
        events = _stream(spark, src).withColumn("at", F.timestamp_seconds("value"))
        return (events.withWatermark("at", "1 day").dropDuplicatesWithinWatermark(["key"])
                .select("key"), "append")


class StreamJoin(Operator):
    """An inner stream-stream join of the input with itself (two file sources, so
    ``sources/0`` and ``sources/1``), state kept on both sides."""
    name = "stream-stream join"

    def build(self, spark, src):
        left, right = _stream(spark, src).alias("l"), _stream(spark, src).alias("r")
        return (left.join(right, "key").select("key", "l.value", "r.value"), "append")

    def expected(self, files):
        by_key: dict[str, list[int]] = {}
        for rows in files:
            for key, value in rows:
                by_key.setdefault(key, []).append(value)
        return Counter((k, lv, rv) for k, vs in by_key.items() for lv in vs for rv in vs)


def _count_in_pandas(key, frames, state):
    import pandas as pd
    n, total = state.get if state.exists else (0, 0)
    for frame in frames:
        n, total = n + len(frame), total + int(frame["value"].sum())
    state.update((n, total))
    yield pd.DataFrame({"key": [key[0]], "n": [n], "total": [total]})


class PandasWithState(Aggregation):
    name = "applyInPandasWithState"

    def build(self, spark, src):
        return (_stream(spark, src).groupBy("key").applyInPandasWithState(
            _count_in_pandas, "key STRING, n LONG, total LONG", "n LONG, total LONG",
            "update", "NoTimeout"), "update")


class TransformWithState(Aggregation):
    """``transformWithState`` runs on RocksDB only (Spark's
    ``TransformWithStateExec`` requires the RocksDB provider)."""
    name = "transformWithState"
    stores = ("rocksdb", "rocksdb-changelog", "rocksdb-v2", "rocksdb-v2-zips")

    def build(self, spark, src):
        return (_stream(spark, src).groupBy("key").transformWithState(
            _counting_processor(), "key STRING, n LONG, total LONG", "Update", "None"),
            "update")


def _counting_processor():
    from pyspark.sql import Row
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class Counting(StatefulProcessor):
        def init(self, handle):
            self.totals = handle.getValueState("totals", "n LONG, total LONG")

        def handleInputRows(self, key, rows, timerValues):
            n, total = self.totals.get() if self.totals.exists() else (0, 0)
            for row in rows:
                n, total = n + 1, total + row.value
            self.totals.update((n, total))
            yield Row(key=key[0], n=n, total=total)

        def close(self):
            pass

    return Counting()


class Projection(Operator):
    """A stateless query (no state store: one store configuration, and the offset log's
    version 2, are enough)."""
    name = "stateless"
    stores = ("hdfs", "hdfs-offsets-v2")

    def build(self, spark, src):
        return _stream(spark, src).select("key", "value"), "append"

    def expected(self, files):
        return Counter(row for rows in files for row in rows)


class AsyncProjection(Projection):
    """The stateless query with ``asyncProgressTrackingEnabled``: Spark allows it only for
    stateless queries into the memory, console, noop or Kafka sink with a processing-time
    trigger (AsyncProgressTrackingMicroBatchExecution.validateAndGetTrigger), and of those
    only noop, console and Kafka restart from a checkpoint, so it writes to noop and each
    batch is recorded from the query's progress as the rows it read; offsets and commits are
    written at most every 300 ms, which leaves gaps in both logs."""
    name = "stateless-async"
    async_progress = True
    interval_ms = "300"

    def merge(self, batches):
        return sum(rows for batch in batches for (rows,) in batch)

    def expected(self, files):
        return sum(len(rows) for rows in files)


OPERATORS = {op.name: op for op in (Aggregation(), Deduplication(), WatermarkDeduplication(),
                                    StreamJoin(), PandasWithState(), TransformWithState(),
                                    Projection(), AsyncProjection())}


class Query:
    """``operator``'s query on ``src`` into ``checkpoint``, recording every batch's rows (with
    async progress tracking, where foreachBatch is not allowed: the number of rows each batch
    read, from the query's progress)."""

    def __init__(self, spark, operator: Operator, src, checkpoint: str):
        self.batches: dict[int, list[tuple]] = {}
        self.from_progress = operator.async_progress
        frame, mode = operator.build(spark, src)
        writer = frame.writeStream.outputMode(mode).option("checkpointLocation", checkpoint)
        if operator.async_progress:
            writer = (writer.format("noop").option("asyncProgressTrackingEnabled", "true")
                      .option("asyncProgressTrackingCheckpointIntervalMs",
                              operator.interval_ms))
        else:
            writer = writer.foreachBatch(self._record)
        self.query = writer.start()

    def _record(self, df, batch_id: int) -> None:
        self.batches[batch_id] = [tuple(r) for r in df.collect()]

    def run(self) -> None:
        try:
            self.query.processAllAvailable()
        finally:
            self.query.stop()
        if self.query.exception() is not None:
            raise RuntimeError(str(self.query.exception()))
        if self.from_progress:
            for progress in self.query.recentProgress:
                self.batches[progress.batchId] = [(progress.numInputRows,)]


@dataclass
class Outcome:
    operator: str
    store: str
    keep: int
    batch: int
    catalog_restores: bool
    spark: str            # "exact", "wrong", "failed: <why>"
    reason: str = ""

    @property
    def agrees(self) -> bool:
        return (self.spark == "exact") == self.catalog_restores


@contextmanager
def spark_conf(spark, settings: dict):
    old = {k: spark.conf.get(k, None) for k in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def copy_tree(hdfs: WebHdfsClient, src: str, dst: str) -> None:
    for entry in hdfs.list(src):
        name = entry["pathSuffix"]
        if entry["type"] == "DIRECTORY":
            hdfs.mkdirs(f"{dst}/{name}")
            copy_tree(hdfs, f"{src}/{name}", f"{dst}/{name}")
        else:
            hdfs.create(f"{dst}/{name}", b"".join(hdfs.read(f"{src}/{name}")))


def remove_after(hdfs: WebHdfsClient, base: str, batch: int) -> None:
    """What a rollback to ``batch`` removes, done by hand: later offsets, commits and source
    entries, and state versions above ``batch + 1`` with their ``.crc`` sidecars."""
    def numbered(directory):
        try:
            return hdfs.list(directory)
        except Exception:
            return []
    for section in ("offsets", "commits"):
        for entry in numbered(f"{base}/{section}"):
            name = entry["pathSuffix"]
            if name.isdigit() and int(name) > batch:
                hdfs.delete(f"{base}/{section}/{name}")
    for source in numbered(f"{base}/sources"):
        for entry in numbered(f"{base}/sources/{source['pathSuffix']}"):
            stem = entry["pathSuffix"].split(".")[0]
            if stem.isdigit() and int(stem) > batch:
                hdfs.delete(f"{base}/sources/{source['pathSuffix']}/{entry['pathSuffix']}")
    _remove_state_after(hdfs, f"{base}/state", batch + 1)


def _remove_state_after(hdfs: WebHdfsClient, directory: str, version: int) -> None:
    try:
        entries = hdfs.list(directory)
    except Exception:
        return
    for entry in entries:
        name = entry["pathSuffix"]
        where = f"{directory}/{name}"
        if entry["type"] == "DIRECTORY":
            _remove_state_after(hdfs, where, version)
            continue
        match = re.fullmatch(r"(\d+)(_[^.]*)?\.(delta|snapshot|zip|changelog)(\.crc)?", name)
        if match and int(match.group(1)) > version:
            hdfs.delete(where)


# ------------------------------------------------- damage to format version 2 state files

UNIQUE_STATE_FILE = re.compile(r"(\d+)_([^.]+)\.(changelog|zip)")
DAMAGED_VERSION = 4         # batch 3's state: read by batches 3-5 without snapshots


def _unique_files(hdfs: WebHdfsClient, directory: str, version: int) -> list[str]:
    """The ``<version>_<id>.changelog|.zip`` files under ``directory`` (its stores)."""
    out = []
    for entry in hdfs.list(directory):
        where = f"{directory}/{entry['pathSuffix']}"
        if entry["type"] == "DIRECTORY":
            if not entry["pathSuffix"].startswith("_") and entry["pathSuffix"] != "SSTs":
                out += _unique_files(hdfs, where, version)
        elif (m := UNIQUE_STATE_FILE.fullmatch(entry["pathSuffix"])) and \
                int(m.group(1)) == version:
            out.append(where)
    return sorted(out)


def _renamed(path: str) -> str:
    """``path`` with another unique id, as another task attempt would have named it."""
    head, name = path.rsplit("/", 1)
    m = UNIQUE_STATE_FILE.fullmatch(name)
    return f"{head}/{m.group(1)}_{uuid.uuid4()}.{m.group(3)}"


def add_leftovers(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """Beside each of partition 0's files of the newest version, the same bytes under
    another unique id: what a task attempt that was not committed leaves."""
    for path in _unique_files(hdfs, f"{base}/state/0/0", batches):
        hdfs.create(_renamed(path), b"".join(hdfs.read(path)))


def flip_a_byte(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """One byte of partition 0's first file of DAMAGED_VERSION changed, its ``.crc`` kept."""
    path = _unique_files(hdfs, f"{base}/state/0/0", DAMAGED_VERSION)[0]
    data = bytearray(b"".join(hdfs.read(path)))
    data[len(data) // 2] ^= 0x01
    hdfs.create(path, bytes(data), overwrite=True)


def flip_a_byte_and_lose_its_sidecar(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """``flip_a_byte``, and the ``.crc`` sidecar lost too: only the codec can tell."""
    flip_a_byte(hdfs, base, batches)
    path = _unique_files(hdfs, f"{base}/state/0/0", DAMAGED_VERSION)[0]
    hdfs.delete(path + ".crc")


def swap_for_a_leftover(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """Partition 0's first committed file of DAMAGED_VERSION renamed to another unique id:
    only a leftover of that version is left."""
    path = _unique_files(hdfs, f"{base}/state/0/0", DAMAGED_VERSION)[0]
    hdfs.rename(path, _renamed(path))


def cut_in_half(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """Partition 0's first file of DAMAGED_VERSION cut to its first half, as a write the
    store never finished leaves it; its ``.crc`` (if any) kept."""
    path = _unique_files(hdfs, f"{base}/state/0/0", DAMAGED_VERSION)[0]
    data = b"".join(hdfs.read(path))
    hdfs.create(path, data[:len(data) // 2], overwrite=True)


def delete_a_committed_file(hdfs: WebHdfsClient, base: str, batches: int) -> None:
    """Partition 0's first committed file of DAMAGED_VERSION deleted with its ``.crc``: no
    file of that version is left."""
    path = _unique_files(hdfs, f"{base}/state/0/0", DAMAGED_VERSION)[0]
    hdfs.delete(path)
    hdfs.delete(path + ".crc")


# Applied to a retained checkpoint before its copies (checkpoint format version 2 stores).
DAMAGES = {"leftover": add_leftovers, "checksum": flip_a_byte, "swap": swap_for_a_leftover,
           "no-sidecar": flip_a_byte_and_lose_its_sidecar, "truncate": cut_in_half,
           "delete": delete_a_committed_file}


def run_cell(spark, operator: Operator, store: str, keep: int, url: str, port: int, tmp_path,
             batches: int = 6, user: str = "tester", scheme: str = "webhdfs",
             damage: str | None = None) -> list[Outcome]:
    """One cell of the matrix: ``operator`` on ``store``, retained to ``keep`` batches, and
    every batch's verdict against Spark's restart (see the module docstring). Spark's
    checkpoints go to ``<scheme>://127.0.0.1:<port>`` (``port`` that scheme's: the RPC
    port for hdfs://); the catalog and the copies by hand go through ``url``. ``damage``
    (a key of DAMAGES) is done to the retained checkpoint before it is copied; the cell's
    store reads ``<store>+<damage>``."""
    outcomes = []
    root = f"{scheme}://127.0.0.1:{port}"
    label = f"{store}+{damage}" if damage else store
    cell = f"{re.sub(r'[^a-z0-9]+', '-', operator.name.lower())}-{label.replace('+', '-')}" \
           f"-{keep}"
    src = tmp_path / f"in-{cell}-{next(_names)}"
    src.mkdir()
    base = f"/conformance/{cell}/base"
    files = [feed(src, i) for i in range(batches)]
    want = operator.expected(files)
    with spark_conf(spark, STORES[store]), WebHdfsClient(url, user) as hdfs, \
            CatalogClient(url, user) as catalog:
        first = Query(spark, operator, src, f"{root}{base}")
        first.run()
        assert operator.merge(first.batches[b] for b in sorted(first.batches)) == want, \
            f"{operator.name} on {store}: the uninterrupted run is not the expected result"
        # One more input file for the restarts only: each of them runs a batch, so each
        # reads the state it restored (after the last batch it would otherwise run none and
        # never load it).
        files.append(feed(src, batches))
        want = operator.expected(files)
        if operator.async_progress:
            hdfs.set_xattr(base, ASYNC_PROGRESS_XATTR, "true")
        catalog.retain(base, keep)
        if damage:
            DAMAGES[damage](hdfs, base, batches)
        for batch in range(batches):
            copy = f"/conformance/{cell}/b{batch}"
            hdfs.mkdirs(copy)
            copy_tree(hdfs, base, copy)
            if operator.async_progress:
                hdfs.set_xattr(copy, ASYNC_PROGRESS_XATTR, "true")
            try:
                catalog.rollback(copy, batch)
                restores, reason = True, ""
            except NotRestorable as exc:
                restores, reason = False, str(exc)
                remove_after(hdfs, copy, batch)
            replay = Query(spark, operator, src, f"{root}{copy}")
            try:
                replay.run()
            except Exception as exc:               # Spark refused the checkpoint
                outcomes.append(Outcome(operator.name, label, keep, batch, restores,
                                        f"failed: {why(exc)}", reason))
                continue
            kept = [first.batches[b] for b in sorted(first.batches) if b <= batch]
            final = operator.merge(kept + [replay.batches[b] for b in sorted(replay.batches)])
            exact = final == want and (not replay.batches or min(replay.batches) == batch + 1)
            outcomes.append(Outcome(operator.name, label, keep, batch, restores,
                                    "exact" if exact else "wrong", reason))
    return outcomes


def why(exc: Exception) -> str:
    """Spark's own reason: its error class (the innermost, not STREAM_FAILED nor the
    foreachBatch wrapper around what the batch's job raised), else the first line of the
    message the query ended with."""
    text = str(exc)
    classes = [c for c in re.findall(r"\[([A-Z][A-Z_]+(?:\.[A-Z_]+)*)\]", text)
               if c not in ("STREAM_FAILED", "FOREACH_BATCH_USER_FUNCTION_ERROR")]
    if classes:
        return classes[0]
    first = text.split("terminated with exception:")[-1].strip().splitlines()[0]
    return first.split(" SQLSTATE:")[0][:120]


def table(outcomes: list[Outcome]) -> list[str]:
    lines = ["| operator | state store | keep | batch | catalog | Spark's restart | agrees |",
             "|---|---|---|---|---|---|---|"]
    for o in outcomes:
        lines.append(f"| {o.operator} | {o.store} | {o.keep} | {o.batch} | "
                     f"{'restores' if o.catalog_restores else 'refuses'}"
                     f" | {o.spark} | {'yes' if o.agrees else '**no**'} |")
    return lines


def summary(outcomes: list[Outcome]) -> list[str]:
    """The table grouped by cell: the batches the catalog restores and refuses, and what
    Spark's restart did with each group."""
    from nnlite.catalog.streaming import runs
    cells: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        cells.setdefault((o.operator, o.store, o.keep), []).append(o)
    lines = ["| operator | state store | keep | catalog restores | Spark | catalog refuses | "
             "Spark | agree |", "|---|---|---|---|---|---|---|---|"]
    for (operator, store, keep), group in cells.items():
        sides = []
        for restores in (True, False):
            mine = [o for o in group if o.catalog_restores == restores]
            said: dict[str, list[int]] = {}
            for o in mine:
                said.setdefault(o.spark, []).append(o.batch)
            sides += [runs([o.batch for o in mine]) or "--",
                      "; ".join(f"{what} ({runs(batches)})" for what, batches in said.items())
                      or "--"]
        agree = sum(o.agrees for o in group)
        lines.append(f"| {operator} | {store} | {keep} | {' | '.join(sides)} | "
                     f"{agree}/{len(group)} |")
    return lines
