"""The systems under test, each on 127.0.0.1 with a fresh data dir and its durable defaults.

A server starts its process in a session of its own, waits until it answers, names the PIDs
whose CPU is its own, reads its own count of log fsyncs and the time they took (``syncs``:
a count and seconds, both running totals), and is stopped by the PID it started
(SIGTERM, then SIGKILL after 10 s). ``FsyncFloor`` runs no process: the load generator writes
and fdatasyncs files in a directory on the same disk.
"""

from __future__ import annotations

import abc
import getpass
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
JAVA_LIB = Path("/usr/share/java")   # where Debian's packages put their jars
ZOOKEEPER_JAR = JAVA_LIB / "zookeeper.jar"


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants, from /proc/<pid>/stat."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return own + sum(cpu_seconds(child) for child in children(pid))


def children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            pass
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
    """nnlite's namenode from a tree (this one, or another for an A/B), WebHDFS on a port."""

    name, target = "nnlite", "webhdfs"

    def __init__(self, data_dir, log_dir, tree: Path, python: str, port: int,
                 defines: list[str]):
        super().__init__(data_dir, log_dir)
        self.tree, self.python, self.ports, self.defines = tree, python, (port,), defines

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=self.package_link())
        name_dir = str(self.data_dir / "name")
        cli = [self.python, str(self.tree / "cli.py")]
        formatted = subprocess.run(cli + ["format", "--name-dir", name_dir], env=env,
                                   capture_output=True, text=True)
        if formatted.returncode:
            raise RuntimeError(f"nnlite: format failed: {formatted.stderr.strip()}")
        options = [a for d in self.defines for a in ("-D", d)]
        self.launch(cli + ["namenode", "--name-dir", name_dir, "--host", "127.0.0.1",
                           "--port", str(self.ports[0])] + options, env=env)
        self.wait_until(lambda: b'"Loading":0' in http_get(self.url("/metrics.json"))[1])
        self.open_root_to_bench()
        self.facts = {"tree": git_describe(self.tree), "python": self.python_version(env),
                      "settings": " ".join(self.defines) or "defaults"}

    def package_link(self) -> str:
        """A directory whose ``nnlite`` is the tree: its cli.py then imports that tree."""
        link = self.data_dir / "pythonpath" / "nnlite"
        link.parent.mkdir(parents=True, exist_ok=True)
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
