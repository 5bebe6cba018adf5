"""An HA set for tests: real namenode processes on loopback sharing a real etcd cluster.

``HASet(tmp_path, etcd)`` writes one configuration naming the nameservice ``ns1``, its namenodes
``nn1``, ``nn2``, ... on free ports (``restartable_ports``: below the ephemeral range, for sets
whose namenodes are killed and started many times) and the etcd endpoints, formats ``nn1``'s name
dir and gives every other namenode a copy of it (one namespace, as ``-bootstrapStandby`` would).
``start(i)`` runs namenode ``i`` (with ``PYTHONFAULTHANDLER``: ``dump_threads()`` has each write its
threads' stacks to its log); ``active()`` waits for the one that says ``/isActive``. ``Writers`` are
the load: connections that each create their own directories in order, follow the active as a
failover client does, and record what was acknowledged. Everything started is killed by ``close()``.

For the checks after faults (tests/namenode/ha/test_faults.py): ``failover(i)`` (the HTTP
admin's graceful failover to namenode ``i``), ``checkpoint_txid(i)``, ``local_records(dir)``
and ``shared_records(etcd)`` (the framed records of a name dir's edits and of the shared
journal in etcd, by txid, to compare byte for byte), and ``load_offline(dir)`` (a copy of a
stopped namenode's name dir loaded by nnlite's own startup, as its next start would).
"""

from __future__ import annotations

import http.client
import json
import random
import shutil
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite.client.etcd.client import Etcd
from nnlite.formats import edits
from nnlite.namenode.fsnamesystem import format_dirs
from nnlite.namenode.ha.quorum_journal import Layout
from nnlite.namenode.image import startup
from nnlite.namenode.namespace.inode import walk
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir
from tests.etcd_cluster import EtcdCluster, free_ports
from tests.servers import NamenodeProcess, wait_for

USER = "tester"
NAMESERVICE = "ns1"


