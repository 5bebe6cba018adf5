"""The WebHDFS REST API (``/webhdfs/v1/<path>?op=...``) for namespace metadata.

Shapes follow Hadoop's NamenodeWebHdfsMethods and JsonUtil, so Hadoop's WebHdfsFileSystem,
HdfsCLI and fsspec work unmodified: a FileStatus carries pathSuffix, type, length, owner, group,
permission (octal string), accessTime, modificationTime, blockSize, replication, fileId,
childrenNum and storagePolicy; ops that return nothing answer 200 with an empty body;
errors are RemoteExceptions (remote.py). Parameter names are case-insensitive, unknown
parameters are ignored, repeated identical parameters are accepted. Values parse as Hadoop's
*Param classes do: an empty value is the default, numbers are plain decimal (permission: octal)
within the class's range, ``destination`` is absolute and normalised like Hadoop's Path,
``user.name`` matches UserParam's pattern; required parameters are checked as
NamenodeWebHdfsMethods.validateOpParams does. HEAD answers as GET without the body.

Reads run synchronously on the event loop under the namesystem lock; mutations are applied
and logged at once and then awaited until their txid is durable (committer.py).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
from json.encoder import encode_basestring_ascii

from namenode import errors, paths
from namenode.http import remote
from namenode.http.server import BadRequest, Request, Response
from namenode.inode import INode
from namenode.tree_attrs import XATTR_CREATE, XATTR_REPLACE

PREFIX = "/webhdfs/v1"
DEFAULT_USER = "dr.who"
QUOTA_DONT_SET = (1 << 63) - 1
EMPTY_OK = Response(200, b"", "application/octet-stream")
TRUE = Response(200, b'{"boolean":true}', remote.JSON)
FALSE = Response(200, b'{"boolean":false}', remote.JSON)


def _true(_result) -> Response:
    return TRUE


def _boolean(ok: bool) -> Response:
    return TRUE if ok else FALSE


def _empty(_result) -> Response:
    return EMPTY_OK
STORAGE_POLICY_UNSPECIFIED = 0
CHECKSUM_TYPE_IDS = {"NULL": 0, "CRC32": 1, "CRC32C": 2}   # Hadoop's DataChecksum.Type.id
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
USER_PATTERN = "^[A-Za-z_][A-Za-z0-9._-]*[$]?$"        # UserParam's default domain
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*[$]?")    # fullmatch: "$" would allow "\n"
_VALID_USERS: set[str] = set()                         # names that matched _USER
VALID_USERS_KEPT = 10_000
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_OCTAL = re.compile(r"[+-]?[0-7]+")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
OP_PARAM_CLASSES = {"GET": "GetOpParam", "PUT": "PutOpParam", "POST": "PostOpParam",
                    "DELETE": "DeleteOpParam"}
REPLICATED = "Replicated"          # ContentSummaryComputationContext.REPLICATED


class ImpersonationError(errors.AccessControlError):
    """A doas that the caller may not use. Hadoop's UserProvider wraps the
    AuthorizationException in a SecurityException (403)."""
    JAVA_CLASS = "java.lang.SecurityException"


_ENCODER = json.JSONEncoder(separators=(",", ":"))  # built once: json.dumps(**kw) builds one per call
_string = encode_basestring_ascii     # how _ENCODER writes a str (ensure_ascii)


def dumps(obj) -> bytes:
    return _ENCODER.encode(obj).encode()


def json_response(obj) -> Response:
    """200 with ``obj`` as compact JSON (and no Content-Type header: see remote.JSON)."""
    return Response(200, dumps(obj), remote.JSON)


def file_status(node: INode, suffix: str) -> dict:
    """Hadoop's JsonUtil.toJsonMap(HdfsFileStatus). ``file_status_json`` is the same object
    already encoded, for the hot read path."""
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


def file_status_json(node: INode, suffix: str) -> str:
    """``dumps(file_status(node, suffix))`` as a str, built in one format: the read path's
    JSON without a dict and an encoder pass. Keys in the encoder's order (sorted); strings
    escaped by the encoder's own function; a non-int time (never made by the namespace) takes
    the encoder's path, so the bytes are always the encoder's."""
    mtime, atime = node.mtime, node.atime
    if type(mtime) is not int or type(atime) is not int:
        return _ENCODER.encode(file_status(node, suffix))
    if node.is_dir:
        return (f'{{"accessTime":{atime},"blockSize":0,"childrenNum":{len(node.children)},'
                f'"fileId":{node.id},"group":{_string(node.group)},"length":0,'
                f'"modificationTime":{mtime},"owner":{_string(node.owner)},'
                f'"pathSuffix":{_string(suffix)},"permission":"{node.permission & 0o1777:o}",'
                f'"replication":0,"storagePolicy":{STORAGE_POLICY_UNSPECIFIED},'
                f'"type":"DIRECTORY"}}')
    return (f'{{"accessTime":{atime},"blockSize":{node.block_size},"childrenNum":0,'
            f'"fileId":{node.id},"group":{_string(node.group)},"length":{node.length},'
            f'"modificationTime":{mtime},"owner":{_string(node.owner)},'
            f'"pathSuffix":{_string(suffix)},"permission":"{node.permission & 0o1777:o}",'
            f'"replication":{node.replication},"storagePolicy":{STORAGE_POLICY_UNSPECIFIED},'
            f'"type":"FILE"}}')


def file_statuses_json(statuses: list[str]) -> str:
    """``{"FileStatuses":{"FileStatus":[...]}}`` around already encoded statuses."""
    return '{"FileStatuses":{"FileStatus":[' + ",".join(statuses) + "]}}"


# --------------------------------------------------------------------------- parameters

def _bool(req: Request, name: str, default: bool = False) -> bool:
    value = req.param(name)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {value!r} is not '
                          'true or false')


def _invalid(name: str, why: str) -> BadRequest:
    return BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {why}')


def _number(req: Request, name: str, default, lo: int, hi: int, pattern=_DECIMAL,
            radix: int = 10):
    """LongParam/ShortParam: a blank value is the default; else digits (no '_', no spaces,
    ASCII only) in ``radix``, within [lo, hi]."""
    value = req.param(name)
    if value is None or not value.strip():
        return default
    if not pattern.fullmatch(value):
        kind = "an octal" if radix == 8 else "a decimal"
        raise _invalid(name, f'Failed to parse "{value[:40]}" as {kind} integer')
    number = int(value, radix)
    if not lo <= number <= hi:
        shown = (lambda n: format(n, "o")) if radix == 8 else str
        raise _invalid(name, f"Invalid parameter range: {name} = {value[:40]} is not within "
                             f"[{shown(lo)}, {shown(hi)}]")
    return number


def _int(req: Request, name: str, default=None, lo: int = LONG_MIN, hi: int = LONG_MAX):
    return _number(req, name, default, lo, hi)


def _permission(req: Request, default: int) -> int:
    return _number(req, "permission", default, 0, 0o1777, _OCTAL, 8)


def _required(req: Request, name: str, op: str) -> str:
    value = req.param(name)
    if value is None or value == "":
        raise errors.IllegalArgumentError(
            f"Required param {name} for op: {op} is null or empty")
    return value


def _destination(req: Request) -> str:
    """DestinationParam: absolute, then what Hadoop's Path makes of it."""
    value = _required(req, "destination", "RENAME")
    if not value.startswith("/"):
        raise errors.IllegalArgumentError(
            f'Invalid parameter value: destination = "{value[:200]}" is not an absolute path.')
    return _hadoop_path(value)


