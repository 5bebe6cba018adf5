"""PeerLoad.java from Python: compiled on first use, one JVM per system, one row at a time.

A row is sent as one command line; the generator opens its clients, warms up and answers
``ready``; the caller samples the server, says ``go``, and gets one JSON line back.
"""

from __future__ import annotations

import importlib.util
import json
import queue
import subprocess
import threading
from pathlib import Path

from servers import ZOOKEEPER_JAR

SOURCE = Path(__file__).with_name("PeerLoad.java")
TREE = Path(__file__).resolve().parents[2]
# slf4j-nop quiets the ZooKeeper client's logging; its other jars come from zookeeper.jar's
# manifest Class-Path (netty, jute, slf4j-api)
ZOOKEEPER_JARS = [str(ZOOKEEPER_JAR), str(ZOOKEEPER_JAR.with_name("slf4j-nop.jar"))]
# The hdfs target: Hadoop's client as PySpark ships it. The api jar is Hadoop's own classes,
# the runtime jar their third-party dependencies shaded; slf4j-api is the one thing they need
# besides (Configuration's logger; with no provider it logs nothing). Nothing else is loaded:
# commons-logging, log4j and guava stay off the class path.
HADOOP_JARS = ("hadoop-client-api-", "hadoop-client-runtime-", "slf4j-api-")
HADOOP_TARGETS = ("hdfs", "webhdfs-fs")          # PeerLoad's targets on Hadoop's FileSystem clients
JVM_OPTIONS = ["-Xmx512m", "-XX:+UseSerialGC"]


def pyspark_jars() -> Path | None:
    """PySpark's jars folder: this checkout's .venv's, else the running Python's PySpark."""
    found = sorted(TREE.glob(".venv/lib/python*/site-packages/pyspark/jars"))
    if found:
        return found[-1]
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        return None
    jars = Path(spec.origin).parent / "jars"
    return jars if jars.is_dir() else None


def hadoop_jars() -> list[str]:
    """The class path of Hadoop's client (HADOOP_JARS, one of each), or [] if any is missing."""
    folder = pyspark_jars()
    if folder is None:
        return []
    jars = [sorted(folder.glob(f"{prefix}[0-9]*.jar")) for prefix in HADOOP_JARS]
    return [str(j[-1]) for j in jars] if all(jars) else []


def runtime_jars(target: str) -> list[str]:
    """What a generator for ``target`` loads: Hadoop's client for hdfs and webhdfs-fs,
    ZooKeeper's for the others (only the zookeeper target uses it), so that neither meets the
    other's slf4j."""
    return hadoop_jars() if target in HADOOP_TARGETS else ZOOKEEPER_JARS


def compiled(classes: Path) -> Path:
    """The directory holding PeerLoad.class, compiled again when the source is newer."""
    built = classes / "PeerLoad.class"
    if not built.exists() or built.stat().st_mtime < SOURCE.stat().st_mtime:
        classes.mkdir(parents=True, exist_ok=True)
        classpath = ":".join([str(ZOOKEEPER_JAR)] + hadoop_jars()[:1])
        # -implicit:none: no class files for the sources the jars carry (findbugs' annotations)
        subprocess.run(["javac", "-nowarn", "-implicit:none", "-cp", classpath,
                        "-d", str(classes), str(SOURCE)], check=True)
    return classes


class Generator:
    """One PeerLoad JVM aimed at one system."""

    def __init__(self, classes: Path, target: str, address: str, errors: Path):
        classpath = ":".join([str(classes)] + runtime_jars(target))
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
