"""nnlite against ZooKeeper and etcd on this machine: the same workloads, the same generator.

    bash bench/peers.sh [--rounds N] [--headline] [--systems nnlite,zookeeper,etcd,...]
    bash bench/peers.sh --systems nnlite,nnlite-ha,zookeeper,etcd   # HA against local too
    bash bench/peers.sh --systems nnlite,nnlite-rpc,zookeeper,etcd  # hdfs:// against WebHDFS

The files of this folder:
    run.py         this: the plan of rows, one measurement, the run and its output
    servers.py     the systems under test: start with a fresh data dir, PIDs, fsync counters
    profile_threads.py  a namenode under cProfile in every thread (--profile DIR)
    ha_experiments.py   changes to an HA namenode's write path, measured (--nn-sitecustomize)
    load.py        PeerLoad.java from Python: compile on first use, one JVM per system
                   (ZooKeeper's client jar and PySpark's Hadoop client jars)
    PeerLoad.java  the load generator: N threads, one connection or session each
    report.py      the table, and nnlite / best peer per row

Workloads (a row): durable creates at 1, 8 and 32 clients (MKDIRS, etcd put, ZooKeeper
create; the two fsync floors write and fdatasync a file per client, appending or in place),
then lookups at 8 clients (GETFILESTATUS, etcd serializable range, ZooKeeper exists) of keys
the creates made. Each row stops at its op budget or its seconds, whichever comes first, after
an untimed warm-up in the same JVM. All servers run side by side and each row visits every
system before the next row starts, in an order that rotates from row to row, so a ratio
compares figures taken a few seconds apart.

``nnlite-ha`` (not in the default set) is an HA set: three etcd members and two namenodes on
loopback, the load going to the active; its CPU per op counts all five processes (each one's
share is printed), its sync time is the whole batch (etcd transaction, then the local write
and fdatasync) and the etcd part is read from the active's ``/jmx``. Its rows are compared
with ``nnlite``'s (one namenode, local journal) of the same round.

``nnlite-rpc`` (not in the default set) is the same namenode process as ``nnlite``, started
with ``--rpc-port`` and driven over Hadoop IPC (``hdfs://``) by Hadoop's own
``DistributedFileSystem``, one FileSystem and so one connection per client thread (PeerLoad's
``Hdfs``): mkdirs and getFileStatus. Its rows are compared with ``nnlite``'s (WebHDFS, the
same process) of the same round, with the issue's targets (RPC ≥ 2× WebHDFS; server CPU ≤ 20
µs per create, ≤ 10 per lookup). ``nnlite-webhdfs-fs`` (not in the default set) is that process
again, over WebHDFS through Hadoop's own ``WebHdfsFileSystem`` (PeerLoad's ``HadoopFs``), the
client a job uses for ``webhdfs://`` paths, where ``nnlite``'s rows use a lean HTTP client:
``nnlite-rpc`` against it compares the two schemes as a Spark or Flink job meets them.

Output: bench/out/peers-<UTC time>/ (gitignored): results.json, report.txt, the servers' logs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import load
import report
import servers

TREE = Path(__file__).resolve().parents[2]
OUT = TREE / "bench" / "out"
MEMORY_FILESYSTEMS = {"tmpfs", "ramfs"}   # fsync costs nothing there
SYSTEMS = ("nnlite", "zookeeper", "etcd", "fsync-append", "fsync-inplace")
# the default set, and what --systems may add
CHOICES = SYSTEMS + ("nnlite-ha", "nnlite-rpc", "nnlite-webhdfs-fs")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--writes", default="1,8,32", help="client counts of the create rows")
    p.add_argument("--reads", default="8", help="client counts of the lookup rows")
    p.add_argument("--headline", action="store_true", help="only creates at 32, lookups at 8")
    p.add_argument("--rounds", type=int, default=1, help="repeat every row this many times")
    p.add_argument("--write-ops", type=int, default=25000, help="op budget of a create row")
    p.add_argument("--read-ops", type=int, default=60000, help="op budget of a lookup row")
    p.add_argument("--seconds", type=float, default=8.0, help="time budget of a row")
    p.add_argument("--warmup", type=int, default=2000, help="untimed ops before each row")
    p.add_argument("--value-bytes", type=int, default=100,
                   help="payload of an etcd put, a ZooKeeper create, a floor append")
    p.add_argument("--nn-tree", type=Path, default=TREE,
                   help="the tree whose namenode runs (another checkout for an A/B)")
    p.add_argument("--nn-rev", default=None,
                   help="run the namenode of this git revision (exported from this repository "
                        "into the work dir) instead of a tree, e.g. HEAD while others edit")
    p.add_argument("--nn-python", default=None,
                   help="default: the tree's .venv, else this checkout's, else this Python")
    p.add_argument("-D", dest="nn_defines", action="append", default=[], metavar="KEY=VALUE",
                   help="a namenode setting (repeat)")
    p.add_argument("--nn-port", type=int, default=29870)
    p.add_argument("--rpc-port", type=int, default=29820,
                   help="nnlite-rpc: the namenode's Hadoop IPC port (--rpc-port)")
    p.add_argument("--etcd-ports", default="23790,23800", help="client,peer")
    p.add_argument("--zk-port", type=int, default=21810)
    p.add_argument("--ha-nn-ports", default="29871,29872",
                   help="nnlite-ha: its namenodes' ports (as many namenodes)")
    p.add_argument("--ha-etcd-port", type=int, default=23810,
                   help="nnlite-ha: the first of its etcd members' client,peer port pairs")
    p.add_argument("--profile", type=Path, default=None, metavar="DIR",
                   help="run the namenodes under cProfile, every thread (profile_threads.py); "
                        "their stats go to DIR when they stop")
    p.add_argument("--nn-sitecustomize", type=Path, default=None, metavar="FILE",
                   help="a Python file the namenodes import first, as sitecustomize (a probe, "
                        "or bench/peers/ha_experiments.py)")
    p.add_argument("--workdir", type=Path, default=None,
                   help="where the data dirs go; default a new directory in $TMPDIR")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    if args.headline:
        args.writes, args.reads = "32", "8"
    args.nn_tree = args.nn_tree.resolve()
    if args.nn_python and os.sep in args.nn_python:   # servers run in their data dirs
        args.nn_python = os.path.abspath(args.nn_python)
    if args.profile:
        args.profile = args.profile.resolve()
    if args.nn_sitecustomize:
        args.nn_sitecustomize = args.nn_sitecustomize.resolve()
    unknown = {s.strip() for s in args.systems.split(",")} - set(CHOICES)
    if unknown:
        p.error(f"unknown systems {sorted(unknown)}; choose from {', '.join(CHOICES)}")
    return args


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def filesystem_of(path: Path) -> str:
    """The type of the filesystem holding path, from /proc/self/mounts."""
    best, kind = "", "?"
    for line in Path("/proc/self/mounts").read_text().splitlines():
        mount, fstype = line.split()[1:3]
        if str(path.resolve()).startswith(mount.rstrip("/") + "/") and len(mount) > len(best):
            best, kind = mount, fstype
    return kind


def missing_tools() -> list[str]:
    need = {"java": shutil.which("java"), "javac": shutil.which("javac"),
            "etcd": shutil.which("etcd"),
            str(servers.ZOOKEEPER_JAR): servers.ZOOKEEPER_JAR.exists(),
            "PySpark's Hadoop client jars (" + ", ".join(f"{p}*.jar" for p in load.HADOOP_JARS)
            + ")": load.hadoop_jars()}
    return [name for name, found in need.items() if not found]


def build_servers(args, work: Path, out: Path) -> list[servers.Server]:
    chosen = [s.strip() for s in args.systems.split(",") if s.strip()]
    client, peer = numbers(args.etcd_ports)
    python = args.nn_python or servers.python_of(args.nn_tree)
    shared: list[servers.Namenode] = []

    def namenode(d: Path) -> servers.Namenode:
        """nnlite's one namenode, made by whichever of nnlite, nnlite-rpc and
        nnlite-webhdfs-fs comes first."""
        if not shared:
            rpc_port = args.rpc_port if "nnlite-rpc" in chosen else None
            shared.append(servers.Namenode(d, out, namenode_tree(args, d), python, args.nn_port,
                                           args.nn_defines, profile=args.profile,
                                           sitecustomize=args.nn_sitecustomize,
                                           rpc_port=rpc_port))
        return shared[0]
    makers = {
        "nnlite": namenode,
        "nnlite-rpc": lambda d: servers.NamenodeRpc(namenode(d)),
        "nnlite-webhdfs-fs": lambda d: servers.NamenodeHadoopWebHdfs(namenode(d)),
        "nnlite-ha": lambda d: servers.NamenodeHASet(d, out, namenode_tree(args, d), python,
                                                     numbers(args.ha_nn_ports),
                                                     args.ha_etcd_port, args.nn_defines,
                                                     profile=args.profile,
                                                     sitecustomize=args.nn_sitecustomize),
        "zookeeper": lambda d: servers.ZooKeeper(d, out, args.zk_port),
        "etcd": lambda d: servers.Etcd(d, out, client, peer),
        "fsync-append": lambda d: servers.FsyncFloor(d, out, in_place=False),
        "fsync-inplace": lambda d: servers.FsyncFloor(d, out, in_place=True),
    }
    made = []
    for name in chosen:
        (work / name).mkdir(parents=True)
        made.append(makers[name](work / name))
    return made


def namenode_tree(args, work: Path) -> Path:
    """The tree whose cli.py runs the namenode: --nn-tree, or --nn-rev exported with git."""
    if not args.nn_rev:
        return args.nn_tree
    tree = work / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(TREE), "archive", args.nn_rev],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    (tree / ".git-revision").write_text(servers.git_describe(TREE, args.nn_rev))
    return tree


def plan(args, systems: list[servers.Server]) -> list[tuple[int, str, int, list]]:
    """(round, kind, clients, systems in the order they run) for every row."""
    rows = []
    for rnd in range(1, args.rounds + 1):
        for kind, counts in (("write", numbers(args.writes)), ("read", numbers(args.reads))):
            for conc in counts:
                who = [s for s in systems
                       if kind == "write" or not isinstance(s, servers.FsyncFloor)]
                if who:
                    turn = len(rows) % len(who)
                    rows.append((rnd, kind, conc, who[turn:] + who[:turn]))
    return rows


def load_average() -> tuple[float, float, float]:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return float(one), float(five), float(fifteen)


def host_ticks() -> tuple[int, int]:
    """(busy, all) jiffies of the whole machine; idle and iowait count as idle."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