def _hadoop_path(path: str) -> str:
    """``new Path(s).toUri().getPath()`` for an absolute ``s``: repeated slashes collapse, a
    trailing slash goes, "." and ".." segments resolve (a ".." above the root stays and is
    then refused as an invalid name, as the NameNode does)."""
    if "//" not in path and "/." not in path and (len(path) == 1 or path[-1] != "/"):
        return path
    out: list[str] = []
    for part in path.split("/"):
        if part == ".." and out and out[-1] != "..":
            out.pop()
        elif part and part != ".":
            out.append(part)
    return "/" + "/".join(out)


def _xattr_value(text: str | None) -> bytes:
    """Hadoop's XAttrCodec.decodeValue: "..." text, 0x.. hex, 0s.. base64, else the raw
    text; no value (or an empty one) is an empty value. Bad hex is an IOException there."""
    if not text:
        return b""
    if len(text) >= 2:
        if text[0] == '"' and text[-1] == '"':
            return text[1:-1].encode()
        prefix = text[:2].lower()
        if prefix == "0x":
            if not (text.isascii() and _HEX.fullmatch(text, 2)):
                raise errors.NamenodeError(
                    "org.apache.commons.codec.DecoderException: Illegal hexadecimal value "
                    f"{text[:40]!r} (odd length or a character outside 0-9a-f)")
            return binascii.unhexlify(text[2:])
        if prefix == "0s":
            return _lenient_base64(text[2:])
    return text.encode()


