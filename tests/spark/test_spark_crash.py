"""The namenode is SIGKILLed while a stateful streaming query checkpoints into it. After a
restart on the same name dir and port, every batch Spark saw committed is still in commits/
and offsets/, and the restarted query resumes and produces the right cumulative result.
Over webhdfs:// with the HDFS-backed state store, and over hdfs:// (Hadoop IPC and the
built-in datanode) with the RocksDB one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time

import pytest

from tests.catalog.conformance import STORES, spark_conf
from tests.servers import NamenodeProcess, wait_for
from tests.spark import batch_ids, list_names, read_bytes
from tests.spark.test_streaming_checkpoint import SCHEMA, expected, result, write_batch

pytestmark = [pytest.mark.spark, pytest.mark.crash]

FILES = 12
# CheckpointFileManager.RenameBasedFSDataOutputStream's temp name for a batch file
TEMP = re.compile(r"\.\d+\.[0-9a-f-]{36}\.tmp")


def start_query(spark, src, checkpoint: str, name: str):
    from pyspark.sql import functions as F
    counts = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
              .groupBy("key").agg(F.count("*").alias("n"), F.sum("value").alias("total")))
    return (counts.writeStream.format("memory").queryName(name).outputMode("complete")
            .option("checkpointLocation", checkpoint).start())


def restart_on(start_namenode, name_dirs: list[str], port: int,
               rpc_port: int) -> NamenodeProcess:
    """The checkpointLocation names the port, so the namenode must come back on it (and on
    its RPC port, for hdfs://)."""
    refusals: list[RuntimeError] = []

    def started() -> NamenodeProcess | None:
        try:
            return start_namenode("--port", str(port), "--rpc-port", str(rpc_port),
                                  name_dirs=name_dirs)
        except RuntimeError as exc:          # exited at once: the port is not free yet
            refusals.append(exc)
            return None
    try:
        return wait_for(started, 30, f"port {port} to be free", interval=0.25)
    except TimeoutError as exc:
        raise AssertionError(f"{exc}: {refusals[-1:]}") from None


def meet_the_killed_connection(spark, uri: str) -> None:
    """Hadoop's IPC client reads nothing from an idle connection (``Client.Connection
    .waitForWork``): one that was idle when the namenode was killed stays cached until
    ``ipc.client.connection.maxidletime`` (10 s) and its next call reads EOF, which DFSClient
    does not ask again without ``dfs.client.retry.policy.enabled``
    (``NameNodeProxiesClient.createNonHAProxyWithClientProtocol``: TRY_ONCE_THEN_FAIL). A
    NameNode restarted on its port does the same to such a client, and so to a query started
    on it at once. The driver's cached FileSystem, the one the query starts with, meets that
    connection here first, if it is still cached; its next call must then be answered."""
    from py4j.protocol import Py4JJavaError
    jvm = spark.sparkContext._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(uri),
                                                 spark.sparkContext._jsc.hadoopConfiguration())
    root = jvm.org.apache.hadoop.fs.Path("/")
    try:
        fs.exists(root)
    except Py4JJavaError as exc:
        cause = str(exc.java_exception)
        assert "EOFException" in cause or "Connection reset" in cause, cause
    assert fs.exists(root)


# How long after batch 1's progress report the kill comes: at once (batch 2's offset log and
# source log), or while batch 2's tasks write state-store deltas, or around its commit. Over
# hdfs:// once, with RocksDB, while its tasks upload the state.
@pytest.mark.parametrize("scheme,store,delay", [
    *(("webhdfs", "hdfs", delay) for delay in (0.0, 0.15, 0.5)),
    ("hdfs", "rocksdb", 0.15)])
def test_namenode_killed_while_spark_checkpoints(spark, tmp_path, start_namenode, scheme,
                                                 store, delay):
    with spark_conf(spark, STORES[store]):
        nn = killed_and_restarted(spark, tmp_path, start_namenode, scheme, delay)
    # the state store it ran on: RocksDB's checkpoints are zip files, the HDFS-backed
    # store's deltas
    suffix = ".zip" if store == "rocksdb" else ".delta"
    assert any(n.endswith(suffix) for n in list_names(nn.url, "/ckpt/crash/state/0/0"))


