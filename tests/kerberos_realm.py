"""A real MIT Kerberos realm for the secure-mode tests: ``Realm.start(tmp_path)`` runs Debian's
``krb5kdc`` (through PyPI's k5test, which writes the realm's krb5.conf, kdc.conf and database
in a temporary directory) on a free 127.0.0.1 port, and ``stop()`` kills it and removes the
directory. The fixture ``kdc`` (tests/conftest.py) shares one realm per test session.

Services live on host ``localhost``, the name Hadoop's ``SecurityUtil.getServerPrincipal``
gives ``_HOST`` for a client that connects to 127.0.0.1: ``nn/localhost@REALM`` (RPC),
``HTTP/localhost@REALM`` (SPNEGO). ``service(name)`` makes such a principal and its keytab;
``user(name)`` makes a user principal with a password, its keytab and a ticket cache already
filled by ``kinit``, so a test hands a client ``KRB5CCNAME`` (``env_for``) or the keytab.

The test process itself must find the realm too (gssapi in-process reads ``KRB5_CONFIG`` when
it builds a context), so ``start`` sets ``KRB5_CONFIG`` in ``os.environ`` and ``stop`` puts
back what was there.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

REALM = "NNLITE.TEST"
HOST = "localhost"
PORTS = 5                   # k5test's KDC, kadmind, kpasswd, kprop and iprop from the base
ATTEMPTS = 5
INSTALL = ("MIT Kerberos is not installed: `make kerberos` (as root) installs Debian's krb5-kdc "
           "and builds gssapi into the virtual environment")


def available() -> str | None:
    """None when a KDC can run here, else what to install."""
    try:
        import gssapi  # noqa: F401
        import k5test  # noqa: F401
    except ImportError:
        return INSTALL
    if not (shutil.which("krb5kdc") or Path("/usr/sbin/krb5kdc").exists()):
        return INSTALL
    return None


def _free_base() -> int:
    """A port base whose PORTS consecutive loopback ports nobody listens on now."""
    for _ in range(200):
        base = random.randrange(20000, 60000 - PORTS)
        socks = []
        try:
            for port in range(base, base + PORTS):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no free run of loopback ports for the KDC")


@dataclass
class Principal:
    """A principal of the realm with its keytab (and, for users, a ticket cache)."""
    name: str
    keytab: Path
    ccache: Path | None = None
    password: str | None = None

    @property
    def short(self) -> str:
        return self.name.split("@")[0].split("/")[0]


@dataclass
class Realm:
    root: Path
    realm: object = None
    principals: dict[str, Principal] = field(default_factory=dict)
    _saved_config: str | None = None

    @classmethod
    def start(cls, root: Path) -> Realm:
        import k5test

        root.mkdir(parents=True, exist_ok=True)
        # k5test finds MIT's plugin directory through LD_LIBRARY_PATH or krb5-config; the
        # headers' krb5-config is not installed system-wide (Makefile, `kerberos`).
        multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
        saved_ld = os.environ.get("LD_LIBRARY_PATH")
        os.environ["LD_LIBRARY_PATH"] = f"/usr/lib/{multiarch}"
        last: Exception | None = None
        try:
            for _ in range(ATTEMPTS):
                try:
                    k5 = k5test.K5Realm(
                        realm=REALM, portbase=_free_base(), get_creds=False,
                        create_host=False,
                        krb5_conf={"libdefaults": {"rdns": "false",
                                                   "dns_canonicalize_hostname": "false",
                                                   "udp_preference_limit": "1",
                                                   "ticket_lifetime": "24h",
                                                   "renew_lifetime": "7d"}})
                    break
                except Exception as e:          # a port taken between the probe and the bind
                    last = e
            else:
                raise RuntimeError(f"the KDC did not start: {last}")
        finally:
            if saved_ld is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = saved_ld
        self = cls(root=root, realm=k5)
        self._saved_config = os.environ.get("KRB5_CONFIG")
        os.environ["KRB5_CONFIG"] = self.krb5_conf
        return self

    # ------------------------------------------------------------------ what clients need
    @property
    def name(self) -> str:
        return REALM

    @property
    def krb5_conf(self) -> str:
        return self.realm.env["KRB5_CONFIG"]  # type: ignore[attr-defined]

    @property
    def kdc_port(self) -> int:
        return int(self.realm.portbase)  # type: ignore[attr-defined]

    def env_for(self, principal: Principal | None = None) -> dict[str, str]:
        """The environment a client process needs: the realm's krb5.conf, and the ticket cache
        of ``principal`` (none: an empty cache, a caller without credentials)."""
        env = {"KRB5_CONFIG": self.krb5_conf, "KRB5RCACHETYPE": "none"}
        if principal is not None and principal.ccache is not None:
            env["KRB5CCNAME"] = f"FILE:{principal.ccache}"
        else:
            env["KRB5CCNAME"] = f"FILE:{self.root / 'no-credentials.ccache'}"
        return env

    # ------------------------------------------------------------------ principals
    def service(self, service: str, host: str = HOST) -> Principal:
        """``service/host@REALM`` with a random key, exported to its own keytab."""
        name = f"{service}/{host}@{REALM}"
        if name not in self.principals:
            keytab = self.root / f"{service}-{host}.keytab"
            self.realm.addprinc(name)  # type: ignore[attr-defined]
            self.realm.extract_keytab(name, str(keytab))  # type: ignore[attr-defined]
            self.principals[name] = Principal(name, keytab)
        return self.principals[name]

    def keytab_of(self, *principals: Principal, path: Path | None = None) -> Path:
        """One keytab holding the keys of several principals (a namenode's nn/ and HTTP/)."""
        path = path or self.root / ("+".join(p.name.split("@")[0].replace("/", "_")
                                             for p in principals) + ".keytab")
        if not path.exists():
            for p in principals:
                self.realm.extract_keytab(p.name, str(path))  # type: ignore[attr-defined]
        return path

    def user(self, name: str) -> Principal:
        """``name@REALM`` with a password, its keytab, and a ticket cache from ``kinit``."""
        full = f"{name}@{REALM}"
        if full not in self.principals:
            password = self.realm.password(name)  # type: ignore[attr-defined]
            self.realm.addprinc(full, password)  # type: ignore[attr-defined]
            keytab = self.root / f"{name.replace('/', '_')}.keytab"
            self.realm.extract_keytab(full, str(keytab))  # type: ignore[attr-defined]
            principal = Principal(full, keytab, self.root / f"{name.replace('/', '_')}.ccache",
                                  password)
            self.kinit(principal)
            self.principals[full] = principal
        return self.principals[full]

    def kinit(self, principal: Principal) -> None:
        """Fill (or refill) the principal's ticket cache from its keytab."""
        assert principal.ccache is not None
        self.realm.run(["kinit", "-k", "-t", str(principal.keytab),  # type: ignore[attr-defined]
                        "-c", str(principal.ccache), principal.name])

    def stop(self) -> None:
        if self.realm is not None:
            self.realm.stop()  # type: ignore[attr-defined]
            self.realm = None
        if self._saved_config is None:
            os.environ.pop("KRB5_CONFIG", None)
        else:
            os.environ["KRB5_CONFIG"] = self._saved_config
