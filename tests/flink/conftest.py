"""Running the README's Flink job (``examples/flink_count.py``) for real: PyFlink in
``.venv-flink`` (built by ``make flink-env`` from ``tests/flink/requirements.txt``), Hadoop's
client from PySpark's jars on ``HADOOP_CLASSPATH``, a real namenode on a free loopback port.

The tests wait for conditions, never for a time: for what the job reports (its events, on
Flink's own checkpoint counts), for what nnlite holds (the catalog), and after a kill or a stop
for nothing of the job's to be under way any more (``FlinkJob.settle``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from nnlite.catalog.client import CatalogClient
from tests.servers import ROOT, wait_for

FLINK_PYTHON = Path(os.environ.get("NNLITE_FLINK_PYTHON", ROOT / ".venv-flink" / "bin" / "python"))
JOB = ROOT / "examples" / "flink_count.py"
EVENT = '{"event": '                      # how examples/flink_count.py's emit starts a line


def hadoop_classpath() -> str:
    """PySpark's shaded Hadoop client: all Flink needs for ``webhdfs://``."""
    import pyspark
    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(str(p) for p in jars.glob("hadoop-client-*.jar")
                   if p.name.startswith(("hadoop-client-api-", "hadoop-client-runtime-")))
    assert len(found) == 2, f"PySpark's hadoop-client-api/runtime jars not found in {jars}"
    return ":".join(found)


@pytest.fixture(scope="session")
def flink_python() -> Path:
    if not FLINK_PYTHON.exists():
        pytest.fail(f"{FLINK_PYTHON} is missing: `make flink-env` builds PyFlink's own "
                    f"environment (make test does it)")
    return FLINK_PYTHON


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (a zombie has closed its sockets)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue                                # gone meanwhile
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def last_txid(namenode) -> int:
    with urllib.request.urlopen(f"{namenode.url}/jmx", timeout=30) as resp:
        return json.load(resp)["beans"][0]["LastWrittenTransactionId"]


class FlinkJob:
    """One run of the job in its own process group (the local cluster's JVM included), so
    that ``kill`` takes all of it down at once, as a crash would. Its Flink log (and RocksDB's,
    which a kill leaves) goes to its own directory under the test's."""

    def __init__(self, python: Path, args: list[str], log_dir: Path):
        stamp = time.monotonic_ns()
        flink_logs = log_dir / f"flink-{stamp}"
        flink_logs.mkdir()
        env = {**os.environ, "HADOOP_CLASSPATH": hadoop_classpath(),
               "HADOOP_USER_NAME": os.environ.get("USER", "root"),
               "FLINK_LOG_DIR": str(flink_logs),
               # the JVM unpacks Flink's table planner (45 MB) into java.io.tmpdir and
               # deletes it only on a clean exit: under the test's directory, a killed
               # job's copy goes with the test's other files, not into /tmp for good
               "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={flink_logs}"}
        env.pop("PYTHONPATH", None)
        # O_APPEND: the job and its JVM share these files' offset with us, and reading them
        # seeks; without it a write racing a read lands at the start, over an earlier line.
        # Both stay open as long as the job object: output() and log() read them again.
        self.stdout = open(log_dir / f"job-{stamp}.out", "a+")  # noqa: SIM115
        self.stderr = open(log_dir / f"job-{stamp}.err", "a+")  # noqa: SIM115
        self.proc = subprocess.Popen([str(python), str(JOB), *args], env=env,
                                     stdout=self.stdout, stderr=self.stderr,
                                     start_new_session=True)

    def output(self) -> str:
        self.stdout.seek(0)
        return self.stdout.read()

    def events(self) -> list[dict]:
        """The job's JSON event lines, each read from where it starts: the JVM's print sink
        writes to the same file, a row and its line end apart, so an event may follow a
        row's text on one line."""
        return [json.loads(line[line.index(EVENT):]) for line in self.output().splitlines()
                if EVENT in line]

    def wait_for(self, event: str, timeout: float = 300) -> dict:
        """The job's first ``event``; fails as soon as the job exits without it."""
        def first() -> dict | None:
            exited = self.proc.poll() is not None
            found = next((e for e in self.events() if e["event"] == event), None)
            if found is None and exited:
                raise AssertionError(f"the job exited without {event!r} (events: "
                                     f"{self.events()}): {self.log_tail()}")
            return found
        try:
            return wait_for(first, timeout, f"{event!r} from the job", interval=0.2)
        except TimeoutError as exc:
            raise AssertionError(f"{exc} (events: {self.events()}): {self.log_tail()}") from None

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()

    def log_tail(self) -> str:
        lines = [line for line in self.log().splitlines() if not line.lstrip().startswith("at ")]
        return "\n".join(lines[-40:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def finish(self, timeout: float = 600) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def settle(self, namenode, root: str = "/flink", timeout: float = 120) -> None:
        """Wait until nothing the job did is under way at the namenode any more: every
        process of the job gone, so every socket it had is closed and all it sent has
        arrived; then no file under ``root`` open (an upload cut off is closed with what
        arrived), seen with no transaction logged while looking."""
        self.kill()
        wait_for(lambda: not group_alive(self.proc.pid), timeout, "the job's processes to end")
        with CatalogClient(namenode.url, "root") as catalog:
            def quiet() -> bool:
                txid = last_txid(namenode)
                writing = [row for row in catalog.ls(root) if row["health"] == "writing"]
                return not writing and last_txid(namenode) == txid
            wait_for(quiet, timeout, f"no file open under {root}")


@pytest.fixture
def run_job(flink_python, tmp_path):
    started: list[FlinkJob] = []

    def start(*args: str) -> FlinkJob:
        job = FlinkJob(flink_python, list(args), tmp_path)
        started.append(job)
        return job
    yield start
    for job in started:
        job.kill()