class HASet:
    def __init__(self, tmp_path: Path, etcd: EtcdCluster, count: int = 2,
                 settings: dict[str, str] | None = None, restartable_ports: bool = False):
        self.root = tmp_path
        self.ids = [f"nn{i + 1}" for i in range(count)]
        ports = unclaimable_ports(2 * count) if restartable_ports else free_ports(2 * count)
        self.ports, self.rpc_ports = ports[:count], ports[count:]
        self.dirs = [str(tmp_path / f"{nn}-name") for nn in self.ids]
        values = {
            "dfs.nameservices": NAMESERVICE,
            f"dfs.ha.namenodes.{NAMESERVICE}": ",".join(self.ids),
            "nnlite.ha.etcd.endpoints": ",".join(etcd.endpoints),
            "hadoop.user.group.static.mapping.overrides": f"{USER}=supergroup",
            # the set's shared secret: checkpoints and block copies between its namenodes
            "nnlite.checkpoint.secret": "ha-set-secret",
            "nnlite.ha.replication.interval": "0.5",
            **{f"dfs.namenode.http-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
               for nn, port in zip(self.ids, self.ports, strict=True)},
            **{f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
               for nn, port in zip(self.ids, self.rpc_ports, strict=True)},
            **(settings or {}),
        }
        self.conf = tmp_path / "ha.conf"
        self.conf.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
        format_dirs([NameDir(self.dirs[0])])
        for d in self.dirs[1:]:
            shutil.copytree(self.dirs[0], d)
        self.nodes: list[NamenodeProcess | None] = [None] * count

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def start(self, i: int, timeout: float = 30, faults: str = "") -> NamenodeProcess:
        """Start namenode ``i``; ``faults``: its NNLITE_FAULTS (durability/faults.py)."""
        env = {"PYTHONFAULTHANDLER": "1", **({"NNLITE_FAULTS": faults} if faults else {})}
        node = NamenodeProcess.start([self.dirs[i]], "--port", str(self.ports[i]),
                                     "--rpc-port", str(self.rpc_ports[i]), "--conf",
                                     str(self.conf), "-D", f"dfs.ha.namenode.id={self.ids[i]}",
                                     timeout=timeout, env=env)
        self.nodes[i] = node
        return node

    def start_all(self) -> int:
        for i in range(len(self.ids)):
            self.start(i)
        return self.active()

    def kill(self, i: int) -> None:
        node = self.nodes[i]
        if node is not None:
            node.kill()

    def pause(self, i: int) -> None:
        self.nodes[i].proc.send_signal(signal.SIGSTOP)

    def resume(self, i: int) -> None:
        self.nodes[i].proc.send_signal(signal.SIGCONT)

    def is_active(self, i: int) -> bool:
        node = self.nodes[i]
        if node is None or node.proc.poll() is not None:
            return False
        try:
            status, _ = request(self.url(i), "GET", "/isActive", timeout=2)
        except OSError:
            return False
        return status == 200

    def active(self, timeout: float = 60, excluding: int | None = None) -> int:
        """The index of the active namenode, once there is one (not ``excluding``)."""
        def find() -> int | None:
            for i in range(len(self.ids)):
                if i != excluding and self.is_active(i):
                    return i + 1
            return None
        return wait_for(find, timeout, "an active namenode", interval=0.05) - 1

    def jmx(self, i: int) -> dict:
        return self.jmx_beans(i)[0]

    def jmx_beans(self, i: int) -> list[dict]:
        status, body = request(self.url(i), "GET", "/jmx", timeout=5)
        return json.loads(body)["beans"]

    def synced_txid(self, i: int) -> int:
        return int(self.jmx(i)["LastSyncedTransactionId"])

    def running(self, i: int) -> bool:
        node = self.nodes[i]
        return node is not None and node.proc.poll() is None

    def checkpoint_txid(self, i: int) -> int:
        """The txid of namenode ``i``'s last image (its last checkpoint)."""
        bean = self.jmx(i)
        return int(bean["LastWrittenTransactionId"]) - int(bean["TransactionsSinceLastCheckpoint"])

    def failover(self, to: int, timeout: float = 120) -> tuple[int, bytes]:
        """``haadmin -failover`` to namenode ``to`` over the HTTP admin (the active gives way
        gracefully); the answer's status and body."""
        return request(self.url(to), "POST", f"/admin?op=FAILOVER&user.name={USER}",
                       timeout=timeout)

    def dump_threads(self) -> None:
        """SIGABRT every running namenode: each writes every thread's stack to its log as it
        dies (``PYTHONFAULTHANDLER``), what a stuck set was doing."""
        for node in self.nodes:
            if node is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGCONT)
                node.proc.send_signal(signal.SIGABRT)
                node.proc.wait(30)

    def logs(self) -> list[Path]:
        """Every namenode log this set's processes wrote, oldest first."""
        return sorted(self.root.glob("namenode-*.log"), key=lambda p: p.stat().st_mtime)

    def close(self) -> None:
        for node in self.nodes:
            if node is not None:
                if node.proc.poll() is None:
                    node.proc.send_signal(signal.SIGCONT)
                node.kill()


