"""The WebHDFS REST API (``/webhdfs/v1/<path>?op=...``) for namespace metadata.

Shapes follow Hadoop's NamenodeWebHdfsMethods and JsonUtil, so Hadoop's WebHdfsFileSystem,
HdfsCLI and fsspec work unmodified: a FileStatus carries pathSuffix, type, length, owner, group,
permission (octal string), accessTime, modificationTime, blockSize, replication, fileId,
childrenNum and storagePolicy; ops that return nothing answer 200 with an empty body;
errors are RemoteExceptions (remote.py). Parameter names are case-insensitive, unknown
parameters are ignored, repeated identical parameters are accepted.

Reads run synchronously on the event loop under the namesystem lock; mutations are applied
and logged at once and then awaited until their txid is durable (committer.py).
"""

from __future__ import annotations

import base64
import json

from namenode import errors, paths
from namenode.http import remote
from namenode.http.server import BadRequest, Request, Response
from namenode.inode import INode
from namenode.tree import XATTR_CREATE, XATTR_REPLACE

PREFIX = "/webhdfs/v1"
DEFAULT_USER = "dr.who"
QUOTA_DONT_SET = (1 << 63) - 1
EMPTY_OK = Response(200, b"", "application/octet-stream")
TRUE = Response(200, b'{"boolean":true}')
FALSE = Response(200, b'{"boolean":false}')
STORAGE_POLICY_UNSPECIFIED = 0


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def file_status(node: INode, suffix: str) -> dict:
    """Hadoop's JsonUtil.toJsonMap(HdfsFileStatus)."""
    if node.is_dir:
        kind, length, block_size, replication = "DIRECTORY", 0, 0, 0
        children = len(node.children)
    else:
        kind, length, block_size = "FILE", node.length, node.block_size
        replication, children = node.replication, 0
    return {"accessTime": node.atime, "blockSize": block_size, "childrenNum": children,
            "fileId": node.id, "group": node.group, "length": length,
            "modificationTime": node.mtime, "owner": node.owner, "pathSuffix": suffix,
            "permission": format(node.permission & 0o1777, "o"), "replication": replication,
            "storagePolicy": STORAGE_POLICY_UNSPECIFIED, "type": kind}


# --------------------------------------------------------------------------- parameters

def _bool(req: Request, name: str, default: bool = False) -> bool:
    value = req.param(name)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {value!r} is not '
                          'true or false')


def _int(req: Request, name: str, default=None, lo: int = -(1 << 63), hi: int = (1 << 63) - 1):
    value = req.param(name)
    if value is None or value == "":
        return default
    try:
        number = int(value, 10)
    except ValueError:
        number = None
    if number is None or not lo <= number <= hi:
        raise BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {value!r} is not '
                              f"an integer in [{lo}, {hi}]")
    return number


def _permission(req: Request, default: int) -> int:
    value = req.param("permission")
    if value is None or value == "":
        return default
    try:
        bits = int(value, 8)
    except ValueError:
        bits = -1
    if not 0 <= bits <= 0o1777:
        raise BadRequest(400, f'Invalid value for webhdfs parameter "permission": {value!r} '
                              "is not an octal number in [0, 1777]")
    return bits


def _required(req: Request, name: str) -> str:
    value = req.param(name)
    if value is None or value == "":
        raise BadRequest(400, f'Required parameter "{name}" is missing')
    return value


def _xattr_value(text: str | None) -> bytes:
    """Hadoop's XAttrCodec: 0x.. hex, 0s.. base64, "..." text, else the raw text."""
    if text is None:
        return b""
    try:
        if text[:2].lower() == "0x":
            return bytes.fromhex(text[2:])
        if text[:2].lower() == "0s":
            return base64.b64decode(text[2:], validate=True)
    except ValueError as exc:
        raise BadRequest(400, f'Invalid value for webhdfs parameter "xattr.value": {exc}')
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].encode()
    return text.encode()


def _encode_xattr(value: bytes, encoding: str | None) -> str:
    encoding = (encoding or "").lower()
    if encoding == "hex":
        return "0x" + value.hex()
    if encoding == "base64":
        return "0s" + base64.b64encode(value).decode()
    if encoding in ("", "text"):
        return '"' + value.decode("utf-8", "replace") + '"'
    raise BadRequest(400, f'Invalid value for webhdfs parameter "encoding": {encoding!r}')


def _xattr_flag(req: Request) -> int:
    text = (req.param("xattr.flag") or req.param("flag") or "").upper()
    flags = {"CREATE": XATTR_CREATE, "REPLACE": XATTR_REPLACE}
    try:
        return sum(flags[f.strip()] for f in text.split(",") if f.strip()) or XATTR_CREATE
    except KeyError:
        raise BadRequest(400, f'Invalid value for webhdfs parameter "flag": {text!r}')


