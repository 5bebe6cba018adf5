"""Real server processes for tests: start on a free loopback port, stop (or SIGKILL) them.

``Namenodes(root).start(*args, ...)`` is the one way the tests start a namenode: the fixtures
of tests/conftest.py (``namenode``, ``module_namenode`` and their factories ``start_namenode``
and ``start_module_namenode``) hold a ``Namenodes`` for their scope and stop every namenode it
started when the scope ends, killed ones and restarted ones included. A namenode gets fresh
name dirs under the scope's directory (``name``, ``name2``, ...) unless ``name_dirs`` names
existing ones (a restart on the same dirs), the files ``files`` seeds into them offline, and
the test users (TEST_USERS: "tester" in the supergroup, "alice" in "staff").

``NamenodeProcess.start(name_dirs, *args)`` formats the dirs if needed, runs
``python -m cli namenode --port 0`` and reads the port it bound from its stderr
(``NNLITE_HTTP_PORT=<port>``, asked for with ``NNLITE_ANNOUNCE_PORTS``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from nnlite.namenode.http.server import ANNOUNCE_ENV
from nnlite.namenode.namespace.permission import Caller

ROOT = Path(__file__).resolve().parents[1]
TEST_USERS = "tester=supergroup;alice=staff"      # hadoop.user.group.static.mapping.overrides
TESTER = Caller("tester", frozenset({"supergroup"}), superuser=True)
# A file a killed hdfs:// client had open stays under construction until its lease's hard
# limit, when the namenode recovers it (HDFS's LeaseManager; WebHDFS closes a cut-off upload
# at once): a hard limit of seconds, checked every second, for tests that kill such clients.
HDFS_LEASES = ("-D", "dfs.namenode.lease-hard-limit-sec=2", "-D", "nnlite.blocks.sweep.interval=1")


def wait_for(predicate, timeout: float, what: str = "a condition", interval: float = 0.1):
    """Poll ``predicate`` until it returns something true (returned), or raise TimeoutError
    naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


class NamenodeProcess:
    def __init__(self, proc: subprocess.Popen, port: int, name_dirs: list[str], log: Path):
        self.proc = proc
        self.port = port
        self.name_dirs = name_dirs
        self.log = log
        self.url = f"http://127.0.0.1:{port}"

    @classmethod
    def start(cls, name_dirs: list[str], *args: str, env: dict | None = None,
              timeout: float = 30, format: bool = True) -> "NamenodeProcess":
        """``format=False`` leaves unformatted dirs as they are (``--import-checkpoint``)."""
        from nnlite.namenode.fsnamesystem import format_dirs
        from nnlite.namenode.storage.namedir import NameDir
        dirs = [NameDir(d) for d in name_dirs]
        if format and not any(d.is_formatted() for d in dirs):
            format_dirs(dirs)
        log = Path(name_dirs[0]).parent / f"namenode-{time.monotonic_ns()}.log"
        cmd = [sys.executable, "-m", "nnlite.cli", "namenode", "--port", "0"]
        if "--rpc-port" not in args:
            cmd += ["--rpc-port", "0"]
        for d in name_dirs:
            cmd += ["--name-dir", d]
        logfile = open(log, "wb")
        proc = subprocess.Popen([*cmd, *args], cwd=ROOT, stdout=logfile,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, ANNOUNCE_ENV: "1", **(env or {})})
        logfile.close()
        try:
            port = _wait_for_port(proc, log, timeout)
            server = cls(proc, port, name_dirs, log)
            server.wait_ready(timeout)
            # the RPC port is bound with the HTTP one, before the load (it answers
            # RetriableException meanwhile): its line may come a moment after
            wait_for(lambda: proc.poll() is not None or "NNLITE_RPC_PORT=" in
                     log.read_text(errors="replace"), timeout, "the namenode's RPC port",
                     interval=0.02)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return server

    def wait_ready(self, timeout: float = 30) -> None:
        """Wait until the namespace is loaded (the service leaves safe mode)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/jmx", timeout=2) as resp:
                    bean = json.load(resp)["beans"][0]
                if bean.get("Loading") == 0:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"namenode at {self.url} not ready; log: {self.log.read_text()}")

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: the crash tests' way to stop it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    @property
    def rpc_port(self) -> int:
        """The Hadoop IPC port it announced (bound before the namespace loaded)."""
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("NNLITE_RPC_PORT="):
                return int(line.split("=", 1)[1])
        raise LookupError(f"namenode at {self.url} serves no hdfs://; log: "
                          f"{self.log.read_text()}")

    @property
    def hdfs(self) -> str:
        return f"hdfs://127.0.0.1:{self.rpc_port}"

    def webhdfs(self, path: str) -> str:
        return f"{self.url}/webhdfs/v1{path}"

    def rss(self) -> int:
        """The process's resident memory now, in bytes (VmRSS)."""
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")


class Namenodes:
    """The namenodes one fixture scope started, all stopped by ``stop()`` (see the module's
    docstring); ``root`` is where their fresh name dirs go."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.started: list[NamenodeProcess] = []
        self.dirs_made = 0

    def start(self, *args: str, files: dict[str, int] | None = None, dirs: int = 1,
              name_dirs: list[str] | None = None, users: str | None = TEST_USERS,
              env: dict | None = None, timeout: float = 30,
              format: bool = True) -> NamenodeProcess:
        """A namenode on ``name_dirs`` (else ``dirs`` fresh ones), seeded with ``files``
        (``{path: size}``, one block each, owner tester), with ``users`` as
        hadoop.user.group.static.mapping.overrides (None: no mapping), ``args`` passed to
        ``nnlite namenode`` and ``env`` added to its environment."""
        if name_dirs is None:
            name_dirs = [self.fresh_dir() for _ in range(dirs)]
        if files:
            seed(name_dirs, files)
        if users is not None:
            args = ("-D", f"hadoop.user.group.static.mapping.overrides={users}", *args)
        server = NamenodeProcess.start(name_dirs, *args, env=env, timeout=timeout,
                                       format=format)
        self.started.append(server)
        return server

    def fresh_dir(self) -> str:
        """A name dir path nothing of this scope used yet: ``name``, ``name2``, ..."""
        self.dirs_made += 1
        return str(self.root / ("name" if self.dirs_made == 1 else f"name{self.dirs_made}"))

    def stop(self) -> None:
        for server in reversed(self.started):
            server.stop()


def seed(name_dirs: list[str], files: dict[str, int]) -> None:
    """Format ``name_dirs`` and write ``{path: size}`` files (one block each, owner tester)
    offline, in-process, before the namenode starts on them."""
    from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    from tests.namenode.helpers import mutate, write_file
    format_dirs([NameDir(d) for d in name_dirs])
    with FSNamesystem.open(name_dirs) as fs:
        for path, size in files.items():
            parent = path.rsplit("/", 1)[0] or "/"
            mutate(fs, lambda ns, d=parent: ns.mkdirs(d, 0o755, TESTER))
            mutate(fs, lambda ns, p=path, s=size: (True, write_file(ns, p, (s,), caller=TESTER)))


def _wait_for_port(proc: subprocess.Popen, log: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        for line in text.splitlines():
            if line.startswith("NNLITE_HTTP_PORT="):
                return int(line.split("=", 1)[1])
        if proc.poll() is not None:
            raise RuntimeError(f"namenode exited with {proc.returncode}: {text}")
        time.sleep(0.02)
    raise TimeoutError(f"namenode did not report its port: {log.read_text()}")


def closed_port() -> int:
    """A loopback port that was just free: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
