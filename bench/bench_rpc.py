"""The namenode's own cost of a metadata call over hdfs:// (Hadoop IPC) and over WebHDFS, with
clients light enough that the server, not the client, is what is measured (issue 25).

    python bench/bench_rpc.py [--rounds 2] [--lookups 8:4000] [--creates 32:500]

One ``nnlite namenode`` on 127.0.0.1 (free HTTP and RPC ports, a fresh name dir under
``$BENCH_DIR`` or /tmp), stopped when the script ends. For each round and each protocol in
turn: ``getFileInfo`` / GETFILESTATUS of one directory from C clients (8 by default) and
durable ``mkdirs`` / MKDIRS of new directories from 32, N calls each. Each client is a
process with one connection and one call in flight, as each of the peers harness's JVM
clients has: over RPC a Hadoop IPC connection on a plain socket (the preamble, the
connection context, then ``RequestHeaderProto`` calls: ``formats/hadoop/ipc.py``), over
WebHDFS a kept-alive ``http.client`` connection. Hadoop's own ``DistributedFileSystem``
costs 44-122 us of CPU per call in its JVM (BENCHMARKS.md, "hdfs:// against WebHDFS"),
which on two shared cores holds the rate that bench/peers.sh measures; these clients cost a
fraction of that.

Each row: calls per second over the wall time, the namenode's CPU per call split into user
and system time (``/proc/<pid>/stat``: the system part is the kernel's work for the calls'
``recv``/``send`` on loopback and the loop's ``epoll_wait``, and the ``fdatasync`` of the
writes), the edits synced per ``fdatasync`` for the writes, and the 1-minute load average.
One run; compare within it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nnlite.formats.hadoop import acl  # noqa: E402
from nnlite.formats.hadoop import client_namenode as cn  # noqa: E402
from tests.namenode.rpc.rawclient import RawClient  # noqa: E402
from tests.servers import NamenodeProcess  # noqa: E402

USER = "bench"
TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid: int) -> tuple[float, float]:
    """(user, system) seconds of the process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def rpc_client(port: int, op: str, calls: int, k: str, ready, go) -> None:
    client = RawClient(port).connect(USER)
    ready.release()
    go.wait()
    rpc_calls(client, op, calls, f"/bench/rpc/c{k}")
    client.close()


def rpc_calls(client, op: str, calls: int, where: str) -> None:
    """``calls`` getFileInfo of /bench/rpc (``lookup``), or mkdirs of ``where``/0, 1, ..."""
    lookup = cn.GetFileInfoRequestProto(src="/bench/rpc")
    for n in range(calls):
        if op == "lookup":
            client.answer("getFileInfo", lookup)
        else:
            client.answer("mkdirs", cn.MkdirsRequestProto(
                src=f"{where}/{n}", masked=acl.FsPermissionProto(perm=0o755),
                createParent=True))


def http_client(port: int, op: str, calls: int, k: str, ready, go) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.connect()
    ready.release()
    go.wait()
    for n in range(calls):
        if op == "lookup":
            conn.request("GET", f"/webhdfs/v1/bench/http?op=GETFILESTATUS&user.name={USER}")
        else:
            conn.request("PUT", f"/webhdfs/v1/bench/http/c{k}/{n}?op=MKDIRS&user.name={USER}")
        answer = conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise SystemExit(f"{op}: HTTP {answer.status}: {body[:200]!r}")
    conn.close()


def syncs(nn: NamenodeProcess) -> tuple[int, int]:
    """(last synced txid, fdatasync calls) from the namenode's /metrics.json."""
    with urllib.request.urlopen(nn.url + "/metrics.json", timeout=10) as resp:
        metrics = json.load(resp)
    return int(metrics["LastSyncedTransactionId"]), int(metrics["Syncs"])


def race(nn: NamenodeProcess, worker, args: tuple, clients: int, r: int,
         what: str) -> tuple[float, float]:
    """``clients`` processes of ``worker(*args, "<r>-<k>", ready, go)``, each released at once
    once all are ready: (wall seconds, the namenode's CPU seconds) until the last is done."""
    ready, go = multiprocessing.Semaphore(0), multiprocessing.Event()
    procs = [multiprocessing.Process(target=worker, args=(*args, f"{r}-{k}", ready, go))
             for k in range(clients)]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.acquire()
    cpu0, started = sum(cpu(nn.proc.pid)), time.monotonic()
    go.set()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a {what} client failed (exit {proc.exitcode})")
    return time.monotonic() - started, sum(cpu(nn.proc.pid)) - cpu0


def row(nn: NamenodeProcess, protocol: str, op: str, clients: int, calls: int, r: int) -> None:
    target, port = (rpc_client, nn.rpc_port) if protocol == "hdfs://" else (http_client, nn.port)
    ready, go = multiprocessing.Semaphore(0), multiprocessing.Event()
    procs = [multiprocessing.Process(target=target, args=(port, op, calls, f"{r}-{k}", ready, go))
             for k in range(clients)]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.acquire()
    load = os.getloadavg()[0]
    txid0, syncs0 = syncs(nn)
    user0, sys0 = cpu(nn.proc.pid)
    started = time.monotonic()
    go.set()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a {protocol} client failed (exit {proc.exitcode})")
    wall = time.monotonic() - started
    user1, sys1 = cpu(nn.proc.pid)
    txid1, syncs1 = syncs(nn)
    total = clients * calls
    per = 1e6 / total
    batch = f"{(txid1 - txid0) / (syncs1 - syncs0):.1f}" if op == "create" and syncs1 > syncs0 \
        else "-"
    print(f"| {protocol} | {op} | {clients} | {total / wall:,.0f} | "
          f"{(user1 - user0 + sys1 - sys0) * per:.1f} | {(user1 - user0) * per:.1f} | "
          f"{(sys1 - sys0) * per:.1f} | {batch} | {load:.1f} |", flush=True)


def workload(text: str) -> tuple[int, int]:
    clients, calls = text.split(":")
    return int(clients), int(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lookups", type=workload, default="8:4000",
                        help="clients:calls each for getFileInfo (default 8:4000)")
    parser.add_argument("--creates", type=workload, default="32:500",
                        help="clients:calls each for mkdirs (default 32:500)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-rpc-", dir=os.environ.get("BENCH_DIR")))
    nn = NamenodeProcess.start([str(base / "name")], "-D",
                               f"hadoop.user.group.static.mapping.overrides={USER}=supergroup")
    try:
        for protocol_dir in ("rpc", "http"):
            conn = http.client.HTTPConnection("127.0.0.1", nn.port)
            conn.request("PUT", f"/webhdfs/v1/bench/{protocol_dir}?op=MKDIRS&user.name={USER}")
            conn.getresponse().read()
            conn.close()
        print("| protocol | call | clients | calls/s | namenode µs/call | user | system "
              "| edits per fdatasync | load |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in range(args.rounds):
            order = ("hdfs://", "WebHDFS") if r % 2 == 0 else ("WebHDFS", "hdfs://")
            for op, (clients, calls) in (("lookup", args.lookups), ("create", args.creates)):
                for protocol in order:
                    row(nn, protocol, op, clients, calls, r)
    finally:
        nn.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
