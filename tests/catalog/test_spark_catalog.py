"""The catalog on what real PySpark writes into a real namenode: a stateful Structured
Streaming query (ls, show, latest, validate; retention with a pin; rollback checked through
the query's output) and batch-job checkpoints around ``df.write.parquet``, including a
driver SIGKILLed between begin and complete."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid

import pytest

from nnlite.catalog.client import NotRestorable
from nnlite.catalog.spark import JobCheckpoint, read_latest, write_checkpoint
from tests.catalog import conformance
from tests.catalog.conformance import OPERATORS, feed
from tests.servers import ROOT
from tests.spark.test_streaming_checkpoint import expected

pytestmark = pytest.mark.spark

Q = "/ckpt/agg"
AGGREGATION = OPERATORS["aggregation"]


class Query(conformance.Query):
    """The conformance matrix's aggregation, each batch recorded as ``{key: (n, total)}``."""

    def __init__(self, spark, src, checkpoint: str):
        super().__init__(spark, AGGREGATION, src, checkpoint)

    def _record(self, df, batch_id: int) -> None:
        self.batches[batch_id] = {r["key"]: (r["n"], r["total"]) for r in df.collect()}


def first_run(spark, server, tmp_path, q: str, count: int, scheme: str = "webhdfs"):
    """Input files 0..count-1 and the aggregation run over them into ``q``: batches 0..count-1.
    Returns the input directory, the checkpoint's URI and the files' rows."""
    src = tmp_path / "in"
    src.mkdir()
    port = server.rpc_port if scheme == "hdfs" else server.port
    uri = f"{scheme}://127.0.0.1:{port}{q}"
    files = [feed(src, i) for i in range(count)]
    Query(spark, src, uri).run()
    return src, uri, files


def test_streaming_checkpoint_seen_retained_and_rolled_back(spark, server, catalog, tmp_path):
    src, uri, files = first_run(spark, server, tmp_path, Q, 10)     # batches 0..9

    [row] = catalog.ls("/ckpt")
    assert (row["path"], row["kind"], row["lastBatch"], row["restorableBatch"], row["health"]) \
        == (Q, "streaming", 9, 9, "ok")
    assert row["stateBytes"] > 0 and row["files"] > 30
    shown = catalog.show(Q)
    assert [b["batch"] for b in shown["batches"]] == list(range(10))
    assert all(b["offsets"] and b["commit"] and b["timestampMs"] > 0 for b in shown["batches"])
    assert shown["operators"][0]["maxVersion"] == 10 and shown["queryId"]
    assert catalog.latest(Q)["latest"] == 9
    report = catalog.validate(Q)
    assert report["restorable"], report["issues"]

    # Retention: keep 5, with batch 2 pinned; the query still restarts where it was.
    catalog.pin(Q, 2)
    retained = catalog.retain(Q, 5)
    assert retained["keptBatches"] == [2, 5, 6, 7, 8, 9]
    # the offsets before each kept batch stay (a restart after it reads them), not its commit
    assert [(b["batch"], b["commit"]) for b in catalog.show(Q)["batches"]] == [
        (1, False), (2, True), (4, False), (5, True), (6, True), (7, True), (8, True),
        (9, True)]
    assert catalog.validate(Q)["restorable"]
    files.append(feed(src, 10))
    again = Query(spark, src, uri)
    again.run()
    assert sorted(again.batches) == [10]              # resumed after 9, not from scratch
    assert again.batches[10]["a"] == expected(*files)["a"]       # state restored from nnlite
    assert 2 in [b["batch"] for b in catalog.show(Q)["batches"]]   # the pin survived

    # Rollback to batch 6: the restarted query re-processes exactly from batch 7.
    rolled = catalog.rollback(Q, 6)
    assert rolled["removedBatches"] == [7, 8, 9, 10]
    assert catalog.validate(Q)["restorable"]
    replay = Query(spark, src, uri)
    replay.run()
    assert min(replay.batches) == 7
    assert replay.batches[7]["k7"] == (1, 100)        # batch 7 re-read file 7 ...
    final = {}
    for batch in sorted(replay.batches):
        final.update(replay.batches[batch])
    assert final["a"] == expected(*files)["a"]          # ... and nothing was counted twice
    assert final["b"] == (11, 11)


