"""``nnlite haadmin`` against a secure HA set (commands/haadmin.py with support.py's
``log_in``), as separate processes with the tests' KDC: the ticket cache after kinit or
``--keytab``/``--principal`` proves who asks, anyone proved reads a state, only the namenode
principal (secure mode's superuser) fails over, and without a ticket the command says to
kinit."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.crash


def haadmin(kdc, haset, principal, *args: str) -> subprocess.CompletedProcess:
    """``nnlite [-v] haadmin ARGS --conf <the set's>`` with ``principal``'s ticket cache."""
    return subprocess.run([sys.executable, "-m", "nnlite.cli", *filter(None, args[:1]),
                           "haadmin", *args[1:], "--conf", str(haset.conf)],
                          cwd=ROOT, env={**kdc.env_for(principal), "PATH": "/usr/bin:/bin"},
                          capture_output=True, timeout=120)


def test_haadmin_logs_in_to_a_secure_ha_set(kdc, etcd_cluster, tmp_path):
    from tests.namenode.ha.haset import HASet
    nn = kdc.service("nn")
    keytab = kdc.keytab_of(nn, kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    settings = {"hadoop.security.authentication": "kerberos",
                "dfs.namenode.kerberos.principal": f"nn/_HOST@{kdc.name}",
                "dfs.namenode.keytab.file": str(keytab),
                "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{kdc.name}",
                "dfs.web.authentication.kerberos.keytab": str(keytab)}
    (tmp_path / "ha").mkdir()
    haset = HASet(tmp_path / "ha", etcd_cluster, settings=settings)
    try:
        active = haset.start_all()
        first, second = haset.ids[active], haset.ids[1 - active]
        alice = kdc.user("alice")
        state = haadmin(kdc, haset, alice, "-v", "getServiceState", first)
        assert (state.returncode, state.stdout) == (0, b"active\n"), state.stderr
        assert b"acting as alice@NNLITE.TEST (from the ticket cache)" in state.stderr
        refused = haadmin(kdc, haset, alice, "", "failover", first, second)
        assert refused.returncode == 1
        assert b"Access denied for user alice. Superuser privilege is required" in \
            refused.stderr
        no_ticket = haadmin(kdc, haset, None, "", "getServiceState", first)
        assert no_ticket.returncode == 2 and b"kinit first" in no_ticket.stderr
        done = haadmin(kdc, haset, None, "", "failover", first, second,
                       "--principal", nn.name, "--keytab", str(keytab))
        assert done.returncode == 0, done.stderr
        port = haset.ports[1 - active]
        assert done.stdout == f"Failover to NameNode at 127.0.0.1:{port} successful\n".encode()
        assert haset.active() == 1 - active
        standby = haadmin(kdc, haset, alice, "", "getServiceState", first)
        assert standby.stdout == b"standby\n", standby.stderr
    finally:
        haset.close()
