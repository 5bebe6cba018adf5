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
NamenodeWebHdfsMethods.validateOpParams does (params.py). The JSON bodies are written by
webhdfs_json.py. HEAD answers as GET without the body.

Every handler calls one of ``FSNamesystem``'s operations. Reads run synchronously on the event
loop (the namesystem renders their FileStatus JSON under its lock); mutations are applied and
logged at once and then awaited until their txid is durable (committer.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from nnlite.client import java_classes as java
from nnlite.namenode import errors
from nnlite.namenode.fsnamesystem import QUOTA_DONT_SET, FSNamesystem, Listing
from nnlite.namenode.http import remote
from nnlite.namenode.http.authentication import HttpAuthentication
from nnlite.namenode.http.params import (
    invalid_param,
    param_aclspec,
    param_bool,
    param_destination,
    param_encoding,
    param_int,
    param_permission,
    param_required,
    param_unmasked,
    param_xattr_flag,
    param_xattr_value,
)
from nnlite.namenode.http.webhdfs_json import (
    EMPTY_OK,
    acl_status_json,
    answer_boolean,
    answer_empty,
    answer_true,
    content_summary_json,
    diff_report_json,
    file_status_json,
    file_statuses_json,
    json_response,
    quota_usage_json,
    server_defaults_json,
    trash_root_json,
    xattr_names_json,
    xattrs_json,
)
from nnlite.namenode.http.wire import BadRequest, Request, Response
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.journal.journal import Logged
from nnlite.namenode.namespace import erasure_coding, paths, permission, storage_policy
from nnlite.namenode.security.identity import Caller, effective_user
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.tokens import Token

PREFIX = "/webhdfs/v1"
DEFAULT_USER = "dr.who"
USER_PATTERN = "^[A-Za-z_][A-Za-z0-9._-]*[$]?$"        # UserParam's default domain
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*[$]?")    # fullmatch: "$" would allow "\n"
_FS_ACTION = re.compile(r"[r-][w-][x-]")                # FsActionParam's domain
_SLASHES = re.compile(r"//+")
CREATING_OPS = {"MKDIRS", "CREATE", "CREATESYMLINK"}
_VALID_USERS: set[str] = set()                         # names that matched _USER
# The names kept are caller-supplied: bounded in bytes as well as in number (at most
# 10,000 x 256 characters), so long distinct names cannot grow the process.
VALID_USERS_KEPT = 10_000
CACHED_NAME_MAX = 256
WEBHDFS_TOKEN_KIND = "WEBHDFS delegation"     # WebHdfsConstants: the kinds of tokens
SWEBHDFS_TOKEN_KIND = "SWEBHDFS delegation"   # GETDELEGATIONTOKEN hands out
OP_PARAM_CLASSES = {"GET": "GetOpParam", "PUT": "PutOpParam", "POST": "PostOpParam",
                    "DELETE": "DeleteOpParam"}


# --------------------------------------------------------------------------- the application

class WebHdfs:
    """Maps (method, op) to handlers. ``fs`` is the FSNamesystem, ``committer`` the
    AsyncCommitter; ``identity`` decides who may act as whom (``doas``)."""

    def __init__(self, fs: FSNamesystem, committer: AsyncCommitter, *,
                 default_user: str = DEFAULT_USER,
                 proxy_users: ProxyUsers | None = None,
                 authentication: HttpAuthentication | None = None):
        self.fs = fs
        self.authentication = authentication    # secure mode's door; None: simple mode
        # the service a delegation token names: the RPC address, once it listens (app.py)
        self.token_service: Callable[[], str] = lambda: ""
        self.committer = committer
        self.default_user = default_user
        self.proxy_users = proxy_users or ProxyUsers({})
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
            ("GET", "CHECKACCESS"): self.check_access,
            ("GET", "GETLINKTARGET"): self.link_target,
            ("PUT", "CREATESYMLINK"): self.create_symlink,
            ("GET", "GETTRASHROOTS"): self.trash_roots,
            ("GET", "GETDELEGATIONTOKEN"): self.delegation_token,
            ("GET", "GETALLSTORAGEPOLICY"): self.all_storage_policies,
            ("GET", "GETSTORAGEPOLICY"): self.storage_policy,
            ("PUT", "SETSTORAGEPOLICY"): self.set_storage_policy,
            ("POST", "UNSETSTORAGEPOLICY"): self.unset_storage_policy,
            ("PUT", "SATISFYSTORAGEPOLICY"): self.satisfy_storage_policy,
            ("GET", "LISTXATTRS"): self.list_xattrs,
            ("GET", "GETACLSTATUS"): self.acl_status,
            ("GET", "GETECPOLICY"): self.ec_policy,
            ("GET", "GETECPOLICIES"): self.ec_policies,
            ("GET", "GETECCODECS"): self.ec_codecs,
            ("PUT", "SETECPOLICY"): self.set_ec_policy,
            ("POST", "UNSETECPOLICY"): self.unset_ec_policy,
            ("PUT", "ENABLEECPOLICY"): self.enable_ec_policy,
            ("PUT", "DISABLEECPOLICY"): self.disable_ec_policy,
            ("PUT", "SETQUOTABYSTORAGETYPE"): self.set_quota_by_storage_type,
            ("PUT", "RENEWDELEGATIONTOKEN"): self.renew_delegation_token,
            ("PUT", "CANCELDELEGATIONTOKEN"): self.cancel_delegation_token,
            ("PUT", "ALLOWSNAPSHOT"): self.allow_snapshot,
            ("PUT", "DISALLOWSNAPSHOT"): self.disallow_snapshot,
            ("PUT", "CREATESNAPSHOT"): self.create_snapshot,
            ("DELETE", "DELETESNAPSHOT"): self.delete_snapshot,
            ("PUT", "RENAMESNAPSHOT"): self.rename_snapshot,
            ("GET", "GETSNAPSHOTDIFF"): self.snapshot_diff,
            ("GET", "GETSNAPSHOTDIFFLISTING"): self.snapshot_diff_listing,
            ("GET", "GETSNAPSHOTTABLEDIRECTORYLIST"): self.snapshottable_dirs,
            ("GET", "GETSNAPSHOTLIST"): self.snapshot_list,
            ("PUT", "SETACL"): self.acl_change("set", True),
            ("PUT", "MODIFYACLENTRIES"): self.acl_change("modify", True),
            ("PUT", "REMOVEACLENTRIES"): self.acl_change("remove", False),
            ("PUT", "REMOVEDEFAULTACL"): self.acl_change("remove_default", None),
            ("PUT", "REMOVEACL"): self.acl_change("remove_all", None),
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

    def __call__(self, req: Request) -> Any:
        """A Response, or for a write one released once it is durable (``_answer``)."""
        try:
            op = (req.param("op") or "").upper()
            handler = self.ops.get(("GET" if req.method == "HEAD" else req.method, op))
            if handler is None:
                return self._unknown(req, op)
            path = self._path(req)
            user = self.identify(req)
            return handler(req, path, user)
        except Exception as exc:  # every error becomes a RemoteException, never a traceback
            return remote.from_error(exc)

    def _unknown(self, req: Request, op: str) -> Response:
        """As Jersey and Hadoop answer: no op is Op.NULL, which no handler supports; any other
        op is parsed as the method's enum (GetOpParam.Op for GET, ...) and fails there."""
        if not op or op == "NULL":
            return remote.from_error(errors.UnsupportedOperationError(
                "op=NULL is not supported"))
        kind = OP_PARAM_CLASSES.get("GET" if req.method == "HEAD" else req.method)
        if kind is None:
            return remote.remote(405, java.UNSUPPORTED_OPERATION,
                                 f"HTTP method {req.method[:20]} is not supported")
        return remote.illegal_argument(
            f'Invalid value for webhdfs parameter "op": No enum constant '
            f"org.apache.hadoop.hdfs.web.resources.{kind}.Op.{op[:100]}")

    def _path(self, req: Request) -> str:
        """The namespace path; the namespace validates it (paths.split) when it is used.
        Repeated slashes are one, as the NameNode splits a path (INode.getPathComponents),
        except in a path an op creates, which must be a valid name (DFSUtil.isValidName)."""
        path = req.path[len(PREFIX):] or "/"
        if "//" in path.rstrip("/"):
            if (req.param("op") or "").upper() in CREATING_OPS:
                raise errors.InvalidPathError(f"Invalid file name: {path}", path=path)
            path = _SLASHES.sub("/", path)
        return path

    def identify(self, req: Request) -> str:
        """Who a request acts as. In secure mode, who it proved to be (``caller``). By
        Hadoop's simple authentication: ``user.name`` (else the static user), or the ``doas``
        user it may impersonate. The data step and the catalog use the same rules."""
        if self.authentication is not None:
            return self.caller(req).user
        user = req.param("user.name")
        if not user:
            user = self.default_user
        elif user in _VALID_USERS:
            pass
        elif _USER.fullmatch(user):
            if len(_VALID_USERS) < VALID_USERS_KEPT and len(user) <= CACHED_NAME_MAX:
                _VALID_USERS.add(user)
        else:
            raise invalid_param("user.name", f'Invalid value: "{user[:100]}" does not belong to '
                                        f"the domain {USER_PATTERN}")
        doas = req.param("doas")
        if doas and doas != user and not _USER.fullmatch(doas):
            raise invalid_param("doas", f'Invalid value: "{doas[:100]}" does not belong '
                                        f"to the domain {USER_PATTERN}")
        return effective_user(user, doas, self.proxy_users,
                              lambda name: self.fs.caller(name).groups,
                              req.peer[0] if req.peer else None)

    def caller(self, req: Request) -> Caller:
        """Secure mode's caller of a proved request (``HttpAuthentication.caller``)."""
        assert self.authentication is not None and req.proof is not None
        return self.authentication.caller(req, req.proof)

    def _answer(self, respond: Callable[[Any], Response], logged: Logged[Any]) -> Any:
        """Answer ``respond(value)`` of a write the namesystem applied and logged (its errors
        were raised there) once its ops are durable: the committer's ``Durable``, which the
        HTTP layer waits on (a failed sync becomes a RemoteException there), or the response
        itself when nothing was logged."""
        response = respond(logged.value)
        return self.committer.durable(logged.txid, response) if logged.txid else response

    # ------------------------------------------------------------------ reads

    def get_file_status(self, req: Request, path: str, user: str) -> Response:
        """A path under a file is "File does not exist" for the superuser (the only
        AccessControlException it can meet resolving a path; FSDirStatAndListingOp.getFileInfo
        answers null) and that AccessControlException for anyone else. A ``/.reserved`` path
        is resolved first (its FileNotFoundException stands); a path that names nothing is
        "File does not exist" of the path as asked (NamenodeWebHdfsMethods: getFileInfo
        answered null)."""
        resolved = self.fs.resolve_path(path, user, write=False)
        try:
            status = self.fs.get_file_info(resolved, user, file_status_json)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path) from exc
        except errors.AccessControlError as exc:
            if not self.fs.caller(user).superuser:
                raise
            raise errors.PathNotFoundError(f"File does not exist: {path}", path=path) from exc
        return Response(200, f'{{"FileStatus":{status}}}'.encode(), remote.JSON)

    def list_status(self, req: Request, path: str, user: str) -> Response:
        """A directory of up to ``dfs.ls.limit`` entries is answered at once; a larger one is
        streamed a page at a time, as Hadoop's NamenodeWebHdfsMethods answers LISTSTATUS
        with ``getListingStream``: the namesystem lock is held for one page, a page is
        produced only when the client has taken the one before, and each page waits until
        what it shows is durable (app.py's rule for every answer)."""
        limit = self.fs.list_limit
        listing = self._listed(path, user, lambda resolved: self.fs.list_status(
            resolved, user, file_status_json, limit))
        if listing.entries is not None:
            return Response(200, file_statuses_json(listing.entries).encode(), remote.JSON)
        return Response(200, content_type=remote.JSON, pieces=self._pages(listing, limit))

    async def _pages(self, listing: Listing, limit: int) -> AsyncIterator[bytes]:
        names = listing.names
        yield b'{"FileStatuses":{"FileStatus":['
        sep = ""
        for start in range(0, len(names), limit):
            entries, txid = self.fs.listing_page(listing, names[start:start + limit],
                                                 file_status_json)
            page = ",".join(entries)
            if self.fs.last_synced_txid < txid:
                await self.committer.durable(txid)
            if page:
                yield (sep + page).encode()
                sep = ","
        yield b"]}}"

    def _listed(self, path: str, user: str, listing: Callable[[str], Any]) -> Any:
        """``listing`` of ``path`` once a ``/.reserved`` prefix is resolved (whose
        FileNotFoundException stands); a path that does not exist is NamenodeWebHdfsMethods'
        "File <path> does not exist." (getDirectoryListing: getListing answered null)."""
        resolved = self.fs.resolve_path(path, user, write=False)
        try:
            return listing(resolved)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError(f"File {path} does not exist.", path=path) from exc

    def list_status_batch(self, req: Request, path: str, user: str) -> Response:
        statuses, remaining = self._listed(path, user, lambda resolved: self.fs.get_listing(
            resolved, user, file_status_json, req.param("startafter") or "",
            self.fs.list_limit))
        return Response(200, (f'{{"DirectoryListing":{{"partialListing":'
                              f'{file_statuses_json(statuses)},"remainingEntries":{remaining}}}}}'
                              ).encode(), remote.JSON)

    def content_summary(self, req: Request, path: str, user: str) -> Response:
        summary = self.fs.get_content_summary(path, user)
        return json_response(content_summary_json(summary))

    def quota_usage(self, req: Request, path: str, user: str) -> Response:
        usage = self.fs.get_quota_usage(path, user)
        return json_response(quota_usage_json(usage))

    def home_directory(self, req: Request, path: str, user: str) -> Response:
        return json_response({"Path": f"/user/{user}"})

    def trash_root(self, req: Request, path: str, user: str) -> Response:
        return json_response({"Path": f"/user/{user}/.Trash"})

    def check_access(self, req: Request, path: str, user: str) -> Response:
        """CHECKACCESS (``FileSystem.access``, ``hadoop fs -test -r/-w/-x``): 200 when the
        caller has ``fsaction`` on the path, as FSPermissionChecker decides, else
        AccessControlException."""
        action = param_required(req, "fsaction", "CHECKACCESS")
        if not _FS_ACTION.fullmatch(action):
            raise invalid_param("fsaction", f'Invalid value: "{action[:20]}" does not belong '
                                            f"to the domain {_FS_ACTION.pattern}")
        wanted = sum(bit for letter, bit in zip(action, (4, 2, 1), strict=True) if letter != "-")
        self.fs.check_access(path, user, wanted)
        return Response(200, b"", remote.JSON)

    def link_target(self, req: Request, path: str, user: str) -> Response:
        """No inode is a symlink here (symlinks are off, as in HDFS by default), so
        NameNodeRpcServer.getLinkTarget refuses every existing path."""
        self.fs.check_exists(path, user)
        raise errors.NamenodeError(f"Path {path} is not a symbolic link", path=path)

    def create_symlink(self, req: Request, path: str, user: str) -> Response:
        """FSNamesystem.createSymlink while FileSystem.areSymlinksEnabled() is false (the
        default): UnsupportedOperationException."""
        param_required(req, "destination", "CREATESYMLINK")
        raise errors.UnsupportedOperationError("Symlinks not supported", path=path)

    def trash_roots(self, req: Request, path: str, user: str) -> Response:
        """GETTRASHROOTS: the existing ``/user/<name>/.Trash`` of the caller (``allusers``:
        of every user whose home the caller can list), as DistributedFileSystem.getTrashRoots
        lists them, each in JsonUtil's FileStatus map."""
        roots = self.fs.get_trash_roots(user, param_bool(req, "allusers"), trash_root_json)
        return json_response({"Paths": roots})

    def delegation_token(self, req: Request, path: str, user: str) -> Any:
        """GETDELEGATIONTOKEN. Simple mode: no secret manager runs, ``{"Token":null}``. Secure
        mode, as NamenodeWebHdfsMethods: not with a ``delegation=`` ("delegation parameter is
        not null."), not for a caller a token authenticated (the namesystem refuses); a token
        for the caller renewable by ``renewer`` (default: the caller), of kind ``WEBHDFS
        delegation`` (``SWEBHDFS delegation`` over HTTPS) for the RPC address as its service,
        ``service`` and ``kind`` overriding them; ``{"Token":{"urlString":...}}`` once logged."""
        if self.authentication is None:
            return json_response({"Token": self.fs.get_delegation_token(user)})
        if req.param("delegation"):
            raise errors.IllegalArgumentError("delegation parameter is not null.")
        caller = self.caller(req)
        logged = self.fs.get_delegation_token(caller.user, req.param("renewer") or caller.user,
                                              caller)
        if logged is None:
            return json_response({"Token": None})
        return self._answer(lambda token: json_response({"Token": None if token is None else {
            "urlString": self.issued(req, token).encode_url()}}), logged)

    def issued(self, req: Request, token: Token) -> Token:
        """The token as NamenodeWebHdfsMethods.generateDelegationToken hands it out."""
        kind = WEBHDFS_TOKEN_KIND if req.scheme == "http" else SWEBHDFS_TOKEN_KIND
        return token.with_service(req.param("service") or self.token_service(),
                                  req.param("kind") or kind)

    def all_storage_policies(self, req: Request, path: str, user: str) -> Response:
        return json_response({"BlockStoragePolicies": {"BlockStoragePolicy": [
            p.to_json() for p in storage_policy.POLICIES]}})

    def storage_policy(self, req: Request, path: str, user: str) -> Response:
        policy = self.fs.get_storage_policy(path, user)
        return json_response({"BlockStoragePolicy": policy.to_json()})

    def set_storage_policy(self, req: Request, path: str, user: str) -> Any:
        name = param_required(req, "storagepolicy", "SETSTORAGEPOLICY")
        return self._answer(answer_empty, self.fs.set_storage_policy(path, name, user))

    def unset_storage_policy(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.unset_storage_policy(path, user))

    def satisfy_storage_policy(self, req: Request, path: str, user: str) -> Response:
        self.fs.satisfy_storage_policy(path, user)
        return EMPTY_OK

    # ------------------------------------------------ erasure coding: every policy disabled

    def ec_policy(self, req: Request, path: str, user: str) -> Response:
        """FSDirErasureCodingOp.getErasureCodingPolicy: READ on the path, then no policy
        (JSON null) for a replicated path; JsonUtil sends a policy as the bare map
        WebHdfsFileSystem reads."""
        try:
            self.fs.check_access(path, user, permission.READ)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError(f"Path not found: {path}", path=path) from exc
        return json_response(None)

    def ec_policies(self, req: Request, path: str, user: str) -> Response:
        return json_response({"ErasureCodingPolicies": {"ErasureCodingPolicyInfo": [
            {"policy": p.to_json(), "state": "DISABLED"} for p in erasure_coding.POLICIES]}})

    def ec_codecs(self, req: Request, path: str, user: str) -> Response:
        return json_response({"ErasureCodingCodecs": erasure_coding.CODECS})

    def set_ec_policy(self, req: Request, path: str, user: str) -> Response:
        self.fs.set_ec_policy(path, req.param("ecpolicy") or "", user)
        return EMPTY_OK

    def unset_ec_policy(self, req: Request, path: str, user: str) -> Response:
        self.fs.unset_ec_policy(path, user)
        return EMPTY_OK

    def enable_ec_policy(self, req: Request, path: str, user: str) -> Response:
        self.fs.enable_ec_policy(param_required(req, "ecpolicy", "ENABLEECPOLICY"), user)
        return EMPTY_OK

    def disable_ec_policy(self, req: Request, path: str, user: str) -> Response:
        self.fs.disable_ec_policy(param_required(req, "ecpolicy", "DISABLEECPOLICY"), user)
        return answer_empty(True)

    def set_quota_by_storage_type(self, req: Request, path: str, user: str) -> Response:
        storage_type = param_required(req, "storagetype", "SETQUOTABYSTORAGETYPE")
        return self._answer(answer_empty, self.fs.set_quota(
            path, param_int(req, "storagespacequota", QUOTA_DONT_SET, -1), None, user,
            storage_type))

    def renew_delegation_token(self, req: Request, path: str, user: str) -> Any:
        """RENEWDELEGATIONTOKEN ``token=``: ``{"long": <new expiry ms>}``, by the token's
        renewer as Kerberos proved it (simple mode: refused)."""
        text = param_required(req, "token", "RENEWDELEGATIONTOKEN")
        if self.authentication is None:
            return json_response({"long": self.fs.renew_delegation_token(user)})
        return self._answer(lambda expiry: json_response({"long": expiry}),
                            self.fs.renew_delegation_token(user, Token.decode_url(text),
                                                           self.caller(req)))

    def cancel_delegation_token(self, req: Request, path: str, user: str) -> Any:
        """CANCELDELEGATIONTOKEN ``token=``: by its owner or renewer; 200, empty."""
        text = param_required(req, "token", "CANCELDELEGATIONTOKEN")
        if self.authentication is None:
            self.fs.cancel_delegation_token(user)
            return EMPTY_OK
        return self._answer(lambda _: EMPTY_OK, self.fs.cancel_delegation_token(
            user, Token.decode_url(text), self.caller(req)))

    def server_defaults(self, req: Request, path: str, user: str) -> Response:
        return json_response(server_defaults_json(self.fs.server_defaults()))

    def get_xattrs(self, req: Request, path: str, user: str) -> Response:
        encoding = param_encoding(req)
        names = [n for n in req.query.get("xattr.name") or () if n]
        attrs = self.fs.get_xattrs(path, user, names)
        return json_response(xattrs_json(attrs, encoding))

    def list_xattrs(self, req: Request, path: str, user: str) -> Response:
        attrs = self.fs.get_xattrs(path, user, names_only=True)
        return json_response(xattr_names_json(attrs))

    def acl_status(self, req: Request, path: str, user: str) -> Response:
        return json_response(self.fs.get_acl_status(path, user, acl_status_json))

    def snapshot_diff(self, req: Request, path: str, user: str) -> Response:
        older, newer = req.param("oldsnapshotname") or "", req.param("snapshotname") or ""
        path = self.fs.resolve_path(path, user, write=False)  # the report names the root's path
        entries = self.fs.get_snapshot_diff(path, older, newer, user)
        return json_response(diff_report_json(paths.normalize(path), older, newer, entries))

    def snapshot_diff_listing(self, req: Request, path: str, user: str) -> Response:
        """JsonUtil.toJsonMap(SnapshotDiffReportListing), every entry in one page (lastPath
        "" and lastIndex -1 end the client's loop): modified inodes (a directory with
        isReference, so Hadoop's SnapshotDiffReportGenerator lists its entries), created and
        deleted ones by parent id, a rename as a deleted entry with its targetPath plus a
        created one, both isReference."""
        older, newer = req.param("oldsnapshotname") or "", req.param("snapshotname") or ""
        modified, created, deleted = self.fs.get_snapshot_diff(path, older, newer, user,
                                                               listing=True)
        targets = {child: where for _, child, where in created}
        moved = {child for _, child, _ in deleted} & set(targets)

        def entry(dir_id: int, file_id: int, source: str, reference: bool,
                  target: str | None = None) -> dict:
            out = {"dirId": dir_id, "fileId": file_id, "isReference": reference,
                   "sourcePath": source}
            if target is not None:
                out["targetPath"] = target
            return out
        return json_response({"SnapshotDiffReportListing": {
            "createList": [entry(p, c, w, c in moved) for p, c, w in created],
            "deleteList": [entry(p, c, w, c in moved, targets.get(c)) for p, c, w in deleted],
            "isFromEarlier": True, "lastIndex": -1, "lastPath": "",
            "modifyList": [entry(i, i, w, is_dir) for is_dir, i, w in modified]}})

    def snapshottable_dirs(self, req: Request, path: str, user: str) -> Response:
        """SnapshottableDirectoryStatus per directory (JsonUtil.toJsonMap)."""
        listed = self.fs.get_snapshottable_dirs(user, lambda where, node, root: {
            "dirStatus": json.loads(file_status_json(node, node.name, True)),
            "parentFullPath": where.rpartition("/")[0] or "/",
            "snapshotNumber": len(root.snapshots), "snapshotQuota": root.quota})
        return json_response({"SnapshottableDirectoryList": listed})

    def snapshot_list(self, req: Request, path: str, user: str) -> Response:
        """SnapshotStatus per snapshot (JsonUtil.toJsonMap): the snapshot's root as it was,
        named as the snapshot, under the directory's own path (an inode path resolved)."""
        path = self.fs.resolve_path(path, user, write=False)
        where = paths.normalize(path).rstrip("/")
        listed = self.fs.get_snapshot_list(path, user, lambda snap, view: {
            "deletionStatus": "ACTIVE",
            "dirStatus": json.loads(file_status_json(view, snap.name)),
            "fullPath": f"{where}/.snapshot/{snap.name}", "snapshotID": snap.id})
        return json_response({"SnapshotList": listed})

    # ------------------------------------------------------------------ mutations

    def allow_snapshot(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.allow_snapshot(path, user))

    def disallow_snapshot(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.disallow_snapshot(path, user))

    def create_snapshot(self, req: Request, path: str, user: str) -> Any:
        return self._answer(lambda where: json_response({"Path": where}),
                            self.fs.create_snapshot(path, req.param("snapshotname") or None,
                                                    user))

    def delete_snapshot(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.delete_snapshot(
            path, req.param("snapshotname") or "", user))

    def rename_snapshot(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.rename_snapshot(
            path, param_required(req, "oldsnapshotname", "RENAMESNAPSHOT"),
            param_required(req, "snapshotname", "RENAMESNAPSHOT"), user))

    def acl_change(self, change: str,
                   with_permission: bool | None) -> Callable[[Request, str, str], Any]:
        """The handler of one of the five ACL changes; ``with_permission`` None: no aclspec."""
        def handler(req: Request, path: str, user: str) -> Any:
            spec = [] if with_permission is None else param_aclspec(req, with_permission)
            return self._answer(answer_empty, self.fs.change_acl(path, change, spec, user))
        return handler

    def mkdirs(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_true, self.fs.mkdirs(path, param_permission(req, 0o755), user,
                                                        param_unmasked(req)))

    def rename(self, req: Request, path: str, user: str) -> Any:
        destination = param_destination(req)
        paths.split(destination)
        options = req.param("renameoptions")
        if not options:         # an empty option set is the boolean rename
            return self._answer(answer_boolean, self.fs.rename_legacy(path, destination, user))
        names = {o.strip().upper() for o in options.split(",") if o.strip()}
        if not names <= {"NONE", "OVERWRITE", "TO_TRASH"}:
            raise BadRequest(400, f'Invalid value for webhdfs parameter "renameoptions": '
                                  f"{options!r}")
        return self._answer(answer_empty, self.fs.rename(path, destination, "OVERWRITE" in names,
                                                         user))

    def delete(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_boolean, self.fs.delete(path, param_bool(req, "recursive"),
                                                           user))

    def set_permission(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.set_permission(
            path, param_permission(req, 0o755), user))

    def set_owner(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.set_owner(path, req.param("owner"),
                                                            req.param("group"), user))

    def set_replication(self, req: Request, path: str, user: str) -> Any:
        replication = param_int(req, "replication", None, 1, 32767)
        if replication is None:
            replication = self.fs.default_replication
        return self._answer(answer_boolean, self.fs.set_replication(path, replication, user))

    def set_times(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.set_times(
            path, param_int(req, "modificationtime", -1, -1),
            param_int(req, "accesstime", -1, -1), user))

    def set_xattr(self, req: Request, path: str, user: str) -> Any:
        name, flag = param_required(req, "xattr.name", "SETXATTR"), param_xattr_flag(req)
        return self._answer(answer_empty, self.fs.set_xattr(
            path, name, param_xattr_value(req.param("xattr.value")), flag, user))

    def remove_xattr(self, req: Request, path: str, user: str) -> Any:
        return self._answer(answer_empty, self.fs.remove_xattr(
            path, param_required(req, "xattr.name", "REMOVEXATTR"), user))

    def set_quota(self, req: Request, path: str, user: str) -> Any:
        ns_quota = param_int(req, "namespacequota", QUOTA_DONT_SET, -1)
        ss_quota = param_int(req, "storagespacequota", QUOTA_DONT_SET, -1)
        return self._answer(answer_empty, self.fs.set_quota(path, ns_quota, ss_quota, user))
