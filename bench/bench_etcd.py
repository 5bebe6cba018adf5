"""What a journal write costs through ``nnlite.client.etcd`` (etcd's gRPC API): sequential txns
of one put each, guarded as the HA journal guards them (a compare on the leader key's create
revision), against a one-member etcd on loopback (a real ``etcd`` process,
tests/etcd_cluster.py), or ``--members`` of them (an HA set's cluster: three on one machine, as
bench/bench_ha.py runs it).

    python bench/bench_etcd.py [--txns 1000] [--value-bytes 100] [--members 1]
    python bench/bench_etcd.py --members 3 --value-bytes 2400 --against REV [--rounds 3]

etcd fsyncs its WAL on each write, so the figure is mostly that disk's fdatasync, printed
alongside for comparison (the same size written and fdatasynced in the same directory).

``--against REV`` alternates this tree's etcd client with git revision REV's (exported with
``git archive``, as bench/peers.sh's ``--nn-rev``; for instance the last revision on etcd's
JSON gateway), ``--rounds`` times, on one cluster, each client in a process of its own and
each txn shaped as the HA journal's commit (``QuorumJournal._commit``: guarded by the leader
key's create revision and ``committed``'s value, putting the chunk and ``committed``, reading
both back when refused), and prints per client the latency, its process's CPU per txn (the
active namenode's share) and each member's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# The environment as started, before nnlite's etcd client sets gRPC's options in it: each
# compared client process sets its own (client/etcd/client.py's GRPC_EXPERIMENTS).
STARTED_ENV = dict(os.environ)

from nnlite.client.etcd.client import Etcd  # noqa: E402
from nnlite.client.etcd.messages import Compare, Op  # noqa: E402
from tests.etcd_cluster import EtcdCluster  # noqa: E402

WARM_UP = 50


def txn_times(etcd: Etcd, count: int, value: bytes) -> tuple[list[float], float]:
    """The sorted wall times of ``count`` txns, and the CPU seconds this process spent on
    each (the client's share: protobuf, gRPC)."""
    etcd.put(b"/leader", b"nn1")
    guard = Compare.create_revision(b"/leader") > 0
    times = []
    for i in range(WARM_UP + count):
        if i == WARM_UP:
            cpu = time.process_time()
        started = time.perf_counter()
        assert etcd.txn([guard], [Op.put(b"/journal/%010d" % i, value)]).succeeded
        times.append(time.perf_counter() - started)
    return sorted(times[WARM_UP:]), (time.process_time() - cpu) / count


# One client's rounds, in a process of its own whose ``nnlite`` is one tree's (PYTHONPATH):
# argv endpoint, first index, count, value bytes; prints the sorted times and its CPU per txn.
COMMITS = """
import json, sys, time
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import Compare, Op
endpoint, first, count, size = sys.argv[1], *map(int, sys.argv[2:])
value, leader, committed = b"x" * size, b"/bench/leader", b"/bench/committed"
etcd, times, cpu = Etcd([endpoint]), [], 0.0
for i in range(first, first + WARM_UP + count):
    if i == first + WARM_UP:
        cpu = time.process_time()
    guard = [Compare.create_revision(leader) > 0, Compare.value(committed) == str(i).encode()]
    started = time.perf_counter()
    result = etcd.txn(guard, [Op.put(b"/bench/txns/%020d" % (i + 1), value),
                              Op.put(committed, str(i + 1).encode())],
                      [Op.get(leader), Op.get(committed)])
    times.append(time.perf_counter() - started)
    assert result.succeeded
print(json.dumps([sorted(times[WARM_UP:]), (time.process_time() - cpu) / count]))
"""


def python_path(tree: Path, work: Path) -> str:
    """A PYTHONPATH whose ``nnlite`` is ``tree`` (a link, as bench/peers/servers.py's)."""
    link = work / f"pythonpath-{tree.name}" / "nnlite"
    link.parent.mkdir(parents=True)
    link.symlink_to(tree.resolve(), target_is_directory=True)
    return str(link.parent)


def exported(rev: str, work: Path) -> Path:
    """Git revision ``rev`` of this repository, exported into ``work``."""
    tree = work / "rev"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def against(cluster: EtcdCluster, pids: list[int], args, work: Path) -> None:
    """This tree's client against revision ``--against``'s, alternated (module docstring)."""
    clients = {"this tree": python_path(REPO, work),
               args.against: python_path(exported(args.against, work), work)}
    names = list(clients)
    with Etcd(cluster.endpoints) as etcd:
        etcd.put(b"/bench/leader", b"nn1")
        etcd.put(b"/bench/committed", b"0")
    leader = next(i for i, m in enumerate(cluster.members) if m.leader() == m.member_id())
    done = 0
    for rnd in range(1, args.rounds + 1):
        for name in names if rnd % 2 else names[::-1]:
            before = [cpu_seconds(pid) for pid in pids]
            out = subprocess.run(
                [sys.executable, "-c", f"WARM_UP = {WARM_UP}\n" + COMMITS,
                 cluster.endpoints[leader], str(done), str(args.txns), str(args.value_bytes)],
                env=dict(STARTED_ENV, PYTHONPATH=clients[name]), check=True,
                capture_output=True, text=True).stdout
            times, client_cpu = json.loads(out)
            members = [(cpu_seconds(pid) - b) / (args.txns + WARM_UP) * 1e6
                       for pid, b in zip(pids, before, strict=True)]
            done += args.txns + WARM_UP
            print(f"round {rnd} {name}: " + line("commit txn", times)
                  + f"; client CPU {client_cpu * 1e6:.0f} µs; etcd CPU per txn "
                  + " + ".join(f"{c:.0f}" for c in members)
                  + f" = {sum(members):.0f} µs (leader m{leader}); "
                  + f"load {os.getloadavg()[0]:.2f}", flush=True)


def fdatasync_times(directory: Path, count: int, size: int) -> list[float]:
    fd = os.open(directory / "probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    times = []
    try:
        for _ in range(count):
            os.write(fd, b"x" * size)
            started = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - started)
    finally:
        os.close(fd)
    return sorted(times)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def line(name: str, times: list[float]) -> str:
    return (f"{name}: median {statistics.median(times) * 1e3:.2f} ms, "
            f"mean {statistics.fmean(times) * 1e3:.2f} ms, "
            f"p99 {times[int(len(times) * 0.99)] * 1e3:.2f} ms ({len(times)} sequential)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--txns", type=int, default=1000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--against", default="",
                        help="a git revision whose etcd client to alternate with this tree's")
    parser.add_argument("--rounds", type=int, default=3, help="with --against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, \
            EtcdCluster(Path(tmp), members=args.members) as cluster:
        cluster.start()
        pids = [m.proc.pid for m in cluster.members if m.proc is not None]
        if args.against:
            print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
                  f"{args.members} etcd member(s), {args.value_bytes} bytes a chunk")
            against(cluster, pids, args, Path(tmp))
            return
        before = [cpu_seconds(pid) for pid in pids]
        with Etcd(cluster.endpoints) as etcd:
            txns, client_cpu = txn_times(etcd, args.txns, b"x" * args.value_bytes)
        members_cpu = [cpu_seconds(pid) - b for pid, b in zip(pids, before, strict=True)]
        syncs = fdatasync_times(Path(tmp), args.txns, args.value_bytes)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
          f"{args.members} etcd member(s), {args.value_bytes} bytes a put")
    print(line("guarded one-put txn", txns) + f", client CPU {client_cpu * 1e6:.0f} µs each")
    print("etcd CPU per txn (warm-up included), by member: " + ", ".join(
        f"{c / (args.txns + WARM_UP) * 1e6:.0f} µs" for c in members_cpu))
    print(line("fdatasync of the same bytes", syncs))


if __name__ == "__main__":
    main()
