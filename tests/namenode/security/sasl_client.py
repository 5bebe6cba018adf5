"""A Hadoop IPC client that speaks SASL the way ``SaslRpcClient`` does, on
``tests/namenode/rpc/rawclient.py``'s socket: NEGOTIATE, then Kerberos GSSAPI (PyPI's
gssapi as the initiator, from a ticket cache) or DIGEST-MD5 with a token
(``digest_md5.DigestMD5Client``), the security layer both ways once the qop asks for it.
For the tests that send what real clients do not (a forged token, a context naming someone
else, frames out of turn)."""

from __future__ import annotations

import socket

from nnlite.formats.hadoop import client_namenode, ipc
from nnlite.formats.hadoop.proto import delimited, parse_delimited
from nnlite.namenode.security import digest_md5
from tests.namenode.rpc.rawclient import CLIENT_ID, RawClient
from tests.namenode.security.digest_client import forge as forged

State = ipc.RpcSaslSaslState
LAYERS = {"auth": 1, "auth-int": 2, "auth-conf": 4}


class Refused(Exception):
    """The server's FATAL answer: its Java class and message."""

    def __init__(self, header) -> None:
        super().__init__(f"{header.exceptionClassName}: {header.errorMsg}")
        self.java_class = header.exceptionClassName
        self.message = header.errorMsg
        self.header = header


def sasl_frame(message) -> bytes:
    header = ipc.RpcRequestHeaderProto(
        rpcKind=ipc.RpcKindProto.RPC_PROTOCOL_BUFFER,
        rpcOp=ipc.RpcRequestHeaderOperationProto.RPC_FINAL_PACKET,
        callId=ipc.SASL_CALL_ID, clientId=b"", retryCount=-1)
    return ipc.frame(delimited(header, message))


class SaslClient(RawClient):
    """``connect`` is SASL's: ``kerberos(ccache, qop)`` or ``token(identifier, password,
    qop)``, then ``context(user)``; calls as RawClient's, wrapped when the qop wraps."""

    def __init__(self, port: int, timeout: float = 10) -> None:
        super().__init__(port, timeout)
        # as Hadoop's client (ipc.client.tcpnodelay): the exchange's small messages go out
        # at once instead of waiting on the previous one's delayed ACK
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.layer = None              # what wraps and unwraps once established
        self._plain = b""
        self.negotiated = None

    # ------------------------------------------------------------------ exchange

    def negotiate(self):
        self.send(ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_SASL).to_bytes())
        self.send(sasl_frame(ipc.RpcSaslProto(state=State.NEGOTIATE)))
        self.negotiated = self.sasl_answer()
        return self.negotiated

    def sasl_answer(self):
        """The next SASL message from the server; Refused on a FATAL answer."""
        answer = super().response()
        assert answer is not None, "the server closed the connection"
        header, rest = answer
        if header.status != ipc.RpcResponseHeaderRpcStatusProto.SUCCESS:
            raise Refused(header)
        assert header.callId == ipc.SASL_CALL_ID & 0xFFFFFFFF, header
        return parse_delimited(ipc.RpcSaslProto, rest)[0]

    def offer(self, method: str):
        return next(a for a in self.negotiated.auths if a.method == method)

    def initiate(self, method: str, token: bytes):
        auth = self.offer(method)
        chosen = ipc.RpcSaslSaslAuth(method=auth.method, mechanism=auth.mechanism,
                                     protocol=auth.protocol, serverId=auth.serverId)
        self.send(sasl_frame(ipc.RpcSaslProto(state=State.INITIATE, auths=[chosen],
                                              token=token)))
        return self.sasl_answer()

    def respond(self, token: bytes):
        self.send(sasl_frame(ipc.RpcSaslProto(state=State.RESPONSE, token=token)))
        return self.sasl_answer()

    def kerberos(self, ccache, qop: str = "auth") -> SaslClient:
        """GSSAPI as the principal of ``ccache`` (RFC 4752's client)."""
        import gssapi
        self.negotiate()
        auth = self.offer("KERBEROS")
        creds = gssapi.Credentials(usage="initiate", store={"ccache": str(ccache)})
        target = gssapi.Name(f"{auth.protocol}@{auth.serverId}",
                             gssapi.NameType.hostbased_service)
        ctx = gssapi.SecurityContext(name=target, creds=creds, usage="initiate",
                                     flags=gssapi.RequirementFlag.mutual_authentication)
        answer = self.initiate("KERBEROS", ctx.step())
        while not ctx.complete:
            token = ctx.step(answer.token)
            answer = self.respond(token or b"")
        if answer.state == State.CHALLENGE and not answer.HasField("token"):
            answer = self.respond(b"")
        offer = ctx.unwrap(answer.token).message
        assert answer.state == State.CHALLENGE and offer[0] & LAYERS[qop], offer
        reply = bytes((LAYERS[qop],)) + (65536).to_bytes(3, "big")
        answer = self.respond(ctx.wrap(reply, False).message)
        assert answer.state == State.SUCCESS, answer
        if qop != "auth":
            self.layer = _Gss(ctx, qop == "auth-conf")
        return self

    def token(self, identifier: bytes, password: bytes, qop: str = "auth",
              **forge: str) -> SaslClient:
        """DIGEST-MD5 with a token; ``forge`` overrides the response's directives."""
        self.negotiate()
        auth = self.offer("TOKEN")
        client = digest_md5.DigestMD5Client(digest_md5.token_username(identifier),
                                            digest_md5.token_password(password),
                                            f"{auth.protocol}/{auth.serverId}", (qop,))
        response = client.respond(auth.challenge)
        answer = self.initiate("TOKEN", forged(response, **forge) if forge else response)
        assert answer.state == State.SUCCESS, answer
        client.verify(answer.token)
        if qop != "auth":
            self.layer = client
        return self

    def context(self, user: str = "", real_user: str | None = None,
                protocol: str = client_namenode.PROTOCOL) -> SaslClient:
        self.send(ipc.connection_context(CLIENT_ID, protocol, user, real_user))
        return self

    # ------------------------------------------------------------------ framing

    def send(self, data: bytes) -> None:
        if self.layer is not None:
            data = sasl_frame(ipc.RpcSaslProto(state=State.WRAP, token=self.layer.wrap(data)))
        super().send(data)

    def response(self):
        if self.layer is None:
            return super().response()
        while len(self._plain) < 4 or \
                len(self._plain) < 4 + int.from_bytes(self._plain[:4], "big"):
            answer = super().response()
            if answer is None:
                return None
            header, rest = answer
            if header.status != ipc.RpcResponseHeaderRpcStatusProto.SUCCESS:
                return answer       # a FATAL answer before wrapping settled
            message = parse_delimited(ipc.RpcSaslProto, rest)[0]
            assert header.callId == ipc.SASL_CALL_ID & 0xFFFFFFFF
            assert message.state == State.WRAP, message
            self._plain += self.layer.unwrap(message.token)
        length = int.from_bytes(self._plain[:4], "big")
        payload, self._plain = self._plain[4:4 + length], self._plain[4 + length:]
        return ipc.parse_response(payload)


class _Gss:
    def __init__(self, ctx, encrypt: bool) -> None:
        self.ctx, self.encrypt = ctx, encrypt

    def wrap(self, data: bytes) -> bytes:
        return self.ctx.wrap(data, self.encrypt).message

    def unwrap(self, data: bytes) -> bytes:
        result = self.ctx.unwrap(data)
        assert result.encrypted == self.encrypt
        return result.message
