"""A namenode in secure mode for the HTTP tests: the ``-D`` arguments that turn Kerberos on
with the tests' KDC (tests/kerberos_realm.py), the environment its process needs, and a
requests session that logs in with SPNEGO from a user's ticket cache."""

from __future__ import annotations

REALM = "NNLITE.TEST"


def secure_args(kdc, *extra: str) -> tuple[str, ...]:
    """``hadoop.security.authentication=kerberos`` with nn/_HOST and HTTP/_HOST from one
    keytab, as a NameNode's hdfs-site.xml names them."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"))
    settings = {
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
        "dfs.namenode.keytab.file": str(keytab),
        "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
        "dfs.web.authentication.kerberos.keytab": str(keytab),
    }
    args: list[str] = []
    for key, value in settings.items():
        args += ["-D", f"{key}={value}"]
    return (*args, *extra)


def server_env(kdc) -> dict[str, str]:
    """The namenode process's environment: the realm's krb5.conf, no ticket cache."""
    return kdc.env_for(None)


def kerberos_session(monkeypatch, kdc, principal):
    """A requests session that negotiates (requests-kerberos, as HdfsCLI and fsspec use it)
    from ``principal``'s ticket cache, which this test process then uses."""
    import requests
    from requests_kerberos import OPTIONAL, HTTPKerberosAuth
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{principal.ccache}")
    session = requests.Session()
    session.auth = HTTPKerberosAuth(mutual_authentication=OPTIONAL)
    return session
