"""Running the Flink jobs of ``tests/flink/jobs`` for real: PyFlink in ``.venv-flink`` (built
by ``make flink-env`` from ``tests/flink/requirements.txt``), Hadoop's client from PySpark's
jars on ``HADOOP_CLASSPATH``, a real namenode on a free loopback port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.servers import ROOT, NamenodeProcess

FLINK_PYTHON = Path(os.environ.get("NNLITE_FLINK_PYTHON", ROOT / ".venv-flink" / "bin" / "python"))
JOBS = Path(__file__).parent / "jobs"


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


@pytest.fixture
def namenode(tmp_path):
    nn = NamenodeProcess.start([str(tmp_path / "name")])
    try:
        yield nn
    finally:
        nn.stop()


class FlinkJob:
    """One run of a job script in its own process group (the local cluster's JVM included),
    so that ``kill`` takes all of it down at once, as a crash would."""

    def __init__(self, python: Path, script: str, args: list[str], log_dir: Path):
        env = {**os.environ, "HADOOP_CLASSPATH": hadoop_classpath(),
               "HADOOP_USER_NAME": os.environ.get("USER", "root")}
        env.pop("PYTHONPATH", None)
        self.stdout = open(log_dir / f"{script}.{time.monotonic_ns()}.out", "w+")
        self.stderr = open(log_dir / f"{script}.{time.monotonic_ns()}.err", "w+")
        self.proc = subprocess.Popen([str(python), str(JOBS / script), *args], env=env,
                                     stdout=self.stdout, stderr=self.stderr,
                                     start_new_session=True)

    def output(self) -> str:
        self.stdout.seek(0)
        return self.stdout.read()

    def events(self) -> list[dict]:
        return [json.loads(line) for line in self.output().splitlines()
                if line.startswith("{")]

    def wait_for(self, event: str, timeout: float = 180) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events():
                if e["event"] == event:
                    return e
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"no {event!r} from the job: {self.log_tail()}")

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

    def finish(self, timeout: float = 300) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()


@pytest.fixture
def run_job(flink_python, tmp_path):
    started: list[FlinkJob] = []

    def start(script: str, *args: str) -> FlinkJob:
        job = FlinkJob(flink_python, script, list(args), tmp_path)
        started.append(job)
        return job
    yield start
    for job in started:
        job.kill()
