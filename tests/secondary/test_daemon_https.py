"""The secondary's status pages over HTTPS (``dfs.http.policy``, ssl-server.xml's keystore), on
``dfs.namenode.secondary.https-address`` as Hadoop's SecondaryNameNode binds it: under
HTTPS_ONLY it serves no plain port, and a client trusting the test's CA reads /status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import requests

from nnlite.namenode.listen import ANNOUNCE_ENV
from tests.servers import ROOT, announced_port
from tests.tls_certs import Certificates


def test_https_only_serves_the_status_over_tls_and_no_plain_port(namenode, tmp_path):
    certs = Certificates.make(tmp_path / "tls")
    token = str(Path(namenode.name_dirs[0]) / "checkpoint.token")
    defines = [*certs.server_defines("HTTPS_ONLY"),
               "dfs.namenode.secondary.https-address=127.0.0.1:0", "nnlite.secondary.nice=0"]
    log = tmp_path / "secondary.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", namenode.url,
             "--checkpoint-dir", str(tmp_path / "ckpt"), "--secret-file", token,
             *[a for d in defines for a in ("-D", d)]],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, ANNOUNCE_ENV: "1"})
    try:
        port = announced_port(proc, log, "NNLITE_SECONDARY_HTTPS_PORT", 20, "the secondary")
        status = requests.get(f"https://127.0.0.1:{port}/status", verify=str(certs.ca),
                              timeout=10)
        assert status.status_code == 200 and status.json()["namenode"] == namenode.url
        assert "NNLITE_SECONDARY_HTTP_PORT=" not in log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