def unclaimable_ports(count: int) -> list[int]:
    """``count`` free loopback ports below the kernel's ephemeral range: no outgoing
    connection takes one as its source port while its namenode is down, so a namenode
    killed again and again always starts again on its own ports (``free_ports``' come from
    that range)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    ports: list[int] = []
    while len(ports) < count:
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in ports:
            ports.append(port)
    return ports


def request(url: str, method: str, target: str, timeout: float = 10,
            body: bytes | None = None) -> tuple[int, bytes]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, target, body=body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


class Writers:
    """``count`` connections, each making ``<prefix>/w<k>/d<n>`` for n = 0, 1, ... in order and
    recording every n whose MKDIRS was answered ``true``; every ``file_every``-th op is
    instead a small file ``/w<k>/f<n>`` (WebHDFS's two steps, with ``overwrite``) recorded
    with its bytes once its data step answered 201. A refused connection or a
    StandbyException sends a writer to the next namenode, a RetriableException makes it
    pause and ask again, as Hadoop's failover client does; an op whose answer was lost is
    asked again (MKDIRS of an existing directory answers true; the file is written again).
    An answer that is not WebHDFS JSON is recorded in ``errors`` and the op asked again."""

    def __init__(self, haset: HASet, count: int = 32, file_every: int = 0, prefix: str = ""):
        self.haset = haset
        self.file_every = file_every
        self.prefix = prefix        # "/r1": the writers make /r1/w<k>/... (one set per round)
        self.acked: list[list[int]] = [[] for _ in range(count)]
        self.files: dict[str, bytes] = {}
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._write, args=(k,), daemon=True)
                        for k in range(count)]

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def total(self) -> int:
        return sum(len(a) for a in self.acked)

    def wait_progress(self, more: int, timeout: float = 60) -> None:
        target = self.total() + more
        wait_for(lambda: self.total() >= target, timeout, f"{more} more acknowledged MKDIRS")

    def _write(self, k: int) -> None:
        n = 0
        i = k % len(self.haset.ids)
        conn: http.client.HTTPConnection | None = None
        base = f"{self.prefix}/w{k}"
        while not self.stopping.is_set():
            is_file = self.file_every and n % self.file_every == self.file_every - 1
            data = f"w{k} f{n} ".encode() * (n % 50 + 1)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.haset.ports[i],
                                                      timeout=30)
                if is_file:
                    resp, body = self._create(conn, f"{base}/f{n}", data)
                else:
                    conn.request("PUT", f"/webhdfs/v1{base}/d{n}?op=MKDIRS&user.name={USER}")
                    resp = conn.getresponse()
                    body = resp.read()
            except (OSError, http.client.HTTPException, ValueError, KeyError):
                if conn is not None:
                    conn.close()
                conn, i = None, (i + 1) % len(self.haset.ids)
                time.sleep(0.01)        # a writer's pause before it tries the other namenode
                continue
            if is_file and resp.status == 201:
                self.files[f"{base}/f{n}"] = data
                n += 1
                continue
            try:
                answer = json.loads(body)
            except ValueError:
                answer = None
            if not isinstance(answer, dict):
                self.errors.append(f"{base}/{'f' if is_file else 'd'}{n}: {resp.status} "
                                   f"{body[:200]!r}")
                time.sleep(0.05)    # a writer's back-off before it asks again
                continue
            if resp.status == 200 and answer == {"boolean": True}:
                self.acked[k].append(n)
                n += 1
                continue
            exception = answer.get("RemoteException", {}).get("exception")
            if exception == "StandbyException":
                conn.close()
                conn, i = None, (i + 1) % len(self.haset.ids)
            elif exception == "RetriableException":
                time.sleep(0.05)    # a writer's back-off before it asks again
            else:
                self.errors.append(f"{base}/{'f' if is_file else 'd'}{n}: {resp.status} "
                                   f"{body[:200]!r}")
                time.sleep(0.05)    # a writer's back-off before it asks again
        if conn is not None:
            conn.close()

    @staticmethod
    def _create(conn: http.client.HTTPConnection, path: str,
                data: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        """Both steps of CREATE on ``conn``; the first step's refusal, or the data step's
        answer."""
        conn.request("PUT", f"/webhdfs/v1{path}?op=CREATE&overwrite=true&noredirect=true"
                            f"&user.name={USER}")
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            return resp, body
        target = json.loads(body)["Location"].split("/", 3)[3]
        conn.request("PUT", "/" + target, body=data)
        resp = conn.getresponse()
        return resp, resp.read()

    def unreadable(self, url: str) -> list[str]:
        """Acknowledged files the namenode at ``url`` cannot give back byte for byte."""
        bad = []
        for path, data in self.files.items():
            status, body = request(url, "GET", f"/webhdfs/v1{path}?op=OPEN&noredirect=true"
                                               f"&user.name={USER}")
            if status != 200:
                bad.append(f"{path}: {status} {body[:100]!r}")
                continue
            target = json.loads(body)["Location"].split("/", 3)[3]
            status, got = request(url, "GET", "/" + target)
            if status != 200 or got != data:
                bad.append(f"{path}: {status}, {len(got)} bytes, expected {len(data)}")
        return bad

    def missing(self, url: str) -> list[str]:
        """Acknowledged directories the namenode at ``url`` does not have."""
        lost = []
        for k, acked in enumerate(self.acked):
            if not acked:
                continue
            base = f"{self.prefix}/w{k}"
            status, body = request(url, "GET",
                                   f"/webhdfs/v1{base}?op=LISTSTATUS&user.name={USER}")
            if status == 404 and self.prefix:       # the writer's directory itself is lost
                lost += [f"{base}/d{n}" for n in acked]
                continue
            assert status == 200, body
            names = {s["pathSuffix"] for s in json.loads(body)["FileStatuses"]["FileStatus"]}
            lost += [f"{base}/d{n}" for n in acked if f"d{n}" not in names]
        return lost

    def acknowledged(self) -> dict[str, bytes | None]:
        """Every acknowledged path: a file's bytes, None for a directory."""
        found: dict[str, bytes | None] = {f"{self.prefix}/w{k}/d{n}": None
                                          for k, acked in enumerate(self.acked) for n in acked}
        found.update(self.files)
        return found


# ------------------------------------------------------------------ the journals, offline

def local_records(name_dir: str) -> dict[int, bytes]:
    """The framed records of a name dir's ``edits`` and ``edits.new``, by txid, as they are on
    disk (a torn tail is left out: the next start truncates it)."""
    records: dict[int, bytes] = {}
    for name in (EDITS, EDITS_NEW):
        path = Path(name_dir) / "current" / name
        if path.exists():
            data = path.read_bytes()
            edits.decode_header(data, path=str(path))
            records.update(_framed(data, edits.HEADER_SIZE))
    return records


def _framed(data: bytes, off: int) -> dict[int, bytes]:
    out = {}
    while off < len(data):
        frame = edits.frame_at(data, off, len(data), edits.DEFAULT_MAX_RECORD)
        if isinstance(frame, str):
            break
        out[frame.txid] = data[frame.offset:frame.end]
        off = frame.end
    return out


@dataclass
class SharedJournal:
    """The set's journal in etcd: ``committed``, every chunk's last txid, every record."""
    committed: int | None
    chunks: list[int]
    records: dict[int, bytes]


def shared_records(endpoints: list[str], prefix: str = "/nnlite") -> SharedJournal:
    layout = Layout.of(prefix, NAMESERVICE)
    records: dict[int, bytes] = {}
    chunks = []
    with Etcd(endpoints) as etcd:
        kv = etcd.get(layout.committed)
        for chunk in etcd.range(layout.txns, layout.txns + b"\xff").kvs:
            chunks.append(layout.txid_of(chunk.key))
            found = _framed(chunk.value, 0)
            records.update(found)
    return SharedJournal(None if kv is None else int(kv.value), chunks, records)


def diverged(local: dict[int, bytes], shared: SharedJournal) -> list[str]:
    """How a name dir's records fail to be a prefix of the shared journal: a txid above
    ``committed``, or a txid etcd still holds with other bytes (or missing there)."""
    wrong = []
    lowest = min(shared.records, default=None)
    for txid in sorted(local):
        if shared.committed is not None and txid > shared.committed:
            wrong.append(f"txid {txid} is above the journal's committed {shared.committed}")
        elif lowest is not None and txid >= lowest and local[txid] != shared.records.get(txid):
            theirs = shared.records.get(txid)
            wrong.append(f"txid {txid}: {_op(local[txid])} locally, "
                         f"{_op(theirs) if theirs else 'nothing'} in etcd")
    return wrong


def _op(record: bytes) -> str:
    frame = edits.frame_at(record, 0, len(record), edits.DEFAULT_MAX_RECORD)
    return frame if isinstance(frame, str) else repr(frame.op)[:160]


def load_offline(name_dir: str, scratch: Path) -> dict[str, tuple[bool, int]]:
    """Load a copy of a stopped namenode's name dir as its next start would
    (``startup.load``); every path with (is a directory, length)."""
    copy = scratch / Path(name_dir).name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(name_dir, copy, ignore=shutil.ignore_patterns("in_use.lock"))
    loaded = startup.load([NameDir(copy)])
    return {node.path(): (node.is_dir, 0 if node.is_dir else node.length)
            for node in walk(loaded.tree.root)}
