"""The namenode's hot path compiled with mypyc against the same source run by the interpreter:
the namenode's CPU per call over hdfs:// and WebHDFS, alternated, in one run (issue 33).

    python bench/bench_mypyc.py [--rev HEAD] [--rounds 2] [--modules M ...]
                                [--pytest PATH ...] [--keep DIR] [-- bench_rpc.py options]

``--rev`` (a git revision, HEAD by default) is exported twice with ``git archive`` into a
temporary directory (``$BENCH_DIR`` or /tmp) as an ``nnlite`` package: ``pure/nnlite`` as it
is, and ``compiled/nnlite`` with ``--modules`` (the per-call path, ``MODULES``) compiled by
mypyc (part of mypy, already a test dependency) into C extensions beside their ``.py``,
which the import system then prefers. Nothing is built in the checkout: a compiled module
there would shadow its ``.py`` and go stale with the next edit. Each round runs
``bench/bench_rpc.py --rounds 1`` once with ``PYTHONPATH`` naming each tree (pure first in
even rounds, compiled first in odd ones), so the benchmark's namenode, its clients and the
format step all import that tree. ``--pytest`` also runs those tests of the checkout against
the compiled tree first (the same behaviour, compiled: mypyc checks declared types at run
time, so a wrong annotation is a TypeError there and not in the interpreter).

The output is bench_rpc's rows, each with its build, then per call and protocol the median
CPU per call compiled ÷ pure. mypyc compiles modules, not a whole program: a call still
crosses into the interpreter for every uncompiled module (the handlers, the namesystem,
asyncio or uvloop, protobuf's runtime), so only the compiled modules' own share shrinks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The modules a metadata call runs through that mypyc compiles as they are: the Hadoop IPC
# framing and protobuf glue, the RPC connection and the HdfsFileStatus builder, the HTTP
# parser and connection, path resolution and the tree's lookup, the permission check. Not
# among them: formats/edits.py (the edits encoder), whose ops are dataclasses made by a
# decorator of its own, which mypyc refuses to compile as native classes; and
# namespace/inode.py, whose ``new_file`` makes an inode with ``object.__new__`` (the replay's
# fast path), which a native class refuses at run time.
MODULES = (
    "formats/hadoop/proto.py",
    "formats/hadoop/ipc.py",
    "namenode/rpc/server.py",
    "namenode/rpc/status.py",
    "namenode/http/wire.py",
    "namenode/http/server.py",
    "namenode/namespace/paths.py",
    "namenode/namespace/tree.py",
    "namenode/namespace/permission.py",
    "namenode/namespace/checks.py",
)


def export(rev: str, tree: Path) -> None:
    """``rev`` of this repository as the package ``tree``/nnlite."""
    package = tree / "nnlite"
    package.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(package)], input=archive, check=True)


def compile_tree(tree: Path, modules: list[str]) -> float:
    """mypyc over ``modules`` of ``tree``/nnlite, in place; the seconds it took."""
    started = time.monotonic()
    built = subprocess.run([sys.executable, "-m", "mypyc", "--ignore-missing-imports",
                            *(f"nnlite/{m}" for m in modules)],
                           cwd=tree, capture_output=True, text=True)
    if built.returncode:
        raise SystemExit(f"mypyc failed:\n{built.stdout[-4000:]}{built.stderr[-4000:]}")
    shutil.rmtree(tree / "build", ignore_errors=True)
    return time.monotonic() - started


def check_compiled(tree: Path, modules: list[str]) -> None:
    """Every module of ``modules`` imports from its extension, not its ``.py``."""
    names = [f"nnlite.{m.removesuffix('.py').replace('/', '.')}" for m in modules]
    probe = ("import importlib, sys\n"
             "for name in sys.argv[1:]:\n"
             "    path = importlib.import_module(name).__file__\n"
             "    assert path.endswith('.so'), (name, path)\n")
    subprocess.run([sys.executable, "-c", probe, *names], env=env_for(tree), check=True)


def env_for(tree: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(tree))


def bench(tree: Path, extra: list[str]) -> list[str]:
    """bench_rpc's table rows for one round against ``tree``."""
    ran = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_rpc.py"), "--rounds", "1",
                          *extra], env=env_for(tree), cwd=ROOT, capture_output=True, text=True)
    if ran.returncode:
        raise SystemExit(f"bench_rpc.py failed:\n{ran.stdout}{ran.stderr[-4000:]}")
    return [line for line in ran.stdout.splitlines()
            if line.startswith("| hdfs://") or line.startswith("| WebHDFS")]


def summary(rows: dict[str, list[list[str]]]) -> None:
    """Median namenode CPU per call of each (protocol, call), all of it and its user part
    (the interpreter's share: mypyc changes nothing in the kernel's), compiled ÷ pure."""
    def per_call(build: str, column: int) -> dict[tuple[str, str], float]:
        found: dict[tuple[str, str], list[float]] = {}
        for cells in rows[build]:
            found.setdefault((cells[0], cells[1]), []).append(float(cells[column]))
        return {key: statistics.median(values) for key, values in found.items()}
    print("\n| protocol | call | µs/call pure | compiled | ÷ | user µs/call pure | compiled | ÷ |")
    print("|---|---|---|---|---|---|---|---|")
    total, user = (per_call("pure", 4), per_call("compiled", 4)), \
        (per_call("pure", 5), per_call("compiled", 5))
    for key in total[0]:
        figures = [f"{a:.1f} | {b:.1f} | {b / a:.2f}" for a, b in
                   ((pair[0][key], pair[1].get(key, 0.0)) for pair in (total, user))]
        print(f"| {key[0]} | {key[1]} | {' | '.join(figures)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modules", nargs="+", default=list(MODULES),
                        help="paths in the package to compile (default: the per-call path)")
    parser.add_argument("--pytest", nargs="*", default=[],
                        help="test paths of the checkout to run against the compiled tree")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build here and keep it (default: a temporary directory)")
    parser.add_argument("rest", nargs=argparse.REMAINDER,
                        help="after --: options for bench_rpc.py (--lookups, --creates)")
    args = parser.parse_args()
    extra = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-mypyc-",
                                              dir=os.environ.get("BENCH_DIR")))
    trees = {"pure": base / "pure", "compiled": base / "compiled"}
    try:
        for tree in trees.values():
            export(args.rev, tree)
        seconds = compile_tree(trees["compiled"], args.modules)
        check_compiled(trees["compiled"], args.modules)
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.rev],
                             capture_output=True, text=True).stdout.strip()
        print(f"git {rev}: {len(args.modules)} modules compiled by mypyc in {seconds:.0f} s; "
              f"load {os.getloadavg()[0]:.1f}")
        if args.pytest:
            tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                     "no:cacheprovider", *args.pytest],
                                    env=env_for(trees["compiled"]), cwd=ROOT)
            if tested.returncode:
                raise SystemExit("the tests failed against the compiled tree")
        print("| build | protocol | call | clients | calls/s | namenode µs/call | user | system "
              "| edits per fdatasync | load |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        rows: dict[str, list[list[str]]] = {"pure": [], "compiled": []}
        for r in range(args.rounds):
            for build in (("pure", "compiled") if r % 2 == 0 else ("compiled", "pure")):
                for line in bench(trees[build], extra):
                    print(f"| {build} {line}", flush=True)
                    rows[build].append([c.strip().replace(",", "")
                                        for c in line.strip("|").split("|")])
        summary(rows)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
