"""The whole conformance matrix (tests/catalog/conformance.py): for every state-store
configuration, every verdict of the catalog on a retained checkpoint against Spark's own
restart. Prints the Markdown table BENCHMARKS.md records.

    .venv/bin/python bench/conformance.py [--stores hdfs,rocksdb,...] [--batches 6] [--keep 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.catalog.conformance import STORES, run_store, table  # noqa: E402
from tests.catalog.test_spark_catalog import Query, feed  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402
from tests.spark.test_streaming_checkpoint import expected  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--keep", type=int, default=2)
    args = ap.parse_args()
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("nnlite-conformance")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    outcomes, started = [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        nn = NamenodeProcess.start([f"{tmp}/name"], "-D", "nnlite.catalog.quiet=0", "-D",
                                   "hadoop.user.group.static.mapping.overrides=tester=supergroup")
        try:
            for store in args.stores.split(","):
                print(f"conformance: {store} ...", file=sys.stderr, flush=True)
                outcomes += run_store(spark, Query, feed, expected, nn.url, nn.port,
                                      Path(tmp), store, args.batches, args.keep)
        finally:
            nn.stop()
            spark.stop()
    print("\n".join(table(outcomes)))
    disagree = [o for o in outcomes if not o.agrees]
    print(f"\n{len(outcomes)} verdicts, {len(disagree)} disagree with Spark, "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
