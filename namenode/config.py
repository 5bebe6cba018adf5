"""Configuration: defaults, the user's files, ``-D key=value`` overrides; typed access.

``--conf`` names a file or a Hadoop configuration directory (``HADOOP_CONF_DIR``). A file is
either nnlite's ``key = value`` format (one per line; ``#`` starts a comment line; blank lines
are ignored; later lines win; values are taken as written, without quotes) or Hadoop's XML
(``<configuration><property><name>…</name><value>…</value></property>…``, as
``org.apache.hadoop.conf.Configuration`` reads it: later properties win, ``<final>`` and
``<description>`` are ignored). ``${name}`` in any value is expanded from the final keys, as
``Configuration.substituteVars`` does at ``get`` (at most 20 rounds; unknown names stay). A
directory is read as Hadoop reads its classpath: ``core-site.xml``, then ``hdfs-site.xml``.
``hadoop.ssl.server.conf`` (default ``ssl-server.xml``, as ``SSLFactory`` names it) and
``hadoop.ssl.client.conf`` (``ssl-client.xml``) are read too when they lie beside the files
read, so their keystore and truststore keys need no copy.
``-D key=value`` options win over the file. Keys outside ``DEFAULTS`` (and outside the
``hadoop.proxyuser.<user>.hosts|groups|users`` pattern) are reported in the log, not silently
used. The keys of DESIGN.md keep their names; the rest follow Hadoop's names.
"""

from __future__ import annotations

