"""A namenode in secure mode for the HTTP tests: the ``-D`` arguments that turn Kerberos on
with the tests' KDC (tests/kerberos_realm.py), the environment its process needs, and a
requests session that logs in with SPNEGO as a given user."""

from __future__ import annotations

from urllib.parse import urlsplit

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


def make_homes(kdc, server, *users: str) -> None:
    """``/user/<user>`` owned by each user, made by ``tester`` (the supergroup's, in the
    tests' static mapping) over SPNEGO."""
    tester = kerberos_session(kdc.user("tester"))
    base = f"http://localhost:{server.port}/webhdfs/v1"
    for user in users:
        assert tester.put(f"{base}/user/{user}?op=MKDIRS").ok
        assert tester.put(f"{base}/user/{user}?op=SETOWNER&owner={user}").ok


def kerberos_session(principal):
    """A requests session that logs in as ``principal`` (from its own ticket cache, whatever
    KRB5CCNAME says, so several users can take turns in one test) with nnlite's SPNEGO
    client (client/kerberos.py), then rides on the hadoop.auth cookie the server sets."""
    import requests
    session = requests.Session()
    session.auth = Spnego(principal)
    return session


class Spnego:
    """requests' auth hook: a Negotiate header on every request without a hadoop.auth
    cookie."""

    def __init__(self, principal):
        from nnlite.client.kerberos import KerberosLogin
        self.login = KerberosLogin(ccache=f"FILE:{principal.ccache}")

    def __call__(self, request):
        if "hadoop.auth=" not in request.headers.get("Cookie", ""):
            request.headers["Authorization"] = self.login.token(
                urlsplit(request.url).hostname)[1]
        return request
