"""SASL on Hadoop's IPC connection in secure mode: the negotiation ``Server.Connection``
runs (``saslReadAndProcess``, ``processSaslMessage``, ``buildSaslNegotiateResponse``) with
the mechanisms of ``SaslRpcServer``, and the GSSAPI mechanism itself.

The exchange (every message an ``RpcSaslProto`` under call id -33)::

    client NEGOTIATE
    server NEGOTIATE  auths: TOKEN/DIGEST-MD5 (protocol "", server id "default", the first
                      digest-challenge already in it), KERBEROS/GSSAPI (protocol and server id
                      the namenode principal's service and host: "nn", "localhost")
    client INITIATE   one of those auths (without the challenge) and its first token
    server CHALLENGE  ... client RESPONSE ... as the mechanism needs
    server SUCCESS    the mechanism's last token, if any

A refusal is an ``AccessControlException`` or ``SaslException`` (``SaslRefused``) or the
mechanism's own error (an ``InvalidToken`` from the token lookup), which the transport sends
FATAL. When the negotiated qop is ``auth-int`` or ``auth-conf`` (``hadoop.rpc.protection``
integrity or privacy), every later frame travels wrapped: ``Negotiation.mechanism`` wraps
and unwraps, the transport frames (``WRAP``).

The mechanisms speak bytes only, so the data port's SASL (``SaslDataTransferServer``) uses
the same objects: ``GssapiServer`` here and ``digest_md5.DigestMD5Server``. Each has
``step(token) -> bytes | None``, ``complete``, ``qop``, ``security_layer``, ``wrap``,
``unwrap`` and the name it authenticated (``principal`` / ``username``).

GSSAPI is RFC 4752 over MIT Kerberos (PyPI's ``gssapi``): the context is accepted with the
namenode's keytab, then the server offers its security layers in a wrapped 4-byte message
(a bit mask -- 1 none, 2 integrity, 4 confidentiality -- and a 3-byte maximum buffer) and the
client answers the one it chose, its buffer and an optional authorization id, which must be
the principal itself (``SaslRpcServer.SaslGssCallbackHandler``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from nnlite.formats.hadoop import ipc
from nnlite.namenode.security import digest_md5
from nnlite.namenode.security.settings import SecuritySettings, short_principal_name

State = ipc.RpcSaslSaslState
TOKEN, KERBEROS = "TOKEN", "KERBEROS"               # SaslRpcServer.AuthMethod
DEFAULT_REALM = "default"                           # SaslRpcServer.SASL_DEFAULT_REALM
LAYER_NONE, LAYER_INTEGRITY, LAYER_PRIVACY = 1, 2, 4
LAYER_OF_QOP = {"auth": LAYER_NONE, "auth-int": LAYER_INTEGRITY, "auth-conf": LAYER_PRIVACY}
QOP_OF_LAYER = {bit: qop for qop, bit in LAYER_OF_QOP.items()}
MAX_BUFFER = 65536                                  # Java's GssKrb5Server default


class SaslRefused(Exception):
    """A negotiation the server refuses: Java's class and message go to the client."""
    JAVA_CLASS = "javax.security.sasl.SaslException"


class AccessRefused(SaslRefused):
    JAVA_CLASS = "org.apache.hadoop.security.AccessControlException"


class Mechanism(Protocol):
    complete: bool
    qop: str | None

    def step(self, token: bytes) -> bytes | None: ...

    @property
    def authorization_id(self) -> str | None: ...

    @property
    def security_layer(self) -> bool: ...

    def wrap(self, message: bytes) -> bytes: ...

    def unwrap(self, data: bytes) -> bytes: ...


def _gssapi() -> Any:
    try:
        import gssapi
    except ImportError as exc:      # the `kerberos` extra is not installed
        raise RuntimeError("Kerberos needs PyPI's gssapi (pip install 'nnlite[kerberos]', or "
                           "make kerberos)") from exc
    return gssapi


def acceptor_credentials(principal: str, keytab: str) -> Any:
    """The credentials that accept tickets for ``principal`` with ``keytab``'s keys (read
    once; RuntimeError naming both when they cannot be had)."""
    gssapi = _gssapi()
    try:
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        return gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab})
    except gssapi.exceptions.GSSError as exc:
        raise RuntimeError(f"cannot accept Kerberos tickets as {principal} with keytab "
                           f"{keytab}: {exc.gen_message()}") from exc


