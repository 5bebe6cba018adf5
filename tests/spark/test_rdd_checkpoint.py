"""RDD checkpointing into nnlite: ``sc.setCheckpointDir("webhdfs://...")`` and
``"hdfs://..."``."""

from __future__ import annotations

import pytest

from tests.spark import list_names, list_status, read_bytes

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("scheme", ["webhdfs", "hdfs"])
def test_rdd_checkpoint_is_written_into_nnlite_and_read_back(spark, namenode, tmp_path, scheme):
    sc = spark.sparkContext
    port = namenode.port if scheme == "webhdfs" else namenode.rpc_port
    sc.setCheckpointDir(f"{scheme}://127.0.0.1:{port}/rddckpt")
    try:
        rdd = sc.parallelize(range(1000), 4).map(lambda x: (x % 7, x * x))
        rdd.checkpoint()
        assert rdd.count() == 1000
        assert rdd.isCheckpointed()
        where = rdd.getCheckpointFile()
        prefix = f"{scheme}://127.0.0.1:{port}/rddckpt/"
        assert where.startswith(prefix)
        path = where[len(prefix) - len("/rddckpt/"):]          # "/rddckpt/<uuid>/rdd-N"
        assert path.startswith("/rddckpt/") and path.rsplit("/", 1)[1].startswith("rdd-")

        parts = [n for n in list_names(namenode.url, path) if n.startswith("part-")]
        assert parts == [f"part-{i:05d}" for i in range(4)]
        sizes = {s["pathSuffix"]: s["length"] for s in list_status(namenode.url, path)}
        assert all(sizes[p] > 0 for p in parts)
        data = read_bytes(namenode.url, f"{path}/{parts[0]}")
        assert len(data) == sizes[parts[0]] > 0

        # The lineage is cut: the checkpointed RDD now reads its partitions from nnlite.
        rdd.unpersist()
        assert "ReliableCheckpointRDD" in rdd.toDebugString().decode()
        expected = sum(x * x for x in range(1000))
        assert rdd.values().sum() == expected
        assert sorted(rdd.countByKey().items()) == \
            sorted((k, len(range(k, 1000, 7))) for k in range(7))
    finally:
        sc.setCheckpointDir(str(tmp_path / "local-ckpt"))
