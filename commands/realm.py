"""A Kerberos realm on loopback for ``nnlite run-secure``: Debian's MIT KDC (``krb5-kdc``),
set up as its own documentation's "Installing KDCs" does, in a folder of the user's.

``LocalRealm.create(folder, realm)`` writes, once:

    kdc.conf        the KDC's profile: the realm, its database and stash in this folder, its
                    port (a free loopback one, kept: tickets name no port, clients read it
                    from krb5.conf)
    krb5.conf       the clients' profile (``KRB5_CONFIG``): the realm's KDC on 127.0.0.1,
                    no reverse DNS (``localhost`` names the services), TCP first
    principal*      the database (``kdb5_util create -s``, a random master password stashed)
    keytabs/        one keytab per principal ``add`` made (``kadmin.local ktadd``), 0600

``add(name)`` makes a principal with a random key and exports its keytab;
``start()`` runs ``krb5kdc -n`` (in the foreground, as a child of the caller) and returns once
its port answers; ``stop()`` ends it. Later runs reuse the database and the keytabs (a
``ktadd`` would change the keys, and tickets already issued would no longer verify).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite.commands.errors import CommandError, ProgramMissing
from nnlite.commands.haset import free_ports

SBIN = ("/usr/sbin", "/usr/local/sbin")
INSTALL = ("MIT Kerberos is not installed: `make kerberos` (as root) installs Debian's "
           "krb5-kdc, krb5-admin-server and krb5-user")
START_TIMEOUT = 20.0          # s for the KDC to answer on its port


def program(name: str) -> str:
    """The path of an MIT Kerberos program (the KDC's live in /usr/sbin)."""
    found = shutil.which(name) or next(
        (str(Path(d) / name) for d in SBIN if (Path(d) / name).exists()), None)
    if found is None:
        raise ProgramMissing(f"{INSTALL} (no {name})")
    return found


@dataclass
class LocalRealm:
    folder: Path
    realm: str
    port: int
    process: subprocess.Popen | None = None

    @property
    def krb5_conf(self) -> Path:
        return self.folder / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.folder / "kdc.conf"

    def env(self) -> dict[str, str]:
        """The environment of the KDC's tools and of every process that uses the realm."""
        return {**os.environ, "KRB5_CONFIG": str(self.krb5_conf),
                "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    @classmethod
    def create(cls, folder: Path, realm: str) -> LocalRealm:
        """The realm in ``folder``: made on the first call, read back on later ones."""
        folder.mkdir(parents=True, exist_ok=True)
        port_file = folder / "kdc.port"
        if port_file.exists():
            return cls(folder.absolute(), realm, int(port_file.read_text()))
        self = cls(folder.absolute(), realm, free_ports(1)[0])
        self._write_profiles()
        self._run(program("kdb5_util"), "create", "-s", "-r", realm, "-P",
                  secrets.token_hex(24))
        port_file.write_text(f"{self.port}\n")
        return self

    def _write_profiles(self) -> None:
        self.kdc_conf.write_text(
            f"[kdcdefaults]\n kdc_listen = 127.0.0.1:{self.port}\n"
            f" kdc_tcp_listen = 127.0.0.1:{self.port}\n"
            f"[realms]\n {self.realm} = {{\n"
            f"  database_name = {self.folder / 'principal'}\n"
            f"  key_stash_file = {self.folder / 'stash'}\n"
            f"  acl_file = {self.folder / 'kadm5.acl'}\n"
            f"  max_life = 24h\n  max_renewable_life = 7d\n }}\n"
            f"[logging]\n kdc = FILE:{self.folder / 'kdc.log'}\n")
        self.krb5_conf.write_text(
            f"[libdefaults]\n default_realm = {self.realm}\n rdns = false\n"
            f" dns_canonicalize_hostname = false\n dns_lookup_kdc = false\n"
            f" udp_preference_limit = 1\n ticket_lifetime = 24h\n renew_lifetime = 7d\n"
            f"[realms]\n {self.realm} = {{\n  kdc = 127.0.0.1:{self.port}\n }}\n"
            f"[domain_realm]\n localhost = {self.realm}\n")

    def keytab(self, name: str) -> Path:
        """Where ``add(name)`` exports the keytab of ``name`` (``nn/localhost`` ->
        ``keytabs/nn-localhost.keytab``)."""
        return self.folder / "keytabs" / f"{name.replace('/', '-')}.keytab"

    def add(self, name: str) -> Path:
        """``name@REALM`` with a random key and its keytab (kept when both exist)."""
        keytab = self.keytab(name)
        if keytab.exists():
            return keytab
        keytab.parent.mkdir(mode=0o700, exist_ok=True)
        principal = f"{name}@{self.realm}"
        self._run(program("kadmin.local"), "-r", self.realm, "-q",
                  f"addprinc -randkey {principal}")
        self._run(program("kadmin.local"), "-r", self.realm, "-q",
                  f"ktadd -k {keytab} {principal}")
        os.chmod(keytab, 0o600)
        return keytab

    def start(self) -> None:
        """Run the KDC as a child (``krb5kdc -n``), until its port answers."""
        with open(self.folder / "krb5kdc.out", "ab") as log:
            self.process = subprocess.Popen([program("krb5kdc"), "-n", "-r", self.realm],
                                            env=self.env(), stdout=log, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise CommandError(f"the KDC did not start on 127.0.0.1:{self.port}; see "
                                   f"{self.folder / 'kdc.log'} and "
                                   f"{self.folder / 'krb5kdc.out'}")
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _run(self, *argv: str) -> None:
        done = subprocess.run(argv, env=self.env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise CommandError(f"{Path(argv[0]).name} failed ({done.returncode}): "
                               f"{(done.stderr or done.stdout).strip()[:500]}")
