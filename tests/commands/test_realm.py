"""``commands/realm.py``: a realm on loopback from Debian's MIT KDC, made once and reused, its
principals' keytabs good for ``kinit``, the KDC a child that stops."""

from __future__ import annotations

import os
import subprocess

import pytest

from nnlite.commands import realm as realm_module
from nnlite.commands.errors import ProgramMissing
from nnlite.commands.realm import LocalRealm

REALM = "NNLITE.RTEST"


@pytest.fixture
def local_realm(tmp_path):
    try:
        realm_module.program("krb5kdc")
    except ProgramMissing as exc:
        pytest.skip(str(exc))
    made = LocalRealm.create(tmp_path / "krb5", REALM)
    yield made
    made.stop()


def test_a_principal_made_in_the_realm_gets_a_ticket_from_its_keytab(local_realm, tmp_path):
    keytab = local_realm.add("alice")
    assert oct(os.stat(keytab).st_mode & 0o777) == "0o600"
    local_realm.start()
    env = {**local_realm.env(), "KRB5CCNAME": f"FILE:{tmp_path / 'cc'}"}
    subprocess.run(["kinit", "-kt", str(keytab), f"alice@{REALM}"], env=env, check=True,
                   capture_output=True)
    listed = subprocess.run(["klist"], env=env, capture_output=True, text=True, check=True)
    assert f"alice@{REALM}" in listed.stdout and f"krbtgt/{REALM}@{REALM}" in listed.stdout
    process = local_realm.process
    local_realm.stop()
    assert process is not None and process.poll() is not None


def test_a_second_create_reuses_the_realm_and_its_keytabs(local_realm):
    keytab = local_realm.add("nn/localhost")
    before = keytab.read_bytes()
    again = LocalRealm.create(local_realm.folder, REALM)
    assert again.port == local_realm.port
    assert again.add("nn/localhost") == keytab and keytab.read_bytes() == before
    assert f"kdc = 127.0.0.1:{again.port}" in again.krb5_conf.read_text()


def test_a_missing_kerberos_program_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(realm_module, "SBIN", ())
    with pytest.raises(ProgramMissing, match="make kerberos"):
        realm_module.program("krb5kdc")
