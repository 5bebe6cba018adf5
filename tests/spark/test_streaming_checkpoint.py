"""A stateful Structured Streaming query whose checkpointLocation is in nnlite, over
webhdfs:// and over hdfs:// (Hadoop IPC and the built-in datanode): it runs a few batches,
stops, restarts on the same checkpoint with new input, and continues from its last batch with
its aggregation state restored from the namenode."""

from __future__ import annotations

import json

import pytest

from tests.spark import batch_ids, list_names, read_bytes

pytestmark = pytest.mark.spark

SCHEMA = "key STRING, value LONG"


def write_batch(src, name: str, rows: list[tuple[str, int]]) -> None:
    """Publish one input file atomically (write aside, rename in) so the file source never
    sees half of it."""
    tmp = src.parent / f".{name}.tmp"
    tmp.write_text("".join(json.dumps({"key": k, "value": v}) + "\n" for k, v in rows))
    tmp.rename(src / name)


def start_query(spark, src, checkpoint: str, name: str):
    from pyspark.sql import functions as F
    counts = (spark.readStream.schema(SCHEMA).json(str(src))
              .groupBy("key").agg(F.count("*").alias("n"), F.sum("value").alias("total")))
    return (counts.writeStream.format("memory").queryName(name).outputMode("complete")
            .option("checkpointLocation", checkpoint).start())


def result(spark, name: str) -> dict[str, tuple[int, int]]:
    return {r["key"]: (r["n"], r["total"]) for r in spark.table(name).collect()}


def expected(*batches) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for rows in batches:
        for key, value in rows:
            n, total = out.get(key, (0, 0))
            out[key] = (n + 1, total + value)
    return out


@pytest.mark.parametrize("scheme", ["webhdfs", "hdfs"])
def test_stateful_query_restarts_from_its_nnlite_checkpoint(spark, namenode, tmp_path, scheme):
    src = tmp_path / "in"
    src.mkdir()
    port = namenode.port if scheme == "webhdfs" else namenode.rpc_port
    checkpoint = f"{scheme}://127.0.0.1:{port}/ckpt/q1"
    b0 = [("a", 1), ("b", 2), ("a", 3)]
    b1 = [("b", 10), ("c", 20)]
    b2 = [("a", 100), ("c", 200), ("d", 300)]

    write_batch(src, "0.json", b0)
    query = start_query(spark, src, checkpoint, f"nnlite_q1_{scheme}")
    try:
        query.processAllAvailable()
        assert result(spark, f"nnlite_q1_{scheme}") == expected(b0)
        write_batch(src, "1.json", b1)
        query.processAllAvailable()
        assert result(spark, f"nnlite_q1_{scheme}") == expected(b0, b1)
        assert query.lastProgress["batchId"] == 1
    finally:
        query.stop()
    assert query.exception() is None

    url = namenode.url
    assert ({"commits", "metadata", "offsets", "sources", "state"}
            <= set(list_names(url, "/ckpt/q1")))
    assert batch_ids(url, "/ckpt/q1/offsets") == [0, 1]
    assert batch_ids(url, "/ckpt/q1/commits") == [0, 1]
    query_id = json.loads(read_bytes(url, "/ckpt/q1/metadata"))["id"]
    assert query_id == query.id
    # the aggregation's state store: one dir per shuffle partition, a delta per batch
    assert list_names(url, "/ckpt/q1/state/0") == ["0", "1", "2", "3", "_metadata"]
    assert {"1.delta", "2.delta"} <= set(list_names(url, "/ckpt/q1/state/0/0"))
    # no temp file is left behind by the checkpoint file manager's write-then-rename
    assert not [n for n in list_names(url, "/ckpt/q1/offsets") if n.startswith(".")]

    write_batch(src, "2.json", b2)
    query = start_query(spark, src, checkpoint, f"nnlite_q1_again_{scheme}")
    try:
        query.processAllAvailable()
        assert query.id == query_id                 # the same query, resumed
        assert query.lastProgress["batchId"] == 2   # continues after batch 1, not from 0
        assert result(spark, f"nnlite_q1_again_{scheme}") == expected(b0, b1, b2)
    finally:
        query.stop()
    assert query.exception() is None
    assert batch_ids(url, "/ckpt/q1/offsets") == [0, 1, 2]
    assert batch_ids(url, "/ckpt/q1/commits") == [0, 1, 2]
    commit = read_bytes(url, "/ckpt/q1/commits/2").decode()
    assert commit.startswith("v1\n")
