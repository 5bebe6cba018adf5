"""A small WebHDFS client of the namenode: the ops the ``nnlite dfs`` and ``dfsadmin`` commands
need, each one request (or two) over one keep-alive connection (standard library only).

* Every request names ``user.name`` (none with a Kerberos login: the login says who, as
  WebHdfsFileSystem in secure mode); a relative path is under ``/user/<user>`` (``absolute``);
  paths are sent percent-encoded.
* Given several namenodes (an HA nameservice), the connection is failover.py's, which follows
  the active one; given one, a plain ``Connection``, and nothing of the failover runs.
* The transport (keep-alive, reopening a stale connection once, streaming bodies, network
  errors as ``NamenodeUnreachableError`` naming the URL) is connection.py; what an answer
  means (a ``RemoteException`` as a typed ``client.errors`` class, an op an older namenode does
  not know as ``UnknownOperationError``, anything unexpected as ``ProtocolError``) is
  replies.py. This module only builds requests and reads the fields of their answers.
* ``create`` follows WebHDFS's two steps: ``PUT op=CREATE`` answers 307 with a ``Location``,
  the data goes there in a second ``PUT``. ``append`` (``POST op=APPEND``) and ``read``
  (``GET op=OPEN``) follow their 307 the same way. A body may be a binary file object: it is
  streamed; ``read`` yields the contents in chunks as they arrive, never the whole file.

Admin endpoints (``/admin?op=SAFEMODE|SAVENAMESPACE|ROLLEDITS|REPORT``, and HA's
``GETSERVICESTATE``, ``TRANSITIONTOACTIVE``, ``TRANSITIONTOSTANDBY``, ``FAILOVER``) are
extensions of nnlite's namenode (namenode/http/app.py), superuser-only but for
GETSERVICESTATE; they answer JSON the same way.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from urllib.parse import quote, urlencode, urlsplit

from nnlite.client import replies
from nnlite.client.connection import (
    CHUNK,
    NETWORK_ERRORS,
    TIMEOUT,
    Connection,
    Reply,
    describe,
    kerberos_login,
)
from nnlite.client.errors import (
    BadArgumentError,
    ClientError,
    NamenodeUnreachableError,
    PathNotFoundError,
    ProtocolError,
)
from nnlite.client.failover import Address, FailoverConnection, FailoverPolicy, connect

DEFAULT_URL = "http://127.0.0.1:9870"
PREFIX = "/webhdfs/v1"
ADMIN = "/admin"
ACL_OPS = ("SETACL", "MODIFYACLENTRIES", "REMOVEACLENTRIES", "REMOVEDEFAULTACL", "REMOVEACL")


class WebHdfsClient:
    """The namenode at ``url`` acting as ``user``. Use as a context manager, or ``close()``.
    ``url`` may name several namenodes (a list of URLs, or a ``Nameservice``): the client
    then follows the active one as Hadoop's does (failover.py, with ``policy``)."""

    def __init__(self, url: Address = DEFAULT_URL, user: str = "dr.who", *,
                 timeout: float | None = TIMEOUT, policy: FailoverPolicy | None = None):
        if not user:
            raise BadArgumentError("no user name: give --user or set HADOOP_USER_NAME")
        self.connection = connect(url, timeout, policy)
        self.user = user

    @property
    def url(self) -> str:
        """The namenode's URL (with several, the one the client talks to now)."""
        return self.connection.url

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> WebHdfsClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ requests and answers

    def _target(self, path: str, op: str, params: dict, prefix: str = PREFIX) -> str:
        query = [("op", op), *self._user_param()]
        query += [(k, _param(v)) for k, v in params.items() if v is not None]
        return (self.connection.base + prefix + quote(absolute(path, self.user), safe="/")
                + "?" + urlencode(query, quote_via=quote))

    def _user_param(self) -> list[tuple[str, str]]:
        """``user.name``; none with a Kerberos login, which says who (as WebHdfsFileSystem
        sends none in secure mode)."""
        return [] if kerberos_login() else [("user.name", self.user)]

    def _call(self, method: str, path: str, op: str, **params) -> dict:
        reply = self.connection.request(method, self._target(path, op, params))
        if reply.status != 200:
            raise self._error(reply, op, path)
        return self._json(reply, op)

    # The answer's meaning is replies.py's; these name this server. catalog/client.py calls
    # _error, _field and _json for its own ops.

    def _json(self, reply: Reply, what: str) -> dict:
        return replies.json_object(reply, what, self.url)

    def _error(self, reply: Reply, op: str, path: str | None) -> ClientError:
        return replies.remote_error(reply, op, path, self.url)

    _field = staticmethod(replies.field)
    _boolean = staticmethod(replies.boolean)

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

    # builtins.list below: inside the class body, ``list`` names the method above
    def xattrs(self, path: str, names=(), encoding: str = "TEXT") -> builtins.list[dict]:
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

    def allow_snapshot(self, path: str) -> None:
        """Superuser: make a directory snapshottable."""
        self._call("PUT", path, "ALLOWSNAPSHOT")

    def disallow_snapshot(self, path: str) -> None:
        self._call("PUT", path, "DISALLOWSNAPSHOT")

    def create_snapshot(self, path: str, name: str | None = None) -> str:
        """The new snapshot's path (``<path>/.snapshot/<name>``)."""
        return self._field(self._call("PUT", path, "CREATESNAPSHOT", snapshotname=name),
                           "Path")

    def delete_snapshot(self, path: str, name: str) -> None:
        self._call("DELETE", path, "DELETESNAPSHOT", snapshotname=name)

    def rename_snapshot(self, path: str, old: str, new: str) -> None:
        self._call("PUT", path, "RENAMESNAPSHOT", oldsnapshotname=old, snapshotname=new)

    def snapshot_diff_report(self, path: str, older: str, newer: str = "") -> dict:
        """GETSNAPSHOTDIFF: ``snapshotRoot``, ``fromSnapshot``, ``toSnapshot`` and the
        ``diffList``; an empty name is the current tree."""
        doc = self._call("GET", path, "GETSNAPSHOTDIFF", oldsnapshotname=older,
                         snapshotname=newer)
        return self._field(doc, "SnapshotDiffReport")

    def snapshot_diff(self, path: str, older: str, newer: str = "") -> builtins.list[dict]:
        """The diff report's entries (``type``, ``sourcePath``, ``targetPath``)."""
        return self._field(self.snapshot_diff_report(path, older, newer), "diffList")

    def snapshottable_dirs(self) -> builtins.list[dict]:
        """GETSNAPSHOTTABLEDIRECTORYLIST: the caller's snapshottable directories (all of them
        for a superuser), each ``dirStatus``, ``parentFullPath``, ``snapshotNumber``,
        ``snapshotQuota``."""
        return self._field(self._call("GET", "/", "GETSNAPSHOTTABLEDIRECTORYLIST"),
                           "SnapshottableDirectoryList")

    def acl_status(self, path: str) -> dict:
        """GETACLSTATUS: ``owner``, ``group``, ``permission``, ``stickyBit`` and the
        ``entries`` beyond the permission bits, as text (``user:alice:r-x``)."""
        return self._field(self._call("GET", path, "GETACLSTATUS"), "AclStatus")

    def change_acl(self, path: str, op: str, spec: str | None = None) -> None:
        """One of ``ACL_OPS``: SETACL replaces the ACL with ``spec``, MODIFYACLENTRIES adds
        or changes its entries, REMOVEACLENTRIES removes them (given without permissions),
        REMOVEDEFAULTACL and REMOVEACL (all but the base entries) take no spec."""
        if op not in ACL_OPS:
            raise BadArgumentError(f"{op} is not an ACL change (one of {', '.join(ACL_OPS)})")
        self._call("PUT", path, op, aclspec=spec)

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
                        f"({describe(exc)})", url=conn.url) from exc
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

    def _data_connection(self, location: str
                         ) -> tuple[Connection | FailoverConnection, str, bool]:
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

    # ------------------------------------------------------------------ admin (superuser)

    def _admin(self, method: str, op: str, *, patient: bool = False, **params) -> dict:
        """``patient``: on a connection without a timeout (waits, long saves). With several
        namenodes the active one is asked: a standby answers the admin endpoint itself."""
        query = [("op", op), *self._user_param()]
        query += [(k, _param(v)) for k, v in params.items() if v is not None]
        target = self.connection.base + ADMIN + "?" + urlencode(query, quote_via=quote)
        if isinstance(self.connection, FailoverConnection):
            self.connection.find_active()
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

    # ------------------------------------------------------------------ high availability

    def service_state(self) -> dict:
        """``haadmin -getServiceState``: ``{"state": "active"|"standby"|..., ...}`` (anyone)."""
        return self._admin("GET", "GETSERVICESTATE")

    def transition_to_active(self, force: bool = False) -> str:
        """Make this namenode active (superuser); refused under automatic failover unless
        ``force``. The state reached."""
        return self._field(self._admin("POST", "TRANSITIONTOACTIVE", patient=True,
                                       force=force), "state")

    def transition_to_standby(self, force: bool = False) -> str:
        return self._field(self._admin("POST", "TRANSITIONTOSTANDBY", patient=True,
                                       force=force), "state")

    def failover(self) -> str:
        """A graceful failover to this namenode: it asks the active to give way, then
        becomes active (superuser). The state reached."""
        return self._field(self._admin("POST", "FAILOVER", patient=True), "state")


def absolute(path: str, user: str) -> str:
    """``path`` as the namenode sees it: a relative path is under the user's home,
    ``/user/<user>``, as Hadoop's ``FileSystem`` qualifies it against its working directory."""
    if path.startswith("/"):
        return path
    home = f"/user/{user}"
    return f"{home}/{path}" if path else home


def _param(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _octal(permission: int | None) -> str | None:
    return None if permission is None else format(permission, "o")
