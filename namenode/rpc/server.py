"""The namenode's Hadoop IPC endpoint (``dfs.namenode.rpc-address``): connections, frames,
calls and their answers, on the namenode's event loop (``org.apache.hadoop.ipc.Server``'s
role; the bytes are ``formats/hadoop/ipc.py``'s).

A connection:

1. The 7-byte preamble. Not ``hrpc``: a FATAL answer and close (an HTTP ``GET`` gets
   Hadoop's plain-text hint instead). A version other than 9: FATAL ``RPC$VersionMismatch``.
   SASL (auth protocol 0xDF): a simple-authentication server answers the client's NEGOTIATE
   with SUCCESS, as Hadoop's ``buildNegotiateResponse`` does when SIMPLE is its only method,
   and the client goes on without SASL.
   In secure mode (``sasl``: ``namenode/security/sasl.py``) SASL is required: a preamble
   without it is answered FATAL ``AccessControlException`` "SIMPLE authentication is not
   enabled.  Available:[TOKEN, KERBEROS]" (``Server.initializeAuthContext``), and the SASL
   exchange (Kerberos GSSAPI, or DIGEST-MD5 with a delegation token) must succeed before the
   context; a refusal is FATAL under call id -33 with the Java class of its cause
   (``InvalidToken`` for a forged, expired or cancelled token). With a qop other than
   ``auth`` every later frame, both ways, travels inside ``RpcSaslProto`` WRAP messages
   under call id -33 (``Server.wrapWithSasl``, ``unwrapPacketAndProcessRpcs``).
2. The connection context (call id -3): the effective user, and the real user when a proxy
   user acts for it, checked by the ``hadoop.proxyuser.*`` rules WebHDFS's ``doas`` follows
   (``namenode/security/``); refused: FATAL ``AuthorizationException``. A call
   before the context: FATAL. In secure mode the user is the authenticated one
   (``kerberos_caller``: its ``auth_to_local`` short name; ``token_caller``: the token's
   owner); the context's user only asks for a proxy (Kerberos; refused with a token).
3. Calls, each answered by call id, in any order: the method's handler
   (``client_protocol.py``) runs on the loop; its answer is sent once every op logged before
   it is durable (``AsyncCommitter``), so a write is acknowledged only after its sync and a
   read never shows an op a crash could take back. An operation's error is an ERROR answer
   with the Java class the namenode error carries (``JAVA_CLASS``), its message and
   ``ERROR_APPLICATION``; an unknown method is ``RpcNoSuchMethodException``, another
   protocol ``RpcNoSuchProtocolException``; the connection stays open.
4. A frame longer than ``ipc.maximum.data.length``, or one whose headers or request do not
   parse: FATAL, then the connection is closed. Other connections are not affected.

While the namespace loads (``RpcServer.starting``: the port is bound before the image is
read, as the HTTP port is), every call is answered ``RetriableException`` "NameNode still not
started", as ``NameNodeRpcServer.checkNNStartup`` answers before ``NameNode.isStarted``:
Hadoop's client backs off and asks again instead of meeting a refused connection. ``serve``
hands the server its protocol once the namespace is in.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast

from nnlite.formats.errors import FormatError
from nnlite.formats.hadoop import ipc
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.ipc import RpcResponseHeaderRpcErrorCodeProto as Code
from nnlite.formats.hadoop.ipc import RpcResponseHeaderRpcStatusProto as Status
from nnlite.formats.hadoop.proto import ProtoError
from nnlite.formats.hadoop.writable import WritableError
from nnlite.namenode import errors
from nnlite.namenode.datanode.tokens import BlockTokenSecretManager
from nnlite.namenode.fsnamesystem import FSNamesystem, Identity
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.listen import address_error
from nnlite.namenode.rpc import errors as rpc_errors
from nnlite.namenode.security import identity as auth
from nnlite.namenode.security.auth_to_local import AuthToLocal, AuthToLocalError
from nnlite.namenode.security.identity import Caller, effective_user
from nnlite.namenode.security.proxy_users import ImpersonationError, ProxyUsers
from nnlite.namenode.security.sasl import KERBEROS, Negotiation, SaslRpcServer
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.tokens import DelegationTokenIdentifier

log = logging.getLogger(__name__)
# who a token proves: (identifier, the context's user, the client's address) -> the caller
TokenCaller = Callable[[bytes, "str | None", str], Caller]

HTTP_HINT = (b"HTTP/1.1 404 Not Found\r\nContent-type: text/plain\r\n\r\n"
             b"It looks like you are making an HTTP request to a Hadoop IPC port. This is not "
             b"the correct port for the web interface on this daemon.\r\n")
DUMMY_CALL_ID = -1
IO_EXCEPTION = "java.io.IOException"
# NameNodeRpcServer.checkNNStartup's message (``nn.getRole() + " still not started"``)
STARTING = "NameNode still not started"


class Service(Protocol):
    """What a server serves: the protocol's Java name, its table of method name -> (request
    class, response class), and the handlers of the methods served (``ClientProtocol``; the
    datanode's ``ClientDatanodeService``)."""
    PROTOCOL: str
    METHODS: dict[str, tuple[Any, Any]]
    handlers: dict[str, Callable[[Any, Any], Any]]


class RpcServer:
    """The listening socket and its connections, serving one protocol (``protocol`` None:
    not yet, ``starting``)."""

    def __init__(self, protocol: Service | None, fs: FSNamesystem | None,
                 committer: AsyncCommitter | None, proxy_users: ProxyUsers | None = None,
                 max_data_length: int = ipc.MAX_DATA_LENGTH,
                 identity: Identity | None = None) -> None:
        self.protocol = protocol
        self.fs = fs
        self.committer = committer
        # who is in which group (the proxy-user rules): the namesystem's, or the config's
        # before it is loaded
        self.identity = identity if identity is not None else (
            fs.identity if fs is not None else Identity())
        self.proxy_users = proxy_users or ProxyUsers({})
        self.max_data_length = max_data_length
        # secure mode: SASL required, who a connection is (None: simple authentication)
        self.sasl: SaslRpcServer | None = None
        self.auth_to_local = AuthToLocal()
        self.token_caller: TokenCaller = self.delegation_caller
        self.connections: set[Connection] = set()
        self.calls = 0
        self.fatal = 0
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    @classmethod
    def starting(cls, identity: Identity, proxy_users: ProxyUsers,
                 max_data_length: int = ipc.MAX_DATA_LENGTH,
                 security: SecuritySettings | None = None) -> RpcServer:
        """A server to bind before the namespace loads: connections are taken (preamble,
        SASL in secure mode, context, proxy users by ``identity``'s groups), every call is
        answered RetriableException until ``serve``."""
        server = cls(None, None, None, proxy_users, max_data_length, identity)
        if security is not None and security.enabled:
            server.secure(security)
        return server

    def secure(self, settings: SecuritySettings,
               token_password: Callable[[bytes], bytes] | None = None,
               token_caller: TokenCaller | None = None) -> None:
        """Secure mode: every connection authenticates with SASL (Kerberos with the
        namenode's keytab, or a token) and is the user it proved to be. The tokens are the
        namesystem's delegation tokens unless ``token_password`` and ``token_caller`` say
        otherwise (the datanode's IPC port: block tokens, as a DataNode's IPC server takes
        them through its ``BlockPoolTokenSecretManager``)."""
        self.sasl = SaslRpcServer.from_settings(settings, token_password or self.token_password)
        self.auth_to_local = AuthToLocal(settings.auth_to_local,
                                         settings.namenode_principal.partition("@")[2])
        self.token_caller = token_caller or self.delegation_caller

    def delegation_caller(self, identifier: bytes, requested: str | None,
                          machine: str) -> Caller:
        """Who a connection holding a delegation token is: its owner (``token_caller``)."""
        return auth.token_caller(DelegationTokenIdentifier.decode(identifier), requested,
                                 machine, self.auth_to_local)

    def token_password(self, identifier: bytes) -> bytes:
        """DIGEST-MD5's secret: the password of a live token's identifier (Hadoop's
        ``retrievePassword``); ``InvalidToken`` for one the namesystem does not know."""
        if self.fs is None:
            raise errors.RetriableError(STARTING)
        lookup = getattr(self.fs, "delegation_token_password", None)
        if lookup is None:          # a namesystem that keeps no delegation tokens
            raise errors.InvalidTokenError("token can't be found in cache")
        return lookup(identifier)

    def serve(self, protocol: Service, fs: FSNamesystem, committer: AsyncCommitter) -> None:
        """The namespace is in: from the next call on, ``protocol`` answers."""
        self.fs, self.committer = fs, committer
        self.protocol = protocol

    async def start(self, host: str, port: int) -> int:
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(lambda: Connection(self), host, port,
                                                    reuse_address=True, backlog=1024)
        except OSError as exc:
            raise address_error(host, port, exc) from exc
        # through Any: uvloop's ``sockets`` is a list where typeshed says tuple, and a
        # compiled build (bench/bench_mypyc.py) checks the declared type at run time
        self.port = cast(Any, self._server).sockets[0].getsockname()[1]
        return self.port

    def metrics(self) -> dict:
        """Counters for /jmx and /metrics: calls received, connections open, connections
        closed with a FATAL answer."""
        return {"RpcCalls": self.calls, "RpcOpenConnections": len(self.connections),
                "RpcFatalConnections": self.fatal}

    async def stop(self, grace: float = 10.0) -> None:
        """Stop accepting, give in-flight calls ``grace`` seconds, close every connection."""
        if self._server is not None:
            self._server.close()
        pending = [t for c in self.connections for t in c.tasks]
        if pending:
            await asyncio.wait(pending, timeout=grace)
        for connection in list(self.connections):
            connection.close()
        if self._server is not None:
            await self._server.wait_closed()


class Connection(asyncio.Protocol):
    """One client connection: its user once the context arrived, its calls in flight.
    Frames are cut from the bytes as they arrive and handled in the same callback, and the
    answers ready then leave in one write: one pass of the loop per batch of calls."""

    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.machine = ""
        self.caller: Caller | None = None
        self.sasl = False
        self.negotiation: Negotiation | None = None     # secure mode's SASL state
        self._plain = bytearray()        # unwrapped bytes not yet a whole frame
        self._wrapping = False           # answers leave wrapped (a qop past auth)
        self._unwrapping = False         # dispatching frames a WRAP message carried
        self.tasks: set[asyncio.Task] = set()
        self.closed = False
        self._buf = bytearray()
        self._preamble_done = False
        self._out: list[bytes] = []      # answers not yet handed to the transport
        self._reading = False            # inside data_received: its end flushes

    # ------------------------------------------------------------------ reading

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.machine = peer[0] if peer else ""
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._out.clear()
        self.server.connections.discard(self)

    def pause_writing(self) -> None:     # a client not reading its answers: stop reading
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        self._buf += data
        self._reading = True
        try:
            self._handle_frames()
        except rpc_errors.FatalRpcError as exc:
            self._fatal(getattr(exc, "call_id", DUMMY_CALL_ID), exc)
            self.close()
        except ProtoError as exc:
            self._fatal(DUMMY_CALL_ID, rpc_errors.BadRequestError(str(exc)))
            self.close()
        except Exception:
            log.exception("RPC connection from %s failed", self.machine)
            self.close()
        finally:
            self._reading = False
            self._flush()

    def _handle_frames(self) -> None:
        """Handle every whole frame in the buffer; a partial one waits for more bytes."""
        buf = self._buf
        start = 0
        try:
            if not self._preamble_done:
                if len(buf) < ipc.PREAMBLE_SIZE:
                    return
                start = ipc.PREAMBLE_SIZE
                if not self._preamble(bytes(buf[:start])):
                    self.close()
                    return
            start = self._cut(buf, start)
        finally:
            del buf[:start]

    def _cut(self, buf: bytearray, start: int) -> int:
        """Dispatch every whole frame of ``buf`` from ``start``; where the next one starts."""
        while not self.closed and len(buf) - start >= 4:
            try:
                length = ipc.frame_length(buf[start:start + 4], self.server.max_data_length)
            except ProtoError as exc:
                raise rpc_errors.FatalRpcError(
                    f"{exc}. RPC came from {self.machine}") from None
            end = start + 4 + length
            if len(buf) < end:
                break
            payload = bytes(buf[start + 4:end])
            start = end
            try:
                call = ipc.parse_call(payload)
            except ProtoError as exc:
                raise rpc_errors.BadRequestError(
                    f"IPC server unable to read call header: {exc}") from None
            if not self._dispatch(call):
                self.close()
                break
        return start

    def _preamble(self, data: bytes) -> bool:
        self._preamble_done = True
        if data[:4] == b"GET ":
            self._write(HTTP_HINT)
            return False
        try:
            preamble = ipc.Preamble.parse(data)
        except ProtoError as exc:
            raise rpc_errors.FatalRpcError(str(exc)) from None
        if preamble.version != ipc.VERSION:
            raise rpc_errors.VersionMismatchError(
                f"Server IPC version {ipc.VERSION} cannot communicate with client version "
                f"{preamble.version}")
        if preamble.auth_protocol not in (ipc.AUTH_NONE, ipc.AUTH_SASL):
            raise rpc_errors.FatalRpcError(
                f"Unknown auth protocol:{preamble.auth_protocol}")
        self.sasl = preamble.auth_protocol == ipc.AUTH_SASL
        secure = self.server.sasl
        if secure is not None:
            if not self.sasl:
                raise SaslFatal(f"SIMPLE authentication is not enabled.  "
                                f"Available:{secure.available}", ACCESS_CONTROL, DUMMY_CALL_ID)
            self.negotiation = secure.negotiation()
        return True

    def _dispatch(self, call: ipc.Call) -> bool:
        call_id = call.header.callId
        if call.header.rpcOp == ipc.RpcRequestHeaderOperationProto.RPC_CLOSE_CONNECTION:
            return False
        if call_id == ipc.SASL_CALL_ID:
            if self.negotiation is not None:
                self._sasl(call)
            else:
                self._negotiate(call)
        elif call_id == ipc.CONNECTION_CONTEXT_CALL_ID:
            self._context(call)
        elif call_id == ipc.PING_CALL_ID:
            pass
        elif call_id < 0:
            raise rpc_errors.FatalRpcError(f"Unknown out of band call #{call_id}")
        elif self.caller is None:
            raise rpc_errors.FatalRpcError("Connection context not established")
        else:
            self._call(call)
        return True

    def _negotiate(self, call: ipc.Call) -> None:
        """SIMPLE is the only method: NEGOTIATE is answered SUCCESS (no SASL follows)."""
        message = ipc.parse_body(ipc.RpcSaslProto, call.body) if call.body else None
        if not self.sasl or message is None or \
                message.state != ipc.RpcSaslSaslState.NEGOTIATE:
            raise rpc_errors.UnauthorizedError(
                "SASL is not enabled: this namenode uses simple authentication")
        header = ipc.RpcResponseHeaderProto(callId=ipc.SASL_CALL_ID & 0xFFFFFFFF,
                                            status=Status.SUCCESS,
                                            serverIpcVersionNum=ipc.VERSION)
        self._queue(ipc.response(header, ipc.RpcSaslProto(
            state=ipc.RpcSaslSaslState.SUCCESS)))
        self.sasl = False

    # ------------------------------------------------------------------ secure mode

    def _sasl(self, call: ipc.Call) -> None:
        """A SASL message in secure mode (``saslReadAndProcess``): the next step of the
        exchange, or once it is established and wraps, frames wrapped inside."""
        negotiation = self.negotiation
        assert negotiation is not None
        try:
            message = ipc.parse_body(ipc.RpcSaslProto, call.body)
        except ProtoError as exc:
            raise rpc_errors.BadRequestError(str(exc)) from None
        if message.state == ipc.RpcSaslSaslState.WRAP:
            if not negotiation.wraps or self._unwrapping:
                raise rpc_errors.FatalRpcError("Server is not wrapping data")
            self._unwrap(message.token)
            return
        try:
            reply = negotiation.process(message)
        except Exception as exc:
            raise sasl_refusal(exc) from None
        header = ipc.RpcResponseHeaderProto(callId=ipc.SASL_CALL_ID & 0xFFFFFFFF,
                                            status=Status.SUCCESS,
                                            serverIpcVersionNum=ipc.VERSION)
        self._queue(ipc.response(header, reply))
        if negotiation.wraps:       # only after the last exchange's answer
            self._flush()
            self._wrapping = True

    def _unwrap(self, token: bytes) -> None:
        """The frames a WRAP message carries, dispatched as if they came unwrapped."""
        assert self.negotiation is not None and self.negotiation.mechanism is not None
        try:
            self._plain += self.negotiation.mechanism.unwrap(token)
        except Exception as exc:
            raise sasl_refusal(exc) from None
        self._unwrapping = True
        try:
            del self._plain[:self._cut(self._plain, 0)]
        finally:
            self._unwrapping = False

    def _seal(self, frame: bytes) -> bytes:
        """``frame`` as it goes out: wrapped under call id -33 once the qop asks for it."""
        if not self._wrapping:
            return frame
        assert self.negotiation is not None and self.negotiation.mechanism is not None
        return ipc.wrapped_response(self.negotiation.mechanism.wrap(frame))

    def _secure_caller(self, context: Any) -> Caller:
        """Who an authenticated connection is: the principal or the token's owner; the
        context's effective user only asks to act as another (a Kerberos proxy user)."""
        negotiation = self.negotiation
        if negotiation is None or not negotiation.established:
            raise rpc_errors.FatalRpcError("Connection header sent during SASL negotiation")
        requested = context.userInfo.effectiveUser or None
        server = self.server
        try:
            if negotiation.method == KERBEROS:
                return auth.kerberos_caller(
                    negotiation.authenticated, requested, self.machine, server.auth_to_local,
                    server.proxy_users, lambda name: server.identity.caller(name).groups)
            return server.token_caller(base64.b64decode(negotiation.authenticated),
                                       requested, self.machine)
        except ImpersonationError as impersonation:
            reason = str(impersonation).rpartition("AuthorizationException: ")[2]
            raise rpc_errors.UnauthorizedError(reason) from None
        except (errors.AccessControlError, AuthToLocalError) as refused:
            raise SaslFatal(str(refused), ACCESS_CONTROL,
                            ipc.CONNECTION_CONTEXT_CALL_ID) from None
        except errors.NamenodeError as bad:       # a token identifier that does not parse
            raise SaslFatal(str(bad), bad.JAVA_CLASS, ipc.CONNECTION_CONTEXT_CALL_ID) from None

    def _context(self, call: ipc.Call) -> None:
        try:
            context = ipc.parse_body(ipc.IpcConnectionContextProto, call.body)
        except ProtoError as exc:
            raise rpc_errors.BadRequestError(str(exc)) from None
        if self.server.sasl is not None:
            self.caller = self._secure_caller(context)
            return
        user, real = context.userInfo.effectiveUser, context.userInfo.realUser
        if not user:
            raise rpc_errors.UnauthorizedError("The connection context names no user")
        try:
            user = effective_user(real or user, user, self.server.proxy_users,
                                  lambda name: self.server.identity.caller(name).groups,
                                  self.machine)
        except errors.AccessControlError as refused:
            reason = str(refused).rpartition("AuthorizationException: ")[2]
            raise rpc_errors.UnauthorizedError(reason) from None
        self.caller = Caller(user, self.machine)

    # ------------------------------------------------------------------ calls

    def _call(self, call: ipc.Call) -> None:
        assert call.method is not None and self.caller is not None
        self.server.calls += 1
        fs = self.server.fs
        if fs is None:          # still loading (``starting``)
            self._answer_error(call, errors.RetriableError(STARTING))
            return
        before, generation = fs.last_written_txid, fs.generation
        try:
            result = self._invoke(call)
        except Exception as exc:
            self._answer_error(call, exc)
            return
        if asyncio.iscoroutine(result):
            task = asyncio.ensure_future(self._finish(call, result))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:       # a call that logged nothing may be asked again (``_released``)
            self._deliver(call, result, generation if fs.last_written_txid == before else None)

    def _invoke(self, call: ipc.Call) -> Any:
        method: Any = call.method
        service = self.server.protocol
        assert service is not None
        if method.declaringClassProtocolName != service.PROTOCOL:
            raise rpc_errors.NoSuchProtocolError(
                f"Unknown protocol: {method.declaringClassProtocolName}")
        handler = service.handlers.get(method.methodName)
        classes = service.METHODS.get(method.methodName)
        if handler is None or classes is None:
            if classes is not None:
                raise errors.UnsupportedOperationError(
                    f"{method.methodName} is not supported by this namenode (nnlite)")
            raise rpc_errors.NoSuchMethodError(
                f"Unknown method {method.methodName} called on {service.PROTOCOL} protocol.")
        try:
            request = ipc.parse_body(classes[0], call.body)
        except ProtoError as exc:
            raise rpc_errors.RpcServerError(f"Cannot read the {method.methodName} request: "
                                            f"{exc}") from None
        assert self.caller is not None
        return handler(request, self.caller)

    async def _finish(self, call: ipc.Call, coroutine: Awaitable[Any]) -> None:
        try:
            message = await coroutine
        except Exception as exc:
            self._answer_error(call, exc)
            return
        self._deliver(call, message)

    def _deliver(self, call: ipc.Call, message: Any, generation: int | None = None) -> None:
        """Send ``message`` once every op logged so far is durable. ``generation``: the call
        logged nothing itself, and its answer was made at that generation of the journal."""
        fs, committer = self.server.fs, self.server.committer
        assert fs is not None and committer is not None
        written = fs.last_written_txid
        if fs.last_synced_txid >= written:
            self._send(call, message)
        else:
            committer.durable(written, message).then(self._released,
                                                                  (call, generation))

    def _released(self, message: Any, error: Exception | None,
                  held: tuple[ipc.Call, int | None]) -> None:
        call, generation = held
        if error is None:
            self._send(call, message)
        elif generation is not None and isinstance(error, errors.SharedJournalError):
            # A call that changed nothing, held behind ops the shared journal refused: asked
            # again on the reloaded tree once they are dropped, as WebHDFS's HeldRead, so a
            # read neither shows those ops nor fails because a write did.
            committer = self.server.committer
            assert committer is not None
            committer.after_reload(generation, lambda: self._call(call))
        else:
            self._answer_error(call, error)

    # ------------------------------------------------------------------ writing

    def _header(self, call: ipc.Call, status: int) -> Any:
        return ipc.RpcResponseHeaderProto(
            callId=call.header.callId & 0xFFFFFFFF, status=status, serverIpcVersionNum=ipc.VERSION,
            clientId=call.header.clientId, retryCount=call.header.retryCount,
            stateId=0 if self.server.fs is None else self.server.fs.last_written_txid)

    def _send(self, call: ipc.Call, message: Any) -> None:
        fs = self.server.fs
        self._queue(ipc.success_response(call.header, 0 if fs is None else fs.last_written_txid,
                                         message.SerializeToString()))

    def _queue(self, frame: bytes) -> None:
        """Answers go out together: those of one ``data_received`` at its end, those released
        later (a sync, a coroutine) once the callbacks due in this turn of the loop ran: one
        write (one system call) for a batch of calls rather than one per answer."""
        if self.closed:
            return
        if not self._out and not self._reading:
            asyncio.get_running_loop().call_soon(self._flush)
        self._out.append(self._seal(frame) if self._wrapping else frame)

    def _flush(self) -> None:
        if self._out and not self.closed:
            self._write(b"".join(self._out))
        self._out.clear()

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _answer_error(self, call: ipc.Call, exc: Exception) -> None:
        java_class, code = describe(exc)
        header = self._header(call, Status.FATAL if getattr(exc, "FATAL", False)
                              else Status.ERROR)
        header.exceptionClassName, header.errorMsg, header.errorDetail = \
            java_class, str(exc), code
        self._queue(ipc.response(header))

    def _fatal(self, call_id: int, exc: rpc_errors.FatalRpcError) -> None:
        log.info("RPC connection from %s closed: %s", self.machine, exc)
        self.server.fatal += 1
        header = ipc.RpcResponseHeaderProto(
            callId=call_id & 0xFFFFFFFF, status=Status.FATAL, serverIpcVersionNum=ipc.VERSION,
            exceptionClassName=exc.JAVA_CLASS, errorMsg=str(exc), errorDetail=exc.ERROR_CODE)
        self._flush()                   # what was answered before, then this, then the close
        if not self.closed:
            self._write(self._seal(ipc.response(header)))

    def close(self) -> None:
        if not self.closed:
            self._flush()
            self.closed = True
            if self.transport is not None:
                self.transport.close()


def block_token_password(tokens: BlockTokenSecretManager | None) -> Callable[[bytes], bytes]:
    """DIGEST-MD5's secret on a datanode's IPC port: a block token's password
    (``BlockTokenSecretManager.retrievePassword``); InvalidToken without block tokens."""
    def password(identifier: bytes) -> bytes:
        if tokens is None:
            raise errors.InvalidTokenError("Block tokens are not enabled "
                                           "(dfs.block.access.token.enable)")
        try:
            return tokens.password(BlockTokenIdentifier.decode(identifier))
        except WritableError as exc:
            raise errors.InvalidTokenError(f"not a block token identifier: {exc}") from None
    return password


def block_token_caller(identifier: bytes, requested: str | None, machine: str) -> Caller:
    """Who a connection holding a block token is (a DataNode's IPC port): the token's user
    (``BlockTokenIdentifier.getUser``); a context naming someone else is refused, as for any
    token (``Server.processConnectionContext``). The caller carries the identifier, whose
    block and mode each call checks (``DataNode.checkReadAccess``)."""
    try:
        ident = BlockTokenIdentifier.decode(identifier)
    except WritableError as exc:
        raise errors.InvalidTokenError(f"not a block token identifier: {exc}") from None
    user = ident.user_id
    if requested and requested != user:
        raise auth.TokenImpersonationError(
            f"Authenticated user ({user} (auth:TOKEN)) doesn't match what the client claims "
            f"to be ({requested})")
    return Caller(user, machine, "TOKEN", token=ident)


class SaslFatal(rpc_errors.FatalRpcError):
    """A secure connection refused (``FATAL_UNAUTHORIZED``), under the Java class of the
    refusal's cause, as ``Server.saslProcess`` sends ``getTrueCause``."""
    ERROR_CODE = Code.FATAL_UNAUTHORIZED

    def __init__(self, message: str, java_class: str,
                 call_id: int = ipc.SASL_CALL_ID) -> None:
        super().__init__(message)
        self.JAVA_CLASS = java_class
        self.call_id = call_id


ACCESS_CONTROL = "org.apache.hadoop.security.AccessControlException"


def sasl_refusal(exc: Exception) -> SaslFatal:
    """The FATAL answer to a failed SASL step: the Java class its error carries (the
    mechanism's ``SaslException``, the token lookup's ``InvalidToken``, a
    ``RetriableException`` while the namespace loads)."""
    java_class = getattr(exc, "JAVA_CLASS", None)
    if java_class is None:
        log.error("SASL negotiation failed", exc_info=exc)
        java_class = "javax.security.sasl.SaslException"
    return SaslFatal(str(exc), java_class)


def describe(exc: Exception) -> tuple[str, int]:
    """(Java exception class, RPC error code) of an error answered to a call."""
    if isinstance(exc, rpc_errors.RpcServerError):
        return exc.JAVA_CLASS, exc.ERROR_CODE
    if isinstance(exc, errors.NamenodeError):
        return exc.JAVA_CLASS, Code.ERROR_APPLICATION
    if isinstance(exc, (FormatError, OSError)):
        return IO_EXCEPTION, Code.ERROR_APPLICATION
    log.error("internal error answering an RPC call", exc_info=exc)
    return "java.lang.RuntimeException", Code.ERROR_APPLICATION