def test_an_offset_log_of_format_version_2(spark, server, catalog, hdfs, tmp_path):
    """``spark.sql.streaming.offsetLog.formatVersion=2``: Spark writes OffsetMap entries
    (``0:{"logOffset":N}``), which validate, show, latest, retain and rollback read as
    OffsetSeqLog.deserialize does; the rollback drops the file source's log entries after
    the offset it recorded, and the restart re-reads exactly the later files."""
    q = "/ckpt/offsets-v2"
    with conformance.spark_conf(spark, {conformance.OFFSET_LOG: "2"}):
        src, uri, files = first_run(spark, server, tmp_path, q, 6)      # batches 0..5
        entry = b"".join(hdfs.read(f"{q}/offsets/5")).split(b"\n")
        assert entry[0] == b"v2" and entry[2] == b'0:{"logOffset":5}'
        report = catalog.validate(q)
        assert report["restorable"] and report["issues"] == [], report
        assert catalog.latest(q)["latest"] == 5
        shown = catalog.show(q)
        assert all(b["timestampMs"] > 0 and b["restorable"] for b in shown["batches"])
        assert catalog.retain(q, 3)["keptBatches"] == [3, 4, 5]
        rolled = catalog.rollback(q, 3)
        assert rolled["removedBatches"] == [4, 5]
        assert [e["pathSuffix"] for e in hdfs.list(f"{q}/sources/0")] == ["0", "1", "2", "3"]
        replay = Query(spark, src, uri)
        replay.run()
    assert sorted(replay.batches) == [4, 5]
    assert replay.batches[5]["a"] == expected(*files)["a"]


class NamedAggregation(conformance.Aggregation):
    """The aggregation over a named source (``DataStreamReader.name``, Spark 4.2+)."""

    def build(self, spark, src):
        from pyspark.sql import functions as F
        frame = (spark.readStream.name("clicks").schema(conformance.SCHEMA)
                 .option("maxFilesPerTrigger", 1).json(str(src)))
        return frame.groupBy("key").agg(F.count("*").alias("n"),
                                        F.sum("value").alias("total")), "update"


def test_a_named_source_in_an_offset_log_of_format_version_2(spark, server, catalog, hdfs,
                                                            tmp_path):
    """With source evolution on, a named source's offsets are ``clicks:{...}`` lines and its
    log is ``sources/clicks``: the catalog finds its log offset there (rule 6), and the
    rollback removes that log's later entries."""
    q = "/ckpt/named-source"
    src = tmp_path / "in"
    src.mkdir()
    files = [feed(src, i) for i in range(4)]
    uri = f"webhdfs://127.0.0.1:{server.port}{q}"
    settings = {conformance.OFFSET_LOG: "2",
                "spark.sql.streaming.queryEvolution.enableSourceEvolution": "true"}
    with conformance.spark_conf(spark, settings):
        conformance.Query(spark, NamedAggregation(), src, uri).run()
        assert b"".join(hdfs.read(f"{q}/offsets/3")).split(b"\n")[2] == \
            b'clicks:{"logOffset":3}'
        assert catalog.validate(q)["issues"] == []
        hdfs.rename(f"{q}/sources/clicks/3", f"{q}/sources/clicks/3-aside")
        report = catalog.validate(q)
        assert report["restorableBatch"] == 2 and any(
            "sources/clicks/3 is missing" in i["message"] for i in report["issues"])
        hdfs.rename(f"{q}/sources/clicks/3-aside", f"{q}/sources/clicks/3")
        assert catalog.rollback(q, 1)["removedBatches"] == [2, 3]
        assert [e["pathSuffix"] for e in hdfs.list(f"{q}/sources/clicks")] == ["0", "1"]
        replay = conformance.Query(spark, NamedAggregation(), src, uri)
        replay.run()
    assert sorted(replay.batches) == [2, 3]
    assert {r[0]: r[1:] for r in replay.batches[3]}["a"] == expected(*files)["a"]