import builtins
import getpass
import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULTS: dict[str, str] = {
    # checkpointing (DESIGN.md)
    "checkpoint.period": "3600",
    "checkpoint.txns": "1000000",
    "checkpoint.check.period": "60",
    "checkpoint.max-retries": "3",
    "checkpoints.retained": "2",
    # addresses
    "dfs.namenode.http-address": "127.0.0.1:9870",
    "dfs.namenode.secondary.http-address": "127.0.0.1:9868",
    # the secondary's HTTPS port, served when dfs.http.policy names HTTPS (Hadoop's default 9869)
    "dfs.namenode.secondary.https-address": "127.0.0.1:9869",
    # Hadoop IPC (hdfs://): ClientNamenodeProtocol, Hadoop's default port
    "dfs.namenode.rpc-address": "127.0.0.1:8020",
    "ipc.maximum.data.length": str(128 << 20),     # the largest RPC frame accepted, bytes
    # the built-in datanode's transfer port (0: a free one; the namenode names it to clients)
    "dfs.datanode.address": "127.0.0.1:0",
    # its IPC port (ClientDatanodeProtocol: a reader asks the length of a block being written)
    "dfs.datanode.ipc.address": "127.0.0.1:0",
    # identity and permissions
    "dfs.permissions.enabled": "true",
    "dfs.permissions.superusergroup": "supergroup",
    "nnlite.superuser": "",                # empty: the user that runs the namenode
    "hadoop.user.group.static.mapping.overrides": "",
    "hadoop.http.staticuser.user": "dr.who",
    # namespace defaults and limits
    "dfs.replication": "1",
    "dfs.blocksize": "134217728",
    # minutes a deleted path stays in the user's trash, as clients read it from the server
    # defaults (0: no trash); the client moves paths there, the namenode only advertises it
    "fs.trash.interval": "0",
    "dfs.ls.limit": "1000",
    # a failed name dir is brought back at the next edits roll once it can be written
    # (Hadoop's key; its default is false, nnlite's true: a disk that filled comes back)
    "dfs.namenode.name.dir.restore": "true",
    # GETFILECHECKSUM: MD5MD5CRC (HDFS's default) or COMPOSITE_CRC
    "dfs.checksum.combine.mode": "MD5MD5CRC",
    # NameNodeResourceChecker: safe mode below this many free bytes in the name dirs
    "dfs.namenode.resource.du.reserved": "104857600",
    "dfs.namenode.resource.check.interval": "5000",       # ms
    "dfs.namenode.resource.checked.volumes.minimum": "1",
    "dfs.namenode.fs-limits.max-xattrs-per-inode": "32",
    "dfs.namenode.acls.enabled": "true",
    "dfs.namenode.fs-limits.max-xattr-size": "16384",
    # service
    "nnlite.log.file": "",
    "nnlite.edits.max-record": "1048576",
    "nnlite.http.max-body": "1048576",
    # s between freezes of what survived a collection (namenode/daemon.py); 0: never
    "nnlite.gc.freeze-interval": "1",
    # bytes of unfinished requests held across all connections before new ones get 503
    "nnlite.http.body-budget": "67108864",
    # seconds a request may take to arrive; a streamed body must then average this rate
    "nnlite.http.request-timeout": "60",
    "nnlite.http.min-body-rate": "1024",
    "nnlite.shutdown.grace": "10",
    "nnlite.checkpoint.secret": "",        # empty: <first name dir>/checkpoint.token
    # data path (namenode/blocks/, namenode/namespace/leases.py, namenode/http/data.py)
    "nnlite.data.dir": "",                 # empty: <first name dir>-data
    "nnlite.blocks.sweep.interval": "600",   # s between sweeps for unreferenced blocks
    "nnlite.blocks.sweep.grace": "3600",     # s an unreferenced block is kept before removal
    # the checkpoint catalog (catalog/): "<root>=<keep>[,<root>=<keep>...]" retention policy
    "nnlite.catalog.roots": "/",              # where the status page looks for checkpoints
    "nnlite.catalog.retain": "",
    "nnlite.catalog.policy.interval": "300",  # s between applications of the policy
    "nnlite.catalog.quiet": "30",             # s without writes before rollback may act
    "nnlite.catalog.gc.tmp-ttl": "3600",      # s before an orphan temp file is removed
    "nnlite.catalog.gc.rdd-ttl": "604800",    # s before an untouched RDD checkpoint is removed
    "nnlite.lease.soft-limit": "60",       # s silent before another writer may take over
    "dfs.namenode.lease-hard-limit-sec": "1200",   # s silent before the lease is revoked
    # high availability (namenode/ha/): empty dfs.nameservices -> one namenode, local journal.
    # An HA set also names dfs.ha.namenodes.<ns> = nn1,nn2 and each
    # dfs.namenode.http-address.<ns>.<nn>, as Hadoop's hdfs-site.xml does.
    "dfs.nameservices": "",
    "dfs.ha.namenode.id": "",              # which of dfs.ha.namenodes.<ns> this one is
    "dfs.ha.automatic-failover.enabled": "true",
    "nnlite.ha.etcd.endpoints": "",        # http://host:port,... of the etcd cluster
    "nnlite.ha.etcd.prefix": "/nnlite",    # keys live under <prefix>/<nameservice>/
    # https endpoints of members run with --client-cert-auth: their CA, this client's PEM
    # certificate and key (etcdctl's --cacert, --cert, --key)
    "nnlite.ha.etcd.ssl.ca": "",
    "nnlite.ha.etcd.ssl.cert": "",
    "nnlite.ha.etcd.ssl.key": "",
    "nnlite.ha.lease.ttl": "4",            # s: the leader's etcd lease (failover detection)
    "nnlite.ha.tail.interval": "0.05",     # s between a standby's polls of the journal
    "nnlite.ha.journal.timeout": "10",     # s a batch may wait for etcd's quorum, then fails
    "nnlite.ha.edits.retained": "100000",  # txids kept in etcd below the last checkpoint
    "nnlite.ha.standby.lag.max": "60",     # s a standby may stay behind the journal, healthy
    "nnlite.ha.replication.interval": "5",  # s between the active's block resyncs
    # s a close's block copies to a standby may take in all; past it the standby is left
    # out and the blocks are under-replicated until the resync copies them
    "nnlite.ha.replication.timeout": "5",
    # security (namenode/security/): Hadoop's keys. "simple" trusts the name a caller gives;
    # "kerberos" settles it by Kerberos (SPNEGO on HTTP, SASL on IPC) or a delegation token
    "hadoop.security.authentication": "simple",
    "hadoop.security.auth_to_local": "DEFAULT",
    "dfs.namenode.kerberos.principal": "",         # nn/_HOST@REALM
    "dfs.namenode.keytab.file": "",
    "dfs.web.authentication.kerberos.principal": "",   # HTTP/_HOST@REALM
    "dfs.web.authentication.kerberos.keytab": "",
    "dfs.secondary.namenode.kerberos.principal": "",
    "dfs.secondary.namenode.keytab.file": "",
    # the signed hadoop.auth cookie (AuthenticationFilter): secret file (empty: a random
    # secret per start) and validity in s
    "hadoop.http.authentication.signature.secret.file": "",
    "hadoop.http.authentication.token.validity": "36000",
    "hadoop.http.authentication.cookie.domain": "",
    # authentication, integrity or privacy (SASL QOP) on hdfs:// connections
    "hadoop.rpc.protection": "authentication",
    # delegation tokens (DelegationTokenSecretManager), ms
    "dfs.namenode.delegation.key.update-interval": "86400000",
    "dfs.namenode.delegation.token.renew-interval": "86400000",
    "dfs.namenode.delegation.token.max-lifetime": "604800000",
    # block access tokens on the data port (BlockTokenSecretManager), minutes
    "dfs.block.access.token.enable": "false",
    "dfs.block.access.key.update.interval": "600",
    "dfs.block.access.token.lifetime": "600",
    # SASL on the data port (SaslDataTransferServer): empty, authentication, integrity, privacy
    "dfs.data.transfer.protection": "",
    # under privacy, AES/CTR/NoPadding instead of DIGEST-MD5's 3DES (DataTransferSaslUtil
    # .negotiateCipherOption): empty, or that one suite; its key length in bits
    "dfs.encrypt.data.transfer.cipher.suites": "",
    "dfs.encrypt.data.transfer.cipher.key.bitlength": "128",
    # TLS on the web ports: HTTP_ONLY, HTTPS_ONLY, HTTP_AND_HTTPS
    "dfs.http.policy": "HTTP_ONLY",
    "dfs.namenode.https-address": "127.0.0.1:9871",
    "hadoop.ssl.server.conf": "ssl-server.xml",
    "hadoop.ssl.client.conf": "ssl-client.xml",     # read beside the site files, as the server's
    # ssl-server.xml's keys (type jks, pkcs12, or pem: a PEM file of the key and certificate)
    "ssl.server.keystore.location": "",
    "ssl.server.keystore.password": "",
    "ssl.server.keystore.keypassword": "",
    "ssl.server.keystore.type": "jks",
    "ssl.server.truststore.location": "",
    "ssl.server.truststore.password": "",
    "ssl.server.truststore.type": "jks",
    # ssl-client.xml's truststore: CA certificates (a PEM file) nnlite's clients trust on https
    "ssl.client.truststore.location": "",
    # secondary
    "dfs.image.transfer.timeout": "60000",   # ms: socket timeout of image transfers
    "nnlite.secondary.nice": "10",           # CPU niceness 0-19: the merge yields to the namenode
}