def _lenient_base64(text: str) -> bytes:
    """commons-codec's Base64.decode: characters outside the alphabet (standard or URL-safe)
    are skipped, '=' ends the data, a partial last quantum decodes as far as it goes."""
    chars = "".join(c for c in text.split("=", 1)[0] if c.isascii() and (c.isalnum()
                                                                           or c in "+/-_"))
    chars = chars.translate(str.maketrans("-_", "+/"))
    if len(chars) % 4 == 1:
        chars = chars[:-1]
    return base64.b64decode(chars + "=" * (-len(chars) % 4))


def _encode_xattr(value: bytes, encoding: str) -> str | None:
    """XAttrCodec.encodeValue; an empty value is stored as none at all and shows as null."""
    if not value:
        return None
    if encoding == "HEX":
        return "0x" + value.hex()
    if encoding == "BASE64":
        return "0s" + base64.b64encode(value).decode()
    return '"' + value.decode("utf-8", "replace") + '"'


def _encoding(req: Request) -> str:
    encoding = _required(req, "encoding", "GETXATTRS").upper()
    if encoding not in ("TEXT", "HEX", "BASE64"):
        raise _invalid("encoding", f"No enum constant org.apache.hadoop.fs.XAttrCodec."
                                   f"{encoding[:40]}")
    return encoding