def test_checkpoint_format_version_2_reads_the_committed_unique_ids(spark, server, catalog,
                                                                    hdfs, tmp_path):
    """RocksDB with checkpoint format version 2 (``<version>_<uniqueId>.changelog``, the ids
    in each commit's stateUniqueIds): a file of another id beside the committed one is a
    leftover (restorable, warned, removed by retention); the committed file gone with only
    another id's file left, the catalog refuses the batch and Spark fails to restart from
    it, and the rollback the catalog offers restarts exactly."""
    q = "/ckpt/format-v2"
    with conformance.spark_conf(spark, conformance.STORES["rocksdb-v2"]):
        src, uri, files = first_run(spark, server, tmp_path, q, 6)      # batches 0..5
        commit = json.loads(b"".join(hdfs.read(f"{q}/commits/5")).split(b"\n")[1])
        committed = commit["stateUniqueIds"]["0"][0][0]
        store = f"{q}/state/0/0"
        real = f"{store}/6_{committed}.changelog"
        data = b"".join(hdfs.read(real))
        assert hdfs.exists(real + ".crc")      # ChecksumCheckpointFileManager's sidecar
        leftover = f"{store}/6_{uuid.uuid4()}.changelog"
        hdfs.create(leftover, data)
        report = catalog.validate(q)
        assert report["restorable"], report
        assert [(i["code"], i["path"]) for i in report["issues"]] == [
            ("leftover-unique-id", leftover)]
        [row] = [r for r in catalog.ls("/ckpt") if r["path"] == q]      # commits/5 read
        assert (row["health"], row["restorableBatch"]) == ("ok", 5)
        retained = catalog.retain(q, 3)
        assert retained["keptBatches"] == [3, 4, 5] and not hdfs.exists(leftover)
        assert catalog.validate(q)["issues"] == []

        hdfs.rename(real, leftover)            # only another attempt's version 6 is left
        report = catalog.validate(q)
        assert not report["restorable"] and report["restorableBatch"] == 4
        assert any(f"no file of unique id {committed}" in i["message"]
                   for i in report["issues"]), report
        with pytest.raises(NotRestorable, match="no file of unique id"):
            catalog.rollback(q, 5)
        files.append(feed(src, 6))
        with pytest.raises(Exception, match=f"6_{committed}.changelog does not exist"):
            Query(spark, src, uri).run()             # Spark cannot restart after batch 5
        catalog.rollback(q, 4)
        replay = Query(spark, src, uri)
        replay.run()
    assert sorted(replay.batches) == [5, 6]
    assert replay.batches[6]["a"] == expected(*files)["a"]


def test_checksum_files_written_over_hdfs_match_the_composed_crcs(spark, server, catalog,
                                                                  hdfs, tmp_path):
    """Over hdfs:// the chunk CRCs the store keeps are those DFSOutputStream sent in its
    packets (the datanode checks each): every sidecar Spark wrote there matches the CRC32C
    composed from them, and a sidecar of the wrong size does not."""
    q = "/ckpt/checksums-hdfs"
    with conformance.spark_conf(spark, conformance.STORES["rocksdb-v2"]):
        first_run(spark, server, tmp_path, q, 4, scheme="hdfs")
    sidecars = [e["pathSuffix"] for e in hdfs.list(f"{q}/state/0/0")
                if e["pathSuffix"].endswith(".changelog.crc")]
    assert len(sidecars) == 4
    report = catalog.validate(q)
    assert report["restorable"] and report["issues"] == [], report
    doc = json.loads(b"".join(hdfs.read(f"{q}/state/0/0/{sidecars[0]}")))
    doc["mainFileSize"] += 1
    hdfs.create(f"{q}/state/0/0/{sidecars[0]}", json.dumps(doc).encode(), overwrite=True)
    report = catalog.validate(q)              # version 1: every batch's changelogs read it
    assert sorted(i["code"] for i in report["issues"]) == ["checksum-mismatch",
                                                          "not-restorable"]
    assert report["restorableBatch"] is None


