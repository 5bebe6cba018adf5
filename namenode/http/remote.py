"""Errors to WebHDFS ``RemoteException`` responses, in one table.

Hadoop's server (ExceptionHandler in the webhdfs package) answers 404 for
FileNotFoundException, 403 for every other IOException (AccessControlException,
FileAlreadyExistsException, SafeModeException, QuotaExceededException, ...) and for
SecurityException, 400 for IllegalArgumentException and UnsupportedOperationException, and
500 for anything unexpected (logged with its traceback on the server only); the body is
``{"RemoteException": {"exception": <simple name>, "javaClassName": <FQCN>, "message": ...}}``.
A RemoteException's exception name is what the Java client re-raises, so the names are exact.
"""

from __future__ import annotations

import json
import logging

from nnlite.client import java_classes as java
from nnlite.formats.errors import FormatError
from nnlite.namenode import errors
from nnlite.namenode.http.wire import BadRequest, Response

log = logging.getLogger(__name__)

# (error class, HTTP status); the first match wins, so subclasses come first.
STATUS = (
    (errors.PathNotFoundError, 404),
    (errors.IllegalArgumentError, 400),
    (errors.InvalidPathError, 400),
    (errors.UnsupportedOperationError, 400),
    (errors.NamenodeError, 403),
)

# WebHDFS JSON goes without a Content-Type header. Hadoop's WebHdfsFileSystem as shipped in
# hadoop-client-api/-runtime 3.x (PySpark's jars) checks any Content-Type with a shaded JAX-RS
# MediaType whose RuntimeDelegate is not bundled, so every JSON answer (RemoteExceptions too)
# would fail with ClassNotFoundException ...RuntimeDelegateImpl; without the header it skips
# the check and parses the body. The Python clients never look at the header.
JSON = None


def body(java_class: str, message: str) -> bytes:
    name = errors.simple_name(java_class)
    return json.dumps({"RemoteException": {"exception": name, "javaClassName": java_class,
                                           "message": message}}, separators=(",", ":")).encode()


def remote(status: int, java_class: str, message: str) -> Response:
    return Response(status, body(java_class, message), JSON)


def from_error(exc: Exception) -> Response:
    if isinstance(exc, errors.NamenodeError):
        status = next(code for cls, code in STATUS if isinstance(exc, cls))
        return remote(status, exc.JAVA_CLASS, str(exc))
    if isinstance(exc, BadRequest):
        return remote(exc.status, java.ILLEGAL_ARGUMENT, str(exc))
    if isinstance(exc, FormatError):
        return remote(403, java.IO_EXCEPTION, str(exc))
    log.error("internal error answering a request", exc_info=exc)
    return remote(500, java.RUNTIME, f"Internal error ({type(exc).__name__}); "
                                     "the namenode log has the details")


def illegal_argument(message: str) -> Response:
    return remote(400, java.ILLEGAL_ARGUMENT, message)


def parse_error_response(status: int, message: str) -> Response:
    """For the HTTP layer's own parse errors (bad request line, oversized head or body)."""
    return remote(status, java.ILLEGAL_ARGUMENT, message)
