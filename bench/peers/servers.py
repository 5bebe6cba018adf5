"""The systems under test, each on 127.0.0.1 with a fresh data dir and its durable defaults.

A server starts its process in a session of its own, waits until it answers, names the PIDs
whose CPU is its own, reads its own count of log fsyncs and the time they took (``syncs``:
a count and seconds, both running totals), and is stopped by the PID it started
(SIGTERM, then SIGKILL after 10 s). ``FsyncFloor`` runs no process: the load generator writes
and fdatasyncs files in a directory on the same disk. ``NamenodeHASet`` is several processes,
an HA set of namenodes and the etcd cluster holding its journal, reached at its active
namenode; ``parts`` names each process whose CPU it counts. ``NamenodeRpc`` is no process of
its own: the ``Namenode``'s, reached at its Hadoop IPC port instead of WebHDFS.
"""

from __future__ import annotations

import abc
import contextlib
import getpass
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
PROFILER = Path(__file__).with_name("profile_threads.py")
JAVA_LIB = Path("/usr/share/java")   # where Debian's packages put their jars
ZOOKEEPER_JAR = JAVA_LIB / "zookeeper.jar"


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants, from /proc/<pid>/stat."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process and its descendants, from /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0, 0.0
    fields = stat.rsplit(")", 1)[1].split()
    user, system = int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK
    for child in children(pid):
        u, s = cpu_split(child)
        user, system = user + u, system + s
    return user, system


