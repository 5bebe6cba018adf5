"""PeerLoad.java from Python: compiled on first use, one JVM per system, one row at a time.

A row is sent as one command line; the generator opens its clients, warms up and answers
``ready``; the caller samples the server, says ``go``, and gets one JSON line back.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

from servers import ZOOKEEPER_JAR

SOURCE = Path(__file__).with_name("PeerLoad.java")
# slf4j-nop quiets the ZooKeeper client's logging; its other jars come from zookeeper.jar's
# manifest Class-Path (netty, jute, slf4j-api)
RUNTIME_JARS = [str(ZOOKEEPER_JAR), str(ZOOKEEPER_JAR.with_name("slf4j-nop.jar"))]
JVM_OPTIONS = ["-Xmx512m", "-XX:+UseSerialGC"]


def compiled(classes: Path) -> Path:
    """The directory holding PeerLoad.class, compiled again when the source is newer."""
    built = classes / "PeerLoad.class"
    if not built.exists() or built.stat().st_mtime < SOURCE.stat().st_mtime:
        classes.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-cp", str(ZOOKEEPER_JAR), "-d", str(classes),
                        str(SOURCE)], check=True)
    return classes


class Generator:
    """One PeerLoad JVM aimed at one system."""

    def __init__(self, classes: Path, target: str, address: str, errors: Path):
        classpath = ":".join([str(classes)] + RUNTIME_JARS)
        self.argv = ["java", *JVM_OPTIONS, "-cp", classpath, "PeerLoad", target, address]
        with open(errors, "ab") as err:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=err, text=True,
                                            start_new_session=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def _send(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def _answer(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"PeerLoad gave no answer in {timeout:.0f} s") from None
        if line is None:
            raise RuntimeError(f"PeerLoad exited with {self.process.wait()}")
        if line.startswith("error"):
            raise RuntimeError(f"PeerLoad: {line[6:]}")
        return line

    def prepare(self, kind: str, threads: int, ops: int, seconds: float, warmup: int,
                base: str, value_bytes: int, keys_file: Path | None = None) -> None:
        """Opens the row's clients and warms up; returns once the generator is ready."""
        words = ["row", kind, threads, ops, seconds, warmup, base, value_bytes]
        self._send(" ".join(str(w) for w in words + ([keys_file] if keys_file else [])))
        if self._answer(180) != "ready":
            raise RuntimeError("PeerLoad did not say ready")

    def go(self, seconds: float) -> dict:
        """Runs the timed phase; PeerLoad's measurements."""
        self._send("go")
        return json.loads(self._answer(seconds + 120))

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._send("quit")
                self.process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
