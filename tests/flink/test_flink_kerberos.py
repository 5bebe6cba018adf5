"""PyFlink with Kerberos: the README's job (``examples/flink_count.py``) checkpoints into a
secure namenode over ``hdfs://`` with ``security.kerberos.login.keytab`` and
``security.kerberos.login.principal`` in its Flink configuration, and is restored, as that
user, from the checkpoint the catalog names, with exactly the uninterrupted result.

The job's process has no ticket cache: its Flink configuration (``FLINK_CONF_DIR``'s
config.yaml, PyFlink's own plus the keytab, the principal, the file system to fetch tokens
for and ``-Djava.security.krb5.conf`` in ``env.java.opts.all``) and ``HADOOP_CONF_DIR``'s
core-site.xml (Kerberos, ``nn/_HOST``) are all it knows. It runs as ``flink run`` would run
it (``kerberos_job.py``: Flink's security modules installed first, config.yaml's keys in the
job's configuration). Flink's ``MiniCluster`` starts its ``DefaultDelegationTokenManager``,
whose ``HadoopFSDelegationTokenProvider`` logs in from the keytab (``KerberosLoginProvider``)
and obtains an HDFS delegation token, which the ``HadoopDelegationTokenReceiver`` hands to
the JVM's current user for the checkpoint files."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client import connection
from tests.flink.test_flink_checkpoints import CATCH_UP, check_restored_exactly, job_args
from tests.namenode.http.secure import kerberos_session
from tests.namenode.security.test_sasl import client_core_site, secure_args
from tests.servers import wait_for

pytestmark = pytest.mark.flink
KERBEROS_JOB = Path(__file__).with_name("kerberos_job.py")



def flink_conf_dir(flink_python: Path, dest: Path, kdc, user, fs: str) -> Path:
    """PyFlink's conf directory, its config.yaml with the Kerberos login added, and ``fs``
    among the file systems to fetch tokens for (the default FS is file:/// here)."""
    site = next(flink_python.parent.parent.glob("lib/python3*/site-packages/pyflink/conf"))
    shutil.copytree(site, dest)
    config = dest / "config.yaml"
    text = config.read_text()
    opts = next(line for line in text.splitlines() if line.strip().startswith("all: --add"))
    text = text.replace(opts, f"{opts} -Djava.security.krb5.conf={kdc.krb5_conf}")
    text += (f"\nsecurity.kerberos.login.keytab: {user.keytab}\n"
             f"security.kerberos.login.principal: {user.name}\n"
             "security.kerberos.login.use-ticket-cache: false\n"
             f"security.kerberos.access.hadoopFileSystems: {fs}\n")
    config.write_text(text)
    return dest


def settle(job, namenode, kdc, group_alive) -> None:
    """conftest's ``FlinkJob.settle`` on a secure namenode: its /jmx answers SPNEGO only."""
    job.kill()
    wait_for(lambda: not group_alive(job.proc.pid), 120, "the job's processes to end")
    web = kerberos_session(kdc.user("flink"))

    def last_txid() -> int:
        return web.get(f"{namenode.url}/jmx").json()["beans"][0]["LastWrittenTransactionId"]
    with CatalogClient(namenode.url, "flink") as catalog:
        def quiet() -> bool:
            txid = last_txid()
            writing = [row for row in catalog.ls("/flink") if row["health"] == "writing"]
            return not writing and last_txid() == txid
        wait_for(quiet, 120, "no file open under /flink")


@pytest.fixture
def as_flink(kdc):
    """This process's WebHDFS calls (the catalog's) as ``flink``, with SPNEGO."""
    from nnlite.client.kerberos import KerberosLogin
    connection.log_in(KerberosLogin(ccache=f"FILE:{kdc.user('flink').ccache}"))
    yield
    connection.log_in(None)


def test_a_keytab_job_checkpoints_and_restores_from_what_the_catalog_names(
        kdc, start_namenode, run_job, flink_python, tmp_path, monkeypatch, as_flink):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    namenode = start_namenode(*secure_args(kdc, keytab), env=kdc.env_for(),
                              users="flink=supergroup")
    user = kdc.user("flink")
    conf = tmp_path / "hadoop"
    conf.mkdir()
    (conf / "core-site.xml").write_text(client_core_site())
    monkeypatch.setenv("HADOOP_CONF_DIR", str(conf))
    web = f"hdfs://127.0.0.1:{namenode.rpc_port}"
    monkeypatch.setenv("FLINK_CONF_DIR",
                       str(flink_conf_dir(flink_python, tmp_path / "flink-conf", kdc, user, web)))
    for key, value in kdc.env_for().items():         # no ticket cache: the keytab or nothing
        monkeypatch.setenv(key, value)
    # the job as `flink run` runs it: Flink's security modules installed first
    jobs = sys.modules[run_job.__module__]            # tests/flink/conftest.py
    monkeypatch.setattr(jobs, "JOB", KERBEROS_JOB)
    common = job_args(web)
    first = run_job(*common, "--stop-after-checkpoints", "3")
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    assert first.finish() == 0, first.log_tail()
    first.wait_for("stopped")
    settle(first, namenode, kdc, jobs.group_alive)
    flink_log = "".join(f.read_text(errors="replace") for f in tmp_path.glob("flink-*/*.log"))
    assert "Created token for flink: HDFS_DELEGATION_TOKEN owner=flink@NNLITE.TEST" in flink_log
    assert "HadoopFSDelegationTokenReceiver [] - Updating delegation tokens for current user" \
        in flink_log
    with CatalogClient(namenode.url, "flink") as catalog:
        shown = catalog.show(job_dir)
        complete = [c for c in shown["checkpoints"] if c["complete"]]
        assert len(complete) >= 2 and all(c["restorable"] for c in complete), shown
        latest = catalog.latest("/flink/ckpt")["latest"]
        owner = catalog.hdfs.status(latest["path"])["owner"]
    assert owner == "flink"
    second = run_job(*common, *CATCH_UP, "--restore", web + latest["path"])
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)
