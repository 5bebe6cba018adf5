"""Hadoop IPC as bytes: the connection preamble, the RPC headers (``RpcHeader.proto``,
``IpcConnectionContext.proto``, ``ProtobufRpcEngine2.proto``) and the frames of a call and
its answer.

A connection (``org.apache.hadoop.ipc.Client.Connection`` / ``Server.Connection``)::

    preamble   "hrpc" | version (1 byte, 9) | service class (1 byte) | auth protocol (1 byte:
               0 NONE, 0xDF = -33 SASL)
    frame*     length (4 bytes, big-endian: the bytes after it) | payload

A request payload is delimited messages (each preceded by its varint length):
``RpcRequestHeaderProto``, then for a call ``RequestHeaderProto`` (method and protocol
names) and the method's request message. Call ids below 0 are the IPC layer's own: -3 the
connection context (``IpcConnectionContextProto`` follows the header), -4 a ping (header
only), -33 SASL. A response payload is a delimited ``RpcResponseHeaderProto``, then on
SUCCESS the delimited response message; an ERROR or FATAL header carries the Java exception
class, its message and an error code, and nothing follows it. After FATAL the server closes
the connection.

The server refuses a frame longer than ``ipc.maximum.data.length`` (128 MiB by default,
``Server.checkDataLength``). Field numbers are Hadoop 3's; the enums nested in the headers
are top level here: ``RpcRequestHeaderOperationProto``, ``RpcResponseHeaderRpcStatusProto``,
``RpcResponseHeaderRpcErrorCodeProto``, ``RpcSaslSaslState``, ``RpcSaslSaslAuth``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from nnlite.formats.hadoop.proto import (
    ProtoError,
    Schema,
    delimited,
    parse,
    parse_delimited,
    read_varint,
    varint,
)

MAGIC = b"hrpc"
VERSION = 9                           # RpcConstants.CURRENT_VERSION
PREAMBLE_SIZE = 7
AUTH_NONE = 0                         # AuthProtocol.NONE
AUTH_SASL = 0xDF                      # AuthProtocol.SASL (-33 as a signed byte)
MAX_DATA_LENGTH = 128 << 20           # ipc.maximum.data.length's default
LENGTH = struct.Struct(">I")
CONNECTION_CONTEXT_CALL_ID = -3
PING_CALL_ID = -4
SASL_CALL_ID = -33
INVALID_CALL_ID = -2                  # RpcConstants.INVALID_CALL_ID: a frame without a call

S = Schema("nnlite.hadoop.common.ipc")

RpcKindProto = S.enum("RpcKindProto", RPC_BUILTIN=0, RPC_WRITABLE=1, RPC_PROTOCOL_BUFFER=2)
S.message("RPCTraceInfoProto",
          "optional int64 traceId = 1",
          "optional int64 parentId = 2",
          "optional bytes spanContext = 3")
S.message("RPCCallerContextProto",
          "required string context = 1",
          "optional bytes signature = 2")
RpcRequestHeaderOperationProto = S.enum("RpcRequestHeaderOperationProto", RPC_FINAL_PACKET=0,
                                        RPC_CONTINUATION_PACKET=1, RPC_CLOSE_CONNECTION=2)
S.message("RpcRequestHeaderProto",
          "optional RpcKindProto rpcKind = 1",
          "optional RpcRequestHeaderOperationProto rpcOp = 2",
          "required sint32 callId = 3",
          "required bytes clientId = 4",
          "optional sint32 retryCount = 5 [default = -1]",
          "optional RPCTraceInfoProto traceInfo = 6",
          "optional RPCCallerContextProto callerContext = 7",
          "optional int64 stateId = 8",
          "optional bytes routerFederatedState = 9")
RpcResponseHeaderRpcStatusProto = S.enum("RpcResponseHeaderRpcStatusProto", SUCCESS=0, ERROR=1,
                                         FATAL=2)
RpcResponseHeaderRpcErrorCodeProto = S.enum("RpcResponseHeaderRpcErrorCodeProto",
                                            ERROR_APPLICATION=1, ERROR_NO_SUCH_METHOD=2,
                                            ERROR_NO_SUCH_PROTOCOL=3, ERROR_RPC_SERVER=4,
                                            ERROR_SERIALIZING_RESPONSE=5,
                                            ERROR_RPC_VERSION_MISMATCH=6, FATAL_UNKNOWN=10,
                                            FATAL_UNSUPPORTED_SERIALIZATION=11,
                                            FATAL_INVALID_RPC_HEADER=12,
                                            FATAL_DESERIALIZING_REQUEST=13,
                                            FATAL_VERSION_MISMATCH=14, FATAL_UNAUTHORIZED=15)
S.message("RpcResponseHeaderProto",
          "required uint32 callId = 1",
          "required RpcResponseHeaderRpcStatusProto status = 2",
          "optional uint32 serverIpcVersionNum = 3",
          "optional string exceptionClassName = 4",
          "optional string errorMsg = 5",
          "optional RpcResponseHeaderRpcErrorCodeProto errorDetail = 6",
          "optional bytes clientId = 7",
          "optional sint32 retryCount = 8 [default = -1]",
          "optional int64 stateId = 9",
          "optional bytes routerFederatedState = 10")
RpcSaslSaslState = S.enum("RpcSaslSaslState", SUCCESS=0, NEGOTIATE=1, INITIATE=2, CHALLENGE=3,
                          RESPONSE=4, WRAP=5)
S.message("RpcSaslSaslAuth",
          "required string method = 1",
          "required string mechanism = 2",
          "optional string protocol = 3",
          "optional string serverId = 4",
          "optional bytes challenge = 5")
S.message("RpcSaslProto",
          "optional uint32 version = 1",
          "required RpcSaslSaslState state = 2",
          "optional bytes token = 3",
          "repeated RpcSaslSaslAuth auths = 4")
S.message("UserInformationProto",
          "optional string effectiveUser = 1",
          "optional string realUser = 2")
S.message("IpcConnectionContextProto",
          "optional UserInformationProto userInfo = 2",
          "optional string protocol = 3")
S.message("RequestHeaderProto",
          "required string methodName = 1",
          "required string declaringClassProtocolName = 2",
          "required uint64 clientProtocolVersion = 3")

_CLASSES = S.build()
RPCTraceInfoProto = _CLASSES["RPCTraceInfoProto"]
RPCCallerContextProto = _CLASSES["RPCCallerContextProto"]
RpcRequestHeaderProto = _CLASSES["RpcRequestHeaderProto"]
RpcResponseHeaderProto = _CLASSES["RpcResponseHeaderProto"]
RpcSaslSaslAuth = _CLASSES["RpcSaslSaslAuth"]
RpcSaslProto = _CLASSES["RpcSaslProto"]
UserInformationProto = _CLASSES["UserInformationProto"]
IpcConnectionContextProto = _CLASSES["IpcConnectionContextProto"]
RequestHeaderProto = _CLASSES["RequestHeaderProto"]


@dataclass(frozen=True, slots=True)
class Preamble:
    """The seven bytes a client sends first (``Client.Connection.writeConnectionHeader``)."""
    version: int
    service_class: int
    auth_protocol: int

    def to_bytes(self) -> bytes:
        return MAGIC + bytes((self.version, self.service_class, self.auth_protocol))

    @classmethod
    def parse(cls, data: bytes) -> Preamble:
        """ProtoError unless ``data`` is seven bytes starting with ``hrpc``."""
        if len(data) != PREAMBLE_SIZE or data[:4] != MAGIC:
            raise ProtoError(f"not a Hadoop IPC connection header: {bytes(data[:7])!r}")
        return cls(data[4], data[5], data[6])


@dataclass(frozen=True, slots=True)
class Call:
    """One request frame read: its IPC header, and for a method call the method header and
    the request's bytes (parsed by whoever knows the method's message)."""
    header: Any                      # RpcRequestHeaderProto
    method: Any | None               # RequestHeaderProto; None for the IPC layer's own ids
    body: bytes                      # the rest: a delimited request or connection context


def frame(payload: bytes) -> bytes:
    """``payload`` with its 4-byte big-endian length before it."""
    return LENGTH.pack(len(payload)) + payload


def frame_length(prefix: bytes | bytearray, limit: int = MAX_DATA_LENGTH) -> int:
    """The length in a frame's first 4 bytes; ProtoError if negative as Java's int or over
    ``limit`` (Server.checkDataLength)."""
    (length,) = LENGTH.unpack(prefix)
    if length >= 1 << 31:
        raise ProtoError(f"Unexpected data length {length - (1 << 32)}")
    if length > limit:
        raise ProtoError(f"Requested data length {length} is longer than maximum configured "
                         f"RPC length {limit}")
    return length


# RequestHeaderProto by its bytes: a client names the same few methods call after call, and
# the same bytes parse to the same header. Bounded, so that a client inventing names cannot
# grow it; the messages are shared and never changed.
_METHOD_HEADERS: dict[bytes, Any] = {}
METHOD_HEADERS_KEPT = 256


def parse_call(payload: bytes) -> Call:
    """A request frame's payload (without its length) as a Call; ProtoError if it does not
    parse. A negative call id carries no RequestHeaderProto. ``Call.method`` may be shared
    with other calls: read it, never change it."""
    header, offset = parse_delimited(RpcRequestHeaderProto, payload)
    if header.callId < 0:
        return Call(header, None, payload[offset:])
    length, start = read_varint(payload, offset)
    end = start + length
    method = _METHOD_HEADERS.get(payload[start:end]) if end <= len(payload) else None
    if method is None:
        method, end = parse_delimited(RequestHeaderProto, payload, offset)
        if len(_METHOD_HEADERS) < METHOD_HEADERS_KEPT:
            _METHOD_HEADERS[payload[start:end]] = method
    return Call(header, method, payload[end:])


def parse_body(cls: Any, body: bytes) -> Any:
    """The one delimited ``cls`` a call's body holds; ProtoError if it does not parse."""
    if not body:
        return parse(cls, b"")
    message, _ = parse_delimited(cls, body)
    return message