def children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def port_busy(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def http_post_json(url: str, doc: dict, timeout: float = 2.0) -> dict:
    """etcd's gateway: one JSON request, its JSON answer ({} when there is none)."""
    req = urllib.request.Request(url, data=json.dumps(doc).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return {}


def http_put(url: str) -> int:
    req = urllib.request.Request(url, method="PUT", data=b"")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def four_letter_word(port: int, word: bytes) -> str:
    """ZooKeeper's admin words (srvr, mntr) over its client port."""
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.sendall(word)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out.decode(errors="replace")


class Server(abc.ABC):
    """One system under test; subclasses say how to start it and how to read its fsyncs."""

    name = "?"
    target = "?"        # PeerLoad's name for the protocol
    ports: tuple[int, ...] = ()

    def __init__(self, data_dir: Path, log_dir: Path):
        self.data_dir, self.log_dir = data_dir, log_dir
        self.process: subprocess.Popen | None = None
        self.command: list[str] = []
        self.facts: dict[str, str] = {}

    def address(self) -> str:
        return f"127.0.0.1:{self.ports[0]}"

    @abc.abstractmethod
    def start(self) -> None:
        """Start the server on its ports with a fresh data dir."""

    def syncs(self) -> tuple[float, float] | None:
        return None

    def pids(self) -> list[int]:
        return [self.process.pid] if self.process and self.process.poll() is None else []

    def parts(self) -> dict[str, int]:
        """The processes whose CPU is this system's, by a label (one, for most)."""
        pids = self.pids()
        return {self.name: pids[-1]} if pids else {}

    def shared_journal(self) -> tuple[float, float] | None:
        """Running totals (batches, seconds) of the writes to a shared journal, if any."""
        return None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def launch(self, argv: list[str], env: dict | None = None) -> None:
        busy = [p for p in self.ports if port_busy(p)]
        if busy:
            raise RuntimeError(f"{self.name}: port {busy[0]} is already in use; not starting")
        self.command = argv
        with open(self.log_dir / f"{self.name}.log", "ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.data_dir,
                                            env=env, start_new_session=True)

    def wait_until(self, ready, timeout: float = 90.0) -> None:
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; "
                                   f"see {self.log_dir / (self.name + '.log')}")
            try:
                if ready():
                    return
            except OSError as e:
                last = e
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready after {timeout:.0f} s ({last})")

    def kill(self) -> None:
        """SIGKILL: a crash, nothing flushed or said goodbye."""
        p, self.process = self.process, None
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(10)

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            print(f"# {self.name}: pid {p.pid} still there after 10 s: SIGKILL", flush=True)
            p.kill()
            p.wait(10)


class Namenode(Server):
    """nnlite's namenode from a tree (this one, or another for an A/B), WebHDFS on a port.

    ``rpc_port`` serves Hadoop IPC (``hdfs://``) there too (``--rpc-port``; None: the tree's
    default, which an older tree may not know); ``conf`` is a configuration file (an HA
    set's); ``profile``, a directory, runs it under cProfile in every thread
    (``profile_threads.py``): the stats go there when it stops; ``sitecustomize``, a Python
    file, is imported first by its interpreter (a probe, or an experiment such as
    ``ha_experiments.py``)."""

    name, target = "nnlite", "webhdfs"

    def __init__(self, data_dir: Path, log_dir: Path, tree: Path, python: str, port: int,
                 defines: list[str], *, name: str | None = None, conf: Path | None = None,
                 profile: Path | None = None, sitecustomize: Path | None = None,
                 rpc_port: int | None = None):
        super().__init__(data_dir, log_dir)
        self.tree, self.python, self.defines = tree, python, defines
        self.rpc_port = rpc_port
        self.ports = (port,) if rpc_port is None else (port, rpc_port)
        self.name = name or self.name
        self.conf, self.profile = conf, profile
        path = self.package_link()
        if sitecustomize is not None:
            shutil.copyfile(sitecustomize, Path(path) / "sitecustomize.py")
        self.env = dict(os.environ, PYTHONPATH=path)

    @property
    def name_dir(self) -> Path:
        return self.data_dir / "name"

    def start(self) -> None:
        if self.running():     # one process shared with a NamenodeRpc, started by either
            return
        self.format()
        self.launch_namenode()
        self.wait_loaded()
        self.open_root_to_bench()
        self.facts = {"tree": git_describe(self.tree), "python": self.python_version(self.env),
                      "settings": " ".join(self.defines) or "defaults"}

    def cli(self) -> list[str]:
        return [self.python, str(self.tree / "cli.py")]

    def format(self) -> None:
        formatted = subprocess.run(self.cli() + ["format", "--name-dir", str(self.name_dir)],
                                   env=self.env, capture_output=True, text=True)
        if formatted.returncode:
            raise RuntimeError(f"{self.name}: format failed: {formatted.stderr.strip()}")

    def launch_namenode(self) -> None:
        """Start the process on the formatted name dir (again, after a stop or a kill)."""
        options = [a for d in self.defines for a in ("-D", d)]
        conf = ["--conf", str(self.conf)] if self.conf else []
        rpc = [] if self.rpc_port is None else ["--rpc-port", str(self.rpc_port)]
        argv = self.cli() + ["namenode", "--name-dir", str(self.name_dir), "--host",
                             "127.0.0.1", "--port", str(self.ports[0])] + rpc + conf + options
        if self.profile is not None:
            self.profile.mkdir(parents=True, exist_ok=True)
            stats = self.profile / f"{self.name}-{time.strftime('%H%M%S')}"
            argv = [self.python, str(PROFILER), str(stats)] + argv[1:]
        self.launch(argv, env=self.env)

    def wait_loaded(self) -> None:
        self.wait_until(lambda: b'"Loading":0' in http_get(self.url("/metrics.json"))[1])

    def package_link(self) -> str:
        """A directory whose ``nnlite`` is the tree: its cli.py then imports that tree."""
        link = self.data_dir / "pythonpath" / "nnlite"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(self.tree.resolve(), target_is_directory=True)
        return str(link.parent)

    def url(self, path: str) -> str:
        return f"http://{self.address()}{path}"

    def open_root_to_bench(self) -> None:
        """/ becomes 1777 (as the superuser, the OS user running it) so that the generator's
        user ``bench`` creates directories as an ordinary user, permission checks included."""
        superuser = getpass.getuser()
        code = http_put(self.url(f"/webhdfs/v1/?op=SETPERMISSION&permission=1777"
                                 f"&user.name={superuser}"))
        status = json.loads(http_get(self.url("/webhdfs/v1/?op=GETFILESTATUS&user.name=bench"))[1])
        refused = http_put(self.url("/webhdfs/v1/?op=SETOWNER&owner=bench&user.name=bench"))
        if code != 200 or status["FileStatus"]["permission"] != "1777" or refused != 403:
            raise RuntimeError(f"nnlite: / not 1777 for bench or bench a superuser "
                               f"(SETPERMISSION {code}, SETOWNER {refused})")

    def python_version(self, env: dict) -> str:
        probe = ("import sys; import importlib.util as u; print(sys.version.split()[0], "
                 "'uvloop' if u.find_spec('uvloop') else 'asyncio')")
        return subprocess.run([self.python, "-c", probe], env=env, capture_output=True,
                              text=True).stdout.strip()

    def syncs(self) -> tuple[float, float] | None:
        try:
            metrics = json.loads(http_get(self.url("/metrics.json"))[1])
        except (OSError, ValueError):
            return None
        count = float(metrics.get("Syncs", 0))
        return count, count * float(metrics.get("SyncsAvgTime", 0)) / 1000

    def is_active(self) -> bool:
        """Whether it answers ``/isActive`` (Hadoop's servlet) with 200."""
        if not self.running():
            return False
        try:
            return http_get(self.url("/isActive"), timeout=2)[0] == 200
        except OSError:
            return False

    def status_bean(self) -> dict:
        """The ``NameNodeStatus`` bean of ``/jmx`` (an HA namenode's ``HA...`` figures)."""
        query = "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus"
        return json.loads(http_get(self.url(query), timeout=5)[1])["beans"][0]


class NamenodeByClient(Server):
    """A ``Namenode`` driven by another client than the lean WebHDFS one: one of Hadoop's own
    FileSystem clients. It shares the namenode object, and so the process, its name dir, its
    CPU and its sync counters: the rows of ``nnlite`` and of these systems measure one process
    in turn, so their ratio is that of the protocols and clients alone. Starting or stopping
    any of them starts or stops the process."""

    def __init__(self, namenode: Namenode, port: int, what: str):
        super().__init__(namenode.data_dir, namenode.log_dir)
        self.namenode = namenode
        self.ports = (port,)
        self.what = what

    def start(self) -> None:
        self.namenode.start()
        self.command = self.namenode.command
        self.facts = dict(self.namenode.facts, process=f"{self.namenode.name}'s (pid "
                          f"{self.namenode.process.pid}), {self.what} on port {self.ports[0]}")

    def running(self) -> bool:
        return self.namenode.running()

    def pids(self) -> list[int]:
        return self.namenode.pids()

    def syncs(self) -> tuple[float, float] | None:
        return self.namenode.syncs()

    def stop(self) -> None:
        self.namenode.stop()

    def kill(self) -> None:
        self.namenode.kill()


class NamenodeRpc(NamenodeByClient):
    """The namenode's Hadoop IPC port (``hdfs://``), driven by Hadoop's own
    ``DistributedFileSystem`` (PeerLoad's hdfs target)."""

    name, target = "nnlite-rpc", "hdfs"

    def __init__(self, namenode: Namenode):
        if namenode.rpc_port is None:
            raise ValueError("nnlite-rpc: the namenode has no --rpc-port")
        super().__init__(namenode, namenode.rpc_port, "Hadoop IPC")


class NamenodeHadoopWebHdfs(NamenodeByClient):
    """The namenode's WebHDFS port driven by Hadoop's own ``WebHdfsFileSystem`` (PeerLoad's
    webhdfs-fs target): what a job whose paths say ``webhdfs://`` pays per call, where
    ``nnlite``'s rows use a lean HTTP client of PeerLoad's own."""

    name, target = "nnlite-webhdfs-fs", "webhdfs-fs"

    def __init__(self, namenode: Namenode):
        super().__init__(namenode, namenode.ports[0], "WebHDFS through WebHdfsFileSystem")


class Etcd(Server):
    """Debian's etcd 3.4, one member; its WAL is fdatasynced before every acknowledgement."""

    name, target = "etcd", "etcd"

    def __init__(self, data_dir, log_dir, client_port: int, peer_port: int):
        super().__init__(data_dir, log_dir)
        self.ports = (client_port, peer_port)

    def start(self) -> None:
        client, peer = (f"http://127.0.0.1:{p}" for p in self.ports)
        self.launch(["etcd", "--name", "peers", "--data-dir", str(self.data_dir / "member"),
                     "--listen-client-urls", client, "--advertise-client-urls", client,
                     "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                     "--initial-cluster", f"peers={peer}", "--initial-cluster-state", "new",
                     "--logger", "zap"])
        self.wait_until(lambda: b'"true"' in http_get(f"{client}/health")[1])
        version = json.loads(http_get(f"{client}/version")[1])
        self.facts = {"version": version.get("etcdserver", "?"),
                      "settings": "defaults (WAL fdatasync per raft batch, "
                                  "--unsafe-no-fsync=false, snapshot-count 100000)"}

    def syncs(self) -> tuple[float, float] | None:
        try:
            text = http_get(f"http://{self.address()}/metrics")[1].decode()
        except OSError:
            return None
        found = {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("etcd_disk_wal_fsync_duration_seconds_"):
                found[name.rsplit("_", 1)[1]] = float(value)
        return (found["count"], found["sum"]) if {"count", "sum"} <= found.keys() else None


class EtcdMember(Server):
    """One member of an etcd cluster on loopback (an HA set's quorum journal): Debian's etcd
    3.4 on its defaults, as ``Etcd`` but knowing its peers."""

    target = "etcd"

    def __init__(self, data_dir: Path, log_dir: Path, name: str, ports: tuple[int, int],
                 cluster: str, token: str):
        super().__init__(data_dir, log_dir)
        self.name, self.ports, self.cluster, self.token = name, ports, cluster, token

    @property
    def member(self) -> str:
        return self.name.rsplit("-", 1)[-1]

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.ports[0]}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.ports[1]}"

    def start(self) -> None:
        """Start it; it serves only once a quorum of the cluster runs (``leader``)."""
        self.launch(["etcd", "--name", self.member, "--data-dir", str(self.data_dir / "member"),
                     "--listen-client-urls", self.client_url,
                     "--advertise-client-urls", self.client_url,
                     "--listen-peer-urls", self.peer_url,
                     "--initial-advertise-peer-urls", self.peer_url,
                     "--initial-cluster", self.cluster, "--initial-cluster-state", "new",
                     "--initial-cluster-token", self.token, "--logger", "zap"])

    def leader(self) -> int:
        """The leader's member id as this member sees it (0: none, or no answer)."""
        status = http_post_json(f"{self.client_url}/v3/maintenance/status", {})
        return int(status.get("leader", 0))


