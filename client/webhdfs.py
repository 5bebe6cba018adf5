"""A small WebHDFS client of the namenode: the ops the ``nnlite dfs`` and ``dfsadmin`` commands
need, over one keep-alive ``http.client`` connection (standard library only).

* Every request names ``user.name``; paths are absolute and sent percent-encoded.
* A ``RemoteException`` answer becomes the ``client.errors`` class registered for its
  ``javaClassName``; an op the namenode does not know at all (an older server) becomes
  ``UnknownOperationError``, so a caller can say "not supported yet" instead of "bad argument".
* No connection, a timeout, or a connection dropped before the answer is
  ``NamenodeUnreachableError`` naming the URL. A kept-alive connection that the namenode closed
  while idle (it does after 60 s) is reopened once, transparently.
* Anything else unexpected (a body that is not JSON, an unknown status) is ``ProtocolError``.
* ``create`` follows WebHDFS's two steps: ``PUT op=CREATE`` answers 307 with a ``Location``,
  the data goes there in a second ``PUT``. ``append`` (``POST op=APPEND``) and ``read``
  (``GET op=OPEN``) follow their 307 the same way. A body may be a binary file object: it is
  streamed, with a Content-Length when its size is known (a regular file), chunked otherwise
  (a pipe); ``read`` yields the contents in chunks as they arrive, never the whole file.

Admin endpoints (``/admin?op=SAFEMODE|SAVENAMESPACE|ROLLEDITS|REPORT``) are superuser-only
extensions of nnlite's namenode (namenode/http/app.py); they answer JSON the same way.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import stat
from dataclasses import dataclass
from typing import Iterator
from urllib.parse import quote, urlencode, urlsplit

from client.errors import (BadArgumentError, ClientError, IllegalArgumentError,
                           NamenodeUnreachableError, PathNotFoundError, ProtocolError,
                           UnknownOperationError, from_remote_exception)

DEFAULT_URL = "http://127.0.0.1:9870"
PREFIX = "/webhdfs/v1"
ADMIN = "/admin"
TIMEOUT = 30.0
USER_AGENT = "nnlite-client/0.1"
NETWORK_ERRORS = (OSError, http.client.HTTPException)
# The peer closed a kept-alive connection before reading the request: safe to send again.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
         ConnectionAbortedError)
CHUNK = 1 << 20             # bytes per socket write of a streamed body, per read of a download
UNKNOWN_OP = 'Invalid value for webhdfs parameter "op": No enum constant'


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict            # lower-case names
    body: bytes


class Connection:
    """One keep-alive HTTP connection to ``url``'s host and port."""

    def __init__(self, url: str, timeout: float | None = TIMEOUT):
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadArgumentError(f"the namenode URL must be http://HOST:PORT, not {url!r}")
        try:
            port = parts.port
        except ValueError as exc:
            raise BadArgumentError(f"bad port in the namenode URL {url!r}") from exc
        self.url = f"{parts.scheme}://{parts.netloc}"
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, port
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _open(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.timeout, blocksize=CHUNK)

    def request(self, method: str, target: str, body=None) -> Reply:
        """One exchange; a kept-alive connection the peer closed meanwhile is reopened once
        (it had not read the request, so sending it again applies it once). ``body``: bytes,
        or a binary file object streamed from where it stands (sent again on a retry only if
        it can seek back)."""
        return self._with_retry(method, target, body, self._exchange)

    def stream(self, method: str, target: str) -> http.client.HTTPResponse:
        """Send a request without a body; the response with its body unread. The caller
        reads it to the end (the connection is kept) or calls ``close()``."""
        return self._with_retry(method, target, None, self._send)

    def _with_retry(self, method: str, target: str, body, exchange):
        start = _position(body)
        for attempt in (1, 2):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = self._open()
            try:
                return exchange(self._conn, method, target, body)
            except NETWORK_ERRORS as exc:
                self.close()
                if (reused and attempt == 1 and isinstance(exc, STALE)
                        and _rewind(body, start)):
                    continue
                raise NamenodeUnreachableError(
                    f"cannot reach the namenode at {self.url} ({_describe(exc)}); is it "
                    "running? Point --namenode (or NNLITE_NAMENODE) at it", url=self.url) from exc
        raise AssertionError("not reached")

    def _send(self, conn, method: str, target: str, body=None) -> http.client.HTTPResponse:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if body is not None and not isinstance(body, (bytes, bytearray, memoryview)):
            size = _remaining(body)
            if size is not None:
                headers["Content-Length"] = str(size)
            headers["Content-Type"] = "application/octet-stream"
        conn.request(method, target, body=body, headers=headers)
        return conn.getresponse()

    def without_timeout(self) -> "Connection":
        """A new connection to the same place that waits as long as the answer takes."""
        return Connection(self.url + self.base, None)

    def _exchange(self, conn, method: str, target: str, body) -> Reply:
        resp = self._send(conn, method, target, body)
        data = resp.read()
        if resp.will_close:
            self.close()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)


