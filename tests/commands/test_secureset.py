"""``nnlite run-secure`` (commands/secureset.py) as a user runs it: its own process makes a
realm (MIT KDC) on loopback, starts a namenode and its secondary in kerberos mode on free
ports, and prints the lines to paste. Pasted in a shell, ``kinit`` then ``curl --negotiate``
gets an authenticated WebHDFS answer (401 without the ticket), and nnlite's CLI and catalog
list the user's home on the ticket; the secondary's status page wants SPNEGO too; a
secondary checkpoints,
logged in from the set's keytab; SIGTERM stops everything, the KDC last (exit 0)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from nnlite.commands import realm
from nnlite.commands.errors import ProgramMissing
from tests.servers import ROOT, wait_for


def kerberos_installed() -> str | None:
    try:
        realm.program("krb5kdc")
        realm.program("kinit")
    except ProgramMissing as exc:
        return str(exc)
    return None


pytestmark = pytest.mark.skipif(kerberos_installed() is not None,
                                reason=kerberos_installed() or "")


@pytest.fixture
def secure_set(tmp_path):
    """``nnlite run-secure`` on free ports; stopped (SIGTERM, then SIGKILL) after the test."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NNLITE_", "KRB5"))}
    out, err = tmp_path / "out", tmp_path / "err"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "run-secure", "--base-dir",
             str(tmp_path / "set"), "--port", "0", "--rpc-port", "0", "--secondary-port", "0",
             "--user", "alice"], cwd=ROOT, stdout=o, stderr=e, env=env)
    try:
        wait_for(lambda: "pyspark" in out.read_text() or proc.poll() is not None, 60,
                 "the lines to paste")
        assert proc.poll() is None, err.read_text()
        yield proc, out.read_text().splitlines(), tmp_path, err
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def line(lines: list[str], start: str) -> str:
    return next(text for text in lines if text.startswith(start))


def shell(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
    env["KRB5CCNAME"] = f"FILE:{tmp_path / 'pasted.ccache'}"
    return subprocess.run(["bash", "-ec", script], env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_printed_lines_kinit_and_call_webhdfs_with_spnego(secure_set):
    proc, lines, tmp_path, err = secure_set
    curl = line(lines, "curl --negotiate")
    url = curl.split("'")[1]
    port = int(url.split(":")[2].split("/")[0])

    def up() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/isActive", timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            return False
    wait_for(up, 60, "the secure namenode")
    with pytest.raises(urllib.error.HTTPError) as anonymous:
        urllib.request.urlopen(url.replace("localhost", "127.0.0.1"), timeout=5)
    assert anonymous.value.code == 401
    export, kinit = line(lines, "export KRB5_CONFIG="), line(lines, "kinit -kt ")
    pasted = shell("\n".join([export, kinit, curl.replace("curl ", "curl -sf ", 1)]), tmp_path)
    assert pasted.returncode == 0, pasted.stderr
    assert json.loads(pasted.stdout)["FileStatus"]["type"] == "DIRECTORY"
    # nnlite's own CLI and catalog on the pasted ticket: the user's home, made for it
    dfs, catalog = line(lines, "nnlite dfs "), line(lines, "nnlite catalog ")
    cli = f"{sys.executable} -m nnlite.cli"
    listed = shell("\n".join([export, kinit, dfs.replace("nnlite", cli, 1)]), tmp_path)
    assert listed.returncode == 0 and "alice" in listed.stdout, listed.stderr
    assert shell("\n".join([export, kinit, catalog.replace("nnlite", cli, 1)]),
                 tmp_path).returncode == 0
    conf = Path(dfs.split()[3])
    assert conf.parent == tmp_path / "set"
    assert oct(os.stat(conf).st_mode & 0o777) == "0o600"
    assert "hadoop.security.authentication = kerberos" in conf.read_text()
    # a secondary with the set's configuration logs in from the set's keytab: its forced
    # checkpoint passes the door (the set's own secondary, checking at its start, may have
    # installed the same txids first: then the upload is 410, after the door let it in)
    checkpoint = shell(f"{export}\n{sys.executable} -m nnlite.cli secondary --conf {conf} "
                       f"--namenode http://127.0.0.1:{port} --checkpoint-now "
                       f"--checkpoint-dir {tmp_path / 'forced'}", tmp_path)
    assert checkpoint.returncode == 0 or "is already in place" in checkpoint.stderr, \
        checkpoint.stderr
    assert "refused (403)" not in err.read_text() + checkpoint.stderr
    # the secondary's status pages answer only a proved caller too
    wait_for(lambda: "secondary status on http://" in err.read_text(), 60, "the secondary")
    status_url = err.read_text().split("secondary status on ")[1].split()[0].rstrip(";")
    with pytest.raises(urllib.error.HTTPError) as anonymous_status:
        urllib.request.urlopen(status_url, timeout=5)
    assert anonymous_status.value.code == 401
    proved = shell("\n".join([export, kinit, "curl -sf --negotiate -u : "
                               f"'{status_url.replace('127.0.0.1', 'localhost')}'"]), tmp_path)
    assert proved.returncode == 0 and "checkpointDir" in proved.stdout, proved.stderr
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, err.read_text()


JOB = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
spark.range(10).write.mode("overwrite").parquet(sys.argv[1])
print("COUNT", spark.read.parquet(sys.argv[1]).count())
spark.stop()
"""


@pytest.mark.spark
def test_the_printed_spark_driver_logs_in_from_the_keytab_and_writes_over_hdfs(secure_set):
    """The pyspark line's options with spark-submit: the driver logs in from the keytab
    (HadoopDelegationTokenManager), takes HDFS delegation tokens, writes and reads back
    Parquet over hdfs:// in secure mode."""
    pytest.importorskip("pyspark")
    import pyspark
    proc, lines, tmp_path, err = secure_set
    driver = line(lines, "pyspark ")
    words = shlex.split(driver.split("#")[0])[1:]
    where = driver.split("checkpointLocation=")[1].strip().rsplit("/", 1)[0] + "/out"
    (tmp_path / "job.py").write_text(JOB)
    home = os.path.dirname(pyspark.__file__)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
    env.update(SPARK_HOME=home, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [os.path.join(home, "bin", "spark-submit"), "--master", "local[1]", "--conf",
         "spark.ui.enabled=false", *words, str(tmp_path / "job.py"), where],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "COUNT 10" in done.stdout
    assert "Attempting to login to KDC using principal: alice@" in done.stderr