def killed_and_restarted(spark, tmp_path, start_namenode, scheme: str,
                         delay: float) -> NamenodeProcess:
    from pyspark.errors import StreamingQueryException

    name_dirs = [str(tmp_path / "name")]
    src = tmp_path / "in"
    src.mkdir()
    batches = [[(k, i * 10 + j) for j, k in enumerate("abcde"[: 1 + i % 5])]
               for i in range(FILES)]
    for i, rows in enumerate(batches):
        write_batch(src, f"{i:02d}.json", rows)
        os.utime(src / f"{i:02d}.json", (1_000_000 + i, 1_000_000 + i))   # one order

    nn = start_namenode(name_dirs=name_dirs)
    port, rpc_port = nn.port, nn.rpc_port
    checkpoint = f"{scheme}://127.0.0.1:{port if scheme == 'webhdfs' else rpc_port}/ckpt/crash"
    query = start_query(spark, src, checkpoint, "nnlite_crash")
    killed = threading.Event()

    def killer():
        # Wait until two batches are committed, then kill while the next is in flight.
        # On a timeout kill anyway: the asserts below say which batches ran.
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: (query.lastProgress or {}).get("batchId", -1) >= 1, 60,
                     "batch 1 to commit", interval=0.01)
        time.sleep(delay)       # the fault's moment: this far into the next batch
        nn.kill()
        killed.set()

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    failed = False
    try:
        query.processAllAvailable()
    except StreamingQueryException:
        failed = True                    # expected: its checkpoint store went away
    thread.join(60)
    assert killed.is_set()
    acknowledged = sorted({p["batchId"] for p in query.recentProgress})
    query.stop()
    assert failed or query.exception() is not None, "the kill came after the last batch"
    print(f"killed after {delay}s; acknowledged batches {acknowledged}")
    assert acknowledged[:2] == [0, 1] and acknowledged[-1] < FILES - 1

    nn = restart_on(start_namenode, name_dirs, port, rpc_port)
    commits = batch_ids(nn.url, "/ckpt/crash/commits")
    offsets = batch_ids(nn.url, "/ckpt/crash/offsets")
    assert set(acknowledged) <= set(commits), (acknowledged, commits)
    assert set(commits) <= set(offsets)
    assert commits == list(range(len(commits)))
    assert offsets == list(range(len(offsets)))
    # No batch file is half-written: each one holds what HDFSMetadataLog reads back (the
    # version line, then JSON). A file exists from its CREATE on, as on HDFS, so a kill
    # during Spark's write may leave its temp file (".<id>.<uuid>.tmp"), which Spark's
    # batchFilesFilter never reads; nothing else may be there.
    for log in ("commits", "offsets"):
        for name in list_names(nn.url, f"/ckpt/crash/{log}"):
            if name.isdigit():
                version, *entries = read_bytes(nn.url, f"/ckpt/crash/{log}/{name}").split(b"\n")
                assert version == b"v1" and entries, (log, name)
                assert all(json.loads(e) is not None for e in entries if e), (log, name)
            else:
                assert TEMP.fullmatch(name), (log, name)

    if scheme == "hdfs":
        meet_the_killed_connection(spark, checkpoint)
    query = start_query(spark, src, checkpoint, "nnlite_crash_again")
    try:
        query.processAllAvailable()
        # Wait until the last batch's commit-log file is there, so that stopping the query
        # cannot cut it short; the checks below then run on what Spark finished.
        wait_for(lambda: batch_ids(nn.url, "/ckpt/crash/commits")
                 == batch_ids(nn.url, "/ckpt/crash/offsets"), 30, "the last batch's commit")
        resumed = sorted({p["batchId"] for p in query.recentProgress})
        # it picks up where the committed log ends (re-running an uncommitted batch at
        # most), never from scratch
        assert resumed[0] == commits[-1] + 1
        # (progress events are posted asynchronously, so the last batch is checked below
        # through the commit and offset logs in nnlite, not through recentProgress)
        assert result(spark, "nnlite_crash_again") == expected(*batches)
    finally:
        query.stop()
    assert query.exception() is None
    # Every batch planned is committed, in one unbroken run of ids past the ones from
    # before the kill. Usually one per file; but a kill between batch N's offset log and
    # its source log makes Spark re-plan N from the files it lists then, so one batch
    # may take two files (all data is still counted once: the result check above).
    final = batch_ids(nn.url, "/ckpt/crash/commits")
    assert final == batch_ids(nn.url, "/ckpt/crash/offsets") == list(range(len(final)))
    assert FILES - 1 <= len(final) <= FILES and final[-1] > commits[-1]
    return nn