class NamenodeHASet(Server):
    """nnlite's HA set on loopback: ``members`` etcd processes (the quorum journal) and
    namenodes ``nn1``, ``nn2``, ... of one nameservice sharing them, configured as Hadoop's
    (``dfs.nameservices``, ``dfs.ha.namenodes.<ns>``, ``dfs.namenode.http-address.<ns>.<nn>``)
    with ``nnlite.ha.etcd.endpoints`` and a shared ``nnlite.checkpoint.secret``. ``nn1`` is
    formatted and the others start from a copy of its name dir (``-bootstrapStandby``). The
    load goes to the active, whichever wins the election; its CPU counts every process."""

    name, target = "nnlite-ha", "webhdfs"
    NAMESERVICE = "bench"

    def __init__(self, data_dir: Path, log_dir: Path, tree: Path, python: str,
                 nn_ports: list[int], etcd_port: int, defines: list[str], members: int = 3,
                 profile: Path | None = None, sitecustomize: Path | None = None):
        super().__init__(data_dir, log_dir)
        token = f"nnlite-ha-bench-{secrets.token_hex(4)}"
        pairs = [(etcd_port + 2 * i, etcd_port + 2 * i + 1) for i in range(members)]
        cluster = ",".join(f"m{i}=http://127.0.0.1:{peer}" for i, (_, peer) in enumerate(pairs))
        self.members = [EtcdMember(data_dir / f"m{i}", log_dir, f"{self.name}-etcd-m{i}",
                                   pair, cluster, token) for i, pair in enumerate(pairs)]
        self.ids = [f"nn{i + 1}" for i in range(len(nn_ports))]
        self.conf = data_dir / "ha.conf"
        self.defines = defines
        self.namenodes = [Namenode(data_dir / nn, log_dir, tree, python, port,
                                   defines + [f"dfs.ha.namenode.id={nn}"],
                                   name=f"{self.name}-{nn}", conf=self.conf, profile=profile,
                                   sitecustomize=sitecustomize)
                          for nn, port in zip(self.ids, nn_ports, strict=True)]
        self.active = 0
        self.ports = tuple(nn_ports)

    def address(self) -> str:
        return self.namenodes[self.active].address()

    def settings(self) -> dict[str, str]:
        ns = self.NAMESERVICE
        return {
            "dfs.nameservices": ns,
            f"dfs.ha.namenodes.{ns}": ",".join(self.ids),
            **{f"dfs.namenode.http-address.{ns}.{nn}": n.address()
               for nn, n in zip(self.ids, self.namenodes, strict=True)},
            "nnlite.ha.etcd.endpoints": ",".join(m.client_url for m in self.members),
            "nnlite.checkpoint.secret": secrets.token_hex(16),
        }

    def start(self) -> None:
        self.conf.write_text("".join(f"{k} = {v}\n" for k, v in self.settings().items()))
        for member in self.members:
            member.data_dir.mkdir(parents=True, exist_ok=True)
            member.start()
        self.wait_for("the etcd members to agree on a leader", self.etcd_agreed)
        first = self.namenodes[0]
        first.format()
        for other in self.namenodes[1:]:
            shutil.copytree(first.name_dir, other.name_dir)
        for nn in self.namenodes:
            nn.launch_namenode()
        for nn in self.namenodes:
            nn.wait_loaded()
        self.active = self.wait_active()
        self.namenodes[self.active].open_root_to_bench()
        version = json.loads(http_get(f"{self.members[0].client_url}/version")[1])
        self.command = self.namenodes[self.active].command
        self.facts = {"tree": git_describe(first.tree), "python": first.python_version(first.env),
                      "etcd": f"{version.get('etcdserver', '?')}, {len(self.members)} members",
                      "active": self.ids[self.active],
                      "settings": " ".join(self.defines) or "defaults (lease ttl 4 s)"}

    def etcd_agreed(self) -> bool:
        leaders = {m.leader() for m in self.members}
        return len(leaders) == 1 and 0 not in leaders

    def wait_for(self, what: str, ready: Callable[[], bool], timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            gone = [p for p in self.members + self.namenodes
                    if p.process is not None and p.process.poll() is not None]
            if gone:
                raise RuntimeError(f"{gone[0].name} exited with {gone[0].process.returncode}; "
                                   f"see {self.log_dir / (gone[0].name + '.log')}")
            if ready():
                return
            time.sleep(0.05)
        raise RuntimeError(f"{self.name}: no {what} after {timeout:.0f} s")

    def wait_active(self, timeout: float = 90.0, excluding: int | None = None) -> int:
        """The index of the namenode that says it is active, once one does."""
        found: list[int] = []

        def one() -> bool:
            found[:] = [i for i, nn in enumerate(self.namenodes)
                        if i != excluding and nn.is_active()]
            return bool(found)
        self.wait_for("active namenode", one, timeout)
        return found[0]

    def kill(self, i: int | None = None) -> None:
        """SIGKILL namenode ``i`` (default: the active)."""
        self.namenodes[self.active if i is None else i].kill()

    def restart(self, i: int) -> None:
        """Start namenode ``i`` again on its name dir: it joins as a standby."""
        self.namenodes[i].launch_namenode()
        self.namenodes[i].wait_loaded()

    def pids(self) -> list[int]:
        return [pid for p in self.namenodes + self.members for pid in p.pids()]

    def parts(self) -> dict[str, int]:
        roles = {i: "active" if i == self.active else "standby"
                 for i in range(len(self.namenodes))}
        named = {f"{nn} ({roles[i]})": pid
                 for i, (nn, n) in enumerate(zip(self.ids, self.namenodes, strict=True))
                 for pid in n.pids()}
        return {**named, **{f"etcd {m.member}": pid for m in self.members for pid in m.pids()}}

    def syncs(self) -> tuple[float, float] | None:
        return self.namenodes[self.active].syncs()

    def shared_journal(self) -> tuple[float, float] | None:
        try:
            bean = self.namenodes[self.active].status_bean()
            return float(bean["HAJournalAppends"]), float(bean["HAJournalAppendSeconds"])
        except (OSError, ValueError, KeyError, IndexError):
            return None

    def stop(self) -> None:
        for nn in self.namenodes:
            nn.stop()
        for member in self.members:
            member.stop()


class ZooKeeper(Server):
    """Debian's ZooKeeper 3.8, standalone on Java 17; forceSync=yes (its default) fdatasyncs
    the transaction log before it acknowledges a batch."""

    name, target = "zookeeper", "zookeeper"

    def __init__(self, data_dir, log_dir, port: int):
        super().__init__(data_dir, log_dir)
        self.ports = (port,)

    def start(self) -> None:
        config = self.data_dir / "zoo.cfg"
        config.write_text("\n".join([
            "tickTime=2000", f"dataDir={self.data_dir / 'data'}",
            f"clientPort={self.ports[0]}", "clientPortAddress=127.0.0.1",
            "forceSync=yes", "admin.enableServer=false", "4lw.commands.whitelist=srvr,mntr", ""]))
        log4j = self.data_dir / "log4j.properties"
        log4j.write_text("log4j.rootLogger=INFO, FILE\n"
                         "log4j.appender.FILE=org.apache.log4j.FileAppender\n"
                         f"log4j.appender.FILE.File={self.log_dir / 'zookeeper.log4j.log'}\n"
                         "log4j.appender.FILE.layout=org.apache.log4j.PatternLayout\n"
                         "log4j.appender.FILE.layout.ConversionPattern=%d %-5p [%t] %m%n\n")
        classpath = ":".join(str(JAVA_LIB / j) for j in
                             ("zookeeper.jar", "slf4j-log4j12.jar", "log4j-1.2.jar"))
        # -Xmx1000m is zkServer.sh's default heap (ZK_SERVER_HEAP)
        self.launch(["java", "-Xmx1000m", f"-Dlog4j.configuration=file:{log4j}", "-cp",
                     classpath, "org.apache.zookeeper.server.ZooKeeperServerMain", str(config)])
        self.wait_until(lambda: "Mode: standalone" in four_letter_word(self.ports[0], b"srvr"))
        first = four_letter_word(self.ports[0], b"srvr").splitlines()[0]
        self.facts = {"version": first.split(": ", 1)[-1].split("-")[0].split(",")[0],
                      "settings": "forceSync=yes, snapCount 100000, -Xmx1000m"}

    def syncs(self) -> tuple[float, float] | None:
        """From ``mntr``; ZooKeeper times (and so counts) a log sync only when forceSync is on."""
        try:
            text = four_letter_word(self.ports[0], b"mntr")
        except OSError:
            return None
        found = dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)
        if "zk_cnt_fsynctime" not in found:
            return None
        return float(found["zk_cnt_fsynctime"]), float(found["zk_sum_fsynctime"]) / 1000


