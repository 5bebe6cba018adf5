"""``nnlite run-secure``: a local secure set on loopback to try secure mode with -- a Kerberos
realm of its own (``commands/realm.py``: Debian's MIT KDC), the service principals and
keytabs, and a namenode with its secondary in ``hadoop.security.authentication = kerberos``,
supervised as ``nnlite run`` supervises them (``commands/supervisor.py``).

The base dir (``--base-dir``, default ``~/.nnlite/secure``)::

    krb5/           the realm (realm.py): krb5.conf for clients, the KDC's profile and
                    database, keytabs/ (nn-localhost, HTTP-localhost, sn-localhost, <user>)
    secure.conf     the set's configuration, Hadoop's keys for secure mode (the principals
                    with _HOST, the keytabs, the addresses) and the user's --conf/-D keys
                    (0600; written at each start). Clients take it too: --conf secure.conf
    name/           the namenode's name dir (formatted on the first start, with the user's
                    home /user/<user>)
    namesecondary/  the secondary's checkpoints

Before the daemons start, stdout gets the lines to paste in another shell: the realm's
``KRB5_CONFIG``, ``kinit`` as the user from its keytab, a WebHDFS call with SPNEGO
(``curl --negotiate``), nnlite's CLI and catalog on that ticket, and a Spark driver that
logs in from the keytab (``spark.kerberos.keytab``, ``spark.kerberos.principal``) and
checkpoints over ``hdfs://``. SIGTERM or SIGINT stop the secondary, the namenode, then the KDC.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from nnlite.commands.haset import HOST, free_ports
from nnlite.commands.realm import LocalRealm
from nnlite.commands.support import default_name_dir

REALM = "NNLITE.LOCAL"
SERVICES = ("nn", "HTTP", "sn")          # namenode (RPC), SPNEGO, secondary namenode
DEFAULT_PORTS = (9880, 8040, 9878)       # HTTP, hdfs://, the secondary's: beside `make run`'s
CONF = "secure.conf"


def default_base_dir() -> str:
    """``~/.nnlite/secure``: beside the default name dir."""
    return str(Path(default_name_dir()).with_name("secure"))


@dataclass(frozen=True)
class LocalSecureSet:
    base: Path
    user: str
    port: int
    rpc_port: int
    secondary_port: int

    @classmethod
    def plan(cls, base: Path, user: str, ports: tuple[int, int, int]) -> LocalSecureSet:
        """The set in ``base``; a port 0 becomes a free one, chosen now (printed below)."""
        free = iter(free_ports(ports.count(0)))
        port, rpc, secondary = (p or next(free) for p in ports)
        return cls(base.absolute(), user, port, rpc, secondary)

    @property
    def conf(self) -> Path:
        return self.base / CONF

    @property
    def name_dir(self) -> Path:
        return self.base / "name"

    def realm(self) -> LocalRealm:
        """The realm with every principal of the set and the user (made once)."""
        realm = LocalRealm.create(self.base / "krb5", REALM)
        for service in SERVICES:
            realm.add(f"{service}/localhost")
        realm.add(self.user)
        return realm

    def settings(self, realm: LocalRealm) -> dict[str, str]:
        """Hadoop's keys of secure mode for this set."""
        return {
            "hadoop.security.authentication": "kerberos",
            "dfs.namenode.kerberos.principal": f"nn/_HOST@{REALM}",
            "dfs.namenode.keytab.file": str(realm.keytab("nn/localhost")),
            "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{REALM}",
            "dfs.web.authentication.kerberos.keytab": str(realm.keytab("HTTP/localhost")),
            "dfs.secondary.namenode.kerberos.principal": f"sn/_HOST@{REALM}",
            "dfs.secondary.namenode.keytab.file": str(realm.keytab("sn/localhost")),
            "dfs.namenode.http-address": f"{HOST}:{self.port}",
            "dfs.namenode.rpc-address": f"{HOST}:{self.rpc_port}",
            "dfs.namenode.secondary.http-address": f"{HOST}:{self.secondary_port}",
        }

    def write_config(self, realm: LocalRealm, own: dict[str, str]) -> None:
        """``secure.conf``: the set's keys, then the user's (which win), 0600."""
        lines = [f"{k} = {v}" for k, v in {**self.settings(realm), **own}.items()]
        fd = os.open(self.conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("# nnlite run-secure: the local secure set's configuration\n")
            f.write("\n".join(lines) + "\n")

    def paste_lines(self, realm: LocalRealm) -> str:
        """What a user pastes in another shell to act as the set's user."""
        principal = f"{self.user}@{REALM}"
        keytab = str(realm.keytab(self.user))
        krb5 = str(realm.krb5_conf)
        q = shlex.quote
        # curl asks for HTTP/<the URL's host>: the principal is HTTP/localhost
        spnego_url = f"http://localhost:{self.port}"
        url = f"http://{HOST}:{self.port}"
        hdfs = f"hdfs://{HOST}:{self.rpc_port}"
        spark = " ".join([
            "pyspark", "--conf", q(f"spark.kerberos.keytab={keytab}"),
            "--conf", q(f"spark.kerberos.principal={principal}"),
            "--conf", q("spark.hadoop.hadoop.security.authentication=kerberos"),
            "--conf", q(f"spark.hadoop.dfs.namenode.kerberos.principal=nn/_HOST@{REALM}"),
            "--conf", q(f"spark.driver.extraJavaOptions=-Djava.security.krb5.conf={krb5}"),
            "--conf", q(f"spark.hadoop.fs.defaultFS={hdfs}")])
        return "\n".join([
            "# the local secure set: paste these in another shell",
            f"export KRB5_CONFIG={q(krb5)}",
            f"kinit -kt {q(keytab)} {principal}",
            f"curl --negotiate -u : '{spnego_url}/webhdfs/v1/?op=GETFILESTATUS'",
            f"nnlite dfs --conf {q(str(self.conf))} --namenode {url} ls /user",
            f"nnlite catalog --conf {q(str(self.conf))} --namenode {url} ls /user/{self.user}",
            f"{spark}   # then checkpointLocation={hdfs}/user/{self.user}/ckpt",
        ])


def make_home(name_dir: str, user: str) -> None:
    """``/user/<user>``, owned by the set's user, in the freshly formatted ``name_dir``
    (offline, as the one who formatted it: the owner of ``/``), so the user's jobs have their
    home as on a cluster whose admin made it."""
    from nnlite.namenode.fsnamesystem import FSNamesystem
    with FSNamesystem.open([name_dir]) as fs:
        me = fs.identity.superuser
        fs.durable(fs.mkdirs(f"/user/{user}", 0o755, me))
        fs.durable(fs.set_owner(f"/user/{user}", user, None, me))


def run(secure_set: LocalSecureSet, own: dict[str, str]) -> int:
    """Make (or reuse) the realm, write secure.conf, format the name dir once, start the KDC,
    print the lines to paste, then supervise the namenode and its secondary until
    SIGTERM/SIGINT; the KDC stops last."""
    from nnlite.commands import supervisor
    from nnlite.namenode.fsnamesystem import format_dirs
    from nnlite.namenode.storage.namedir import NameDir
    secure_set.base.mkdir(parents=True, exist_ok=True)
    realm = secure_set.realm()
    secure_set.write_config(realm, own)
    name_dir = NameDir(str(secure_set.name_dir))
    if not name_dir.is_formatted():
        format_dirs([name_dir])
        make_home(str(secure_set.name_dir), secure_set.user)
    realm.start()
    os.environ["KRB5_CONFIG"] = str(realm.krb5_conf)    # the daemons' realm
    try:
        print(secure_set.paste_lines(realm), flush=True)
        return supervisor.run([str(secure_set.name_dir)], ["--conf", str(secure_set.conf)],
                              secure_set.port, secure_set.secondary_port)
    finally:
        realm.stop()
