"""Typed errors of the RPC server: what Hadoop's IPC ``Server`` answers about the call itself
rather than the operation (those are the namenode's errors, ``namenode/errors.py``).

Each carries ``JAVA_CLASS`` (the ``exceptionClassName`` of the response) and ``ERROR_CODE``
(``RpcResponseHeaderProto.errorDetail``); ``FATAL`` ones close the connection after the
answer, as ``Server.FatalRpcServerException`` does.
"""

from __future__ import annotations

from nnlite.formats.hadoop.ipc import RpcResponseHeaderRpcErrorCodeProto as Code
from nnlite.namenode.errors import NamenodeError


class RpcServerError(NamenodeError):
    """A call the IPC layer refuses; the connection stays open."""
    JAVA_CLASS = "org.apache.hadoop.ipc.RpcServerException"
    ERROR_CODE = Code.ERROR_RPC_SERVER
    FATAL = False


class NoSuchMethodError(RpcServerError):
    """``ProtobufRpcEngine2.Server``: a method the protocol does not have."""
    JAVA_CLASS = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    ERROR_CODE = Code.ERROR_NO_SUCH_METHOD


class NoSuchProtocolError(RpcServerError):
    JAVA_CLASS = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
    ERROR_CODE = Code.ERROR_NO_SUCH_PROTOCOL


class FatalRpcError(RpcServerError):
    """A frame that cannot be read or a connection that may not go on: answered with status
    FATAL, then the connection is closed."""
    ERROR_CODE = Code.FATAL_INVALID_RPC_HEADER
    FATAL = True


class BadRequestError(FatalRpcError):
    """A request whose bytes do not parse (``FATAL_DESERIALIZING_REQUEST``)."""
    ERROR_CODE = Code.FATAL_DESERIALIZING_REQUEST


class VersionMismatchError(FatalRpcError):
    JAVA_CLASS = "org.apache.hadoop.ipc.RPC$VersionMismatch"
    ERROR_CODE = Code.FATAL_VERSION_MISMATCH


class UnauthorizedError(FatalRpcError):
    """A connection whose user may not connect: SASL asked of a server with simple
    authentication, no user, or a proxy user the ``hadoop.proxyuser.*`` rules refuse."""
    JAVA_CLASS = "org.apache.hadoop.security.authorize.AuthorizationException"
    ERROR_CODE = Code.FATAL_UNAUTHORIZED
