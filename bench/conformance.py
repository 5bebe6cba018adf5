"""The whole conformance matrix (tests/catalog/conformance.py): for every stateful operator,
state-store configuration and keep, every verdict of the catalog on a retained checkpoint
against Spark's own restart. Prints the Markdown table BENCHMARKS.md records (one row per
cell; ``--full``: one per verdict); exits 1 when a verdict disagrees with Spark or a cell
cannot run.

    .venv/bin/python bench/conformance.py [--operators aggregation,...] [--stores hdfs,...]
                                          [--keeps 2,6] [--batches 6] [--full]
                                          [--damages leftover,checksum,no-sidecar,swap,
                                                     truncate,delete]
                                          [--scheme webhdfs|hdfs]

``--damages``: the cells of the checkpoint format version 2 stores run again once per
damage done to the retained checkpoint before its copies (tests/catalog/conformance.py's
DAMAGES: another attempt's leftover files beside the newest committed ones, a committed
file that fails its ``.crc``, the same with its ``.crc`` lost, a committed file swapped for a
leftover, cut in half, or deleted). ``--scheme hdfs``: Spark writes its checkpoints over
hdfs:// (Hadoop IPC and the built-in datanode) instead of webhdfs://; the catalog answers
over HTTP either way.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.catalog.conformance import (  # noqa: E402
    DAMAGES,
    FORMAT,
    OPERATORS,
    STORES,
    run_cell,
    summary,
    table,
    why,
)
from tests.servers import NamenodeProcess  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--operators", default=",".join(OPERATORS))
    ap.add_argument("--stores", default=",".join(STORES))
    ap.add_argument("--keeps", default="2,6")
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--full", action="store_true", help="one row per verdict")
    ap.add_argument("--damages", default="",
                    help=f"also run the format version 2 cells with each of {','.join(DAMAGES)}")
    ap.add_argument("--scheme", choices=("webhdfs", "hdfs"), default="webhdfs",
                    help="the scheme Spark's checkpoints are written through")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("nnlite-conformance")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             # a whole matrix is a hundred-odd queries in one driver: 1 GiB ran out at ~100
             .config("spark.driver.memory", "4g")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    outcomes, failed, started = [], [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        nn = NamenodeProcess.start([f"{tmp}/name"], "-D", "nnlite.catalog.quiet=0", "-D",
                                   "hadoop.user.group.static.mapping.overrides=tester=supergroup")
        try:
            for name in args.operators.split(","):
                operator = OPERATORS[name]
                for store in args.stores.split(","):
                    if store not in operator.stores:
                        continue
                    damages = [None] + ([d for d in args.damages.split(",") if d]
                                        if STORES[store].get(FORMAT) == "2" else [])
                    for damage in damages:
                        for keep in (int(k) for k in args.keeps.split(",")):
                            what = f"{name} on {store}{f'+{damage}' if damage else ''}, " \
                                   f"keep {keep}"
                            print(f"conformance: {what} ...", file=sys.stderr, flush=True)
                            try:
                                port = nn.rpc_port if args.scheme == "hdfs" else nn.port
                                cell = run_cell(spark, operator, store, keep, nn.url, port,
                                                Path(tmp), args.batches,
                                                scheme=args.scheme, damage=damage)
                                outcomes += cell
                                # its row now: a run cut short still says what it found
                                print(summary(cell)[-1], file=sys.stderr, flush=True)
                            except Exception as exc:    # the cell could not run: say so
                                failed.append(f"{what}: {why(exc)}")
        finally:
            nn.stop()
            try:
                spark.stop()
            except Exception as exc:     # a JVM that died: the table is still printed
                failed.append(f"Spark's JVM at the end: {why(exc)}")
    print("\n".join(table(outcomes) if args.full else summary(outcomes)))
    for line in failed:
        print(f"cell not run: {line}")
    disagree = [o for o in outcomes if not o.agrees]
    print(f"\n{len(outcomes)} verdicts, {len(disagree)} disagree with Spark, {len(failed)} "
          f"cells failed to run, {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 1 if disagree or failed else 0


if __name__ == "__main__":
    sys.exit(main())