def request(call_id: int, client_id: bytes, method: str, protocol: str, message: Any,
            retry_count: int = 0) -> bytes:
    """A client's call frame (``ProtobufRpcEngine2.Invoker``'s layout)."""
    header = RpcRequestHeaderProto(
        rpcKind=RpcKindProto.RPC_PROTOCOL_BUFFER,
        rpcOp=RpcRequestHeaderOperationProto.RPC_FINAL_PACKET, callId=call_id,
        clientId=client_id, retryCount=retry_count)
    method_header = RequestHeaderProto(methodName=method, declaringClassProtocolName=protocol,
                                       clientProtocolVersion=1)
    return frame(delimited(header, method_header, message))


def connection_context(client_id: bytes, protocol: str, effective_user: str,
                       real_user: str | None = None) -> bytes:
    """The frame that follows the preamble: call id -3 and the IpcConnectionContextProto."""
    header = RpcRequestHeaderProto(
        rpcKind=RpcKindProto.RPC_PROTOCOL_BUFFER,
        rpcOp=RpcRequestHeaderOperationProto.RPC_FINAL_PACKET,
        callId=CONNECTION_CONTEXT_CALL_ID, clientId=client_id, retryCount=-1)
    user = UserInformationProto(effectiveUser=effective_user)
    if real_user:
        user.realUser = real_user
    return frame(delimited(header, IpcConnectionContextProto(userInfo=user, protocol=protocol)))


