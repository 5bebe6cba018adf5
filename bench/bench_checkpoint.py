"""Benchmark of one checkpoint of a large namespace, and what it costs the writers meanwhile.

    python bench/bench_checkpoint.py [--inodes 1000000] [--edits 1000000] [--connections 16]

1. An image of ``--inodes`` inodes (bench_core.build_namespace: a Spark-shaped tree) is
   installed into a freshly formatted name dir at txid IMAGE_TXID, and ``edits`` is written
   directly after it: ``--edits`` records shaped as Spark checkpoint batches (a directory, 48
   part files, a rename, a set-times, a file delete, and the delete of the batch RETAINED
   batches back, so the namespace stays near its size).
2. A namenode starts on that dir (it loads the image and replays the edits).
3. Load with a checkpoint: a child process sends durable MKDIRS over ``--connections``
   kept-alive HTTP connections; after WARMUP seconds ``nnlite secondary --checkpoint-now``
   runs one checkpoint (empty checkpoint dir: it downloads the image, loads it, replays the
   edits, saves and uploads). The window is the namenode's roll -> swap done (its log).
4. Load without: the same child for the same window length, no checkpoint.

Prints the checkpoint's total and per-phase seconds (the secondary's log; the swap from the
namenode's log) and the writers' throughput and p99 latency in both windows. One run; the
machine is shared, so compare the ratio within the run.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_core  # noqa: E402

from nnlite.formats.edits import (  # noqa: E402
    AddFileOp,
    DeleteOp,
    EditsWriter,
    MkdirOp,
    RenameOp,
    SetTimesOp,
    StartLogSegmentOp,
    encode_record,
)
from nnlite.namenode.fsnamesystem import format_dirs  # noqa: E402
from nnlite.namenode.image import columns, install  # noqa: E402
from nnlite.namenode.storage.namedir import EDITS, NameDir  # noqa: E402
from tests.servers import ROOT, NamenodeProcess  # noqa: E402

IMAGE_TXID = 1_000_000
RETAINED = 20            # Spark batches kept; older ones are deleted by the edits
WARMUP = 2.0             # seconds of load before the measured window
USER = "tester"
USERS = ("-D", f"hadoop.user.group.static.mapping.overrides={USER}=supergroup")
NOW = 1_700_000_000_000


# ----------------------------------------------------------------------------- the name dir

def write_edits(path: Path, first_txid: int, first_inode: int, ops: int) -> int:
    """``ops`` records from ``first_txid`` (a START_LOG_SEGMENT first); returns the last txid."""
    writer = EditsWriter.create(str(path), first_txid)
    buf = bytearray(encode_record(first_txid, StartLogSegmentOp()))
    txid, inode, last = first_txid, first_inode, first_txid + ops - 1
    batch_no = 0
    while txid < last:
        d = f"/spark/ckpt/b{batch_no}"
        batch = [MkdirOp(d, inode, 0o755, "spark", "hadoop", NOW + batch_no)]
        inode += 3 if batch_no == 0 else 1
        for j in range(48):
            batch.append(AddFileOp(f"{d}/part-{j:05d}", inode, 3, 134217728, 4096 * j, 0o644,
                                     "spark", "hadoop", NOW, NOW, False, "", ""))
            inode += 1
        batch += [RenameOp(f"{d}/part-00000", f"{d}/_SUCCESS", NOW, False),
                  SetTimesOp(f"{d}/part-00001", NOW + 1, NOW + 1),
                  DeleteOp(f"{d}/part-00002", NOW)]
        if batch_no >= RETAINED:
            batch.append(DeleteOp(f"/spark/ckpt/b{batch_no - RETAINED}", NOW))
        for op in batch[:last - txid]:
            txid += 1
            buf += encode_record(txid, op)
        batch_no += 1
        if len(buf) > 1 << 22:
            writer.write(buf)
            buf = bytearray()
    writer.write(buf)
    writer.fsync()
    writer.close()
    return txid


def prepare(name: Path, inodes: int, edits: int) -> dict:
    """Format ``name``, install the built image at IMAGE_TXID, write the edits after it."""
    start = time.perf_counter()
    ns = bench_core.build_namespace(inodes)
    ns.root.owner = getpass.getuser()            # as format_dirs makes it
    built = time.perf_counter()
    d = NameDir(name)
    namespace_id = format_dirs([d])
    info = install.install([d], lambda p: columns.save(ns, p, namespace_id, IMAGE_TXID))
    saved = time.perf_counter()
    last = write_edits(d.file(EDITS), IMAGE_TXID + 1, ns.last_inode_id + 1, edits)
    written = time.perf_counter()
    return {"inodes": ns.files + ns.dirs, "image_bytes": info.size,
            "edits_bytes": d.file(EDITS).stat().st_size, "last_txid": last,
            "build_s": built - start, "image_save_s": saved - built,
            "edits_write_s": written - saved}


# ----------------------------------------------------------------------------- the load

async def _writer(port: int, prefix: str, conn_no: int, stop: asyncio.Event,
                  out: list) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = 0
    while not stop.is_set():
        target = f"/webhdfs/v1/{prefix}/c{conn_no}/d{i}?op=MKDIRS&user.name={USER}"
        begin = time.time()
        writer.write(f"PUT {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
                     .encode())
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        body = await reader.readexactly(length)
        end = time.time()
        if not head.startswith(b"HTTP/1.1 200 ") or body != b'{"boolean":true}':
            raise RuntimeError(f"MKDIRS answered {head[:40]!r} {body[:200]!r}")
        out.append((end, end - begin))
        i += 1
    writer.close()


async def _load(port: int, connections: int, prefix: str) -> list:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    out: list = []
    tasks = [asyncio.ensure_future(_writer(port, prefix, c, stop, out))
             for c in range(connections)]
    print("READY", flush=True)
    await asyncio.gather(*tasks)
    return out


def load_child(port: str, connections: str, prefix: str, out_path: str) -> None:
    """Child process: MKDIRS until SIGTERM; writes [(end time, latency), ...] as JSON."""
    samples = asyncio.run(_load(int(port), int(connections), prefix))
    Path(out_path).write_text(json.dumps(samples))


class Load:
    def __init__(self, port: int, connections: int, prefix: str, out: Path):
        self.out = out
        self.proc = subprocess.Popen([sys.executable, __file__, "_load", str(port),
                                      str(connections), prefix, str(out)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "READY"

    def stop(self) -> list:
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(60) != 0:
            raise RuntimeError(f"load generator exited with {self.proc.returncode}")
        return json.loads(self.out.read_text())


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def window_stats(samples: list, start: float, end: float) -> dict:
    lat = sorted(latency for t, latency in samples if start <= t <= end)
    if not lat:
        return {"ops": 0, "ops_per_s": 0.0, "p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    return {"ops": len(lat), "ops_per_s": len(lat) / (end - start),
            "p50_ms": lat[len(lat) // 2] * 1000, "p99_ms": lat[int(len(lat) * 0.99)] * 1000,
            "max_ms": lat[-1] * 1000}


# ----------------------------------------------------------------------------- the logs

LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def log_time(line: str) -> float:
    stamp = LOG_TIME.match(line).group(1)
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def last_line(path: Path, needle: str) -> str:
    lines = [line for line in path.read_text().splitlines() if needle in line]
    if not lines:
        raise RuntimeError(f"no {needle!r} in {path}")
    return lines[-1]


def phases(secondary_log: str) -> dict:
    line = last_line(Path(secondary_log), "checkpoint done")
    return {k: float(v) for k, v in re.findall(r"(\w+) (\d+\.\d+) s", line.split(";", 1)[1])}


# ----------------------------------------------------------------------------- the run

def run_checkpoint(server: NamenodeProcess, tmp: Path, nice: int) -> dict:
    token = Path(server.name_dirs[0]) / "checkpoint.token"
    log = tmp / "secondary.log"
    cmd = [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", server.url,
           "--checkpoint-dir", str(tmp / "ckpt"), "--secret-file", str(token),
           "--checkpoint-now", "-D", "dfs.image.transfer.timeout=600000",
           "-D", f"nnlite.secondary.nice={nice}"]
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the checkpoint failed: {log.read_text()[-2000:]}")
    rolled = last_line(server.log, "rolled edits at txid")
    installed = last_line(server.log, "checkpoint installed")
    swap = re.search(r"verify (\d+\.\d+) s, swap (\d+\.\d+) s", installed)
    return {"process_wall_s": wall, "roll_to_swap_s": log_time(installed) - log_time(rolled),
            "window": (log_time(rolled), log_time(installed)), "phases": phases(str(log)),
            "verify_s": float(swap.group(1)), "swap_s": float(swap.group(2))}


def measure(args, server: NamenodeProcess, tmp: Path) -> dict:
    """Both windows, and the CPU seconds each process used over the checkpoint's process
    lifetime and over the window without one (which tells what the two cores were shared by)."""
    load = Load(server.port, args.connections, "with", tmp / "with.json")
    time.sleep(WARMUP)
    before = (cpu_seconds(server.proc.pid), cpu_seconds(load.proc.pid),
              os.times().children_user + os.times().children_system, time.time())
    ckpt = run_checkpoint(server, tmp, args.secondary_nice)
    after = (cpu_seconds(server.proc.pid), cpu_seconds(load.proc.pid),
             os.times().children_user + os.times().children_system, time.time())
    time.sleep(0.5)
    with_ckpt = window_stats(load.stop(), *ckpt["window"])
    with_ckpt["cpu"] = _cpu_shares(before, after)
    length = ckpt["window"][1] - ckpt["window"][0]
    load = Load(server.port, args.connections, "without", tmp / "without.json")
    time.sleep(WARMUP)
    start = time.time()
    before = (cpu_seconds(server.proc.pid), cpu_seconds(load.proc.pid), 0.0, start)
    time.sleep(length)
    end = time.time()
    after = (cpu_seconds(server.proc.pid), cpu_seconds(load.proc.pid), 0.0, end)
    time.sleep(0.5)
    without = window_stats(load.stop(), start, end)
    without["cpu"] = _cpu_shares(before, after)
    return {"checkpoint": ckpt, "with": with_ckpt, "without": without}


def _cpu_shares(before: tuple, after: tuple) -> dict:
    """Cores used on average by the namenode, the load generator and the secondary."""
    wall = after[3] - before[3]
    names = ("namenode", "load", "secondary")
    return {n: (after[i] - before[i]) / wall for i, n in enumerate(names)}


def report(args, prep: dict, startup: float, m: dict) -> None:
    c = m["checkpoint"]
    p = c["phases"]
    print(f"namespace: {prep['inodes']:,} inodes in the image ({prep['image_bytes'] / 1e6:.1f} "
          f"MB, txid {IMAGE_TXID:,}); {args.edits:,} edits after it "
          f"({prep['edits_bytes'] / 1e6:.1f} MB, last txid {prep['last_txid']:,})")
    print(f"preparation: build {prep['build_s']:.1f} s, image save {prep['image_save_s']:.1f} s,"
          f" edits write {prep['edits_write_s']:.1f} s; namenode startup {startup:.1f} s")
    print("\ncheckpoint (one run):")
    print(f"  roll -> swap done (namenode log): {c['roll_to_swap_s']:.2f} s")
    print(f"  secondary process wall time (with Python start-up): {c['process_wall_s']:.2f} s")
    for name in ("roll", "download", "load", "replay", "save", "upload"):
        print(f"  {name:9} {p.get(name, 0.0):7.3f} s")
    print(f"  {'verify':9} {c['verify_s']:7.3f} s   (namenode, part of upload)")
    print(f"  {'swap':9} {c['swap_s']:7.3f} s   (namenode, part of upload)")
    w, wo = m["with"], m["without"]
    length = c["window"][1] - c["window"][0]
    print(f"\nwriters: durable MKDIRS, {args.connections} HTTP connections, "
          f"{length:.1f} s windows")
    print(f"  {'':20} {'ops/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for label, s in (("without checkpoint", wo), ("during checkpoint", w)):
        print(f"  {label:20} {s['ops_per_s']:9.0f} {s['p50_ms']:8.1f} {s['p99_ms']:8.1f} "
              f"{s['max_ms']:8.1f}")
    for label, s in (("without checkpoint", wo), ("during checkpoint", w)):
        print(f"  cores used {label:20} " + ", ".join(
            f"{n} {v:.2f}" for n, v in s["cpu"].items()))
    ratio = w["ops_per_s"] / wo["ops_per_s"] if wo["ops_per_s"] else 0.0
    print(f"  throughput during / without: {ratio:.0%}; p99 during / without: "
          f"{w['p99_ms'] / wo['p99_ms'] if wo['p99_ms'] else 0:.1f}x")
    print(json.dumps({"prep": prep, "startup_s": startup, **m}, default=str))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_load":
        return load_child(*sys.argv[2:6])
    parser = argparse.ArgumentParser()
    parser.add_argument("--inodes", type=int, default=1_000_000)
    parser.add_argument("--edits", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--secondary-nice", type=int, default=10,
                        help="the secondary's nnlite.secondary.nice (its default: 10)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir")
    args = parser.parse_args()
    print(f"# python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')}, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    tmp = bench_core.workdir()
    server = None
    try:
        prep = prepare(tmp / "name", args.inodes, args.edits)
        start = time.perf_counter()
        server = NamenodeProcess.start([str(tmp / "name")], *USERS, timeout=600)
        startup = time.perf_counter() - start
        m = measure(args, server, tmp)
        report(args, prep, startup, m)
        print(f"# load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            print(f"# work dir kept: {tmp}")
        else:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