class Sample:
    """What the server, the machine and the load average did across one timed phase."""

    def __init__(self, system: servers.Server):
        self.system, self.parts = system, system.parts()
        self.pids = list(self.parts.values())
        self.load = load_average()[0]
        self.syncs = system.syncs()
        self.shared = system.shared_journal()
        self.part_cpu = {label: servers.cpu_seconds(p) for label, p in self.parts.items()}
        self.cpu = sum(self.part_cpu.values())
        self.system_cpu = sum(servers.cpu_split(p)[1] for p in self.pids)
        self.host = host_ticks()
        self.began = time.monotonic()

    def finish(self, row: dict) -> None:
        wall = time.monotonic() - self.began
        part_cpu = {label: servers.cpu_seconds(p) - self.part_cpu[label]
                    for label, p in self.parts.items()}
        cpu = sum(part_cpu.values())
        busy, total = (b - a for a, b in zip(self.host, host_ticks(), strict=True))
        ops = row["ops"] or float("nan")
        row.update(load_start=self.load, load_end=load_average()[0],
                   srv_us_per_op=cpu / ops * 1e6 if self.pids else None,
                   srv_cpu_pct=100 * cpu / wall if self.pids else None,
                   host_cpu_pct=100 * (os.cpu_count() or 1) * busy / total if total else None,
                   fsyncs=None, sync_ms=None)
        if self.pids:   # the kernel's share: system calls, loopback TCP, fdatasync
            system_cpu = sum(servers.cpu_split(p)[1] for p in self.pids) - self.system_cpu
            row["srv_sys_us_per_op"] = system_cpu / ops * 1e6
        if len(part_cpu) > 1:
            row["srv_us_by_part"] = {label: c / ops * 1e6 for label, c in part_cpu.items()}
        if row["kind"] == "write":
            self.count_syncs(row)
            self.count_shared(row)

    def count_syncs(self, row: dict) -> None:
        after = self.system.syncs()
        if isinstance(self.system, servers.FsyncFloor):
            row["fsyncs"] = row["ops"]
        elif after and self.syncs:
            row["fsyncs"] = after[0] - self.syncs[0]
            if row["fsyncs"]:
                row["sync_ms"] = 1000 * (after[1] - self.syncs[1]) / row["fsyncs"]
        if row["fsyncs"]:
            row["ops_per_fsync"] = row["ops"] / row["fsyncs"]

    def count_shared(self, row: dict) -> None:
        """A shared journal's batches and the mean time of one (the etcd transaction)."""
        after = self.system.shared_journal()
        if after and self.shared and after[0] > self.shared[0]:
            row["shared_batches"] = after[0] - self.shared[0]
            row["shared_ms"] = 1000 * (after[1] - self.shared[1]) / row["shared_batches"]