# --------------------------------------------------------------------------- the application

class WebHdfs:
    """Maps (method, op) to handlers. ``fs`` is the FSNamesystem, ``committer`` the
    AsyncCommitter; ``identity`` decides who may act as whom (``doas``)."""

    def __init__(self, fs, committer, *, default_user: str = DEFAULT_USER,
                 proxy_users: frozenset = frozenset()):
        self.fs = fs
        self.committer = committer
        self.default_user = default_user
        self.proxy_users = proxy_users
        self.ops = {
            ("GET", "GETFILESTATUS"): self.get_file_status,
            ("GET", "GETFILELINKSTATUS"): self.get_file_status,
            ("GET", "LISTSTATUS"): self.list_status,
            ("GET", "LISTSTATUS_BATCH"): self.list_status_batch,
            ("GET", "GETCONTENTSUMMARY"): self.content_summary,
            ("GET", "GETQUOTAUSAGE"): self.quota_usage,
            ("GET", "GETHOMEDIRECTORY"): self.home_directory,
            ("GET", "GETTRASHROOT"): self.trash_root,
            ("GET", "GETSERVERDEFAULTS"): self.server_defaults,
            ("GET", "GETXATTRS"): self.get_xattrs,
            ("GET", "LISTXATTRS"): self.list_xattrs,
            ("PUT", "MKDIRS"): self.mkdirs,
            ("PUT", "RENAME"): self.rename,
            ("PUT", "SETPERMISSION"): self.set_permission,
            ("PUT", "SETOWNER"): self.set_owner,
            ("PUT", "SETREPLICATION"): self.set_replication,
            ("PUT", "SETTIMES"): self.set_times,
            ("PUT", "SETXATTR"): self.set_xattr,
            ("PUT", "REMOVEXATTR"): self.remove_xattr,
            ("PUT", "SETQUOTA"): self.set_quota,
            ("DELETE", "DELETE"): self.delete,
        }

    def __call__(self, req: Request):
        try:
            op = (req.param("op") or "").upper()
            handler = self.ops.get((req.method, op))
            if handler is None:
                return self._unknown(req, op)
            path = self._path(req)
            user = self._user(req)
            result = handler(req, path, user)
        except Exception as exc:  # every error becomes a RemoteException, never a traceback
            return remote.from_error(exc)
        if isinstance(result, Response):
            return result
        return self._await(result)

    async def _await(self, coroutine):
        try:
            return await coroutine
        except Exception as exc:
            return remote.from_error(exc)

    def _unknown(self, req: Request, op: str) -> Response:
        if not op:
            return remote.illegal_argument('Required parameter "op" is missing')
        known = {o for (_, o) in self.ops}
        if op in known:
            return remote.illegal_argument(
                f'Invalid value for webhdfs parameter "op": {op} is not a {req.method} '
                f"operation")
        return remote.illegal_argument(
            f'Invalid value for webhdfs parameter "op": No enum constant {op}')

    def _path(self, req: Request) -> str:
        path = req.path[len(PREFIX):] or "/"
        paths.split(path)
        return path

    def _user(self, req: Request) -> str:
        user = req.param("user.name") or self.default_user
        doas = req.param("doas")
        if doas and doas != user:
            if user not in self.proxy_users and not self.fs.caller(user).superuser:
                raise errors.AccessControlError(
                    f"User: {user} is not allowed to impersonate {doas}")
            return doas
        return user

    def _mutate(self, method, *args):
        return self.committer.mutate(method, *args)

    # ------------------------------------------------------------------ reads

    def get_file_status(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        with self.fs.lock:
            node = self.fs.ns.status(path, caller)
            return Response(200, dumps({"FileStatus": file_status(node, "")}))

    def list_status(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        with self.fs.lock:
            nodes, _ = self.fs.ns.listing(path, caller)
            statuses = [file_status(n, n.name if n.name != _last(path) or n.is_dir else "")
                        for n in nodes]
        return Response(200, dumps({"FileStatuses": {"FileStatus": statuses}}))

    def list_status_batch(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        limit = self.fs.list_limit
        with self.fs.lock:
            nodes, remaining = self.fs.ns.listing(path, caller, req.param("startafter") or "",
                                                  limit)
            statuses = [file_status(n, n.name) for n in nodes]
        return Response(200, dumps({"DirectoryListing": {
            "partialListing": {"FileStatuses": {"FileStatus": statuses}},
            "remainingEntries": remaining}}))

    def content_summary(self, req, path, user) -> Response:
        summary = self.fs.read(self.fs.ns.content_summary, path, self.fs.caller(user))
        return Response(200, dumps({"ContentSummary": {**summary, "typeQuota": {}}}))

    def quota_usage(self, req, path, user) -> Response:
        usage = self.fs.read(self.fs.ns.quota_usage, path, self.fs.caller(user))
        return Response(200, dumps({"QuotaUsage": {**usage, "typeQuota": {}}}))

    def home_directory(self, req, path, user) -> Response:
        return Response(200, dumps({"Path": f"/user/{user}"}))

    def trash_root(self, req, path, user) -> Response:
        return Response(200, dumps({"Path": f"/user/{user}/.Trash"}))

    def server_defaults(self, req, path, user) -> Response:
        return Response(200, dumps({"FsServerDefaults": self.fs.server_defaults()}))

    def get_xattrs(self, req, path, user) -> Response:
        names = req.query.get("xattr.name") or []
        encoding = req.param("encoding")
        attrs = self.fs.read(self.fs.ns.xattrs, path, self.fs.caller(user), names)
        out = [{"name": k, "value": _encode_xattr(v, encoding)} for k, v in attrs.items()]
        return Response(200, dumps({"XAttrs": out}))

    def list_xattrs(self, req, path, user) -> Response:
        attrs = self.fs.read(self.fs.ns.xattrs, path, self.fs.caller(user))
        return Response(200, dumps({"XAttrNames": json.dumps(list(attrs))}))

    # ------------------------------------------------------------------ mutations

    async def mkdirs(self, req, path, user) -> Response:
        permission = _permission(req, 0o755)
        await self._mutate(self.fs.ns.mkdirs, path, permission, self.fs.caller(user))
        return TRUE

    async def rename(self, req, path, user) -> Response:
        destination = _required(req, "destination")
        paths.split(destination)
        options = req.param("renameoptions")
        caller = self.fs.caller(user)
        if options is None:
            ok = await self._mutate(self.fs.ns.rename_legacy, path, destination, caller)
            return TRUE if ok else FALSE
        names = {o.strip().upper() for o in options.split(",") if o.strip()}
        if not names <= {"NONE", "OVERWRITE", "TO_TRASH"}:
            raise BadRequest(400, f'Invalid value for webhdfs parameter "renameoptions": '
                                  f"{options!r}")
        await self._mutate(self.fs.ns.rename, path, destination, "OVERWRITE" in names, caller)
        return EMPTY_OK

    async def delete(self, req, path, user) -> Response:
        ok = await self._mutate(self.fs.ns.delete, path, _bool(req, "recursive"),
                                self.fs.caller(user))
        return TRUE if ok else FALSE

    async def set_permission(self, req, path, user) -> Response:
        await self._mutate(self.fs.ns.set_permission, path, _permission(req, 0o755),
                           self.fs.caller(user))
        return EMPTY_OK

    async def set_owner(self, req, path, user) -> Response:
        await self._mutate(self.fs.ns.set_owner, path, req.param("owner"), req.param("group"),
                           self.fs.caller(user))
        return EMPTY_OK

    async def set_replication(self, req, path, user) -> Response:
        replication = _int(req, "replication", None, 1, 32767)
        if replication is None:
            replication = self.fs.default_replication
        ok = await self._mutate(self.fs.ns.set_replication, path, replication,
                                self.fs.caller(user))
        return TRUE if ok else FALSE

    async def set_times(self, req, path, user) -> Response:
        await self._mutate(self.fs.ns.set_times, path, _int(req, "modificationtime", -1),
                           _int(req, "accesstime", -1), self.fs.caller(user))
        return EMPTY_OK

    async def set_xattr(self, req, path, user) -> Response:
        await self._mutate(self.fs.ns.set_xattr, path, _required(req, "xattr.name"),
                           _xattr_value(req.param("xattr.value")), _xattr_flag(req),
                           self.fs.caller(user))
        return EMPTY_OK

    async def remove_xattr(self, req, path, user) -> Response:
        await self._mutate(self.fs.ns.remove_xattr, path, _required(req, "xattr.name"),
                           self.fs.caller(user))
        return EMPTY_OK

    async def set_quota(self, req, path, user) -> Response:
        ns_quota = _int(req, "namespacequota", QUOTA_DONT_SET)
        ss_quota = _int(req, "storagespacequota", QUOTA_DONT_SET)
        await self._mutate(self.fs.ns.set_quota, path,
                           None if ns_quota == QUOTA_DONT_SET else ns_quota,
                           None if ss_quota == QUOTA_DONT_SET else ss_quota,
                           self.fs.caller(user))
        return EMPTY_OK


def _last(path: str) -> str:
    parts = paths.split(path)
    return parts[-1] if parts else ""