class GssapiServer:
    """SASL GSSAPI's server side (Java's ``GssKrb5Server``) for one connection."""

    def __init__(self, credentials: Any, qops: tuple[str, ...]) -> None:
        self.gssapi = _gssapi()
        self.context = self.gssapi.SecurityContext(creds=credentials, usage="accept")
        self.offered = 0
        for qop in qops:
            self.offered |= LAYER_OF_QOP[qop]
        self.principal: str | None = None
        self.qop: str | None = None
        self.complete = False
        self._stage = 0

    def step(self, token: bytes) -> bytes | None:
        try:
            if self._stage == 0:
                return self._accept(token)
            if self._stage == 1:
                if token:
                    raise SaslRefused("Handshake expecting no response data from server")
                return self._offer()
            self._choose(token)
            return None
        except self.gssapi.exceptions.GSSError as exc:
            raise SaslRefused(f"GSS initiate failed: {exc.gen_message()}") from exc

    def _accept(self, token: bytes) -> bytes | None:
        reply = self.context.step(token)
        if not self.context.complete:
            return reply or b""
        self.principal = str(self.context.initiator_name)
        self._stage = 1
        return reply if reply else self._offer()

    def _offer(self) -> bytes:
        self._stage = 2
        offer = bytes((self.offered,)) + MAX_BUFFER.to_bytes(3, "big")
        return self.context.wrap(offer, False).message

    def _choose(self, token: bytes) -> None:
        answer = self.context.unwrap(token).message
        if len(answer) < 4:
            raise SaslRefused("Final handshake response is too short")
        chosen = answer[0]
        if chosen not in QOP_OF_LAYER or not chosen & self.offered:
            raise SaslRefused(f"Client selected unsupported protection: {chosen}")
        authzid = answer[4:].decode("utf-8") if len(answer) > 4 else self.principal
        if authzid != self.principal:
            raise SaslRefused(f"{self.principal} is not authorized to act as {authzid}")
        self.qop = QOP_OF_LAYER[chosen]
        self.complete = True

    @property
    def authorization_id(self) -> str | None:
        """The principal the context authenticated (``getAuthorizationID``)."""
        return self.principal

    @property
    def security_layer(self) -> bool:
        return self.qop in ("auth-int", "auth-conf")

    # every frame of a wrapping connection passes here: gssapi.raw's functions take a
    # fifth of the time of SecurityContext's decorated methods (3-5 us against 14-22)

    def wrap(self, message: bytes) -> bytes:
        return self.gssapi.raw.wrap(self.context, message, self.qop == "auth-conf").message

    def unwrap(self, data: bytes) -> bytes:
        try:
            return self.gssapi.raw.unwrap(self.context, data).message
        except self.gssapi.exceptions.GSSError as exc:
            raise SaslRefused(f"Problems unwrapping SASL buffer: {exc.gen_message()}") \
                from exc


@dataclass(frozen=True)
class Offer:
    """One entry of the NEGOTIATE answer (``RpcSaslProto.SaslAuth``)."""
    method: str
    mechanism: str
    protocol: str
    server_id: str

    def proto(self, challenge: bytes | None = None) -> Any:
        auth = ipc.RpcSaslSaslAuth(method=self.method, mechanism=self.mechanism,
                                   protocol=self.protocol, serverId=self.server_id)
        if challenge is not None:
            auth.challenge = challenge
        return auth

    def matches(self, auth: Any) -> bool:
        return (auth.method, auth.mechanism, auth.protocol, auth.serverId) == \
            (self.method, self.mechanism, self.protocol, self.server_id)


