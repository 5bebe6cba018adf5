"""The namenode's Hadoop IPC endpoint (``dfs.namenode.rpc-address``): connections, frames,
calls and their answers, on the namenode's event loop (``org.apache.hadoop.ipc.Server``'s
role; the bytes are ``formats/hadoop/ipc.py``'s).

A connection:

1. The 7-byte preamble. Not ``hrpc``: a FATAL answer and close (an HTTP ``GET`` gets
   Hadoop's plain-text hint instead). A version other than 9: FATAL ``RPC$VersionMismatch``.
   SASL (auth protocol 0xDF): a simple-authentication server answers the client's NEGOTIATE
   with SUCCESS, as Hadoop's ``buildNegotiateResponse`` does when SIMPLE is its only method,
   and the client goes on without SASL.
2. The connection context (call id -3): the effective user, and the real user when a proxy
   user acts for it, checked by the ``hadoop.proxyuser.*`` rules WebHDFS's ``doas`` follows
   (``namenode/http/impersonation.py``); refused: FATAL ``AuthorizationException``. A call
   before the context: FATAL.
3. Calls, each answered by call id, in any order: the method's handler
   (``client_protocol.py``) runs on the loop; its answer is sent once every op logged before
   it is durable (``AsyncCommitter``), so a write is acknowledged only after its sync and a
   read never shows an op a crash could take back. An operation's error is an ERROR answer
   with the Java class the namenode error carries (``JAVA_CLASS``), its message and
   ``ERROR_APPLICATION``; an unknown method is ``RpcNoSuchMethodException``, another
   protocol ``RpcNoSuchProtocolException``; the connection stays open.
4. A frame longer than ``ipc.maximum.data.length``, or one whose headers or request do not
   parse: FATAL, then the connection is closed. Other connections are not affected.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Protocol

from nnlite.formats.errors import FormatError
from nnlite.formats.hadoop import ipc
from nnlite.formats.hadoop.ipc import RpcResponseHeaderRpcErrorCodeProto as Code
from nnlite.formats.hadoop.ipc import RpcResponseHeaderRpcStatusProto as Status
from nnlite.formats.hadoop.proto import ProtoError
from nnlite.namenode import errors
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http.impersonation import ProxyUsers
from nnlite.namenode.http.server import address_error
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.rpc import errors as rpc_errors
from nnlite.namenode.rpc.client_protocol import Caller

log = logging.getLogger(__name__)

HTTP_HINT = (b"HTTP/1.1 404 Not Found\r\nContent-type: text/plain\r\n\r\n"
             b"It looks like you are making an HTTP request to a Hadoop IPC port. This is not "
             b"the correct port for the web interface on this daemon.\r\n")
DUMMY_CALL_ID = -1
IO_EXCEPTION = "java.io.IOException"


class Service(Protocol):
    """What a server serves: the protocol's Java name, its table of method name -> (request
    class, response class), and the handlers of the methods served (``ClientProtocol``; the
    datanode's ``ClientDatanodeService``)."""
    PROTOCOL: str
    METHODS: dict[str, tuple[Any, Any]]
    handlers: dict[str, Callable[[Any, Any], Any]]


class RpcServer:
    """The listening socket and its connections, serving one protocol."""

    def __init__(self, protocol: Service, fs: FSNamesystem, committer: AsyncCommitter,
                 proxy_users: ProxyUsers | None = None,
                 max_data_length: int = ipc.MAX_DATA_LENGTH) -> None:
        self.protocol = protocol
        self.fs = fs
        self.committer = committer
        self.proxy_users = proxy_users or ProxyUsers({})
        self.max_data_length = max_data_length
        self.connections: set[Connection] = set()
        self.calls = 0
        self.fatal = 0
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        try:
            self._server = await asyncio.start_server(self._accept, host, port,
                                                      reuse_address=True, backlog=1024)
        except OSError as exc:
            raise address_error(host, port, exc) from exc
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def metrics(self) -> dict:
        """Counters for /jmx and /metrics: calls received, connections open, connections
        closed with a FATAL answer."""
        return {"RpcCalls": self.calls, "RpcOpenConnections": len(self.connections),
                "RpcFatalConnections": self.fatal}

    async def _accept(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        connection = Connection(self, reader, writer)
        self.connections.add(connection)
        try:
            await connection.serve()
        finally:
            self.connections.discard(connection)

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


class Connection:
    """One client connection: its user once the context arrived, its calls in flight."""

    def __init__(self, server: RpcServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.machine = peer[0] if peer else ""
        self.caller: Caller | None = None
        self.sasl = False
        self.tasks: set[asyncio.Task] = set()
        self.closed = False
        self._out: list[bytes] = []      # answers not yet handed to the transport

    # ------------------------------------------------------------------ reading

    async def serve(self) -> None:
        try:
            if await self._preamble():
                while not self.closed and await self._frame():
                    await self.writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass                        # the client went away, possibly mid-frame
        except rpc_errors.FatalRpcError as exc:
            self._fatal(DUMMY_CALL_ID, exc)
        except ProtoError as exc:
            self._fatal(DUMMY_CALL_ID, rpc_errors.BadRequestError(str(exc)))
        except Exception:
            log.exception("RPC connection from %s failed", self.machine)
        finally:
            self.close()

    async def _preamble(self) -> bool:
        data = await self.reader.readexactly(ipc.PREAMBLE_SIZE)
        if data[:4] == b"GET ":
            self.writer.write(HTTP_HINT)
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
        return True

    async def _frame(self) -> bool:
        """Read and handle one frame; False once the client closed the connection."""
        try:
            prefix = await self.reader.readexactly(4)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise
            return False
        try:
            length = ipc.frame_length(prefix, self.server.max_data_length)
        except ProtoError as exc:
            raise rpc_errors.FatalRpcError(f"{exc}. RPC came from {self.machine}") from None
        payload = await self.reader.readexactly(length)
        try:
            call = ipc.parse_call(payload)
        except ProtoError as exc:
            raise rpc_errors.BadRequestError(f"IPC server unable to read call header: {exc}") \
                from None
        return self._dispatch(call)

    def _dispatch(self, call: ipc.Call) -> bool:
        call_id = call.header.callId
        if call.header.rpcOp == ipc.RpcRequestHeaderOperationProto.RPC_CLOSE_CONNECTION:
            return False
        if call_id == ipc.SASL_CALL_ID:
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
        self.writer.write(ipc.response(header, ipc.RpcSaslProto(
            state=ipc.RpcSaslSaslState.SUCCESS)))
        self.sasl = False

    def _context(self, call: ipc.Call) -> None:
        try:
            context = ipc.parse_body(ipc.IpcConnectionContextProto, call.body)
        except ProtoError as exc:
            raise rpc_errors.BadRequestError(str(exc)) from None
        user, real = context.userInfo.effectiveUser, context.userInfo.realUser
        if not user:
            raise rpc_errors.UnauthorizedError("The connection context names no user")
        if real and real != user:
            try:
                self.server.proxy_users.authorize(
                    real, user, self.server.fs.caller(user).groups, self.machine)
            except errors.AccessControlError as exc:
                reason = str(exc).rpartition("AuthorizationException: ")[2]
                raise rpc_errors.UnauthorizedError(reason) from None
        self.caller = Caller(user, self.machine)

    # ------------------------------------------------------------------ calls

    def _call(self, call: ipc.Call) -> None:
        assert call.method is not None and self.caller is not None
        self.server.calls += 1
        try:
            result = self._invoke(call)
        except Exception as exc:
            self._answer_error(call, exc)
            return
        if asyncio.iscoroutine(result):
            task = asyncio.ensure_future(self._finish(call, result))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:
            self._deliver(call, result)

    def _invoke(self, call: ipc.Call) -> Any:
        method: Any = call.method
        service = self.server.protocol
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

    async def _finish(self, call: ipc.Call, coroutine) -> None:
        try:
            message = await coroutine
        except Exception as exc:
            self._answer_error(call, exc)
            return
        self._deliver(call, message)

    def _deliver(self, call: ipc.Call, message: Any) -> None:
        """Send ``message`` once every op logged so far is durable."""
        fs = self.server.fs
        written = fs.last_written_txid
        if fs.last_synced_txid >= written:
            self._send(call, message)
        else:
            self.server.committer.durable(written, message).then(self._released, call)

    def _released(self, message: Any, error: Exception | None, call: ipc.Call) -> None:
        if error is not None:
            self._answer_error(call, error)
        else:
            self._send(call, message)

    # ------------------------------------------------------------------ writing

    def _header(self, call: ipc.Call, status: int) -> Any:
        return ipc.RpcResponseHeaderProto(
            callId=call.header.callId & 0xFFFFFFFF, status=status, serverIpcVersionNum=ipc.VERSION,
            clientId=call.header.clientId, retryCount=call.header.retryCount,
            stateId=self.server.fs.last_written_txid)

    def _send(self, call: ipc.Call, message: Any) -> None:
        self._queue(ipc.response(self._header(call, Status.SUCCESS), message))

    def _queue(self, frame: bytes) -> None:
        """Answers go out together once the frames read so far are handled: one write (one
        system call) for a batch of pipelined calls rather than one per answer."""
        if self.closed:
            return
        if not self._out:
            asyncio.get_running_loop().call_soon(self._flush)
        self._out.append(frame)

    def _flush(self) -> None:
        if self._out and not self.closed:
            self.writer.write(b"".join(self._out))
        self._out.clear()

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
            self.writer.write(ipc.response(header))

    def close(self) -> None:
        if not self.closed:
            self._flush()
            self.closed = True
            self.writer.close()


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
