"""Who may call the endpoints between nnlite's own processes (``security/services.py``): the
shared secret in simple mode; in secure mode only the configuration's service principals, as
``ImageServlet.isValidRequestor`` -- checked here against a real namenode in kerberos mode with
the tests' KDC, a real secondary checkpointing from its keytab, and a user refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nnlite.client.peer import SECRET_HEADER, Peer, PeerRefusedError
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security import services
from nnlite.namenode.security.services import (
    NOT_A_SERVICE,
    ServicePrincipals,
    SharedSecret,
)

ROOT = Path(__file__).resolve().parents[3]
REALM = "NNLITE.TEST"


class Req:
    """The two things a gate reads of a request."""

    def __init__(self, headers=None, principal: str | None = None):
        self.headers = headers or {}
        self.proof = None if principal is None else type("Proof", (), {"principal": principal})


def config(*defines: str) -> Config:
    return Config.load(None, [f"dfs.namenode.kerberos.principal=nn/_HOST@{REALM}",
                              f"dfs.secondary.namenode.kerberos.principal=sn/_HOST@{REALM}",
                              *defines])


# --------------------------------------------------------------------------- the rule

def test_simple_mode_admits_the_shared_secret_only():
    gate = services.gate(config(), "127.0.0.1", "s3cret", secure=False)
    assert isinstance(gate, SharedSecret)
    assert gate.admits(Req({SECRET_HEADER.lower(): "s3cret"}))
    assert not gate.admits(Req({SECRET_HEADER.lower(): "guess"}))
    assert not gate.admits(Req(principal=f"nn/localhost@{REALM}"))
    assert gate.refusal == "missing or wrong shared secret"


def test_the_valid_requestors_are_the_namenodes_and_the_secondary_per_host():
    gate = ServicePrincipals.of(config(
        "dfs.nameservices=ns1", "dfs.ha.namenodes.ns1=nn1,nn2",
        "dfs.namenode.http-address.ns1.nn1=127.0.0.1:9870",
        "dfs.namenode.http-address.ns1.nn2=nn2.example:9870",
        "dfs.namenode.secondary.http-address=snn.example:9868"), "127.0.0.1")
    assert gate.principals == {f"nn/localhost@{REALM}", f"nn/nn2.example@{REALM}",
                               f"sn/snn.example@{REALM}"}


def test_secure_mode_admits_a_service_principal_and_nothing_else():
    gate = services.gate(config(), "127.0.0.1", "s3cret", secure=True)
    assert gate.admits(Req(principal=f"nn/localhost@{REALM}"))
    assert gate.admits(Req(principal=f"sn/localhost@{REALM}"))
    assert not gate.admits(Req(principal=f"alice@{REALM}"))
    assert not gate.admits(Req(principal=f"nn/elsewhere@{REALM}"))
    assert not gate.admits(Req(principal=""))                # a delegation token's proof
    assert not gate.admits(Req({SECRET_HEADER.lower(): "s3cret"}))   # the secret: nothing
    assert gate.refusal == NOT_A_SERVICE


def test_secure_credentials_need_the_principal_and_keytab_keys():
    with pytest.raises(ConfigError, match="dfs.namenode.keytab.file must be set"):
        services.credentials(config(), "127.0.0.1", "", True)
    assert services.credentials(config(), "127.0.0.1", "s3cret", False) == "s3cret"


# --------------------------------------------------------------------------- for real

@pytest.fixture(scope="module")
def secure_nn(start_module_namenode, kdc):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"))
    secondary = kdc.service("sn")
    defines = {
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
        "dfs.namenode.keytab.file": str(keytab),
        "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
        "dfs.web.authentication.kerberos.keytab": str(keytab),
        "dfs.secondary.namenode.kerberos.principal": f"sn/_HOST@{REALM}",
        "dfs.secondary.namenode.keytab.file": str(secondary.keytab),
        "nnlite.checkpoint.secret": "the-old-secret",
    }
    args = [a for k, v in defines.items() for a in ("-D", f"{k}={v}")]
    nn = start_module_namenode(*args, env=kdc.env_for(None))
    nn.defines = args
    nn.keytab = keytab
    return nn


def test_a_namenode_and_the_secondary_principal_reach_the_checkpoint_endpoints(secure_nn, kdc):
    as_nn = services.login(f"nn/localhost@{REALM}", str(secure_nn.keytab))
    assert Peer(secure_nn.url, as_nn).status()["txid"] >= 0
    as_secondary = services.login(f"sn/localhost@{REALM}", str(kdc.service("sn").keytab))
    assert as_secondary.principal == f"sn/localhost@{REALM}"
    assert "namespaceId" in Peer(secure_nn.url, as_secondary).status()


def test_a_user_principal_is_refused_403_and_the_secret_counts_for_nothing(secure_nn, kdc,
                                                                            tmp_path):
    alice = kdc.user("alice")
    with pytest.raises(PeerRefusedError) as refused:
        Peer(secure_nn.url, services.login(alice.name, str(alice.keytab))).roll()
    assert refused.value.status == 403 and NOT_A_SERVICE in refused.value.message
    with pytest.raises(PeerRefusedError) as anonymous:
        Peer(secure_nn.url, "the-old-secret").status()
    assert anonymous.value.status == 401
    image = tmp_path / "fsimage"
    image.write_bytes(b"not an image")
    with pytest.raises(PeerRefusedError) as upload:          # the streamed upload's door
        Peer(secure_nn.url, services.login(alice.name, str(alice.keytab))).upload_image(
            image, txid=1, namespace_id=1, md5="0" * 32)
    assert upload.value.status == 403 and NOT_A_SERVICE in upload.value.message


def test_the_secondary_checkpoints_from_its_keytab(secure_nn, kdc, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", secure_nn.url,
         "--checkpoint-dir", str(tmp_path / "snn"), "--checkpoint-now", *secure_nn.defines],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, **kdc.env_for(None)})
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Checkpoint done" in done.stdout