class Bench:
    """The systems of one run, a generator for each, and the keys each one's creates made."""

    def __init__(self, args, systems: list[servers.Server], out: Path, work: Path, run_id: str):
        self.args, self.systems, self.out, self.work, self.run_id = args, systems, out, work, run_id
        self.classes = load.compiled(OUT / "classes")
        self.generators: dict[str, load.Generator] = {}
        self.keys: dict[str, list] = {s.name: [] for s in systems}

    def start(self) -> None:
        for s in self.systems:
            s.start()
            print(f"# {s.name}: {s.facts}\n#   {' '.join(s.command)}", flush=True)
        for s in self.systems:
            self.generators[s.name] = self.generator(s)

    def generator(self, system: servers.Server) -> load.Generator:
        return load.Generator(self.classes, system.target, system.address(),
                              self.out / "peerload.err")

    def rows(self) -> list[dict]:
        rows = []
        print(report.table([]).splitlines()[0], flush=True)
        for rnd, kind, conc, order in plan(self.args, self.systems):
            for s in order:
                if kind == "read" and not self.keys[s.name]:
                    continue
                try:
                    row = self.measure(s, rnd, kind, conc)
                except RuntimeError as e:   # a generator that lost its way starts again
                    row = failed_row(rnd, kind, conc, s, e)
                    self.generators[s.name].close()
                    self.generators[s.name] = self.generator(s)
                rows.append(row)
                progress(row)
        return rows

    def measure(self, system: servers.Server, rnd: int, kind: str, conc: int) -> dict:
        """One row of one system; a create row adds the keys it made to ``keys``."""
        args, generator = self.args, self.generators[system.name]
        # the system's name in the leaf: nnlite and nnlite-rpc share one namespace, and a
        # mkdirs of a directory that exists is true without an edit (nothing to sync)
        base = f"/peers/{self.run_id}/r{rnd}-{kind}{conc}-{system.name}"
        keys_file = None
        if kind == "read":
            keys_file = self.work / system.name / f"keys-{rnd}-{conc}.txt"
            keys_file.write_text("".join(f"{p} {n}\n" for p, n in self.keys[system.name]))
        ops = args.write_ops if kind == "write" else args.read_ops
        generator.prepare(kind, conc, ops, args.seconds, args.warmup, base, args.value_bytes,
                          keys_file)
        sample = Sample(system)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        found = generator.go(args.seconds)
        row = {"round": rnd, "kind": kind, "conc": conc, "system": system.name,
               "started": started, "ops": found["ops"], "errors": found["errors"],
               "first_error": found["first_error"], "seconds": found["seconds"],
               "p50_ms": found["p50_ms"], "p90_ms": found["p90_ms"], "p99_ms": found["p99_ms"],
               "max_ms": found["max_ms"], "ops_per_fsync": None,
               "ops_s": found["ops"] / found["seconds"] if found["seconds"] > 0 else 0.0,
               "cli_us_per_op": (found["cpu_seconds"] / found["ops"] * 1e6
                                 if found["ops"] else None)}
        sample.finish(row)
        if kind == "write":
            self.keys[system.name] += [(f"{base}/t{t}", n)
                                       for t, n in enumerate(found["written"]) if n]
        return row

    def close(self) -> None:
        for g in self.generators.values():
            g.close()
        for s in self.systems:
            s.stop()


