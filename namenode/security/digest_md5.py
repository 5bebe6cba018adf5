"""The server side of SASL DIGEST-MD5 (RFC 2831), the mechanism of Hadoop's TOKEN
authentication: the IPC port's delegation tokens (``SaslRpcServer``) and the data port's
block tokens (``SaslDataTransferServer``).

No maintained Python package implements the server side (``pure-sasl`` and ``aiosasl`` are
clients; Cyrus SASL's server needs its own password database), so the exchange is written
here from the RFC and checked with its examples; the hashes are ``hashlib``'s and
``hmac``'s, the cipher is ``cryptography``'s.

The exchange, one round::

    server  digest-challenge   realm="<realm>",nonce="<nonce>",qop="auth,auth-int,auth-conf",
                               charset=utf-8,cipher="3des",algorithm=md5-sess
    client  digest-response    username="<id>",realm=,nonce=,cnonce=,nc=00000001,qop=,
                               digest-uri="<protocol>/<server id>",response=<32 hex>[,cipher=]
    server  response-auth      rspauth=<32 hex>

    A1       = MD5(username ":" realm ":" password) ":" nonce ":" cnonce [":" authzid]
    A2       = "AUTHENTICATE:" digest-uri [":" 32 zeros, for auth-int and auth-conf]
    response = HEX(MD5(HEX(MD5(A1)) ":" nonce ":" nc ":" cnonce ":" qop ":" HEX(MD5(A2))))

``rspauth`` is the same with A2 starting ":" instead of "AUTHENTICATE:". Hadoop's names:
``username`` is the base64 of the token's identifier and the password the base64 of its
password (``SaslRpcServer.encodeIdentifier`` / ``encodePassword``: ``token_username``,
``token_password``); the IPC port's realm and server id are ``default`` and its protocol is
empty (digest-uri ``/default``), the data port's are ``0`` and ``hdfs`` (``hdfs/0``).

Security layers (after the exchange, ``wrap``/``unwrap``; ``MAC`` = the first 10 bytes of
HMAC-MD5(Ki, seqnum || message), ``seqnum`` 4 bytes big-endian, one counter each way)::

    auth-int   message || MAC || 0x0001 || seqnum
    auth-conf  3DES-CBC(Kc, message || padding || MAC) || 0x0001 || seqnum

    Ki  = MD5(MD5(A1) || "Digest session key to {client-to-server|server-to-client} signing
              key magic constant")
    Kc  = MD5(MD5(A1) || "Digest H(A1) to {client-to-server|server-to-client} sealing key
              magic constant")

The only cipher offered is ``3des`` (two-key triple DES: keys from Kc's bytes 0-6 and 7-13
with DES parity, the CBC chain starting at Kc's bytes 8-15 and running on across messages):
the strongest one Java's ``DigestMD5Client`` chooses first, and the only one hdfs-native's
client speaks. The RC4 ciphers are left out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import struct
from collections.abc import Callable, Iterable

QOPS = ("auth", "auth-int", "auth-conf")
# hadoop.rpc.protection's names for the qops (SaslRpcServer.QualityOfProtection)
PROTECTION_QOP = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}
CIPHER = "3des"
MAX_BUFFER = 65536
MAC_SIZE = 10
SEQ = struct.Struct(">I")
MESSAGE_TYPE = b"\x00\x01"
ZEROS = ":" + "0" * 32
DIRECTIVE = re.compile(r'\s*([A-Za-z0-9-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^,\s]*)\s*(?:,|$)')
CLIENT_SIGN = b"Digest session key to client-to-server signing key magic constant"
SERVER_SIGN = b"Digest session key to server-to-client signing key magic constant"
CLIENT_SEAL = b"Digest H(A1) to client-to-server sealing key magic constant"
SERVER_SEAL = b"Digest H(A1) to server-to-client sealing key magic constant"


class DigestError(Exception):
    """A digest-response that does not authenticate, or a wrapped message that does not
    verify (Java's ``SaslException``)."""
    JAVA_CLASS = "javax.security.sasl.SaslException"


def token_username(identifier: bytes) -> str:
    """The SASL user name of a token: its identifier in base64 (``encodeIdentifier``)."""
    return base64.b64encode(identifier).decode("ascii")


def token_identifier(username: str) -> bytes:
    """The identifier a user name carries (``decodeIdentifier``); DigestError if not base64."""
    try:
        return base64.b64decode(username.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as exc:
        raise DigestError(f"Invalid token identifier: {username!r}") from exc


def token_password(password: bytes) -> str:
    """The SASL password of a token: its password in base64 (``encodePassword``)."""
    return base64.b64encode(password).decode("ascii")


def qops_for(protections: Iterable[str]) -> tuple[str, ...]:
    """``hadoop.rpc.protection``'s values as SASL qops, in the order given."""
    return tuple(PROTECTION_QOP[p] for p in protections)


def parse_directives(data: bytes) -> dict[str, str]:
    """A digest-challenge or digest-response as its directives (quoted values unescaped);
    DigestError on text that is not a list of ``name=value``, or a name given twice."""
    text = data.decode("utf-8", errors="strict")
    directives: dict[str, str] = {}
    pos = 0
    while pos < len(text.rstrip()):
        match = DIRECTIVE.match(text, pos)
        if match is None or match.end() == pos:
            raise DigestError(f"Malformed DIGEST-MD5 directive at {pos}: {text[pos:pos + 40]!r}")
        name = match.group(1).lower()
        value = match.group(3) if match.group(3) is not None else match.group(2)
        if name in directives:
            raise DigestError(f"DIGEST-MD5: {name} given more than once")
        directives[name] = re.sub(r"\\(.)", r"\1", value) if match.group(3) is not None \
            else value
        pos = match.end()
    return directives


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data).digest()


def _hex(data: bytes) -> bytes:
    return _md5(data).hex().encode("ascii")


def _latin1(text: str) -> bytes:
    """RFC 2831 2.1.2.1: with charset=utf-8, a string all of whose characters are in
    ISO 8859-1 is hashed in ISO 8859-1, any other in UTF-8."""
    try:
        return text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def session_hash(username: str, realm: str, password: str, nonce: str, cnonce: str,
                 authzid: str | None = None) -> bytes:
    """MD5(A1): the session key every later hash and key derives from."""
    a1 = _md5(_latin1(username) + b":" + _latin1(realm) + b":" + _latin1(password))
    a1 += b":" + nonce.encode() + b":" + cnonce.encode()
    if authzid:
        a1 += b":" + authzid.encode("utf-8")
    return _md5(a1)


def response_value(ha1: bytes, nonce: str, nc: str, cnonce: str, qop: str, digest_uri: str,
                   initial: bool) -> str:
    """The client's ``response`` (``initial``) or the server's ``rspauth``, 32 hex digits."""
    a2 = ("AUTHENTICATE:" if initial else ":") + digest_uri
    if qop in ("auth-int", "auth-conf"):
        a2 += ZEROS
    kd = ha1.hex().encode() + b":" + ":".join((nonce, nc, cnonce, qop)).encode() + b":" + \
        _hex(a2.encode())
    return _md5(kd).hex()


class _Exchange:
    """What either side has once the exchange is done: the security layer of its qop."""

    _layer: _SecurityLayer | None = None       # set once the exchange completes

    @property
    def security_layer(self) -> bool:
        """Whether later messages are wrapped (qop auth-int or auth-conf)."""
        return self._layer is not None

    def wrap(self, message: bytes) -> bytes:
        """``message`` as this side sends it under the negotiated qop."""
        if self._layer is None:
            raise DigestError("DIGEST-MD5: no security layer was negotiated")
        return self._layer.wrap(message)

    def unwrap(self, data: bytes) -> bytes:
        """The message the other side's wrapped ``data`` carries; DigestError if it does
        not verify (MAC, sequence number, padding)."""
        if self._layer is None:
            raise DigestError("DIGEST-MD5: no security layer was negotiated")
        return self._layer.unwrap(data)


class DigestMD5Server(_Exchange):
    """One server side of a DIGEST-MD5 exchange: ``step(b"")`` is the challenge,
    ``step(response)`` checks the client's response and answers ``rspauth`` (``complete``
    is then True); then ``wrap`` and ``unwrap`` when the qop has a security layer.

    ``password_of(username)`` gives the password of a user name (for a token:
    ``token_password`` of the secret manager's password for ``token_identifier(username)``);
    it may raise its own exception (Hadoop's ``InvalidToken``), which passes through ``step``
    unchanged, as ``Server.getTrueCause`` sends the callback's exception to the client."""

    def __init__(self, password_of: Callable[[str], str], *, protocol: str, server_id: str,
                 realm: str | None = None, qops: Iterable[str] = ("auth",)) -> None:
        self.password_of = password_of
        self.digest_uri = f"{protocol}/{server_id}"
        self.realm = server_id if realm is None else realm
        self.qops = tuple(qops)
        for qop in self.qops:
            if qop not in QOPS:
                raise ValueError(f"not a DIGEST-MD5 qop: {qop!r}")
        self.nonce = base64.b64encode(secrets.token_bytes(30)).decode("ascii")
        self.username: str | None = None
        self.qop: str | None = None
        self.complete = False
        self._challenged = False
        self._layer = None

    def step(self, token: bytes) -> bytes:
        """The next server message for the client's ``token``."""
        if self.complete:
            raise DigestError("DIGEST-MD5 authentication has already completed")
        if not self._challenged:
            self._challenged = True
            if token:
                raise DigestError("DIGEST-MD5 expects no initial response")
            return self.challenge()
        return self._check(token)

    def challenge(self) -> bytes:
        """The digest-challenge (Java's ``DigestMD5Server.generateChallenge`` layout)."""
        parts = [f'realm="{self.realm}"', f'nonce="{self.nonce}"',
                 f'qop="{",".join(self.qops)}"', "charset=utf-8"]
        if "auth-conf" in self.qops:
            parts.append(f'cipher="{CIPHER}"')
        parts.append("algorithm=md5-sess")
        return ",".join(parts).encode("ascii")

    def _check(self, token: bytes) -> bytes:
        try:
            fields = parse_directives(token)
        except UnicodeDecodeError as exc:
            raise DigestError("DIGEST-MD5: the response is not UTF-8") from exc
        for name in ("username", "nonce", "cnonce", "nc", "digest-uri", "response"):
            if name not in fields:
                raise DigestError(f"DIGEST-MD5: digest response format violation. Missing "
                                  f"{name}.")
        qop = fields.get("qop", "auth")
        self._expect(fields.get("realm", self.realm) == self.realm,
                     f"Invalid realm: {fields.get('realm')}")
        self._expect(fields["nonce"] == self.nonce, "Nonce mismatch")
        self._expect(fields["nc"] == "00000001", f"Nonce count does not match: {fields['nc']}")
        self._expect(qop in self.qops, f"Client selected unsupported protection: {qop}")
        self._expect(fields["digest-uri"] == self.digest_uri,
                     f"Mismatched URI: {fields['digest-uri']}; expecting: {self.digest_uri}")
        if qop == "auth-conf":
            self._expect(fields.get("cipher", "").lower() == CIPHER,
                         f"Client selected unsupported cipher: {fields.get('cipher')}")
        username = fields["username"]
        authzid = fields.get("authzid") or None
        self._expect(authzid is None or authzid == username,
                     f"{username} is not authorized to act as {authzid}")
        password = self.password_of(username)
        ha1 = session_hash(username, self.realm, password, self.nonce, fields["cnonce"],
                           authzid)
        expected = response_value(ha1, self.nonce, "00000001", fields["cnonce"], qop,
                                  self.digest_uri, initial=True)
        self._expect(hmac.compare_digest(expected, fields["response"].lower()),
                     "DIGEST-MD5: digest response format violation. Mismatched response.")
        self.username, self.qop, self.complete = username, qop, True
        if qop != "auth":
            self._layer = _SecurityLayer(ha1, confidential=qop == "auth-conf")
        rspauth = response_value(ha1, self.nonce, "00000001", fields["cnonce"], qop,
                                 self.digest_uri, initial=False)
        return f"rspauth={rspauth}".encode("ascii")

    @staticmethod
    def _expect(condition: bool, message: str) -> None:
        if not condition:
            raise DigestError(message)

    @property
    def authorization_id(self) -> str | None:
        """The user name the exchange authenticated (``getAuthorizationID``)."""
        return self.username


class DigestMD5Client(_Exchange):
    """One client side of a DIGEST-MD5 exchange (``DigestMD5Client``, as a DataNode's
    ``SaslDataTransferClient`` answers a datanode it mirrors to): ``respond(challenge)``
    picks the strongest of ``qops`` the challenge offers and answers it; ``verify(rspauth)``
    checks the server; then ``wrap`` and ``unwrap`` when the qop has a security layer."""

    def __init__(self, username: str, password: str, digest_uri: str,
                 qops: Iterable[str] = ("auth",)) -> None:
        self.username, self.password, self.digest_uri = username, password, digest_uri
        self.qops = tuple(qops)
        self.cnonce = base64.b64encode(secrets.token_bytes(12)).decode("ascii")
        self.qop: str | None = None
        self.complete = False
        self._rspauth = ""
        self._ha1 = b""
        self._layer = None

    def respond(self, challenge: bytes) -> bytes:
        fields = parse_directives(challenge)
        offered = fields.get("qop", "auth").split(",")
        common = [q for q in reversed(QOPS) if q in offered and q in self.qops]
        if not common:
            raise DigestError(f"No common protection layer between client and server: "
                              f"offered {offered}, wanted {list(self.qops)}")
        self.qop = common[0]
        if self.qop == "auth-conf" and CIPHER not in fields.get("cipher", "").split(","):
            raise DigestError(f"the server offers no cipher this client speaks ({CIPHER})")
        realm, nonce = fields.get("realm", ""), fields["nonce"]
        self._ha1 = session_hash(self.username, realm, self.password, nonce, self.cnonce)
        response = response_value(self._ha1, nonce, "00000001", self.cnonce, self.qop,
                                  self.digest_uri, initial=True)
        self._rspauth = response_value(self._ha1, nonce, "00000001", self.cnonce, self.qop,
                                       self.digest_uri, initial=False)
        parts = [f'charset=utf-8,username="{self.username}"', f'realm="{realm}"',
                 f'nonce="{nonce}"', "nc=00000001", f'cnonce="{self.cnonce}"',
                 f'digest-uri="{self.digest_uri}"', f"maxbuf={MAX_BUFFER}",
                 f"response={response}", f"qop={self.qop}"]
        if self.qop == "auth-conf":
            parts.append(f"cipher={CIPHER}")
        return ",".join(parts).encode("utf-8")

    def verify(self, final: bytes) -> None:
        """DigestError unless ``final`` is the server's rspauth for this exchange."""
        if not hmac.compare_digest(final, f"rspauth={self._rspauth}".encode("ascii")):
            raise DigestError("DIGEST-MD5: the server's rspauth does not match")
        self.complete = True
        if self.qop != "auth":
            self._layer = _SecurityLayer(self._ha1, self.qop == "auth-conf", server=False)



class _SecurityLayer:
    """The integrity (and confidentiality) of the messages after the exchange: a server
    signs and seals with the server-to-client keys and checks with the client-to-server
    ones; a client (``server=False``) the other way round."""

    def __init__(self, ha1: bytes, confidential: bool, server: bool = True) -> None:
        sign, check = (SERVER_SIGN, CLIENT_SIGN) if server else (CLIENT_SIGN, SERVER_SIGN)
        seal, unseal = (SERVER_SEAL, CLIENT_SEAL) if server else (CLIENT_SEAL, SERVER_SEAL)
        self.sign_key = _md5(ha1 + sign)
        self.check_key = _md5(ha1 + check)
        self.send_seq = 0
        self.receive_seq = 0
        self.encryptor = self.decryptor = None
        if confidential:
            self.encryptor = _triple_des(_md5(ha1 + seal)).encryptor()
            self.decryptor = _triple_des(_md5(ha1 + unseal)).decryptor()

    def wrap(self, message: bytes) -> bytes:
        seq = SEQ.pack(self.send_seq)
        self.send_seq += 1
        mac = hmac.new(self.sign_key, seq + message, hashlib.md5).digest()[:MAC_SIZE]
        if self.encryptor is None:
            return message + mac + MESSAGE_TYPE + seq
        pad = 8 - (len(message) + MAC_SIZE) % 8
        sealed = self.encryptor.update(message + bytes((pad,)) * pad + mac)
        return sealed + MESSAGE_TYPE + seq

    def unwrap(self, data: bytes) -> bytes:
        if len(data) < MAC_SIZE + 6 or data[-6:-4] != MESSAGE_TYPE:
            raise DigestError("DIGEST-MD5: not a wrapped message")
        seq = data[-4:]
        if SEQ.unpack(seq)[0] != self.receive_seq:
            raise DigestError(f"DIGEST-MD5: out of order sequencing of messages from "
                              f"client. Got: {SEQ.unpack(seq)[0]} Expected: "
                              f"{self.receive_seq}")
        body = data[:-6]
        if self.decryptor is not None:
            if len(body) % 8:
                raise DigestError("DIGEST-MD5: sealed message is not whole blocks")
            plain = self.decryptor.update(body)
            message, mac = plain[:-MAC_SIZE], plain[-MAC_SIZE:]
            pad = message[-1] if message else 0
            if not 1 <= pad <= 8 or message[-pad:] != bytes((pad,)) * pad:
                raise DigestError("DIGEST-MD5: invalid padding")
            message = message[:-pad]
        else:
            message, mac = body[:-MAC_SIZE], body[-MAC_SIZE:]
        expected = hmac.new(self.check_key, seq + message, hashlib.md5).digest()[:MAC_SIZE]
        if not hmac.compare_digest(expected, mac):
            raise DigestError("DIGEST-MD5: the message's MAC does not verify")
        self.receive_seq += 1
        return message


def des_key(seven: bytes) -> bytes:
    """Seven key bytes spread over eight, each with an odd-parity low bit (a DES key)."""
    bits = int.from_bytes(seven, "big")
    out = bytearray()
    for i in range(8):
        byte = (bits >> (49 - 7 * i) << 1) & 0xFE
        out.append(byte | (bin(byte).count("1") + 1) % 2)
    return bytes(out)


def _triple_des(kc: bytes):
    """Two-key triple DES in CBC mode for the sealing key ``kc`` (RFC 2831 2.4)."""
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    from cryptography.hazmat.primitives.ciphers import Cipher, modes
    k1, k2 = des_key(kc[:7]), des_key(kc[7:14])
    return Cipher(TripleDES(k1 + k2 + k1), modes.CBC(kc[8:16]))