def _xattr_flag(req: Request) -> int:
    """XAttrSetFlagParam ("flag"): a comma-separated set of CREATE and REPLACE, required."""
    text = _required(req, "flag", "SETXATTR")
    flags = {"CREATE": XATTR_CREATE, "REPLACE": XATTR_REPLACE}
    bits = 0
    for name in text.split(","):
        flag = flags.get(name.strip().upper())
        if flag is None:
            raise _invalid("flag", f"No enum constant org.apache.hadoop.fs.XAttrSetFlag."
                                   f"{name.strip().upper()[:40]}")
        bits |= flag
    return bits


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
            handler = self.ops.get(("GET" if req.method == "HEAD" else req.method, op))
            if handler is None:
                return self._unknown(req, op)
            path = self._path(req)
            user = self.identify(req)
            result = handler(req, path, user)
        except Exception as exc:  # every error becomes a RemoteException, never a traceback
            return remote.from_error(exc)
        if isinstance(result, (Response, asyncio.Future)):
            return result
        return self._await(result)

    async def _await(self, coroutine):
        try:
            return await coroutine
        except Exception as exc:
            return remote.from_error(exc)

    def _unknown(self, req: Request, op: str) -> Response:
        """As Jersey and Hadoop answer: no op is Op.NULL, which no handler supports; any other
        op is parsed as the method's enum (GetOpParam.Op for GET, ...) and fails there."""
        if not op or op == "NULL":
            return remote.from_error(errors.UnsupportedOperationError(
                "op=NULL is not supported"))
        kind = OP_PARAM_CLASSES.get("GET" if req.method == "HEAD" else req.method)
        if kind is None:
            return remote.remote(405, "java.lang.UnsupportedOperationException",
                                 f"HTTP method {req.method[:20]} is not supported")
        return remote.illegal_argument(
            f'Invalid value for webhdfs parameter "op": No enum constant '
            f"org.apache.hadoop.hdfs.web.resources.{kind}.Op.{op[:100]}")

    def _path(self, req: Request) -> str:
        """The namespace path; the namespace validates it (paths.split) when it is used."""
        return req.path[len(PREFIX):] or "/"

    def identify(self, req: Request) -> str:
        """Who a request acts as, by Hadoop's simple authentication: ``user.name`` (else the
        static user), or the ``doas`` user it may impersonate. The data step and the catalog
        use the same rules."""
        user = req.param("user.name")
        if not user:
            user = self.default_user
        elif user in _VALID_USERS:
            pass
        elif _USER.fullmatch(user):
            if len(_VALID_USERS) < VALID_USERS_KEPT:
                _VALID_USERS.add(user)
        else:
            raise _invalid("user.name", f'Invalid value: "{user[:100]}" does not belong to '
                                        f"the domain {USER_PATTERN}")
        doas = req.param("doas")
        if doas and doas != user:
            if user not in self.proxy_users and not self.fs.caller(user).superuser:
                raise ImpersonationError(
                    "Failed to obtain user group information: org.apache.hadoop.security."
                    f"authorize.AuthorizationException: User: {user} is not allowed to "
                    f"impersonate {doas[:100]}")
            return doas
        return user

    def _answer(self, respond, method, *args):
        """Apply and log the request now (its errors raise here); answer ``respond(result)``
        once its ops are durable: a future the HTTP layer waits on (a failed sync becomes a
        RemoteException there), or the response itself when nothing was logged."""
        result, txid = self.fs.apply_and_log(method, *args)
        response = respond(result)
        return self.committer.durable(txid, response) if txid else response

    # ------------------------------------------------------------------ reads

    def get_file_status(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        with self.fs.lock:
            node = self.fs.ns.status(path, caller)
            return Response(200, f'{{"FileStatus":{file_status_json(node, "")}}}'.encode(),
                            remote.JSON)

    def list_status(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        with self.fs.lock:
            nodes, _ = self.fs.ns.listing(path, caller)
            statuses = self._listed(nodes, path, caller)
        return Response(200, file_statuses_json(statuses).encode(), remote.JSON)

    def list_status_batch(self, req, path, user) -> Response:
        caller = self.fs.caller(user)
        limit = self.fs.list_limit
        with self.fs.lock:
            nodes, remaining = self.fs.ns.listing(path, caller, req.param("startafter") or "",
                                                  limit)
            statuses = self._listed(nodes, path, caller)
        return Response(200, (f'{{"DirectoryListing":{{"partialListing":'
                              f'{file_statuses_json(statuses)},"remainingEntries":{remaining}}}}}'
                              ).encode(), remote.JSON)

    def _listed(self, nodes, path, caller) -> list[str]:
        """A file lists as itself with an empty pathSuffix (Hadoop's getListing); a directory
        lists its children by name, a file named as the directory included. Under the lock;
        each status already encoded (file_status_json)."""
        if len(nodes) == 1 and not nodes[0].is_dir and \
                self.fs.ns.status(path, caller) is nodes[0]:
            return [file_status_json(nodes[0], "")]
        return [file_status_json(n, n.name) for n in nodes]

    def content_summary(self, req, path, user) -> Response:
        """JsonUtil.toJsonMap(ContentSummary): no erasure coding and no snapshots here."""
        summary = self.fs.read(self.fs.ns.content_summary, path, self.fs.caller(user))
        return json_response({"ContentSummary": {
            **summary, "ecPolicy": "" if summary["directoryCount"] else REPLICATED,
            "snapshotDirectoryCount": 0, "snapshotFileCount": 0, "snapshotLength": 0,
            "snapshotSpaceConsumed": 0, "typeQuota": {}}})

    def quota_usage(self, req, path, user) -> Response:
        usage = self.fs.read(self.fs.ns.quota_usage, path, self.fs.caller(user))
        return json_response({"QuotaUsage": {**usage, "typeQuota": {}}})

    def home_directory(self, req, path, user) -> Response:
        return json_response({"Path": f"/user/{user}"})

    def trash_root(self, req, path, user) -> Response:
        return json_response({"Path": f"/user/{user}/.Trash"})

    def server_defaults(self, req, path, user) -> Response:
        defaults = self.fs.server_defaults()
        kind = defaults.get("checksumType")   # JsonUtil sends DataChecksum.Type's id
        defaults = {**defaults, "checksumType": CHECKSUM_TYPE_IDS.get(kind, kind)}
        return json_response({"FsServerDefaults": defaults})

    def get_xattrs(self, req, path, user) -> Response:
        encoding = _encoding(req)
        names = [n for n in req.query.get("xattr.name") or () if n]
        attrs = self.fs.read(self.fs.ns.xattrs, path, self.fs.caller(user), names)
        out = [{"name": k, "value": _encode_xattr(v, encoding)} for k, v in attrs.items()]
        return json_response({"XAttrs": out})

    def list_xattrs(self, req, path, user) -> Response:
        attrs = self.fs.read(self.fs.ns.xattrs, path, self.fs.caller(user), names_only=True)
        return json_response({"XAttrNames": json.dumps(list(attrs), separators=(",", ":"))})

    # ------------------------------------------------------------------ mutations

    def mkdirs(self, req, path, user):
        return self._answer(_true, self.fs.ns.mkdirs, path, _permission(req, 0o755),
                            self.fs.caller(user))

    def rename(self, req, path, user):
        destination = _destination(req)
        paths.split(destination)
        options = req.param("renameoptions")
        caller = self.fs.caller(user)
        if not options:         # an empty option set is the boolean rename
            return self._answer(_boolean, self.fs.ns.rename_legacy, path, destination, caller)
        names = {o.strip().upper() for o in options.split(",") if o.strip()}
        if not names <= {"NONE", "OVERWRITE", "TO_TRASH"}:
            raise BadRequest(400, f'Invalid value for webhdfs parameter "renameoptions": '
                                  f"{options!r}")
        return self._answer(_empty, self.fs.ns.rename, path, destination, "OVERWRITE" in names,
                            caller)

    def delete(self, req, path, user):
        return self._answer(_boolean, self.fs.ns.delete, path, _bool(req, "recursive"),
                            self.fs.caller(user))

    def set_permission(self, req, path, user):
        return self._answer(_empty, self.fs.ns.set_permission, path, _permission(req, 0o755),
                            self.fs.caller(user))

    def set_owner(self, req, path, user):
        if not req.param("owner") and not req.param("group"):
            raise errors.IllegalArgumentError("Both owner and group are empty.")
        return self._answer(_empty, self.fs.ns.set_owner, path, req.param("owner"),
                            req.param("group"), self.fs.caller(user))

    def set_replication(self, req, path, user):
        replication = _int(req, "replication", None, 1, 32767)
        if replication is None:
            replication = self.fs.default_replication
        return self._answer(_boolean, self.fs.ns.set_replication, path, replication,
                            self.fs.caller(user))

    def set_times(self, req, path, user):
        return self._answer(_empty, self.fs.ns.set_times, path,
                            _int(req, "modificationtime", -1, -1),
                            _int(req, "accesstime", -1, -1), self.fs.caller(user))

    def set_xattr(self, req, path, user):
        name, flag = _required(req, "xattr.name", "SETXATTR"), _xattr_flag(req)
        return self._answer(_empty, self.fs.ns.set_xattr, path, name,
                            _xattr_value(req.param("xattr.value")), flag, self.fs.caller(user))

    def remove_xattr(self, req, path, user):
        return self._answer(_empty, self.fs.ns.remove_xattr, path,
                            _required(req, "xattr.name", "REMOVEXATTR"), self.fs.caller(user))

    def set_quota(self, req, path, user):
        ns_quota = _int(req, "namespacequota", QUOTA_DONT_SET, -1)
        ss_quota = _int(req, "storagespacequota", QUOTA_DONT_SET, -1)
        return self._answer(_empty, self.fs.ns.set_quota, path,
                            None if ns_quota == QUOTA_DONT_SET else ns_quota,
                            None if ss_quota == QUOTA_DONT_SET else ss_quota,
                            self.fs.caller(user))