def failed_row(rnd, kind, conc, system, error) -> dict:
    nan = float("nan")
    return {"round": rnd, "kind": kind, "conc": conc, "system": system.name, "ops": 0,
            "errors": 1, "first_error": str(error), "seconds": nan, "ops_s": nan,
            "p50_ms": nan, "p99_ms": nan, "srv_us_per_op": None, "cli_us_per_op": None,
            "host_cpu_pct": None, "ops_per_fsync": None, "sync_ms": None,
            "load_start": load_average()[0],
            "load_end": load_average()[0]}


def progress(row: dict) -> None:
    line = report.table([row]).splitlines()[-1]
    error = f"  ERROR {row['first_error']}" if row.get("first_error") else ""
    print(line + error, flush=True)


def header(args, work: Path) -> dict:
    return {"run_started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "load_average": load_average(), "cpus": os.cpu_count(), "java": servers.java_version(),
            "harness_tree": servers.git_describe(TREE, "HEAD"),
            "workdir_filesystem": filesystem_of(work),
            "settings": {k: str(v) for k, v in vars(args).items()}}


def write_outputs(out: Path, meta: dict, rows: list[dict]) -> None:
    found = report.comparisons(rows)
    text = "\n".join([
        f"# peers run {meta['run_started']}, load average {meta['load_average']}, "
        f"{meta['cpus']} cpus, harness at git {meta['harness_tree']}",
        *(f"# {name}: {facts}" for name, facts in meta["systems"].items()),
        "", report.table(rows), "", "== nnlite / best peer, each row ==",
        *report.comparison_lines(found), *report.ha_lines(rows), *report.rpc_lines(rows), "",
        report.markdown(rows),
        ""])
    (out / "report.txt").write_text(text)
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1,
                                                 default=str))
    print("\n" + text.split("\n\n", 1)[1], flush=True)
    print(f"peers: {out}/report.txt, results.json and the servers' logs", flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    missing = missing_tools()
    if missing:
        print(f"peers: missing {', '.join(missing)}: run bash bench/peers_setup.sh",
              file=sys.stderr)
        return 2
    run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out or OUT / f"peers-{run_id}"
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="nnlite-peers-", dir=args.workdir))
    if filesystem_of(work) in MEMORY_FILESYSTEMS:
        print(f"peers: {work} is on {filesystem_of(work)}, where fsync costs nothing; "
              "set TMPDIR (or --workdir) to a directory on disk", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    meta = header(args, work)
    print(f"# load average before the run: {meta['load_average']} ({meta['cpus']} cpus)",
          flush=True)
    bench = Bench(args, build_servers(args, work, out), out, work, run_id)
    try:
        bench.start()
        meta["systems"] = {s.name: {"command": " ".join(s.command), **s.facts}
                           for s in bench.systems}
        rows = bench.rows()
    finally:
        bench.close()
        shutil.rmtree(work, ignore_errors=True)
    write_outputs(out, meta, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
