"""Spark in local mode, logged in from a keytab, checkpoints a stateful query in a secure
namenode over hdfs:// (SASL GSSAPI, ``hadoop.rpc.protection=privacy``: every frame wrapped)
and over webhdfs:// (SPNEGO from the keytab login, then the hadoop.auth cookie and
WebHdfsFileSystem's own delegation token), and restarts from that checkpoint with exact
results (``kerberos_driver.py``, a driver process of its own per run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.namenode.security.test_sasl import client_core_site, secure_args
from tests.spark.test_streaming_checkpoint import expected, write_batch

pytestmark = pytest.mark.spark
DRIVER = Path(__file__).with_name("kerberos_driver.py")
OBTAINER = Path(__file__).with_name("token_obtainer.py")




def run_driver(kdc, user, conf_dir: Path, src: Path, checkpoint: str, name: str) -> dict:
    """The driver with HADOOP_CONF_DIR's core-site.xml, as a user's cluster configuration
    reaches spark-submit (whose keytab login needs security on from the start)."""
    return run_script(kdc, conf_dir, DRIVER, str(src), checkpoint, user.name, str(user.keytab),
                      kdc.krb5_conf, name)


def run_script(kdc, conf_dir: Path, script: Path, *args: str, **env: str) -> dict:
    """One of the scripts here in a process of its own, with an empty ticket cache: its last
    stdout line, a JSON object."""
    proc = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=600,
        env={**os.environ, **kdc.env_for(), "HADOOP_CONF_DIR": str(conf_dir), **env})
    assert proc.returncode == 0, "\n".join(
        line for line in proc.stderr.splitlines() if not line.startswith("\tat "))[-5000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def checkpoint_uri(nn, scheme: str) -> str:
    """hdfs:// on the RPC port by address (the client canonicalizes it for nn/_HOST);
    webhdfs:// on the web port by the name HTTP/localhost was made for."""
    if scheme == "hdfs":
        return f"hdfs://127.0.0.1:{nn.rpc_port}/ckpt/secure"
    return f"webhdfs://localhost:{nn.port}/ckpt/secure"


@pytest.mark.parametrize("scheme", ["hdfs", "webhdfs"])
def test_a_keytab_driver_checkpoints_over_a_secure_scheme_and_restarts(kdc, start_namenode,
                                                                       tmp_path, scheme):
    pytest.importorskip("pyspark")
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    nn = start_namenode(*secure_args(kdc, keytab), env=kdc.env_for(),
                        users="spark=supergroup")
    user = kdc.user("spark")
    src = tmp_path / "in"
    src.mkdir()
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "core-site.xml").write_text(client_core_site())
    checkpoint = checkpoint_uri(nn, scheme)
    b0 = [("a", 1), ("b", 2), ("a", 3)]
    b1 = [("b", 10), ("c", 20)]
    write_batch(src, "0.json", b0)
    first = run_driver(kdc, user, conf_dir, src, checkpoint, f"secure_{scheme}")
    assert (first["user"], first["auth"]) == ("spark@NNLITE.TEST", "KERBEROS")
    assert first["batch"] == 0
    assert {k: tuple(v) for k, v in first["result"].items()} == expected(b0)

    write_batch(src, "1.json", b1)
    again = run_driver(kdc, user, conf_dir, src, checkpoint, f"secure_{scheme}_again")
    assert again["id"] == first["id"]           # the same query, resumed from its checkpoint
    assert again["batch"] == 1                  # continues after batch 0
    assert {k: tuple(v) for k, v in again["result"].items()} == expected(b0, b1)


def test_the_checkpoint_is_written_with_the_tokens_sparks_driver_obtained(kdc, start_namenode,
                                                                          tmp_path):
    """Spark's delegation-token path: a keytab driver's ``HadoopDelegationTokenManager``
    (Spark 4's local backend runs one when security is on) obtains an HDFS token for
    ``spark.kerberos.access.hadoopFileSystems``; then drivers holding only that token (the
    token file, an empty ticket cache, no keytab: a YARN container's lot) checkpoint the query
    and restart it with exact results. Nothing but the token could have written the files."""
    pytest.importorskip("pyspark")
    from tests.namenode.http.secure import kerberos_session
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    nn = start_namenode(*secure_args(kdc, keytab), env=kdc.env_for(),
                        users="spark=supergroup")
    user = kdc.user("spark")
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "core-site.xml").write_text(client_core_site())
    fs = f"hdfs://127.0.0.1:{nn.rpc_port}"
    token_file = tmp_path / "tokens"
    obtained = run_script(kdc, conf_dir, OBTAINER, fs, user.name, str(user.keytab),
                          kdc.krb5_conf, str(token_file))
    assert [(t["kind"], t["service"], t["owner"]) for t in obtained["tokens"]] == [
        ("HDFS_DELEGATION_TOKEN", f"127.0.0.1:{nn.rpc_port}", "spark@NNLITE.TEST")]

    src = tmp_path / "in"
    src.mkdir()
    b0 = [("a", 1), ("b", 2), ("a", 3)]
    b1 = [("b", 10), ("c", 20)]
    write_batch(src, "0.json", b0)

    def token_driver(name: str) -> dict:
        return run_script(kdc, conf_dir, DRIVER, str(src), f"{fs}/ckpt/tokens", "-", "-",
                          kdc.krb5_conf, name, HADOOP_TOKEN_FILE_LOCATION=str(token_file))
    first = token_driver("tokens_q1")
    assert (first["kerberos"], first["tokens"]) == (False, ["HDFS_DELEGATION_TOKEN"])
    assert first["batch"] == 0
    assert {k: tuple(v) for k, v in first["result"].items()} == expected(b0)
    write_batch(src, "1.json", b1)
    again = token_driver("tokens_q1_again")
    assert (again["id"], again["batch"]) == (first["id"], 1)
    assert {k: tuple(v) for k, v in again["result"].items()} == expected(b0, b1)
    # the files are the token owner's, whatever the process's own user
    web = kerberos_session(user)
    listing = web.get(f"http://localhost:{nn.port}/webhdfs/v1/ckpt/tokens/commits"
                      "?op=LISTSTATUS").json()["FileStatuses"]["FileStatus"]
    assert {(s["pathSuffix"], s["owner"]) for s in listing} == {("0", "spark"), ("1", "spark")}
