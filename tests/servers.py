"""Real server processes for tests: start on a free loopback port, stop (or SIGKILL) them.

``NamenodeProcess.start(name_dirs, *args)`` formats the dirs if needed, runs
``python -m cli namenode --port 0`` and reads the port it bound from its stderr
(``NNLITE_HTTP_PORT=<port>``, asked for with ``NNLITE_ANNOUNCE_PORTS``). Every test stops what it starts: use the ``namenode``
fixture, or call ``stop()``/``kill()`` in a ``finally``.
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

ROOT = Path(__file__).resolve().parents[1]


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
              timeout: float = 30) -> "NamenodeProcess":
        from nnlite.namenode.fsnamesystem import format_dirs
        from nnlite.namenode.storage.namedir import NameDir
        dirs = [NameDir(d) for d in name_dirs]
        if not any(d.is_formatted() for d in dirs):
            format_dirs(dirs)
        log = Path(name_dirs[0]).parent / f"namenode-{time.monotonic_ns()}.log"
        cmd = [sys.executable, "-m", "nnlite.cli", "namenode", "--port", "0"]
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

    def webhdfs(self, path: str) -> str:
        return f"{self.url}/webhdfs/v1{path}"

    def rss(self) -> int:
        """The process's resident memory now, in bytes (VmRSS)."""
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")


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