# A Spark of its own for the first run: RocksDB uploads a snapshot (<v>_<id>.zip) from its
# maintenance thread, whose interval is fixed when the JVM's first stateful query starts
# (60 s in the shared session); here 100 ms, and each snapshot is waited for before the
# next batch, so the changelogs after it record a lineage that starts at it.
SNAPSHOTS_FIRST_RUN = """
import json, re, sys
from pyspark.sql import SparkSession
from tests.catalog.conformance import OPERATORS, feed
from tests.servers import wait_for
from nnlite.client.webhdfs import WebHdfsClient
from pathlib import Path
url, uri, store, src, settings = sys.argv[1:6]
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
         .config(map=json.loads(settings)).getOrCreate())
frame, mode = OPERATORS["aggregation"].build(spark, src)
query = (frame.writeStream.outputMode(mode).format("noop").option("checkpointLocation", uri)
         .start())
with WebHdfsClient(url, "tester") as hdfs:
    for i in range(6):
        feed(Path(src), i)
        query.processAllAvailable()
        if i in (1, 3):     # versions 2 and 4 were snapshots: wait for their upload
            wait_for(lambda: any(re.fullmatch(rf"{i + 1}_[^.]+[.]zip", e["pathSuffix"])
                                 for e in hdfs.list(store)), 120, f"the zip of {i + 1}")
query.stop()
"""
SNAPSHOTS = {**conformance.STORES["rocksdb-v2"],
             "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
             "spark.sql.streaming.stateStore.maintenanceInterval": "100ms"}