class SaslRpcServer:
    """What a secure IPC server authenticates with, set up once: its GSSAPI credentials,
    its qops (``hadoop.rpc.protection``) and the password of a token's identifier
    (``token_password``: the namesystem's secret manager, ``retrievePassword``; it raises
    ``InvalidToken`` for a token it does not know)."""

    def __init__(self, principal: str, credentials: Any, qops: tuple[str, ...],
                 token_password: Callable[[bytes], bytes]) -> None:
        service, _, rest = principal.partition("/")
        host = rest.partition("@")[0]
        if not service or not host:
            raise RuntimeError(f"Kerberos principal name does NOT have the expected hostname "
                               f"part: {principal}")
        self.principal = principal
        self.credentials = credentials
        self.qops = qops
        self.token_password = token_password
        self.offers = (Offer(TOKEN, "DIGEST-MD5", "", DEFAULT_REALM),
                       Offer(KERBEROS, "GSSAPI", short_principal_name(principal), host))

    @classmethod
    def from_settings(cls, settings: SecuritySettings,
                      token_password: Callable[[bytes], bytes]) -> SaslRpcServer:
        return cls(settings.namenode_principal,
                   acceptor_credentials(settings.namenode_principal, settings.namenode_keytab),
                   digest_md5.qops_for(settings.rpc_protection), token_password)

    @property
    def available(self) -> str:
        """``enabledAuthMethods`` as Java prints the list: ``[TOKEN, KERBEROS]``."""
        return "[" + ", ".join(o.method for o in self.offers) + "]"

    def negotiation(self) -> Negotiation:
        return Negotiation(self)

    def mechanism(self, method: str) -> Mechanism:
        if method == TOKEN:
            return digest_md5.DigestMD5Server(self._digest_password, protocol="",
                                              server_id=DEFAULT_REALM, qops=self.qops)
        return GssapiServer(self.credentials, self.qops)

    def _digest_password(self, username: str) -> str:
        identifier = digest_md5.token_identifier(username)
        return digest_md5.token_password(self.token_password(identifier))


class Negotiation:
    """One connection's SASL state (``Server.Connection``'s ``sentNegotiate``,
    ``saslServer``, ``saslContextEstablished``, ``useWrap``)."""

    def __init__(self, server: SaslRpcServer) -> None:
        self.server = server
        self.sent_negotiate = False
        self.method: str | None = None
        self.mechanism: Mechanism | None = None
        self.established = False

    @property
    def wraps(self) -> bool:
        """Whether frames travel wrapped from now on (a qop other than ``auth``)."""
        return self.established and self.mechanism is not None and \
            self.mechanism.security_layer

    @property
    def authenticated(self) -> str:
        """The name the mechanism proved: a principal (KERBEROS) or a token's SASL user name,
        the base64 of its identifier (TOKEN)."""
        name = self.mechanism.authorization_id if self.mechanism is not None else None
        assert self.established and name
        return name

    def process(self, message: Any) -> Any:
        """The answer to the client's ``message`` (an ``RpcSaslProto``)."""
        if self.established:
            raise SaslRefused("Negotiation is already complete")
        state = message.state
        if state == State.NEGOTIATE:
            if self.sent_negotiate:
                raise AccessRefused("Client already attempted negotiation")
            return self._negotiate()
        if state == State.INITIATE:
            return self._initiate(message)
        if state == State.RESPONSE:
            if self.mechanism is None:
                raise SaslRefused("Client sent a response before initiating")
            return self._token(message)
        raise SaslRefused(f"Client sent unsupported state {State.Name(state)}")

    def _negotiate(self) -> Any:
        """``buildSaslNegotiateResponse``: the offers, the digest-challenge in TOKEN's."""
        self.sent_negotiate = True
        self.method, self.mechanism = TOKEN, self.server.mechanism(TOKEN)
        challenge = self.mechanism.step(b"")
        auths = [offer.proto(challenge if offer.method == TOKEN else None)
                 for offer in self.server.offers]
        return ipc.RpcSaslProto(state=State.NEGOTIATE, auths=auths)

    def _initiate(self, message: Any) -> Any:
        if len(message.auths) != 1:
            raise SaslRefused("Client mechanism is malformed")
        auth = message.auths[0]
        if not any(offer.matches(auth) for offer in self.server.offers):
            if self.sent_negotiate:
                raise AccessRefused(f"{auth.method} authentication is not enabled.  "
                                    f"Available:{self.server.available}")
            return self._negotiate()
        if self.mechanism is None or auth.method != TOKEN:
            self.mechanism = self.server.mechanism(auth.method)
        self.method = auth.method
        return self._token(message)

    def _token(self, message: Any) -> Any:
        if not message.HasField("token"):
            raise SaslRefused("Client did not send a token")
        assert self.mechanism is not None
        reply = self.mechanism.step(message.token)
        answer = ipc.RpcSaslProto(state=State.SUCCESS if self.mechanism.complete
                                  else State.CHALLENGE)
        if reply is not None:
            answer.token = reply
        self.established = self.mechanism.complete
        return answer
