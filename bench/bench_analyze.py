"""Benchmark of ``nnlite analyze`` (issue 7): a generated image of 1,000,000 inodes analysed
with PySpark on ``local[2]``. Prints seconds; see BENCHMARKS.md for figures.

    python bench/bench_analyze.py [--inodes 1000000] [--master local[2]] [--runs 2]

Phases: generating the image (not part of the figure), starting the SparkSession, each run of
``analyze`` in that one session (the first pays the JVM's warm-up), and writing the report
(Parquet, CSV, PNG charts, HTML).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nnlite.analytics import (
    analyze,  # noqa: E402
    report,  # noqa: E402
)
from tests.analytics.imagegen import generate  # noqa: E402


def timed(label: str, fn, *args, **kw):
    start = time.perf_counter()
    value = fn(*args, **kw)
    print(f"{label:<36} {time.perf_counter() - start:8.1f} s", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inodes", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="nnlite-bench-", dir=os.environ.get("BENCH_DIR")))
    try:
        image = tmp / "fsimage"
        timed(f"generate {args.inodes:,} inodes", generate, image, args.inodes)
        print(f"image: {image.stat().st_size / 1e6:.1f} MB; load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        spark = timed(f"start SparkSession ({args.master})", analyze.new_session, args.master)
        try:
            for run in range(1, args.runs + 1):
                result = timed(f"analyze, run {run}", analyze.analyze, image, spark=spark)
            timed("write report (tables, charts, html)", report.write, result, tmp / "out")
        finally:
            spark.stop()
        print(f"\n{report.header_lines(result)[2]}\nload average at the end "
              f"{os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
