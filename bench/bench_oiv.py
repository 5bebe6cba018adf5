"""Benchmark of ``nnlite oiv`` (issue 7): throughput in inodes/s and peak RSS.

    python bench/bench_oiv.py [--inodes 1000000] [--processors Delimited,FileDistribution]

Generates an image of ``--inodes`` inodes (2% directories in an 8-ary tree, files spread over
them, as tests/tools/images.py builds it), then runs ``nnlite oiv`` on it in a child process per
processor, so that the child's peak RSS (``ru_maxrss`` from wait4) is the tool's alone. The
baseline row is a child that only imports what the CLI imports: the difference is what the
viewer itself holds. Every figure comes from one run; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BASELINE = "import nnlite.cli, pyarrow.parquet, nnlite.tools.oiv"
# Built in a child too: a child forked from a big parent would report the parent's RSS as its
# own peak (ru_maxrss counts the pages it shared before exec), so this process stays small.
BUILD = ("import sys, time; from tests.tools import images; t = time.perf_counter(); "
         "s = images.build(sys.argv[1], int(sys.argv[2])); "
         "print(s.dirs, time.perf_counter() - t)")


def build_image(path: Path, inodes: int) -> tuple[int, float]:
    """Directories in the image and seconds to build it."""
    out = subprocess.run([sys.executable, "-c", BUILD, str(path), str(inodes)], cwd=REPO,
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1])


def run_child(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{stderr}")
    return seconds, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inodes", type=int, default=1_000_000)
    parser.add_argument("--processors", default="Delimited")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="nnlite-bench-oiv-", dir=os.environ.get("BENCH_DIR")))
    try:
        dirs, built = build_image(tmp / "fsimage", args.inodes)
        size = (tmp / "fsimage").stat().st_size
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
              f"{platform.python_version()}")
        print(f"image: {args.inodes:,} inodes ({dirs:,} directories), {size / 1e6:.1f} MB,"
              f" built in {built:.1f} s")
        _, base_rss = run_child([sys.executable, "-c", BASELINE])
        _, own_rss = run_child([sys.executable, "-c", "pass"])
        print("\n| processor | seconds | inodes/s | peak RSS | RSS over baseline | output |")
        print("|---|---|---|---|---|---|")
        print(f"| (bare interpreter) | | | {own_rss / 2**20:.0f} MiB | | |")
        print(f"| (imports only) | | | {base_rss / 2**20:.0f} MiB | | |")
        for processor in args.processors.split(","):
            out = tmp / f"out.{processor}"
            argv = [sys.executable, "cli.py", "oiv", "-i", str(tmp / "fsimage"), "-o", str(out),
                    "-p", processor]
            seconds, rss = run_child(argv)
            print(f"| {processor} | {seconds:.2f} | {args.inodes / seconds:,.0f} | "
                  f"{rss / 2**20:.0f} MiB | {(rss - base_rss) / 2**20:.0f} MiB | "
                  f"{out.stat().st_size / 1e6:.1f} MB |")
        print(f"\ncommand: {' '.join(['python', 'bench/bench_oiv.py', *sys.argv[1:]])}")
        print("each row runs: python cli.py oiv -i <image> -o <out> -p <processor> "
              "(MD5 sidecar verified)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
