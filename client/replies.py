"""What a WebHDFS answer means: its JSON object, the typed error of a failed call, and the
fields an op reads out of it. Pure functions of a ``Reply``; the transport is connection.py.

* A body that is not JSON at all is ``NotANamenodeError`` (something else answers at that
  URL: a web server's HTML page); a JSON body that is not an object, or lacks the field an op
  reads, is ``ProtocolError``; an empty body is an empty object (an op that answers nothing).
* A ``RemoteException`` answer becomes the ``client.errors`` class registered for its
  ``javaClassName``; an op the namenode does not know at all (an older server) becomes
  ``UnknownOperationError``, so a caller can say "not supported yet" instead of "bad argument".
  A failed answer without a RemoteException is ``ProtocolError``.
"""

from __future__ import annotations

import json

from nnlite.client.connection import Reply
from nnlite.client.errors import (
    ClientError,
    IllegalArgumentError,
    NotANamenodeError,
    ProtocolError,
    UnknownOperationError,
    from_remote_exception,
)

UNKNOWN_OP = 'Invalid value for webhdfs parameter "op": No enum constant'


def json_object(reply: Reply, what: str, url: str) -> dict:
    """The JSON object ``reply`` carries (``{}`` for an empty body); ``url`` names the server."""
    if not reply.body:
        return {}
    try:
        doc = json.loads(reply.body)
    except ValueError as exc:
        raise not_a_namenode(reply, what, url) from exc
    if not isinstance(doc, dict):
        raise ProtocolError(f"{what}: expected a JSON object, got {reply.body[:200]!r}")
    return doc


def remote_error(reply: Reply, op: str, path: str | None, url: str) -> ClientError:
    """The error a failed ``op`` answered, to be raised by the caller."""
    try:
        remote = json.loads(reply.body)["RemoteException"]
        error = from_remote_exception(remote, status=reply.status, path=path)
    except (ValueError, KeyError, TypeError, AttributeError):
        if not is_json(reply):
            return not_a_namenode(reply, op, url)
        return ProtocolError(f"{op}: HTTP {reply.status} from {url} without a "
                             f"RemoteException: {reply.body[:200]!r}", path=path)
    if isinstance(error, IllegalArgumentError) and str(error).startswith(UNKNOWN_OP):
        return UnknownOperationError(
            f"the namenode at {url} does not support op={op} yet", path=path,
            status=reply.status, java_class=error.java_class)
    return error


def is_json(reply: Reply) -> bool:
    return reply.headers.get("content-type", "").split(";")[0].strip() == "application/json"


def not_a_namenode(reply: Reply, what: str, url: str) -> NotANamenodeError:
    """What answered is not a WebHDFS namenode; said in words, never with its raw bytes."""
    kind = reply.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    return NotANamenodeError(f"{url} is not a WebHDFS namenode: {what} got HTTP {reply.status} "
                             f"({kind}, {len(reply.body)} bytes) where a namenode answers "
                             "JSON; point --namenode (or NNLITE_NAMENODE) at the namenode",
                             url=url)


def field(doc: dict, *keys: str):
    """``doc[keys[0]][keys[1]]...``; a missing one is a ProtocolError."""
    value = doc
    try:
        for key in keys:
            value = value[key]
    except (KeyError, TypeError) as exc:
        raise ProtocolError(f"missing {'.'.join(keys)} in {str(doc)[:200]}") from exc
    return value


def boolean(doc: dict) -> bool:
    """The ``{"boolean": ...}`` answer of MKDIRS, DELETE, RENAME, SETREPLICATION."""
    value = field(doc, "boolean")
    if not isinstance(value, bool):
        raise ProtocolError(f"expected a boolean answer, got {str(doc)[:200]}")
    return value
