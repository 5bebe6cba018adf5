"""An HA set for tests: real namenode processes on loopback sharing a real etcd cluster.

``HASet(tmp_path, etcd)`` writes one configuration naming the nameservice ``ns1``, its
namenodes ``nn1``, ``nn2``, ... on free ports and the etcd endpoints, formats ``nn1``'s name
dir and gives every other namenode a copy of it (one namespace, as ``-bootstrapStandby``
would). ``start(i)`` runs namenode ``i``; ``active()`` waits for the one that says
``/isActive``. ``Writers`` are the load: connections that each create their own directories
in order, follow the active as a failover client does, and record what was acknowledged.
Everything started is killed by ``close()``.
"""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import threading
import time
from pathlib import Path

from nnlite.namenode.fsnamesystem import format_dirs
from nnlite.namenode.storage.namedir import NameDir
from tests.etcd_cluster import EtcdCluster, free_ports
from tests.servers import NamenodeProcess, wait_for

USER = "tester"
NAMESERVICE = "ns1"


class HASet:
    def __init__(self, tmp_path: Path, etcd: EtcdCluster, count: int = 2,
                 settings: dict[str, str] | None = None):
        self.root = tmp_path
        self.ids = [f"nn{i + 1}" for i in range(count)]
        ports = free_ports(2 * count)
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
               for nn, port in zip(self.ids, self.ports)},
            **{f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
               for nn, port in zip(self.ids, self.rpc_ports)},
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

    def start(self, i: int) -> NamenodeProcess:
        node = NamenodeProcess.start([self.dirs[i]], "--port", str(self.ports[i]),
                                     "--rpc-port", str(self.rpc_ports[i]), "--conf",
                                     str(self.conf), "-D", f"dfs.ha.namenode.id={self.ids[i]}")
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

    def close(self) -> None:
        for node in self.nodes:
            if node is not None:
                if node.proc.poll() is None:
                    node.proc.send_signal(signal.SIGCONT)
                node.kill()


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
    """``count`` connections, each making ``/w<k>/d<n>`` for n = 0, 1, ... in order and
    recording every n whose MKDIRS was answered ``true``; every ``file_every``-th op is
    instead a small file ``/w<k>/f<n>`` (WebHDFS's two steps, with ``overwrite``) recorded
    with its bytes once its data step answered 201. A refused connection or a
    StandbyException sends a writer to the next namenode, a RetriableException makes it
    pause and ask again, as Hadoop's failover client does; an op whose answer was lost is
    asked again (MKDIRS of an existing directory answers true; the file is written again)."""

    def __init__(self, haset: HASet, count: int = 32, file_every: int = 0):
        self.haset = haset
        self.file_every = file_every
        self.acked: list[list[int]] = [[] for _ in range(count)]
        self.files: dict[str, bytes] = {}
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._write, args=(k,), daemon=True)
                        for k in range(count)]

    def __enter__(self) -> "Writers":
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
        while not self.stopping.is_set():
            is_file = self.file_every and n % self.file_every == self.file_every - 1
            data = f"w{k} f{n} ".encode() * (n % 50 + 1)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.haset.ports[i],
                                                      timeout=30)
                if is_file:
                    resp, body = self._create(conn, f"/w{k}/f{n}", data)
                else:
                    conn.request("PUT", f"/webhdfs/v1/w{k}/d{n}?op=MKDIRS&user.name={USER}")
                    resp = conn.getresponse()
                    body = resp.read()
            except OSError:
                if conn is not None:
                    conn.close()
                conn, i = None, (i + 1) % len(self.haset.ids)
                time.sleep(0.01)
                continue
            if is_file and resp.status == 201:
                self.files[f"/w{k}/f{n}"] = data
                n += 1
                continue
            if resp.status == 200 and json.loads(body) == {"boolean": True}:
                self.acked[k].append(n)
                n += 1
                continue
            exception = json.loads(body).get("RemoteException", {}).get("exception")
            if exception == "StandbyException":
                conn.close()
                conn, i = None, (i + 1) % len(self.haset.ids)
            elif exception == "RetriableException":
                time.sleep(0.05)
            else:
                self.errors.append(f"w{k}/d{n}: {resp.status} {body[:200]!r}")
                time.sleep(0.05)
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
            status, body = request(url, "GET",
                                   f"/webhdfs/v1/w{k}?op=LISTSTATUS&user.name={USER}")
            assert status == 200, body
            names = {s["pathSuffix"] for s in json.loads(body)["FileStatuses"]["FileStatus"]}
            lost += [f"/w{k}/d{n}" for n in acked if f"d{n}" not in names]
        return lost