class FsyncFloor(Server):
    """The disk's floor, no server: PeerLoad writes the value's size to a file per client and
    fdatasyncs it, appending (the file grows on every sync, as nnlite's edits log does) or in
    place in a file of zeros synced beforehand (as the preallocated logs of the peers do)."""

    def __init__(self, data_dir, log_dir, in_place: bool):
        super().__init__(data_dir, log_dir)
        self.name = self.target = "fsync-inplace" if in_place else "fsync-append"

    def address(self) -> str:
        return str(self.data_dir)

    def start(self) -> None:
        self.facts = {"settings": "write + fdatasync, one file per client, "
                                  + ("in place in 1 MiB of zeros" if "inplace" in self.name
                                     else "appended")}


def git_describe(tree: Path, rev: str | None = None) -> str:
    """A revision's short hash; without one, the tree's: its HEAD (+dirty when its files differ)
    or what --nn-rev wrote into an exported tree."""
    exported = tree / ".git-revision"
    if rev is None and exported.exists():
        return exported.read_text()
    run = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", rev or "HEAD"],
                         capture_output=True, text=True)
    dirty = rev is None and subprocess.run(["git", "-C", str(tree), "diff", "--quiet",
                                            "HEAD"]).returncode
    return (run.stdout.strip() or "?") + ("+dirty" if dirty else "")


def java_version() -> str:
    out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    return out.splitlines()[0] if out else "?"


def python_of(tree: Path) -> str:
    venv = tree / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable
