"""One namenode under the peers harness's JVM client (LeanLoad), for A/B runs of two trees.

    python bench/bench_lean.py write --conc 32 --ops 10000 [--root OTHER_TREE] [--port 29971]
    python bench/bench_lean.py read --conc 8 --ops 30000

What it does: formats a fresh name dir under /tmp/nnlite-lean/, starts ``cli.py namenode``
of ``--root`` (default: this tree) on 127.0.0.1, makes ``/`` 1777 as the peers script does,
runs LeanLoad (compiled by ../shared/peers/peer_bench.py into /tmp/peers/leanload; run
``bash bench/peers.sh`` once first) as user ``bench`` after 2,000 warm-up ops, and prints ops/s,
latency, and the server's and client's CPU per op (the server's from /proc/<pid>/stat). A read
run first writes 8,000 directories with LeanLoad to read back. The namenode is stopped on exit.
Compare two trees by alternating runs of each; the machine is shared, so one run says little.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
LEAN_CP = "/tmp/peers/leanload:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-nop.jar"


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lean(port: int, kind: str, conc: int, ops: int, base: str, warmup: int, spec=None):
    argv = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-cp", LEAN_CP, "LeanLoad",
            f"webhdfs:127.0.0.1:{port}", kind, str(conc), str(ops), "10", base, "100",
            str(warmup)] + ([spec] if spec else [])
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=("write", "read"))
    p.add_argument("--conc", type=int, default=32)
    p.add_argument("--ops", type=int, default=10000)
    p.add_argument("--root", default=str(HERE), help="the tree whose cli.py runs the namenode")
    p.add_argument("--port", type=int, default=29971)
    args = p.parse_args()
    if not Path("/tmp/peers/leanload/LeanLoad.class").exists():
        print("bench_lean: LeanLoad is not compiled: run `bash bench/peers.sh` once",
              file=sys.stderr)
        return 2
    work = Path("/tmp/nnlite-lean")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    name_dir = str(work / "name")
    cli = str(Path(args.root) / "cli.py")
    subprocess.run([sys.executable, cli, "format", "--name-dir", name_dir], check=True,
                   capture_output=True)
    nn = subprocess.Popen([sys.executable, cli, "namenode", "--name-dir", name_dir,
                           "--host", "127.0.0.1", "--port", str(args.port)],
                          stdout=open(work / "namenode.log", "w"), stderr=subprocess.STDOUT,
                          cwd=args.root)
    url = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(300):
            try:
                if b'"Loading":0' in urllib.request.urlopen(url + "/metrics.json").read():
                    break
            except OSError:
                pass
            time.sleep(0.1)
        user = os.environ.get("USER") or "root"
        urllib.request.urlopen(urllib.request.Request(
            f"{url}/webhdfs/v1/?op=SETPERMISSION&permission=1777&user.name={user}",
            method="PUT")).read()
        spec = None
        if args.kind == "read":
            writer = lean(args.port, "write", 8, 8000, "/bench/w", 0)
            out = json.loads(writer.communicate("GO\n")[0].strip().splitlines()[-1])
            spec = str(work / "read.spec")
            with open(spec, "w") as f:
                for i, n in enumerate(out["contig"]):
                    if n:
                        f.write(f"/bench/w/j{i:02d} {n}\n")
        load = lean(args.port, args.kind, args.conc, args.ops, "/bench/r", 2000, spec)
        assert load.stdout.readline().strip() == "READY"
        cpu0 = cpu_seconds(nn.pid)
        load.stdin.write("GO\n")
        load.stdin.flush()
        out = json.loads(load.stdout.readline())
        cpu1 = cpu_seconds(nn.pid)
        load.wait()
        print(f"{args.kind} c={args.conc}: {out['ops'] / out['seconds']:7.0f} ops/s "
              f"p50 {out['p50_ms']:.2f} ms p99 {out['p99_ms']:.2f} ms  server "
              f"{1e6 * (cpu1 - cpu0) / out['ops']:5.1f} us/op  client "
              f"{1e6 * out['cpu_seconds'] / out['ops']:5.1f} us/op  errors {out['errors']}")
    finally:
        nn.terminate()
        nn.wait(20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
