"""``nnlite run`` under ``dfs.http.policy=HTTPS_ONLY``: the supervisor takes the namenode's
HTTPS port for the secondary's ``--namenode``, and the secondary checkpoints over TLS,
trusting the test CA through ``ssl.client.truststore.location``."""

import getpass
import re
import signal
import subprocess
import sys

import requests

from tests.servers import ROOT, wait_for
from tests.tls_certs import Certificates


def test_run_checkpoints_over_https_only(tmp_path):
    certs = Certificates.make(tmp_path / "tls")
    defines = [*certs.server_defines("HTTPS_ONLY"),
               "dfs.namenode.secondary.https-address=127.0.0.1:0",
               f"ssl.client.truststore.location={certs.ca}",
               "dfs.namenode.secondary.http-address=127.0.0.1:0",
               "checkpoint.check.period=0.2", "checkpoint.txns=5"]
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "run", "--name-dir", str(tmp_path / "name"),
             "--port", "0", *[a for d in defines for a in ("-D", d)]],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        port = int(wait_for(lambda: re.search(r"namenode up at https://127.0.0.1:(\d+)",
                                              log.read_text()), 60, "namenode up").group(1))
        for i in range(8):
            made = requests.put(f"https://127.0.0.1:{port}/webhdfs/v1/run/d{i}",
                                params={"op": "MKDIRS", "user.name": getpass.getuser()},
                                verify=str(certs.ca), timeout=10)
            assert made.json() == {"boolean": True}
        wait_for(lambda: "checkpoint installed" in log.read_text(), 60, "a checkpoint")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "NNLITE_" not in log.read_text()          # the port lines stay off the terminal
    assert (tmp_path / "namesecondary" / "current" / "fsimage").exists()
