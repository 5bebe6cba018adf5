"""Secure mode over TLS: a kerberized namenode serving HTTP_AND_HTTPS, reached with SPNEGO
over https by curl (``--negotiate --cacert``) and by nnlite's CLI on a user's ticket cache,
trusting the test CA; without a ticket the https port refuses with 401 as the http one does,
and the ``hadoop.auth`` cookie it sets over https is ``Secure``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from tests.servers import ROOT
from tests.tls_certs import Certificates

REALM = "NNLITE.TEST"


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certificates:
    return Certificates.make(tmp_path_factory.mktemp("tls-krb"))


@pytest.fixture(scope="module")
def nn(start_module_namenode, kdc, certs):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"))
    defines = {
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
        "dfs.namenode.keytab.file": str(keytab),
        "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
        "dfs.web.authentication.kerberos.keytab": str(keytab),
    }
    args = [a for k, v in defines.items() for a in ("-D", f"{k}={v}")]
    args += [a for d in certs.server_defines() for a in ("-D", d)]
    return start_module_namenode(*args, env=kdc.env_for(None))


def test_https_refuses_a_caller_without_a_ticket(nn, certs):
    answer = requests.get(f"https://127.0.0.1:{nn.https_port}/webhdfs/v1/?op=GETFILESTATUS",
                          verify=str(certs.ca), timeout=10)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"] == "Negotiate"


def test_curl_negotiates_over_https_and_gets_a_secure_cookie(nn, kdc, certs):
    alice = kdc.user("alice")
    done = subprocess.run(
        ["curl", "-sf", "-D", "-", "--negotiate", "-u", ":", "--cacert", str(certs.ca),
         f"https://localhost:{nn.https_port}/webhdfs/v1/?op=GETFILESTATUS"],
        env={**os.environ, **kdc.env_for(alice)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert '"type":"DIRECTORY"' in done.stdout
    cookie = next(line for line in done.stdout.splitlines()
                  if line.lower().startswith("set-cookie: hadoop.auth="))
    assert "Secure" in cookie and "HttpOnly" in cookie


def test_nnlite_cli_over_https_on_a_ticket(nn, kdc, certs):
    def ls(principal) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "nnlite.cli", "dfs", "-D",
             "hadoop.security.authentication=kerberos", "-D",
             f"ssl.client.truststore.location={certs.ca}", "--namenode",
             f"https://127.0.0.1:{nn.https_port}", "ls", "/"],
            cwd=ROOT, env={**os.environ, **kdc.env_for(principal)}, capture_output=True,
            text=True, timeout=60)
    done = ls(kdc.user("alice"))
    assert done.returncode == 0, done.stderr
    anonymous = ls(None)                      # no ticket in the cache: nothing gets through
    assert anonymous.returncode != 0


def test_https_only_with_kerberos_checkpoints_as_the_secondary_principal(start_namenode, kdc,
                                                                         certs, tmp_path):
    """dfs.http.policy = HTTPS_ONLY and Kerberos together: no plain port at all, a user
    negotiates SPNEGO over TLS, and the secondary -- trusting the CA by
    ``ssl.client.truststore.location`` and logged in as ``sn/localhost`` from its keytab, as
    HDFS's SecondaryNameNode does over HTTPS -- fetches the image and edits and uploads its
    checkpoint through the https port, while an anonymous caller still gets 401."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    secondary = kdc.service("sn")
    defines = {
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
        "dfs.namenode.keytab.file": str(keytab),
        "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
        "dfs.web.authentication.kerberos.keytab": str(keytab),
        "dfs.secondary.namenode.kerberos.principal": f"sn/_HOST@{REALM}",
        "dfs.secondary.namenode.keytab.file": str(secondary.keytab),
        "ssl.client.truststore.location": str(certs.ca),
    }
    args = [a for k, v in defines.items() for a in ("-D", f"{k}={v}")]
    args += [a for d in certs.server_defines("HTTPS_ONLY") for a in ("-D", d)]
    nn = start_namenode(*args, env=kdc.env_for(None), users="alice=supergroup")
    url = f"https://localhost:{nn.https_port}"
    alice = kdc.user("alice")
    mkdir = subprocess.run(
        ["curl", "-sf", "-X", "PUT", "--negotiate", "-u", ":", "--cacert", str(certs.ca),
         f"{url}/webhdfs/v1/tmp/alice-was-here?op=MKDIRS"],
        env={**os.environ, **kdc.env_for(alice)}, capture_output=True, text=True, timeout=60)
    assert mkdir.returncode == 0 and '"boolean":true' in mkdir.stdout, mkdir.stderr
    with pytest.raises(requests.exceptions.ConnectionError):     # no plain http port
        requests.get(f"http://127.0.0.1:{nn.https_port}/isActive", timeout=10)

    done = subprocess.run(
        [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", url,
         "--checkpoint-dir", str(tmp_path / "snn"), "--checkpoint-now", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, **kdc.env_for(None)})
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Checkpoint done" in done.stdout
    status = requests.get(f"{url}/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus",
                          verify=str(certs.ca), timeout=10)
    assert status.status_code == 401
