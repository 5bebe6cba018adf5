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

from tests.namenode.security.test_sasl import secure_args
from tests.spark.test_streaming_checkpoint import expected, write_batch

pytestmark = pytest.mark.spark
DRIVER = Path(__file__).with_name("kerberos_driver.py")


CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@NNLITE.TEST</value>
  </property>
  <property><name>hadoop.rpc.protection</name><value>privacy</value></property>
</configuration>
"""


def run_driver(kdc, user, conf_dir: Path, src: Path, checkpoint: str, name: str) -> dict:
    """The driver with HADOOP_CONF_DIR's core-site.xml, as a user's cluster configuration
    reaches spark-submit (whose keytab login needs security on from the start)."""
    proc = subprocess.run(
        [sys.executable, str(DRIVER), str(src), checkpoint, user.name, str(user.keytab),
         kdc.krb5_conf, name],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, **kdc.env_for(), "HADOOP_CONF_DIR": str(conf_dir)})
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
    (conf_dir / "core-site.xml").write_text(CORE_SITE)
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
