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

``NamenodeInThread`` runs the same service in the test's own process, on an event loop in a
thread, for what a process cannot be handed: a lease clock the test advances.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from nnlite.namenode.listen import ANNOUNCE_ENV
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
              timeout: float = 30, format: bool = True) -> NamenodeProcess:
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
        with open(log, "wb") as logfile:
            proc = subprocess.Popen([*cmd, *args], cwd=ROOT, stdout=logfile,
                                    stderr=subprocess.STDOUT,
                                    env={**os.environ, ANNOUNCE_ENV: "1", **(env or {})})
        https_only = "dfs.http.policy=HTTPS_ONLY" in args
        try:
            # HTTPS_ONLY binds no plain port: its url is the https one
            port = announced_port(proc, log, "NNLITE_HTTPS_PORT" if https_only
                                  else "NNLITE_HTTP_PORT", timeout, "namenode")
            server = cls(proc, port, name_dirs, log)
            if https_only:
                server.url = f"https://127.0.0.1:{port}"
            server.wait_ready(timeout)
            # the RPC port is bound with the HTTP one, before the load, and answers
            # RetriableException until the namenode hands it the protocol, after /jmx
            # says loaded (the datanode starts in between): "namenode ready" comes after
            wait_for(lambda: proc.poll() is not None or "namenode ready:" in
                     log.read_text(errors="replace"), timeout, "the namenode's RPC service",
                     interval=0.02)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return server

    def wait_ready(self, timeout: float = 30) -> None:
        """Wait until the namespace is loaded (the service leaves safe mode)."""
        def loaded() -> bool:
            try:
                with urllib.request.urlopen(self.url + "/jmx", timeout=2) as resp:
                    return json.load(resp)["beans"][0].get("Loading") == 0
            except urllib.error.HTTPError as exc:
                if exc.code != 401:
                    return False
            except OSError:
                if not self.url.startswith("https:"):
                    return False
            # secure mode: /jmx wants a Kerberos caller (HTTPS_ONLY: this client trusts no
            # test CA); /isActive answers anyone, 200 once
            # the namespace is loaded (a lone namenode is active); a standby of an HA set
            # answers 405 loaded or not: its log's ready line says it
            if "namenode ready:" in self.log.read_text(errors="replace"):
                return True
            try:
                with urllib.request.urlopen(self.url + "/isActive", timeout=2) as resp:
                    return resp.status == 200
            except OSError:
                return False
        try:
            wait_for(loaded, timeout, f"the namenode at {self.url} to load", interval=0.05)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; log: {self.log.read_text()}") from None

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
    def https_port(self) -> int:
        """The HTTPS port it announced (``dfs.http.policy`` HTTP_AND_HTTPS)."""
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("NNLITE_HTTPS_PORT="):
                return int(line.split("=", 1)[1])
        raise LookupError(f"namenode at {self.url} serves no https; log: "
                          f"{self.log.read_text()}")

    @property
    def hdfs(self) -> str:
        return f"hdfs://127.0.0.1:{self.rpc_port}"

    def webhdfs(self, path: str) -> str:
        return f"{self.url}/webhdfs/v1{path}"

    def rss(self) -> int:
        """The process's resident memory now, in bytes (VmRSS)."""
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
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


class NamenodeInThread:
    """``with NamenodeInThread(name_dir, *defines, lease_clock=clock) as nn``: ``Namenode``
    (namenode/daemon.py) formatted, started and loaded on free loopback ports, on an event loop
    of its own thread, with ``users`` as for ``Namenodes.start``; stopped and its name dir
    unlocked at the end. It has ``port``, ``url`` and ``name_dirs``, as a NamenodeProcess, and
    ``service``, the ``Namenode`` itself."""

    def __init__(self, name_dir: str, *defines: str, users: str | None = TEST_USERS,
                 **options):
        from nnlite.namenode.config import Config
        from nnlite.namenode.daemon import Namenode
        from nnlite.namenode.fsnamesystem import format_dirs
        from nnlite.namenode.storage.namedir import NameDir
        if not NameDir(name_dir).is_formatted():
            format_dirs([NameDir(name_dir)])
        self.name_dirs = [name_dir]
        if users is not None:
            defines += (f"hadoop.user.group.static.mapping.overrides={users}",)
        self.service = Namenode(self.name_dirs, Config.load(None, defines), "127.0.0.1", 0,
                                rpc_port=0, **options)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-namenode",
                                       daemon=True)

    def _call(self, coroutine, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def __enter__(self) -> NamenodeInThread:
        self.thread.start()
        try:
            self._call(self.service.start())
        except BaseException:
            self.__exit__()
            raise
        self.port = self.service.port
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._call(self.service.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


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


def announced_port(proc: subprocess.Popen, log: Path, key: str, timeout: float,
                   who: str) -> int:
    """The port the child ``who`` announced as ``<key>=<port>`` in ``log`` (``ANNOUNCE_ENV``);
    a RuntimeError with the log as soon as it exits without, a TimeoutError after ``timeout``."""
    def announced() -> int | None:
        text = log.read_text(errors="replace") if log.exists() else ""
        for line in text.splitlines():
            if line.startswith(f"{key}="):
                return int(line.split("=", 1)[1])
        if proc.poll() is not None:
            raise RuntimeError(f"{who} exited with {proc.returncode}: {text}")
        return None
    try:
        return wait_for(announced, timeout, f"{key} in {log.name}", interval=0.02)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}: {log.read_text(errors='replace')}") from None


def closed_port() -> int:
    """A loopback port that was just free: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