PROXY_KEY = re.compile(r"hadoop\.proxyuser\.[^.]+\.(hosts|groups|users)$")
# Keys named after a nameservice and its namenodes (Hadoop's HA configuration): each
# namenode's HTTP, HTTPS and RPC addresses, which the namenodes bind (``namenode_key``) and
# the clients follow.
HA_KEY = re.compile(r"dfs\.(ha\.namenodes\.[^.]+|namenode\.(https?|rpc)-address\.[^.]+\.[^.]+|"
                    r"client\.failover\.proxy\.provider\.[^.]+)$")


class ConfigError(ValueError):
    """A configuration file or value that cannot be used."""


class Config:
    def __init__(self, values: dict[str, str] | None = None):
        self.values = _expand({**DEFAULTS, **(values or {})})

    @classmethod
    def load(cls, path: str | None = None, overrides: list[str] | tuple = ()) -> Config:
        values = _read_conf(path) if path else {}
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"-D expects key=value, got {item!r}")
            values[key.strip()] = value.strip()
        for key in sorted(values):
            if key not in DEFAULTS and not PROXY_KEY.match(key) and not HA_KEY.match(key):
                log.warning("unknown configuration key %r (ignored); known keys: see "
                            "namenode/config.py", key)
        return cls(values)

    def get(self, key: str) -> str:
        return self.values[key]

    def int(self, key: str) -> int:
        try:
            return int(self.values[key])
        except ValueError as exc:
            raise ConfigError(f"{key} must be an integer, not {self.values[key]!r}") from exc

    def float(self, key: str) -> float:
        try:
            return float(self.values[key])
        except ValueError as exc:
            raise ConfigError(f"{key} must be a number, not {self.values[key]!r}") from exc

    def bool(self, key: str) -> bool:
        value = self.values[key].strip().lower()
        if value not in ("true", "false"):
            raise ConfigError(f"{key} must be true or false, not {self.values[key]!r}")
        return value == "true"

    # builtins.int: inside the class body, ``int`` names the method above
    def address(self, key: str) -> tuple[str, builtins.int]:
        host, _, port = self.values[key].rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"{key} must be host:port, not {self.values[key]!r}")
        return host, int(port)

    def nameservice(self) -> str:
        return self.values["dfs.nameservices"].strip()

    def http_scheme(self) -> str:
        """How nnlite's processes reach a namenode's web port: ``https`` under
        ``dfs.http.policy`` HTTPS_ONLY, else ``http`` (``DFSUtil.getHttpClientScheme``)."""
        return "https" if self.values["dfs.http.policy"].strip().upper() == "HTTPS_ONLY" \
            else "http"

    def namenode_url(self) -> str:
        """The lone namenode's web URL: ``http_scheme()`` and its http- or https-address."""
        scheme = self.http_scheme()
        return f"{scheme}://{self.values[f'dfs.namenode.{scheme}-address']}"

    def ha_urls(self) -> dict[str, str]:
        """``{namenode id: scheme://host:port}`` of the HA set (``ha_namenodes``), in the
        scheme ``http_scheme`` names: what its namenodes, the secondary and the clients
        call."""
        scheme = self.http_scheme()
        return {nn: f"{scheme}://{address}" for nn, address in self.ha_namenodes().items()}

    def ha_namenodes(self) -> dict[str, str]:
        """``{namenode id: host:port}`` of the HA set, in ``dfs.ha.namenodes.<ns>`` order
        ({} without a nameservice): each ``dfs.namenode.http-address.<ns>.<nn>``, or under
        HTTPS_ONLY its ``https-address`` (``DFSUtilClient.getNNAddressCheckLogical``: the
        address of the scheme ``http_scheme`` names)."""
        ns = self.nameservice()
        if not ns:
            return {}
        if "," in ns:
            raise ConfigError(f"dfs.nameservices names one nameservice here, not {ns!r}")
        ids = [i.strip() for i in self.values.get(f"dfs.ha.namenodes.{ns}", "").split(",")
               if i.strip()]
        if not ids:
            raise ConfigError(f"dfs.nameservices is {ns!r} but dfs.ha.namenodes.{ns} names no "
                              f"namenode")
        addresses = {}
        for nn in ids:
            key = f"dfs.namenode.{self.http_scheme()}-address.{ns}.{nn}"
            value = self.values.get(key, "")
            host, _, port = value.rpartition(":")
            if not host or not port.isdigit():
                raise ConfigError(f"{key} must be host:port, not {value!r}")
            addresses[nn] = value
        return addresses

    def namenode_key(self, key: str, namenode_id: str) -> str:
        """``<key>.<nameservice>.<namenode_id>`` when the configuration sets it, else ``key``:
        a namenode of an HA set binds the addresses named after it, as Hadoop's
        ``NameNode.initializeGenericKeys`` copies ``dfs.namenode.http-address.ns1.nn1`` (and
        the rpc-address, ...) onto the generic key for namenode nn1."""
        ns = self.nameservice()
        own = f"{key}.{ns}.{namenode_id}"
        return own if ns and namenode_id and own in self.values else key

    def etcd_endpoints(self) -> list[str]:
        return [e.strip() for e in self.values["nnlite.ha.etcd.endpoints"].split(",")
                if e.strip()]

    def security_enabled(self) -> builtins.bool:
        """``hadoop.security.authentication`` is ``kerberos`` (``UserGroupInformation.
        isSecurityEnabled``); ``simple`` is the default."""
        mode = self.values["hadoop.security.authentication"].strip().lower()
        if mode not in ("simple", "kerberos"):
            raise ConfigError("hadoop.security.authentication must be simple or kerberos, "
                              f"not {self.values['hadoop.security.authentication']!r}")
        return mode == "kerberos"

    def superuser(self) -> str:
        return self.values["nnlite.superuser"] or getpass.getuser()

    def proxy_users(self) -> dict[str, str]:
        """The ``hadoop.proxyuser.<user>.hosts|groups|users`` settings."""
        return {k: v for k, v in self.values.items() if PROXY_KEY.match(k)}