def response(header: Any, message: Any | None = None) -> bytes:
    """A response frame: the header, then the message on SUCCESS."""
    if message is None:
        return frame(delimited(header))
    return frame(delimited(header, message))


# RpcResponseHeaderProto's fields 2 (status SUCCESS) and 3 (serverIpcVersionNum), and the
# tags of fields 1 (callId), 7 (clientId), 8 (retryCount) and 9 (stateId)
_SUCCESS_VERSION = bytes((2 << 3, RpcResponseHeaderRpcStatusProto.SUCCESS, 3 << 3, VERSION))
_CALL_ID_TAG, _CLIENT_ID_TAG = bytes((1 << 3,)), bytes((7 << 3 | 2,))
_RETRY_TAG, _STATE_ID_TAG = bytes((8 << 3,)), bytes((9 << 3,))
UINT32, UINT64 = (1 << 32) - 1, (1 << 64) - 1


def success_response(call: Any, state_id: int, body: bytes) -> bytes:
    """The SUCCESS frame answering the call whose RpcRequestHeaderProto is ``call``, with
    ``body`` (the response message's serialized bytes): the bytes ``response`` builds from
    ``RpcResponseHeaderProto{callId, SUCCESS, VERSION, clientId, retryCount, stateId}`` and
    the message (fields in number order, as protobuf writes them), laid out directly since
    every answered call takes this path (``Server.setupResponseForProtobuf``)."""
    client_id, retry = call.clientId, call.retryCount
    head = b"".join((_CALL_ID_TAG, varint(call.callId & UINT32), _SUCCESS_VERSION,
                     _CLIENT_ID_TAG, varint(len(client_id)), client_id,
                     _RETRY_TAG, varint(((retry << 1) ^ (retry >> 31)) & UINT32),
                     _STATE_ID_TAG, varint(state_id & UINT64)))
    length = len(head) + len(body)
    head_size, body_size = varint(len(head)), varint(len(body))
    return b"".join((LENGTH.pack(length + len(head_size) + len(body_size)), head_size, head,
                     body_size, body))


_WRAP_HEADER = delimited(RpcResponseHeaderProto(
    callId=SASL_CALL_ID & 0xFFFFFFFF, status=RpcResponseHeaderRpcStatusProto.SUCCESS))
_WRAP_STATE = bytes((2 << 3, RpcSaslSaslState.WRAP))     # RpcSaslProto field 2 (varint)
_TOKEN_TAG = bytes((3 << 3 | 2,))                         # field 3, length-delimited


def wrapped_response(token: bytes) -> bytes:
    """The frame that carries ``token`` (wrapped bytes of answers) from a server whose
    connection wraps (``Server.wrapWithSasl``): header call id -33 SUCCESS, then
    ``RpcSaslProto{state: WRAP, token}``; the bytes ``response`` would build from those
    messages, laid out directly since every answer of such a connection takes this path."""
    body = _WRAP_STATE + _TOKEN_TAG + varint(len(token)) + token
    return frame(_WRAP_HEADER + varint(len(body)) + body)


def parse_response(payload: bytes) -> tuple[Any, bytes]:
    """A response frame's payload: its RpcResponseHeaderProto and the bytes after it."""
    header, offset = parse_delimited(RpcResponseHeaderProto, payload)
    return header, payload[offset:]
