"""Certificates for the TLS tests, made with ``openssl`` in a test's own directory: a CA, and
a server certificate it signed for 127.0.0.1 and localhost, as PEM files, with the stores
Hadoop's clients read (a PKCS#12 truststore from Java's ``keytool``).

``Certificates.make(folder)`` -> ``ca`` (the CA certificate, PEM), ``server_pem`` (key +
chain in one PEM file: ``ssl.server.keystore.type`` pem), ``server_key``/``server_cert``,
``truststore(password)`` (PKCS#12 of the CA, for ``ssl-client.xml``), and
``server_defines()`` / ``client_xml()`` for a namenode's keys and a JVM client's file, and
``client(name)``, a client certificate (etcd's ``--client-cert-auth``).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SUBJECT_ALT = "subjectAltName=IP:127.0.0.1,DNS:localhost"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@dataclass(frozen=True)
class Certificates:
    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def server_key(self) -> Path:
        return self.folder / "server.key"

    @property
    def server_cert(self) -> Path:
        return self.folder / "server.crt"

    @property
    def server_pem(self) -> Path:
        return self.folder / "server.pem"

    @classmethod
    def make(cls, folder: Path, name: str = "server") -> Certificates:
        folder.mkdir(parents=True, exist_ok=True)
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
                 "-out", "ca.pem", "-days", "2", "-subj", "/CN=nnlite test CA", cwd=folder)
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", "/CN=localhost", cwd=folder)
        (folder / "san.ext").write_text(SUBJECT_ALT + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile",
                 "san.ext", cwd=folder)
        certs = cls(folder)
        certs.server_pem.write_bytes(certs.server_key.read_bytes()
                                     + certs.server_cert.read_bytes()
                                     + certs.ca.read_bytes())
        return certs

    def client(self, name: str) -> tuple[Path, Path]:
        """A client certificate ``CN=<name>`` the CA signed, and its key (PEM files): what
        a member run with ``--client-cert-auth`` asks of its clients."""
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.csr", "-subj", f"/CN={name}", cwd=self.folder)
        (self.folder / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile",
                 "client.ext", cwd=self.folder)
        return self.folder / f"{name}.crt", self.folder / f"{name}.key"

    def pkcs12(self, password: str) -> Path:
        """The server's key and chain as a PKCS#12 keystore."""
        _openssl("pkcs12", "-export", "-in", str(self.server_cert), "-inkey",
                 str(self.server_key), "-certfile", str(self.ca), "-passout",
                 f"pass:{password}", "-out", "server.p12", cwd=self.folder)
        return self.folder / "server.p12"

    def truststore(self, password: str) -> Path:
        """The CA in a PKCS#12 truststore made by Java's keytool (ssl-client.xml's)."""
        store = self.folder / "truststore.p12"
        keytool = shutil.which("keytool") or "keytool"
        subprocess.run([keytool, "-importcert", "-noprompt", "-alias", "nnlite-ca", "-file",
                        str(self.ca), "-keystore", str(store), "-storetype", "pkcs12",
                        "-storepass", password], check=True, capture_output=True)
        return store

    def server_defines(self, policy: str = "HTTP_AND_HTTPS") -> list[str]:
        """``-D`` values for a namenode serving HTTPS on a free port with the PEM keystore."""
        return [f"dfs.http.policy={policy}", "dfs.namenode.https-address=127.0.0.1:0",
                f"ssl.server.keystore.location={self.server_pem}",
                "ssl.server.keystore.type=pem"]

    def client_xml(self, password: str) -> Path:
        """An ``ssl-client.xml`` naming the truststore, as Hadoop's ``SSLFactory`` reads it."""
        store = self.truststore(password)
        path = self.folder / "ssl-client.xml"
        path.write_text(
            "<configuration>"
            f"<property><name>ssl.client.truststore.location</name><value>{store}</value>"
            "</property><property><name>ssl.client.truststore.type</name><value>pkcs12"
            "</value></property><property><name>ssl.client.truststore.password</name>"
            f"<value>{password}</value></property></configuration>\n")
        return path