def test_lost_snapshots_are_repaired_as_spark_repairs_them(spark, server, catalog, hdfs,
                                                          tmp_path):
    """Format version 2 with changelogs and snapshots: each changelog records its lineage
    back to the snapshot it builds on (versions 5 and 6 from version 4's zip). With the
    snapshots from version 4 on lost, the lineage has no base, yet Spark 4.3 restarts
    after batch 5 exactly: its auto snapshot repair (on by default) rebuilds from version
    2's zip and the changelogs after it, having read the lineage back to version 1
    (getFullLineage). ls, validate and retention say and keep just that: the batch
    restores, and retention keeps the older zip, the changelogs the repair replays and
    those it reads the lineage from."""
    q, src = "/ckpt/lineage", tmp_path / "in"
    src.mkdir()
    uri, store = f"webhdfs://127.0.0.1:{server.port}{q}", f"{q}/state/0/0"
    subprocess.run([sys.executable, "-c", SNAPSHOTS_FIRST_RUN, server.url, uri, store,
                    str(src), json.dumps(SNAPSHOTS)], cwd=ROOT, check=True, timeout=600,
                   env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    names = [e["pathSuffix"] for e in hdfs.list(store)]
    lost = [n for n in names if (m := re.fullmatch(r"(\d+)_[^.]+\.zip(\.crc)?", n))
            and int(m.group(1)) >= 4]
    for name in lost:
        hdfs.delete(f"{store}/{name}")
    [row] = [r for r in catalog.ls("/ckpt") if r["path"] == q]
    assert (row["health"], row["restorableBatch"]) == ("ok", 5), row
    assert catalog.validate(q)["restorable"]
    files = [[(r["key"], r["value"]) for r in map(json.loads, (src / f"{i:03d}.json")
                                                  .read_text().splitlines())]
             for i in range(6)]
    files.append(feed(src, 6))
    copy = f"{q}-copy"
    hdfs.mkdirs(copy)
    conformance.copy_tree(hdfs, q, copy)
    with conformance.spark_conf(spark, conformance.STORES["rocksdb-v2"]):
        before = Query(spark, src, f"webhdfs://127.0.0.1:{server.port}{copy}")
        before.run()                                # the oracle: Spark repairs it
        assert catalog.retain(q, 3)["keptBatches"] == [3, 4, 5]
        left = {re.sub(r"_[^.]+", "", e["pathSuffix"]) for e in hdfs.list(store)}
        # what the repair reads: 6's lineage back to 1 through the changelogs at its
        # starts (4, 2), then version 2's zip and the changelogs after it
        assert {"2.zip", "2.changelog", "3.changelog", "4.changelog", "5.changelog",
                "6.changelog"} <= left and "1.changelog" not in left, left
        after = Query(spark, src, uri)
        after.run()
    want = expected(*files)["a"]
    assert sorted(before.batches) == sorted(after.batches) == [6]
    assert before.batches[6]["a"] == after.batches[6]["a"] == want


def test_a_state_file_that_fails_its_checksum_file(spark, server, catalog, hdfs, tmp_path):
    """ChecksumCheckpointFileManager's ``.crc`` sidecars (on with format version 2): the
    catalog checks each state file against its sidecar with a CRC32C composed from the
    store's chunk CRCs. A changelog rewritten with one byte changed (same size, its blocks'
    CRCs its own) fails it: the catalog refuses the batches whose restore reads it, Spark
    fails CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED, and the rollback the catalog
    offers restarts exactly."""
    q = "/ckpt/checksums"
    with conformance.spark_conf(spark, conformance.STORES["rocksdb-v2"]):
        src, uri, files = first_run(spark, server, tmp_path, q, 6)      # batches 0..5
        assert catalog.validate(q)["issues"] == []          # every sidecar matches
        commit = json.loads(b"".join(hdfs.read(f"{q}/commits/5")).split(b"\n")[1])
        damaged = f"{q}/state/0/1/6_{commit['stateUniqueIds']['0'][1][0]}.changelog"
        data = bytearray(b"".join(hdfs.read(damaged)))
        data[-1] ^= 0x01
        hdfs.create(damaged, bytes(data), overwrite=True)
        report = catalog.validate(q)
        assert not report["restorable"] and report["restorableBatch"] == 4, report
        [issue] = [i for i in report["issues"] if i["code"] == "checksum-mismatch"]
        assert issue["level"] == "error" and issue["path"] == damaged
        assert catalog.latest(q)["latest"] == 4
        with pytest.raises(NotRestorable, match="does not match its checksum file"):
            catalog.rollback(q, 5)
        files.append(feed(src, 6))
        with pytest.raises(Exception, match="CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED"):
            Query(spark, src, uri).run()
        catalog.rollback(q, 4)
        assert catalog.validate(q)["issues"] == []      # the damaged file went with batch 5
        replay = Query(spark, src, uri)
        replay.run()
    assert sorted(replay.batches) == [5, 6]
    assert replay.batches[6]["a"] == expected(*files)["a"]


def test_batch_pipeline_job_checkpoints(spark, server, catalog):
    job = "/jobs/daily"
    df = spark.range(0, 1000, numPartitions=4).selectExpr("id", "id % 7 AS bucket")
    first = write_checkpoint(catalog, job, df)
    assert first["path"] == f"{job}/chk-1" and first["parts"] == 4
    assert read_latest(spark, catalog, job).count() == 1000
    # validate agrees with ls and latest on what Spark wrote (issue 22)
    [row] = catalog.ls("/jobs")
    report = catalog.validate(job)
    assert (row["health"], report["restorable"], report["restorableBatch"]) == ("ok", True, 1)
    assert not [i for i in report["issues"] if i["level"] == "error"], report

    with (pytest.raises(RuntimeError, match="the job failed"),
          JobCheckpoint(catalog, job) as chk):
        df.write.mode("append").parquet(chk.uri)
        raise RuntimeError("the job failed")
    assert catalog.latest_job(job)["id"] == 1         # aborted: chk-2 never became latest
    assert catalog.ls("/jobs")[0]["inProgress"] == []

    second = write_checkpoint(catalog, job, df.where("bucket = 0"), expected_parts=4)
    assert second["path"] == f"{job}/chk-3"           # ids are never reused
    assert read_latest(spark, catalog, job).count() == len([i for i in range(1000) if i % 7 == 0])
    for _ in range(3):
        write_checkpoint(catalog, job, df)
    catalog.pin(job, 3)
    retained = catalog.retain(job, 2)
    assert (retained["kept"], retained["removedCheckpoints"]) == ([3, 5, 6], [1, 4])
    assert catalog.latest_job(job)["id"] == 6


def test_the_oldest_kept_batch_restarts_and_spark_refuses_what_the_catalog_refuses(
        spark, server, catalog, hdfs, tmp_path):
    """Spark restarts after batch k only with offsets k - 1 present
    (MicroBatchExecution.validateOffsetLogAndGetPrevOffset): retention keeps them, so a
    rollback to the oldest kept batch restarts exactly; with them gone the catalog says so,
    and Spark itself fails to start."""
    q = "/ckpt/edge"
    src, uri, files = first_run(spark, server, tmp_path, q, 8)      # batches 0..7
    assert catalog.retain(q, 3)["keptBatches"] == [5, 6, 7]
    rolled = catalog.rollback(q, 5)                       # the oldest kept batch
    assert rolled["removedBatches"] == [6, 7]
    replay = Query(spark, src, uri)
    replay.run()
    assert min(replay.batches) == 6                        # restarted right after batch 5
    final = {}
    for batch in sorted(replay.batches):
        final.update(replay.batches[batch])
    assert final["a"] == expected(*files)["a"] and final["b"] == (8, 8)   # exactly once

    # offsets 6 gone (as an older retention would have left it): the catalog refuses batch 7
    # as a restart point, and Spark indeed cannot restart from it.
    hdfs.delete(f"{q}/offsets/6")
    assert not catalog.validate(q)["restorable"]
    with pytest.raises(NotRestorable, match="offsets/6 is missing"):
        catalog.rollback(q, 7)
    files.append(feed(src, 8))
    broken = Query(spark, src, uri)
    with pytest.raises(Exception, match="batch 6 doesn't exist"):
        broken.run()


def test_the_query_metadata_file_as_spark_treats_it(spark, server, catalog, hdfs, tmp_path):
    """Spark 4 refuses to restart a checkpoint whose logs hold batches once ``metadata`` is
    gone (STREAMING_CHECKPOINT_MISSING_METADATA_FILE), and one whose ``metadata`` does not
    parse; the catalog calls both not restorable. (Reading StreamingQueryCheckpointMetadata
    alone suggested Spark writes a new id: running Spark says otherwise.)"""
    q = "/ckpt/meta"
    src, uri, files = first_run(spark, server, tmp_path, q, 3)
    good = b"".join(hdfs.read(f"{q}/metadata"))
    for damage, code, words in (
            (None, "missing-metadata", "STREAMING_CHECKPOINT_MISSING_METADATA_FILE"),
            (b'{"id": ', "corrupt-log", "JsonEOFException: Unexpected end-of-input")):
        if damage is None:
            hdfs.delete(f"{q}/metadata")
        else:
            hdfs.create(f"{q}/metadata", damage, overwrite=True)
        report = catalog.validate(q)
        assert not report["restorable"] and code in [i["code"] for i in report["issues"]], report
        with pytest.raises(Exception, match=words):
            Query(spark, src, uri).run()
    hdfs.create(f"{q}/metadata", good, overwrite=True)         # restored: Spark goes on
    assert catalog.validate(q)["restorable"]
    files.append(feed(src, 3))
    again = Query(spark, src, uri)
    again.run()
    assert again.batches[max(again.batches)]["a"] == expected(*files)["a"]


DRIVER = """
import sys
import uuid
from pyspark.sql import SparkSession
from nnlite.catalog.client import CatalogClient
from nnlite.catalog.spark import write_checkpoint
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
         .getOrCreate())
with CatalogClient(sys.argv[1], "tester") as catalog:
    write_checkpoint(catalog, "/jobs/crash", spark.range(0, 50, numPartitions=2))
print("completed")
"""


def test_a_driver_killed_between_begin_and_complete_leaves_the_previous_latest(
        spark, server, catalog, tmp_path):
    write_checkpoint(catalog, "/jobs/crash", spark.range(0, 10, numPartitions=2))
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {**os.environ, "NNLITE_FAULTS": "catalog.before-complete=kill",
           "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    driver = subprocess.run([sys.executable, str(script), server.url], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert driver.returncode == -9, driver.stderr[-2000:]
    assert "completed" not in driver.stdout
    assert catalog.latest_job("/jobs/crash")["id"] == 1
    [row] = catalog.ls("/jobs")
    assert row["inProgress"] == [2]                   # its parts are there, never complete
    assert read_latest(spark, catalog, "/jobs/crash").count() == 10
    catalog.abort("/jobs/crash", 2)
    assert catalog.ls("/jobs")[0]["inProgress"] == []


def test_a_damaged_last_log_entry_as_spark_reads_it(spark, server, catalog, hdfs, tmp_path):
    """``HDFSMetadataLog.getLatest`` fails the restart on an offsets entry cut short (Jackson's
    end-of-input in ``OffsetSeqLog.deserialize``) and on an empty commit
    (``CommitLog.deserialize``, "Incomplete log file"): the catalog calls the batch not
    restorable and names the one before, and rolling back to that one restarts exactly
    once."""
    q = "/ckpt/damaged"
    src, uri, files = first_run(spark, server, tmp_path, q, 5)      # batches 0..4
    for rel, damage, spark_says in (
            ("offsets/4", b'v1\n{"batchWatermarkMs":0,"batchTi', "Unexpected end-of-input"),
            ("commits/4", b"", "Incomplete log file")):
        good = b"".join(hdfs.read(f"{q}/{rel}"))
        hdfs.create(f"{q}/{rel}", damage, overwrite=True)
        report = catalog.validate(q)
        assert (report["restorable"], report["restorableBatch"]) == (False, 3), report
        assert f"{q}/{rel}" in [i["path"] for i in report["issues"]]
        with pytest.raises(Exception, match=spark_says):
            Query(spark, src, uri).run()
        hdfs.create(f"{q}/{rel}", good, overwrite=True)
    hdfs.create(f"{q}/commits/4", b"", overwrite=True)
    assert catalog.rollback(q, 3)["removedBatches"] == [4]
    replay = Query(spark, src, uri)
    replay.run()
    assert sorted(replay.batches) == [4]
    assert replay.batches[4]["a"] == expected(*files)["a"] and replay.batches[4]["b"] == (5, 5)


class Windowed:
    """Counts per 100-second event-time window, appended once the watermark passes the
    window: after each file the watermark moves on, so Spark runs a no-data batch that
    emits the window just closed, and the file source's log ids fall behind the batch ids."""

    from_progress = False

    def __init__(self, spark, src, checkpoint: str):
        from pyspark.sql import functions as F
        self.batches: dict[int, list] = {}
        number = F.regexp_extract(F.input_file_name(), r"(\d+)\.json$", 1).cast("long")
        stream = conformance._stream(spark, src).withColumn(
            "at", F.timestamp_seconds(number * 100))         # file i: event time i * 100 s
        counts = (stream.withWatermark("at", "0 seconds").groupBy(F.window("at", "100 seconds"))
                  .count().select(F.col("window.start").cast("long").alias("start"), "count"))
        self.query = (counts.writeStream.outputMode("append").foreachBatch(self._record)
                      .option("checkpointLocation", checkpoint).start())

    def _record(self, df, batch_id: int) -> None:
        self.batches[batch_id] = sorted(tuple(r) for r in df.collect())

    def run(self, feeding=(), src=None) -> None:
        """Process what is there, then each file of ``feeding`` as it arrives."""
        try:
            self.query.processAllAvailable()
            for index in feeding:
                feed(src, index)
                self.query.processAllAvailable()
        finally:
            self.query.stop()
        assert self.query.exception() is None
        self.rows_read = {p.batchId: p.numInputRows for p in self.query.recentProgress}


def test_a_rollback_re_runs_the_same_batches_when_source_ids_lag_batch_ids(
        spark, server, catalog, hdfs, tmp_path):
    """The file source's log ids are its own (``FileStreamSourceOffset.logOffset``): with
    no-data batches they fall behind the batch ids. A rollback to batch B keeps the source log
    up to the offset ``offsets/B`` records (rule 6 of catalog/streaming.py), so the restarted
    query plans its batches afresh, one file each as ``maxFilesPerTrigger`` says, and emits
    exactly the windows the first run emitted after B. (Had the rollback kept the entries up
    to id B, Spark would read all their files in the first batch after the restart.)"""
    src = tmp_path / "in"
    src.mkdir()
    q = "/ckpt/windows"
    uri = f"webhdfs://127.0.0.1:{server.port}{q}"
    first = Windowed(spark, src, uri)
    first.run(range(6), src)                        # a file, then its no-data batch, ...
    shown = catalog.show(q)
    assert len(shown["batches"]) > 6                      # no-data batches between the files
    source_ids = {b: json.loads(b"".join(hdfs.read(f"{q}/offsets/{b}")).splitlines()[2])
                  ["logOffset"] for b in first.batches}
    # a batch whose source offset is two or more entries behind both its id and the log's
    # end: rolling back by batch id would leave entries that belong to later batches
    target = min(b for b in first.batches
                 if source_ids[b] + 2 <= min(b, max(source_ids.values())))
    rolled = catalog.rollback(q, target)
    assert sorted(int(n["pathSuffix"].split(".")[0]) for n in hdfs.list(f"{q}/sources/0")) == \
        list(range(source_ids[target] + 1))
    assert rolled["removedBatches"] == [b for b in sorted(first.batches) if b > target]
    replay = Windowed(spark, src, uri)
    replay.run()
    assert min(replay.batches) == target + 1
    assert max(replay.rows_read.values()) == 3                # one file (3 rows) per batch
    assert sorted(sum(replay.batches.values(), [])) == \
        sorted(sum((rows for b, rows in first.batches.items() if b > target), []))


def test_the_file_source_log_after_compaction_as_spark_reads_it(
        spark, server, catalog, hdfs, tmp_path):
    """``CompactibleFileStreamLog.allFiles`` rebuilds the file source's seen files from the
    last compaction up to the log's end: entries the compaction holds may go, any after it
    may not ("... doesn't exist"). The catalog says the same, and the rollback to a batch
    whose entries are whole restarts exactly once."""
    q = "/ckpt/compacted"
    with conformance.spark_conf(spark, {
            "spark.sql.streaming.fileSource.log.compactInterval": "3"}):
        src, uri, files = first_run(spark, server, tmp_path, q, 5)  # one entry per batch
        assert sorted(n["pathSuffix"] for n in hdfs.list(f"{q}/sources/0")) == \
            ["0", "1", "2.compact", "3", "4"]
        hdfs.delete(f"{q}/sources/0/0")                  # held by 2.compact: not needed
        assert catalog.validate(q)["restorable"]
        hdfs.delete(f"{q}/sources/0/3")                  # after the compaction: needed
        report = catalog.validate(q)
        assert (report["restorable"], report["restorableBatch"]) == (False, 2), report
        assert any("sources/0/3 is missing" in i["message"] for i in report["issues"])
        with pytest.raises(Exception, match=r"3 doesn't exist \(latestId: 4, compactInterval"):
            Query(spark, src, uri).run()
        assert catalog.rollback(q, 2)["removedBatches"] == [3, 4]
        replay = Query(spark, src, uri)
        replay.run()
    assert sorted(replay.batches) == [3, 4]
    final = {**replay.batches[3], **replay.batches[4]}
    assert final["a"] == expected(*files)["a"] and final["b"] == (5, 5)
