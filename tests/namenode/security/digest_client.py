"""A DIGEST-MD5 client for the tests (RFC 2831's client side, as Java's ``DigestMD5Client``
and hdfs-native's ``DigestSaslSession`` answer a challenge): the response to a challenge,
the check of ``rspauth`` and the client's half of the security layer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from nnlite.namenode.security.digest_md5 import (
    CLIENT_SEAL,
    CLIENT_SIGN,
    MAC_SIZE,
    MESSAGE_TYPE,
    SEQ,
    SERVER_SEAL,
    SERVER_SIGN,
    _triple_des,
    parse_directives,
    response_value,
    session_hash,
)


class DigestClient:
    def __init__(self, username: str, password: str, digest_uri: str, qop: str = "auth",
                 cnonce: str | None = None, cipher: str = "3des") -> None:
        self.username, self.password, self.digest_uri = username, password, digest_uri
        self.qop, self.cipher = qop, cipher
        self.cnonce = cnonce or base64.b64encode(os.urandom(12)).decode()
        self.rspauth = ""
        self.ha1 = b""
        self.send_seq = self.receive_seq = 0
        self.encryptor = self.decryptor = None

    def respond(self, challenge: bytes, **override: str) -> bytes:
        """The digest-response to ``challenge``; ``override`` replaces directives (a forged
        response)."""
        fields = parse_directives(challenge)
        realm, nonce = fields["realm"], fields["nonce"]
        self.ha1 = session_hash(self.username, realm, self.password, nonce, self.cnonce)
        response = response_value(self.ha1, nonce, "00000001", self.cnonce, self.qop,
                                  self.digest_uri, initial=True)
        self.rspauth = response_value(self.ha1, nonce, "00000001", self.cnonce, self.qop,
                                      self.digest_uri, initial=False)
        values = {"username": f'"{self.username}"', "realm": f'"{realm}"',
                  "nonce": f'"{nonce}"', "cnonce": f'"{self.cnonce}"', "nc": "00000001",
                  "qop": self.qop, "digest-uri": f'"{self.digest_uri}"',
                  "response": response, "charset": "utf-8"}
        if self.qop == "auth-conf":
            values["cipher"] = f'"{self.cipher}"'
        values.update(override)
        if self.qop == "auth-conf":
            self.encryptor = _triple_des(hashlib.md5(self.ha1 + CLIENT_SEAL).digest()) \
                .encryptor()
            self.decryptor = _triple_des(hashlib.md5(self.ha1 + SERVER_SEAL).digest()) \
                .decryptor()
        return ",".join(f"{k}={v}" for k, v in values.items()).encode()

    def verify(self, server_final: bytes) -> bool:
        return server_final == f"rspauth={self.rspauth}".encode()

    def wrap(self, message: bytes) -> bytes:
        key = hashlib.md5(self.ha1 + CLIENT_SIGN).digest()
        seq = SEQ.pack(self.send_seq)
        self.send_seq += 1
        mac = hmac.new(key, seq + message, hashlib.md5).digest()[:MAC_SIZE]
        if self.encryptor is None:
            return message + mac + MESSAGE_TYPE + seq
        pad = 8 - (len(message) + MAC_SIZE) % 8
        return self.encryptor.update(message + bytes((pad,)) * pad + mac) + MESSAGE_TYPE + seq

    def unwrap(self, data: bytes) -> bytes:
        key = hashlib.md5(self.ha1 + SERVER_SIGN).digest()
        seq, body = data[-4:], data[:-6]
        assert SEQ.unpack(seq)[0] == self.receive_seq
        self.receive_seq += 1
        if self.decryptor is not None:
            plain = self.decryptor.update(body)
            body = plain[:-MAC_SIZE - plain[-MAC_SIZE - 1]] + plain[-MAC_SIZE:]
        message, mac = body[:-MAC_SIZE], body[-MAC_SIZE:]
        assert hmac.compare_digest(
            mac, hmac.new(key, seq + message, hashlib.md5).digest()[:MAC_SIZE])
        return message