def _position(body) -> int | None:
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return None
    try:
        return body.tell() if body.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


def _rewind(body, start: int | None) -> bool:
    """Whether ``body`` can be sent again (bytes, nothing, or a file sought back)."""
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return True
    if start is None:
        return False
    body.seek(start)
    return True


def _remaining(body) -> int | None:
    """The bytes left in a regular file from where it stands; None for a pipe (chunked)."""
    try:
        st = os.fstat(body.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return max(st.st_size - body.tell(), 0)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return f"unknown host: {exc.strerror or exc}"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "no answer in time"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the connection closed before an answer"
    return str(exc) or type(exc).__name__


class WebHdfsClient:
    """The namenode at ``url`` acting as ``user``. Use as a context manager, or ``close()``."""

    def __init__(self, url: str = DEFAULT_URL, user: str = "dr.who", *,
                 timeout: float | None = TIMEOUT):
        if not user:
            raise BadArgumentError("no user name: give --user or set HADOOP_USER_NAME")
        self.connection = Connection(url, timeout)
        self.url = self.connection.url
        self.user = user

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> "WebHdfsClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ transport

    def _target(self, path: str, op: str, params: dict) -> str:
        query = [("op", op), ("user.name", self.user)]
        query += [(k, _param(v)) for k, v in params.items() if v is not None]
        return (self.connection.base + PREFIX + quote(path, safe="/") + "?"
                + urlencode(query, quote_via=quote))

    def _call(self, method: str, path: str, op: str, **params) -> dict:
        reply = self.connection.request(method, self._target(path, op, params))
        if reply.status != 200:
            raise self._error(reply, op, path)
        return self._json(reply, op)

    def _json(self, reply: Reply, what: str) -> dict:
        if not reply.body:
            return {}
        try:
            doc = json.loads(reply.body)
        except ValueError as exc:
            raise ProtocolError(f"{what}: the namenode at {self.url} answered something "
                                f"other than JSON: {reply.body[:200]!r}") from exc
        if not isinstance(doc, dict):
            raise ProtocolError(f"{what}: expected a JSON object, got {reply.body[:200]!r}")
        return doc

    def _error(self, reply: Reply, op: str, path: str | None) -> ClientError:
        try:
            remote = json.loads(reply.body)["RemoteException"]
            error = from_remote_exception(remote, status=reply.status, path=path)
        except (ValueError, KeyError, TypeError, AttributeError):
            return ProtocolError(f"{op}: HTTP {reply.status} from {self.url} without a "
                                 f"RemoteException: {reply.body[:200]!r}", path=path)
        if isinstance(error, IllegalArgumentError) and str(error).startswith(UNKNOWN_OP):
            return UnknownOperationError(
                f"the namenode at {self.url} does not support op={op} yet", path=path,
                status=reply.status, java_class=error.java_class)
        return error

    @staticmethod
    def _field(doc: dict, *keys: str):
        value = doc
        try:
            for key in keys:
                value = value[key]
        except (KeyError, TypeError) as exc:
            raise ProtocolError(f"missing {'.'.join(keys)} in {str(doc)[:200]}") from exc
        return value

    # ------------------------------------------------------------------ reads

    def status(self, path: str) -> dict:
        """GETFILESTATUS: the FileStatus object."""
        return self._field(self._call("GET", path, "GETFILESTATUS"), "FileStatus")

    def exists(self, path: str) -> bool:
        try:
            self.status(path)
        except PathNotFoundError:
            return False
        return True

    def list(self, path: str) -> list[dict]:
        """Every entry of a directory (or the file itself, with an empty pathSuffix), in pages
        of LISTSTATUS_BATCH."""
        out: list[dict] = []
        after = None
        while True:
            doc = self._call("GET", path, "LISTSTATUS_BATCH", startafter=after)
            listing = self._field(doc, "DirectoryListing")
            page = self._field(listing, "partialListing", "FileStatuses", "FileStatus")
            out += page
            if not page or not listing.get("remainingEntries"):
                return out
            after = page[-1]["pathSuffix"]

    def content_summary(self, path: str) -> dict:
        return self._field(self._call("GET", path, "GETCONTENTSUMMARY"), "ContentSummary")

    def xattrs(self, path: str, names=(), encoding: str = "TEXT") -> list[dict]:
        """GETXATTRS: ``[{"name": ..., "value": <encoded text or None>}]``."""
        params = {"encoding": encoding}
        target = self._target(path, "GETXATTRS", params)
        for name in names:
            target += "&" + urlencode({"xattr.name": name}, quote_via=quote)
        reply = self.connection.request("GET", target)
        if reply.status != 200:
            raise self._error(reply, "GETXATTRS", path)
        return self._field(self._json(reply, "GETXATTRS"), "XAttrs")

    # ------------------------------------------------------------------ mutations

    def mkdirs(self, path: str, permission: int | None = None) -> bool:
        return bool(self._boolean(self._call("PUT", path, "MKDIRS", permission=_octal(
            permission))))

    def delete(self, path: str, recursive: bool = False) -> bool:
        return self._boolean(self._call("DELETE", path, "DELETE", recursive=recursive))

    def rename(self, src: str, dst: str) -> bool:
        return self._boolean(self._call("PUT", src, "RENAME", destination=dst))

    def set_permission(self, path: str, permission: int) -> None:
        self._call("PUT", path, "SETPERMISSION", permission=_octal(permission))

    def set_owner(self, path: str, owner: str | None, group: str | None) -> None:
        self._call("PUT", path, "SETOWNER", owner=owner or None, group=group or None)

    def set_times(self, path: str, mtime: int = -1, atime: int = -1) -> None:
        """SETTIMES: modification and access time in ms since the epoch (-1: unchanged)."""
        self._call("PUT", path, "SETTIMES", modificationtime=mtime, accesstime=atime)

    def set_replication(self, path: str, replication: int) -> bool:
        return self._boolean(self._call("PUT", path, "SETREPLICATION",
                                        replication=replication))

    def set_quota(self, path: str, namespace: int | None = None,
                  space: int | None = None) -> None:
        """Superuser: the name and space quotas of a directory (None: unchanged, -1: none)."""
        self._call("PUT", path, "SETQUOTA", namespacequota=namespace, storagespacequota=space)

    def set_xattr(self, path: str, name: str, value: str | None,
                  flag: str = "CREATE,REPLACE") -> None:
        """``value`` in XAttrCodec's text form: "text", 0x<hex>, 0s<base64>, or raw text."""
        self._call("PUT", path, "SETXATTR", **{"xattr.name": name, "xattr.value": value,
                                               "flag": flag})

    def remove_xattr(self, path: str, name: str) -> None:
        self._call("PUT", path, "REMOVEXATTR", **{"xattr.name": name})

    def create(self, path: str, data=b"", *, overwrite: bool = False,
               permission: int | None = None, block_size: int | None = None) -> None:
        """CREATE: the namenode redirects (307) to where the data goes; send it there.
        ``data``: bytes or a binary file object (streamed)."""
        target = self._target(path, "CREATE", {"overwrite": overwrite,
                                               "permission": _octal(permission),
                                               "blocksize": block_size})
        reply = self.connection.request("PUT", target)
        if reply.status == 307:
            reply = self._send_data("PUT", reply.headers.get("location", ""), data, path,
                                    "CREATE")
        if reply.status not in (200, 201):
            raise self._error(reply, "CREATE", path)

    def append(self, path: str, data=b"") -> None:
        """APPEND (POST, 307, POST the data); ``data``: bytes or a binary file object."""
        reply = self.connection.request("POST", self._target(path, "APPEND", {}))
        if reply.status == 307:
            reply = self._send_data("POST", reply.headers.get("location", ""), data, path,
                                    "APPEND")
        if reply.status != 200:
            raise self._error(reply, "APPEND", path)

    def read(self, path: str, offset: int = 0, length: int | None = None,
             chunk_size: int = CHUNK) -> Iterator[bytes]:
        """OPEN: the contents in chunks of at most ``chunk_size`` bytes, as they arrive.
        Errors (a missing file, a directory, permission) raise at the first ``next()``."""
        params = {"offset": offset or None, "length": length}
        reply = self.connection.request("GET", self._target(path, "OPEN", params))
        if reply.status == 307:
            location = reply.headers.get("location", "")
            if not location:
                raise ProtocolError("OPEN: a 307 without a Location header", path=path)
            conn, target, own = self._data_connection(location)
            try:
                resp = conn.stream("GET", target)
                if resp.status != 200:
                    reply = Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()},
                                  resp.read())
                    if resp.will_close:
                        conn.close()
                    raise self._error(reply, "OPEN", path)
                done = False
                try:
                    while True:
                        chunk = resp.read(chunk_size)
                        if not chunk:
                            break
                        yield chunk
                    done = True
                except NETWORK_ERRORS as exc:
                    raise NamenodeUnreachableError(
                        f"OPEN {path}: the connection to {conn.url} broke while reading "
                        f"({_describe(exc)})", url=conn.url) from exc
                finally:
                    if not done or resp.will_close:
                        conn.close()        # an abandoned body: the connection is unusable
            finally:
                if own:
                    conn.close()
            return
        if reply.status != 200:
            raise self._error(reply, "OPEN", path)
        if reply.body:                      # a server that answers OPEN itself
            yield reply.body

    def _data_connection(self, location: str) -> tuple[Connection, str, bool]:
        """(connection, request target, whether it is a new one to close) for a Location."""
        parts = urlsplit(location)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if not parts.netloc or f"{parts.scheme}://{parts.netloc}" == self.url:
            return self.connection, target, False
        return Connection(location, self.connection.timeout), target, True

    def _send_data(self, method: str, location: str, data, path: str, op: str) -> Reply:
        if not location:
            raise ProtocolError(f"{op}: a 307 without a Location header", path=path)
        conn, target, own = self._data_connection(location)
        try:
            return conn.request(method, target, data)
        finally:
            if own:
                conn.close()

    def rename_options(self, src: str, dst: str, overwrite: bool = False) -> None:
        """RENAME with ``renameoptions`` (FileContext's rename: raises instead of false)."""
        self._call("PUT", src, "RENAME", destination=dst,
                   renameoptions="OVERWRITE" if overwrite else "NONE")

    def _boolean(self, doc: dict) -> bool:
        value = self._field(doc, "boolean")
        if not isinstance(value, bool):
            raise ProtocolError(f"expected a boolean answer, got {str(doc)[:200]}")
        return value

    # ------------------------------------------------------------------ admin (superuser)

    def _admin(self, method: str, op: str, *, patient: bool = False, **params) -> dict:
        """``patient``: on a connection without a timeout (waits, long saves)."""
        query = [("op", op), ("user.name", self.user)]
        query += [(k, _param(v)) for k, v in params.items() if v is not None]
        target = self.connection.base + ADMIN + "?" + urlencode(query, quote_via=quote)
        if patient:
            conn = self.connection.without_timeout()
            try:
                reply = conn.request(method, target)
            finally:
                conn.close()
        else:
            reply = self.connection.request(method, target)
        if reply.status != 200:
            raise self._error(reply, op, None)
        return self._json(reply, op)

    def safe_mode(self, action: str = "get") -> bool:
        """get, enter, leave or wait (until it is off); True when safe mode is on."""
        doc = self._admin("PUT", "SAFEMODE", patient=action == "wait", action=action)
        return bool(self._field(doc, "SafeMode"))

    def save_namespace(self) -> int:
        """A new image of everything logged (needs safe mode); its txid."""
        return int(self._field(self._admin("PUT", "SAVENAMESPACE", patient=True), "txid"))

    def roll_edits(self) -> int:
        """Close the edits segment; the last txid of the closed segment."""
        return int(self._field(self._admin("PUT", "ROLLEDITS"), "txid"))

    def report(self) -> dict:
        return self._field(self._admin("GET", "REPORT"), "Report")


def _param(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _octal(permission: int | None) -> str | None:
    return None if permission is None else format(permission, "o")