SITE_FILES = ("core-site.xml", "hdfs-site.xml")


def _read_conf(path: str) -> dict[str, str]:
    """The keys of ``--conf``: a file, or a directory's site files; then the SSL server and
    client files that ``hadoop.ssl.server.conf`` and ``.client.conf`` name, when they lie
    beside them."""
    where = Path(path)
    if where.is_dir():
        values: dict[str, str] = {}
        for name in SITE_FILES:
            if (where / name).exists():
                values.update(_read_file(str(where / name)))
        folder = where
    else:
        values = _read_file(path)
        folder = where.parent
    for key in ("hadoop.ssl.server.conf", "hadoop.ssl.client.conf"):
        ssl_file = folder / values.get(key, DEFAULTS[key])
        if ssl_file.is_file() and ssl_file != where:
            values = {**_read_file(str(ssl_file)), **values}
    return values


def _read_file(path: str) -> dict[str, str]:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc.strerror}") from exc
    if text.lstrip().startswith(("<?xml", "<configuration", "<!--")):
        return _read_xml(path, text)
    values = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{path}:{number}: expected 'key = value', got {line!r}")
        values[key.strip()] = value.strip()
    return values


VARIABLE = re.compile(r"\$\{([^}$\s]+)\}")


def _read_xml(path: str, text: str) -> dict[str, str]:
    """Hadoop's XML configuration format (``Configuration.loadResource``)."""
    import xml.etree.ElementTree as ElementTree  # only for XML files
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ConfigError(f"{path}: not a Hadoop configuration file: {exc}") from exc
    if root.tag != "configuration":
        raise ConfigError(f"{path}: expected <configuration>, got <{root.tag}>")
    values: dict[str, str] = {}
    for number, prop in enumerate(root.iter("property"), 1):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name is None or not name.strip():
            raise ConfigError(f"{path}: property {number} has no <name>")
        values[name.strip()] = (value or "").strip()
    return values


def _expand(values: dict[str, str]) -> dict[str, str]:
    """``${name}`` replaced by name's value, as ``Configuration.substituteVars``."""
    out = dict(values)
    for key, value in out.items():
        for _ in range(20):
            expanded = VARIABLE.sub(lambda m: out.get(m.group(1), m.group(0)), value)
            if expanded == value:
                break
            value = expanded
        out[key] = value
    return out
