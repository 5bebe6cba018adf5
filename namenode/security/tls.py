"""TLS on the web ports: the server's context from ``ssl-server.xml``'s keys, as Hadoop's
``FileBasedKeyStoresFactory`` builds its ``SSLFactory`` for ``HttpServer2``'s HTTPS connector.

``ssl.server.keystore.type`` says what ``ssl.server.keystore.location`` holds:

* ``pem`` (nnlite's documented choice) -- one PEM file with the private key and the
  certificate chain, server certificate first; ``ssl.server.keystore.keypassword`` (else
  ``.password``) decrypts an encrypted key.
* ``pkcs12`` -- read with the ``cryptography`` package when it is installed (the field's
  maintained reader of PKCS#12); without it, the error names the ``openssl`` line that turns
  the store into a PEM file.
* ``jks`` (Hadoop's default) -- no maintained Python reader exists: the error names the
  ``keytool`` line that converts it to PKCS#12.

The context offers TLS 1.2 and later (Hadoop's ``hadoop.ssl.enabled.protocols`` default is
TLSv1.2). Every failure is one ``ConfigError`` naming the key and the file.

``etcd_context``: the client side of the HA journal's etcd over TLS with client certificates
(``nnlite.ha.etcd.ssl.ca``, ``.cert``, ``.key``), for members run with etcd's
``--client-cert-auth --trusted-ca-file``.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from nnlite.client.errors import BadArgumentError
from nnlite.client.etcd.client import EtcdTLS, tls_context
from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security.settings import HTTP_POLICIES

KEYSTORE_TYPES = ("pem", "pkcs12", "jks")
JKS_HINT = ("keytool -importkeystore -srckeystore {path} -destkeystore {path}.p12 "
            "-deststoretype pkcs12")
PKCS12_HINT = "openssl pkcs12 -in {path} -nodes -out {path}.pem"


def web_ports(config: Config) -> tuple[bool, bool]:
    """Whether ``dfs.http.policy`` serves (HTTP, HTTPS): ``HttpConfig.Policy``'s
    ``isHttpEnabled`` and ``isHttpsEnabled``, for a daemon that reads no other secure key
    (the secondary); the namenode takes them from ``SecuritySettings``."""
    policy = config.get("dfs.http.policy").strip().upper()
    if policy not in HTTP_POLICIES:
        raise ConfigError(f"dfs.http.policy must be one of {', '.join(HTTP_POLICIES)}, "
                          f"not {config.get('dfs.http.policy')!r}")
    return policy != "HTTPS_ONLY", policy != "HTTP_ONLY"


def server_context(config: Config) -> ssl.SSLContext:
    """The HTTPS listener's context from ``ssl.server.keystore.*``."""
    path = config.get("ssl.server.keystore.location").strip()
    kind = config.get("ssl.server.keystore.type").strip().lower() or "jks"
    if not path:
        raise ConfigError("dfs.http.policy serves HTTPS: ssl.server.keystore.location must "
                          "name the keystore (ssl-server.xml beside the configuration)")
    if kind not in KEYSTORE_TYPES:
        raise ConfigError(f"ssl.server.keystore.type must be one of "
                          f"{', '.join(KEYSTORE_TYPES)}, not {kind!r}")
    if not os.path.isfile(path):
        raise ConfigError(f"ssl.server.keystore.location: no file {path}")
    password = (config.get("ssl.server.keystore.keypassword")
                or config.get("ssl.server.keystore.password"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if kind == "jks":
        raise ConfigError(f"ssl.server.keystore.type jks cannot be read here: convert "
                          f"{path} with `{JKS_HINT.format(path=path)}` and set the type "
                          f"pkcs12, or use a PEM file (type pem)")
    if kind == "pkcs12":
        _load_pkcs12(context, path, config.get("ssl.server.keystore.password"))
    else:
        _load_pem(context, path, password or None)
    return context


def _load_pem(context: ssl.SSLContext, path: str, password: str | None) -> None:
    try:
        context.load_cert_chain(path, password=password)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"ssl.server.keystore.location {path} is not a PEM file of a "
                          f"private key and its certificate chain (or the keypassword is "
                          f"wrong): {exc}") from exc


def _load_pkcs12(context: ssl.SSLContext, path: str, password: str) -> None:
    """PKCS#12 through ``cryptography``, handed to ``ssl`` as PEM in a private temp file
    (``load_cert_chain`` reads files only), removed at once."""
    try:
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption,
            Encoding,
            PrivateFormat,
            pkcs12,
        )
    except ImportError:
        raise ConfigError(f"ssl.server.keystore.type pkcs12 needs the cryptography package; "
                          f"or convert {path} with `{PKCS12_HINT.format(path=path)}` and "
                          f"set the type pem") from None
    secret = password.encode() if password else None
    try:
        with open(path, "rb") as f:
            key, cert, chain = pkcs12.load_key_and_certificates(f.read(), secret)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"ssl.server.keystore.location {path} is not a PKCS#12 store "
                          f"that ssl.server.keystore.password opens: {exc}") from exc
    if key is None or cert is None:
        raise ConfigError(f"ssl.server.keystore.location {path} holds no private key "
                          f"with its certificate")
    pem_password = os.urandom(16).hex().encode()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                            BestAvailableEncryption(pem_password))
    pem += b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *chain])
    with tempfile.NamedTemporaryFile(prefix="nnlite-tls-", suffix=".pem") as tmp:
        tmp.write(pem)
        tmp.flush()
        _load_pem(context, tmp.name, pem_password.decode())


def etcd_context(config: Config) -> EtcdTLS | None:
    """The TLS of the HA journal's etcd client (``nnlite.ha.etcd.ssl.ca``, ``.cert``,
    ``.key``: members run with ``--client-cert-auth --trusted-ca-file``), None when no CA
    or certificate is configured (http endpoints, or https trusting the system's CAs)."""
    ca, cert, key = (config.get(f"nnlite.ha.etcd.ssl.{k}").strip()
                     for k in ("ca", "cert", "key"))
    if not ca and not cert:
        return None
    if cert and not key:
        raise ConfigError("nnlite.ha.etcd.ssl.cert needs nnlite.ha.etcd.ssl.key, the "
                          "certificate's private key")
    try:
        return tls_context(ca, cert, key)
    except BadArgumentError as exc:
        raise ConfigError(str(exc)) from exc
