"""``org.apache.hadoop.hdfs.protocol.ClientProtocol`` on the namenode: one handler per call
of ``ClientNamenodeProtocol`` that nnlite serves (``NameNodeRpcServer``'s role).

A handler takes the parsed request and the ``Caller`` (who, from where) and returns the
response message, or a coroutine for one; every operation goes through ``FSNamesystem``'s
public methods with the caller's user, so permissions, leases, quotas, snapshots and safe mode
are WebHDFS's. The server sends an answer only once every op logged before it was made is
durable (``server.py``), which is how a write is acknowledged after its sync.

Answers that differ from an exception, as Hadoop's: ``getFileInfo`` and ``getListing`` of a
missing path answer an empty response (the client raises FileNotFoundException);
``getDelegationToken`` answers no token under simple authentication (no secret manager
runs); in secure mode the three token calls are ``FSNamesystem``'s, with the caller the SASL
exchange proved (a token is issued and renewed only to a Kerberos caller, as
``FSNamesystem.isAllowedDelegationTokenOp``), and the token's service left empty for the
client to set (``DFSClient.getDelegationToken``). The set of calls was read off the
clients: hdfs-native's
``rust/src/hdfs/protocol.rs`` (every ``self.call("<method>", ...)``), and Hadoop's
``DistributedFileSystem``, ``FsShell`` and Spark's checkpoint managers run against this
server (``tests/namenode/rpc``, ``tests/spark``): a call they make that is in
``ClientNamenodeProtocol`` but not served here answers UnsupportedOperationException naming
it, which is how ``getSnapshotDiffReportListing`` was found, and ``satisfyStoragePolicy`` and
the erasure coding calls once Hadoop's Java checks ran over both schemes
(``tests/namenode/test_java_*.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nnlite.formats.hadoop import acl, hdfs, security
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.namenode import errors
from nnlite.namenode.blocks.streams import GENSTAMP
from nnlite.namenode.files.truncate import Truncator
from nnlite.namenode.files.writers import concat_files
from nnlite.namenode.fsnamesystem import FileBlocks, FSNamesystem
from nnlite.namenode.namespace import erasure_coding, leases, paths, permission, storage_policy
from nnlite.namenode.rpc import status
from nnlite.namenode.rpc.status import Locator, signed
from nnlite.namenode.rpc.writes import Writes
from nnlite.namenode.security.identity import Caller
from nnlite.namenode.security.tokens import Token

CREATE, OVERWRITE = cn.CreateFlagProto.CREATE, cn.CreateFlagProto.OVERWRITE
DIFF_LABELS = {"CREATE": "+", "DELETE": "-", "MODIFY": "M", "RENAME": "R"}   # DiffType


Handler = Callable[[Any, Caller], Any]


class ClientProtocol:
    """method name -> handler (``handlers``) of ``ClientNamenodeProtocol``."""

    PROTOCOL = cn.PROTOCOL
    METHODS = cn.METHODS

    def __init__(self, fs: FSNamesystem, writes: Writes, locator: Locator,
                 ha_state: Callable[[], str] = lambda: "ACTIVE",
                 truncator: Truncator | None = None) -> None:
        self.fs = fs
        self.truncator = truncator      # the block store's truncate, as WebHDFS's
        self.writes = writes
        self.locator = locator
        self.ha_state = ha_state
        self.handlers: dict[str, Handler] = {
            name[len("call_"):]: getattr(self, name) for name in dir(self)
            if name.startswith("call_")}

    # ------------------------------------------------------------------ reads

    def call_getServerDefaults(self, req: Any, who: Caller) -> Any:
        return cn.GetServerDefaultsResponseProto(
            serverDefaults=status.server_defaults(self.fs.server_defaults()))

    def _file_info(self, path: str, who: Caller) -> Any:
        """The status of ``path``, or None where Hadoop's getFileInfo answers null: a missing
        path, and for the superuser a path under a file. A ``/.reserved`` path that resolves
        to nothing raises (FSDirectory.resolvePath's FileNotFoundException comes before the
        lookup that answers null)."""
        path = self.fs.resolve_path(path, who.user, write=False)
        try:
            return self.fs.get_file_info(path, who.user, status.file_status)
        except errors.PathNotFoundError:
            return None
        except errors.AccessControlError:
            if self.fs.caller(who.user).superuser:
                return None
            raise

    def call_getFileInfo(self, req: Any, who: Caller) -> Any:
        found = self._file_info(req.src, who)
        return cn.GetFileInfoResponseProto(fs=found) if found is not None \
            else cn.GetFileInfoResponseProto()

    def call_getFileLinkInfo(self, req: Any, who: Caller) -> Any:
        found = self._file_info(req.src, who)
        return cn.GetFileLinkInfoResponseProto(fs=found) if found is not None \
            else cn.GetFileLinkInfoResponseProto()

    def call_getListing(self, req: Any, who: Caller) -> Any:
        render = self._located_status if req.needLocation else status.file_status
        src = self.fs.resolve_path(req.src, who.user, write=False)    # as _file_info
        try:
            entries, remaining = self.fs.get_listing(
                src, who.user, render, req.startAfter.decode("utf-8", "replace"),
                self.fs.list_limit)
        except errors.PathNotFoundError:
            return cn.GetListingResponseProto()
        listing = hdfs.DirectoryListingProto(remainingEntries=remaining)
        listing.partialListing.extend(entries)
        return cn.GetListingResponseProto(dirList=listing)

    def _located_status(self, node: Any, name: str, snapshottable: bool = False) -> Any:
        """A listing entry with its block locations (``needLocation``)."""
        entry = status.file_status(node, name, snapshottable)
        if not node.is_dir:
            entry.locations.CopyFrom(self.locator.located_blocks(FileBlocks.of(node)))
        return entry

    def call_getBlockLocations(self, req: Any, who: Caller) -> Any:
        """A file being written over RPC shows the blocks written so far and the one being
        written (what an hflush made visible is read from the datanode)."""
        file = self.fs.get_readable_file(req.src, who.user)
        writing = self.writes.in_progress(file.inode_id) if file.under_construction else None
        return cn.GetBlockLocationsResponseProto(
            locations=self.locator.located_blocks(file, req.offset, req.length, writing,
                                                  user=who.user))

    def call_getContentSummary(self, req: Any, who: Caller) -> Any:
        return cn.GetContentSummaryResponseProto(
            summary=status.content_summary(self.fs.get_content_summary(req.path, who.user)))

    def call_getQuotaUsage(self, req: Any, who: Caller) -> Any:
        return cn.GetQuotaUsageResponseProto(
            usage=status.quota_usage(self.fs.get_quota_usage(req.path, who.user)))

    def call_getPreferredBlockSize(self, req: Any, who: Caller) -> Any:
        return cn.GetPreferredBlockSizeResponseProto(
            bsize=self.fs.get_readable_file(req.filename, who.user).block_size)

    def call_isFileClosed(self, req: Any, who: Caller) -> Any:
        file = self.fs.get_readable_file(req.src, who.user)
        return cn.IsFileClosedResponseProto(result=not file.under_construction)

    def call_checkAccess(self, req: Any, who: Caller) -> Any:
        self.fs.check_access(req.path, who.user, req.mode)
        return cn.CheckAccessResponseProto()

    def call_getFsStats(self, req: Any, who: Caller) -> Any:
        capacity, used, remaining = self.locator.capacity()
        return cn.GetFsStatsResponseProto(capacity=capacity, used=used, remaining=remaining,
                                          under_replicated=0, corrupt_blocks=0,
                                          missing_blocks=0, missing_repl_one_blocks=0,
                                          blocks_in_future=0, pending_deletion_blocks=0)

    def call_getDatanodeReport(self, req: Any, who: Caller) -> Any:
        """The one built-in datanode, live; none is dead or in maintenance."""
        response = cn.GetDatanodeReportResponseProto()
        kind = cn.DatanodeReportTypeProto
        if req.type in (kind.ALL, kind.LIVE) and self.locator.datanode is not None:
            response.di.append(self.locator.datanode_info())
        return response

    def call_msync(self, req: Any, who: Caller) -> Any:
        return cn.MsyncResponseProto()

    def call_getHAServiceState(self, req: Any, who: Caller) -> Any:
        state = getattr(cn.HAServiceStateProto, self.ha_state(),
                        cn.HAServiceStateProto.INITIALIZING)
        return cn.HAServiceStateResponseProto(state=state)

    def call_getDelegationToken(self, req: Any, who: Caller) -> Any:
        logged = self.fs.get_delegation_token(who.user, req.renewer, who)
        if logged is None:          # simple authentication: no token, no field
            return security.GetDelegationTokenResponseProto()
        return security.GetDelegationTokenResponseProto(token=logged.value.to_proto())

    def call_renewDelegationToken(self, req: Any, who: Caller) -> Any:
        logged = self.fs.renew_delegation_token(who.user, Token.from_proto(req.token), who)
        return security.RenewDelegationTokenResponseProto(newExpiryTime=logged.value)

    def call_cancelDelegationToken(self, req: Any, who: Caller) -> Any:
        self.fs.cancel_delegation_token(who.user, Token.from_proto(req.token), who)
        return security.CancelDelegationTokenResponseProto()

    def call_setSafeMode(self, req: Any, who: Caller) -> Any:
        action = cn.SafeModeActionProto
        if req.action != action.SAFEMODE_GET:
            permission.check_superuser(self.fs.caller(who.user), "set safe mode")
            self.fs.set_safe_mode(req.action == action.SAFEMODE_ENTER)
        return cn.SetSafeModeResponseProto(result=self.fs.safe_mode)

    def call_getStoragePolicies(self, req: Any, who: Caller) -> Any:
        response = cn.GetStoragePoliciesResponseProto()
        response.policies.extend(status.storage_policy(p) for p in storage_policy.POLICIES)
        return response

    def call_getStoragePolicy(self, req: Any, who: Caller) -> Any:
        return cn.GetStoragePolicyResponseProto(storagePolicy=status.storage_policy(
            self.fs.get_storage_policy(req.path, who.user)))

    def call_getLocatedFileInfo(self, req: Any, who: Caller) -> Any:
        found = self._file_info(req.src, who)
        if found is None:
            return cn.GetLocatedFileInfoResponseProto()
        if found.fileType == status.IS_FILE:
            found.locations.CopyFrom(self.locator.located_blocks(
                self.fs.get_readable_file(req.src, who.user), user=who.user))
        return cn.GetLocatedFileInfoResponseProto(fs=found)

    def call_getLinkTarget(self, req: Any, who: Caller) -> Any:
        """No inode is a symlink (symlinks are off, as in HDFS by default)."""
        self.fs.check_exists(req.path, who.user)
        raise errors.NamenodeError(f"Path {req.path} is not a symbolic link", path=req.path)

    def call_getSnapshottableDirListing(self, req: Any, who: Caller) -> Any:
        listed = self.fs.get_snapshottable_dirs(who.user, lambda where, node, root:
                                                hdfs.SnapshottableDirectoryStatusProto(
            dirStatus=status.file_status(node, node.name, True), snapshot_quota=root.quota,
            snapshot_number=len(root.snapshots),
            parent_fullpath=(where.rpartition("/")[0] or "/").encode()))
        if not listed:
            return cn.GetSnapshottableDirListingResponseProto()
        listing = hdfs.SnapshottableDirectoryListingProto()
        listing.snapshottableDirListing.extend(listed)
        return cn.GetSnapshottableDirListingResponseProto(snapshottableDirList=listing)

    def call_getSnapshotListing(self, req: Any, who: Caller) -> Any:
        root = paths.normalize(self.fs.resolve_path(req.snapshotRoot, who.user, write=False))
        listed = self.fs.get_snapshot_list(root, who.user, lambda snap, view:
                                           hdfs.SnapshotStatusProto(
            dirStatus=status.file_status(view, snap.name), snapshotID=snap.id,
            parent_fullpath=root.encode(), isDeleted=False))
        listing = hdfs.SnapshotListingProto()
        listing.snapshotListing.extend(listed)
        return cn.GetSnapshotListingResponseProto(snapshotList=listing)

    def call_getSnapshotDiffReport(self, req: Any, who: Caller) -> Any:
        """SnapshotDiffReportProto: paths relative to the snapshot root, each entry's kind as
        ``DiffType.getLabel`` (+, -, M, R); an empty snapshot name is the current tree."""
        older, newer = req.fromSnapshot, req.toSnapshot
        root = paths.normalize(self.fs.resolve_path(req.snapshotRoot, who.user, write=False))
        entries = self.fs.get_snapshot_diff(root, older, newer, who.user)
        report = hdfs.SnapshotDiffReportProto(snapshotRoot=root,
                                              fromSnapshot=older, toSnapshot=newer)
        for kind, source, target in entries:
            entry = report.diffReportEntries.add(fullpath=source.encode(),
                                                 modificationLabel=DIFF_LABELS[kind])
            if target is not None:
                entry.targetPath = target.encode()
        return cn.GetSnapshotDiffReportResponseProto(diffReport=report)

    def call_getSnapshotDiffReportListing(self, req: Any, who: Caller) -> Any:
        """Every entry in one page (the cursor's empty path and index -1 end the client's
        loop), as WebHDFS's GETSNAPSHOTDIFFLISTING: modified inodes, created and deleted
        ones by parent id, a rename as a deleted entry with its target plus a created one,
        both references (``SnapshotDiffReportGenerator`` pairs them)."""
        modified, created, deleted = self.fs.get_snapshot_diff(
            req.snapshotRoot, req.fromSnapshot, req.toSnapshot, who.user, listing=True)
        targets = {child: where for _, child, where in created}
        moved = {child for _, child, _ in deleted} & set(targets)
        report = hdfs.SnapshotDiffReportListingProto(
            isFromEarlier=True, cursor=hdfs.SnapshotDiffReportCursorProto(startPath=b"",
                                                                           index=-1))
        for is_dir, inode, where in modified:
            report.modifiedEntries.add(fullpath=where.encode(), dirId=inode, fileId=inode,
                                       isReference=is_dir)
        for parent, child, where in created:
            report.createdEntries.add(fullpath=where.encode(), dirId=parent, fileId=child,
                                      isReference=child in moved)
        for parent, child, where in deleted:
            entry = report.deletedEntries.add(fullpath=where.encode(), dirId=parent,
                                              fileId=child, isReference=child in moved)
            if child in targets:
                entry.targetPath = targets[child].encode()
        return cn.GetSnapshotDiffReportListingResponseProto(diffReport=report)

    async def call_rollEdits(self, req: Any, who: Caller) -> Any:
        """``dfsadmin -rollEdits``: the roll syncs and closes files, so off the loop; the
        answer is the first txid of the new segment."""
        permission.check_superuser(self.fs.caller(who.user), "roll the edit log")
        end = await asyncio.get_running_loop().run_in_executor(None, self.fs.roll_edits)
        return cn.RollEditsResponseProto(newSegmentTxId=end + 1)

    async def call_saveNamespace(self, req: Any, who: Caller) -> Any:
        """``dfsadmin -saveNamespace``: in safe mode only, as HDFS; off the loop."""
        permission.check_superuser(self.fs.caller(who.user), "save the namespace")
        await asyncio.get_running_loop().run_in_executor(None, self.fs.save_namespace)
        return cn.SaveNamespaceResponseProto(saved=True)

    def call_listOpenFiles(self, req: Any, who: Caller) -> Any:
        """``dfsadmin -listOpenFiles``: every file being written, in one batch (none is
        blocking a decommission: there is one datanode)."""
        permission.check_superuser(self.fs.caller(who.user), "list open files")
        response = cn.ListOpenFilesResponseProto(hasMore=False)
        response.types.extend(req.types)
        prefix = req.path.rstrip("/") + "/" if req.HasField("path") and req.path else "/"
        for path, inode_id, holder in self.fs.files_under_construction():
            if inode_id > req.id and (prefix == "/" or path.startswith(prefix)):
                response.entries.add(id=inode_id, path=path, clientName=holder,
                                     clientMachine="")
        return response

    def call_getCurrentEditLogTxid(self, req: Any, who: Caller) -> Any:
        permission.check_superuser(self.fs.caller(who.user), "read the current txid")
        return cn.GetCurrentEditLogTxidResponseProto(txid=self.fs.last_written_txid)

    def call_getErasureCodingPolicy(self, req: Any, who: Caller) -> Any:
        """Every file is replicated: no policy, once the caller may read the path and it
        exists (``FSDirErasureCodingOp.getErasureCodingPolicy``: "Path not found" else, as
        WebHDFS)."""
        try:
            self.fs.check_access(req.src, who.user, permission.READ)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError(f"Path not found: {req.src}", path=req.src) from exc
        return cn.GetErasureCodingPolicyResponseProto()

    def call_getErasureCodingPolicies(self, req: Any, who: Caller) -> Any:
        """Hadoop's system policies, every one DISABLED (``namespace/erasure_coding.py``)."""
        response = cn.GetErasureCodingPoliciesResponseProto()
        response.ecPolicies.extend(status.ec_policy(p) for p in erasure_coding.POLICIES)
        return response

    def call_getErasureCodingCodecs(self, req: Any, who: Caller) -> Any:
        response = cn.GetErasureCodingCodecsResponseProto()
        response.codec.extend(cn.CodecProto(codec=codec, coders=coders)
                              for codec, coders in erasure_coding.CODECS.items())
        return response

    def call_getEZForPath(self, req: Any, who: Caller) -> Any:
        self.fs.check_exists(req.src, who.user)
        return cn.GetEZForPathResponseProto()

    # ------------------------------------------------------------------ namespace writes

    def call_mkdirs(self, req: Any, who: Caller) -> Any:
        if not req.createParent:
            parent = paths.normalize(req.src).rpartition("/")[0] or "/"
            if self._file_info(parent, who) is None:
                raise errors.PathNotFoundError(f"Parent directory doesn't exist: {parent}",
                                               path=req.src)
        unmasked = req.unmasked.perm & 0o7777 if req.HasField("unmasked") else None
        logged = self.fs.mkdirs(req.src, req.masked.perm & 0o7777, who.user, unmasked)
        return cn.MkdirsResponseProto(result=bool(logged.value))

    def call_delete(self, req: Any, who: Caller) -> Any:
        return cn.DeleteResponseProto(
            result=bool(self.fs.delete(req.src, req.recursive, who.user).value))

    def call_rename(self, req: Any, who: Caller) -> Any:
        return cn.RenameResponseProto(
            result=bool(self.fs.rename_legacy(req.src, req.dst, who.user).value))

    def call_rename2(self, req: Any, who: Caller) -> Any:
        self.fs.rename(req.src, req.dst, req.overwriteDest, who.user)
        return cn.Rename2ResponseProto()

    def call_setPermission(self, req: Any, who: Caller) -> Any:
        self.fs.set_permission(req.src, req.permission.perm & 0o7777, who.user)
        return cn.SetPermissionResponseProto()

    def call_setOwner(self, req: Any, who: Caller) -> Any:
        owner = req.username if req.HasField("username") else None
        group = req.groupname if req.HasField("groupname") else None
        self.fs.set_owner(req.src, owner or None, group or None, who.user)
        return cn.SetOwnerResponseProto()

    def call_setTimes(self, req: Any, who: Caller) -> Any:
        self.fs.set_times(req.src, signed(req.mtime), signed(req.atime), who.user)
        return cn.SetTimesResponseProto()

    def call_setReplication(self, req: Any, who: Caller) -> Any:
        return cn.SetReplicationResponseProto(
            result=bool(self.fs.set_replication(req.src, req.replication, who.user).value))

    def call_setQuota(self, req: Any, who: Caller) -> Any:
        ns_quota, ss_quota = signed(req.namespaceQuota), signed(req.storagespaceQuota)
        self.fs.set_quota(req.path, ns_quota, ss_quota, who.user,
                          req.storageType if req.HasField("storageType") else None)
        return cn.SetQuotaResponseProto()

    def call_concat(self, req: Any, who: Caller) -> Any:
        concat_files(self.fs, self.writes.leases, req.trg, list(req.srcs), who.user,
                     who.machine)
        return cn.ConcatResponseProto()

    def call_setStoragePolicy(self, req: Any, who: Caller) -> Any:
        self.fs.set_storage_policy(req.src, req.policyName, who.user)
        return cn.SetStoragePolicyResponseProto()

    def call_unsetStoragePolicy(self, req: Any, who: Caller) -> Any:
        self.fs.unset_storage_policy(req.src, who.user)
        return cn.UnsetStoragePolicyResponseProto()

    def call_satisfyStoragePolicy(self, req: Any, who: Caller) -> Any:
        self.fs.satisfy_storage_policy(req.src, who.user)
        return cn.SatisfyStoragePolicyResponseProto()

    def call_setErasureCodingPolicy(self, req: Any, who: Caller) -> Any:
        """No policy is enabled; a call without a name asks for the default policy, which
        is none (``NameNodeRpcServer.setErasureCodingPolicy``)."""
        self.fs.set_ec_policy(req.src, req.ecPolicyName, who.user)
        return cn.SetErasureCodingPolicyResponseProto()

    def call_unsetErasureCodingPolicy(self, req: Any, who: Caller) -> Any:
        self.fs.unset_ec_policy(req.src, who.user)
        return cn.UnsetErasureCodingPolicyResponseProto()

    def call_enableErasureCodingPolicy(self, req: Any, who: Caller) -> Any:
        self.fs.enable_ec_policy(req.ecPolicyName, who.user)
        return cn.EnableErasureCodingPolicyResponseProto()

    def call_disableErasureCodingPolicy(self, req: Any, who: Caller) -> Any:
        self.fs.disable_ec_policy(req.ecPolicyName, who.user)
        return cn.DisableErasureCodingPolicyResponseProto()

    def call_allowSnapshot(self, req: Any, who: Caller) -> Any:
        self.fs.allow_snapshot(req.snapshotRoot, who.user)
        return cn.AllowSnapshotResponseProto()

    def call_disallowSnapshot(self, req: Any, who: Caller) -> Any:
        self.fs.disallow_snapshot(req.snapshotRoot, who.user)
        return cn.DisallowSnapshotResponseProto()

    def call_createSnapshot(self, req: Any, who: Caller) -> Any:
        name = req.snapshotName if req.HasField("snapshotName") else None
        where = self.fs.create_snapshot(req.snapshotRoot, name or None, who.user).value
        return cn.CreateSnapshotResponseProto(snapshotPath=where)

    def call_deleteSnapshot(self, req: Any, who: Caller) -> Any:
        self.fs.delete_snapshot(req.snapshotRoot, req.snapshotName, who.user)
        return cn.DeleteSnapshotResponseProto()

    def call_renameSnapshot(self, req: Any, who: Caller) -> Any:
        self.fs.rename_snapshot(req.snapshotRoot, req.snapshotOldName, req.snapshotNewName,
                                who.user)
        return cn.RenameSnapshotResponseProto()

    def call_getXAttrs(self, req: Any, who: Caller) -> Any:
        names = [_xattr_name(x) for x in req.xAttrs]
        found = self.fs.get_xattrs(req.src, who.user, names or None)
        response = cn.GetXAttrsResponseProto()
        response.xAttrs.extend(_xattr(name, value) for name, value in found.items())
        return response

    def call_listXAttrs(self, req: Any, who: Caller) -> Any:
        found = self.fs.get_xattrs(req.src, who.user, names_only=True)
        response = cn.ListXAttrsResponseProto()
        response.xAttrs.extend(_xattr(name, None) for name in found)
        return response

    def call_setXAttr(self, req: Any, who: Caller) -> Any:
        self.fs.set_xattr(req.src, _xattr_name(req.xAttr), req.xAttr.value, req.flag,
                          who.user)
        return cn.SetXAttrResponseProto()

    def call_removeXAttr(self, req: Any, who: Caller) -> Any:
        self.fs.remove_xattr(req.src, _xattr_name(req.xAttr), who.user)
        return cn.RemoveXAttrResponseProto()

    def call_getAclStatus(self, req: Any, who: Caller) -> Any:
        return acl.GetAclStatusResponseProto(
            result=self.fs.get_acl_status(req.src, who.user, _acl_status))

    def call_setAcl(self, req: Any, who: Caller) -> Any:
        return self._change_acl(req, who, "set", True, acl.SetAclResponseProto)

    def call_modifyAclEntries(self, req: Any, who: Caller) -> Any:
        return self._change_acl(req, who, "modify", True, acl.ModifyAclEntriesResponseProto)

    def call_removeAclEntries(self, req: Any, who: Caller) -> Any:
        return self._change_acl(req, who, "remove", False, acl.RemoveAclEntriesResponseProto)

    def call_removeDefaultAcl(self, req: Any, who: Caller) -> Any:
        return self._change_acl(req, who, "remove_default", None,
                                acl.RemoveDefaultAclResponseProto)

    def call_removeAcl(self, req: Any, who: Caller) -> Any:
        return self._change_acl(req, who, "remove_all", None, acl.RemoveAclResponseProto)

    def _change_acl(self, req: Any, who: Caller, change: str, with_permission: bool | None,
                    response: Any) -> Any:
        """One of the five ACL changes (``FSDirAclOp``); entries as ``namespace/acl.py``
        keeps them, without permissions for a removal."""
        spec = [] if with_permission is None else [
            (e.scope, e.type, e.name, e.permissions if with_permission else None)
            for e in req.aclSpec]
        self.fs.change_acl(req.src, change, spec, who.user)
        return response()

    # ------------------------------------------------------------------ file contents

    def call_create(self, req: Any, who: Caller) -> Any:
        if req.createFlag & cn.CreateFlagProto.APPEND:
            raise errors.UnsupportedOperationError(
                "create with the APPEND flag is not supported: call append", path=req.src)
        unmasked = req.unmasked.perm & 0o7777 if req.HasField("unmasked") else None
        logged = self.writes.create(
            req.src, who.user, req.clientName, who.machine,
            permission=req.masked.perm & 0o7777, overwrite=bool(req.createFlag & OVERWRITE),
            create_parent=req.createParent, replication=req.replication or
            self.fs.default_replication, block_size=req.blockSize or self.fs.block_size,
            unmasked=unmasked)
        return cn.CreateResponseProto(fs=status.file_status(logged.value, ""))

    def call_append(self, req: Any, who: Caller) -> Any:
        logged = self.writes.append(req.src, who.user, req.clientName, who.machine)
        return cn.AppendResponseProto(stat=status.file_status(logged.value, ""))

    def call_addBlock(self, req: Any, who: Caller) -> Any:
        file = self.writes.file(req.src, req.clientName, req.fileId)
        previous = (req.previous.blockId, req.previous.numBytes) \
            if req.HasField("previous") else None
        block = self.writes.add_block(file, previous)
        located = self.locator.located(block, self.writes.offset(file), write=True,
                                       exclude=frozenset(n.id.datanodeUuid
                                                         for n in req.excludeNodes),
                                       user=who.user)
        self.writes.placed(file, block[0], len(located.locs))
        return cn.AddBlockResponseProto(block=located)

    def call_updateBlockForPipeline(self, req: Any, who: Caller) -> Any:
        """A pipeline being rebuilt without a datanode that failed (``DataStreamer
        .setupPipelineForAppendOrRecovery``): HDFS answers the block with a new generation
        stamp; here every block keeps ``GENSTAMP`` (the datanodes recover a replica by its
        id and acknowledged bytes), so the answer is the block with a fresh write token."""
        file = self.writes.writing(req.clientName, req.block.blockId)
        block = (req.block.blockId, req.block.numBytes, GENSTAMP)
        return cn.UpdateBlockForPipelineResponseProto(
            block=self.locator.located(block, self.writes.offset(file), write=True,
                                       user=who.user))

    def call_getAdditionalDatanode(self, req: Any, who: Caller) -> Any:
        """A datanode in place of one a pipeline lost (``DataStreamer
        .addDatanode2ExistingPipeline``, when ``ReplaceDatanodeOnFailure`` asks for one: a
        file of replication 3 or more that lost a datanode; never below 3 under the DEFAULT
        policy, Hadoop's and hdfs-native's). HDFS answers the pipeline's datanodes and the
        ones it chose outside ``existings`` and ``excludes``; a datanode joining mid-block
        needs the replica copied to it first (TRANSFER_BLOCK), which the built-in datanode
        does not serve, so none is chosen: the answer is the pipeline's own datanodes, HDFS's
        answer when no datanode is left (an HA set of two has none), and the client's rule
        decides (Hadoop's: go on with ``...replace-datanode-on-failure.min-replication``
        datanodes or ``best-effort``, else fail; hdfs-native's: best effort)."""
        file = self.writes.writing(req.clientName, req.blk.blockId)
        block = (req.blk.blockId, req.blk.numBytes, GENSTAMP)
        base = self.locator.located(block, self.writes.offset(file), write=True,
                                    user=who.user)
        located = hdfs.LocatedBlockProto(b=base.b, offset=base.offset, corrupt=False,
                                         blockToken=base.blockToken)
        for i, node in enumerate(req.existings):
            located.locs.append(node)
            located.isCached.append(False)
            located.storageTypes.append(hdfs.StorageTypeProto.DISK)
            located.storageIDs.append(req.existingStorageUuids[i]
                                      if i < len(req.existingStorageUuids)
                                      else f"DS-{node.id.datanodeUuid}")
        return cn.GetAdditionalDatanodeResponseProto(block=located)

    def call_updatePipeline(self, req: Any, who: Caller) -> Any:
        """The rebuilt pipeline (``FSNamesystem.updatePipeline``): its datanodes are the
        block's copies from now on (fewer than wanted: under-replicated at the close)."""
        file = self.writes.writing(req.clientName, req.oldBlock.blockId)
        self.writes.placed(file, req.oldBlock.blockId, len(req.newNodes))
        return cn.UpdatePipelineResponseProto()

    def call_abandonBlock(self, req: Any, who: Caller) -> Any:
        file = self.writes.file(req.src, req.holder, req.fileId)
        self.writes.abandon_block(file, req.b.blockId)
        return cn.AbandonBlockResponseProto()

    async def call_complete(self, req: Any, who: Caller) -> Any:
        file = self.writes.file(req.src, req.clientName, req.fileId)
        last = (req.last.blockId, req.last.numBytes) if req.HasField("last") else None
        return cn.CompleteResponseProto(result=await self.writes.complete(file, last))

    async def call_truncate(self, req: Any, who: Caller) -> Any:
        """Done at once (true): the kept part of the cut block is copied into a new block
        and the file closed again, as WebHDFS's TRUNCATE does; HDFS answers false when it
        must first recover the last block, which never happens here."""
        if self.truncator is None:
            raise errors.UnsupportedOperationError("truncate needs the block store",
                                                   path=req.src)
        await self.truncator.truncate(req.src, who.user, req.newLength, who.machine)
        return cn.TruncateResponseProto(result=True)

    def call_fsync(self, req: Any, who: Caller) -> Any:
        """hflush/hsync: the lease is renewed; with ``SyncFlag.UPDATE_LENGTH`` the client
        sends its last block's length, which the namespace records (``Writes.fsync``, as
        ``FSNamesystem.fsync``)."""
        file = self.writes.file(req.src, req.client, req.fileId)
        self.writes.fsync(file, req.lastBlockLength)
        return cn.FsyncResponseProto()

    def call_renewLease(self, req: Any, who: Caller) -> Any:
        self.writes.renew(req.clientName)
        return cn.RenewLeaseResponseProto()

    def call_recoverLease(self, req: Any, who: Caller) -> Any:
        src = self.fs.resolve_path(req.src, who.user)     # the lease is the inode's path's
        file = self.fs.get_readable_file(src, who.user)
        if not file.under_construction:
            return cn.RecoverLeaseResponseProto(result=True)
        self.fs.check_target(src, who.user, permission.WRITE)
        lease = self.writes.leases.holder(paths.normalize(src))
        if lease is None or leases.upload_kind(lease.holder) is None:
            self.fs.recover_upload(src, file.inode_id)
            return cn.RecoverLeaseResponseProto(result=True)
        return cn.RecoverLeaseResponseProto(result=self.writes.recover(src))


def _acl_status(node: Any) -> Any:
    """AclStatusProto: owner, group, sticky bit, the ACL feature's entries (not those held
    in the permission bits) and the permission (``PBHelperClient.convert(AclStatus)``)."""
    status = acl.AclStatusProto(owner=node.owner, group=node.group,
                                sticky=bool(node.permission & 0o1000),
                                permission=acl.FsPermissionProto(perm=node.permission & 0o7777))
    status.entries.extend(acl.AclEntryProto(scope=scope, type=kind, name=name, permissions=perm)
                          for scope, kind, name, perm in node.acl or ())
    return status


def _xattr_name(x: Any) -> str:
    """``XAttrProto`` to the ``<namespace>.<name>`` form the namespace keeps."""
    prefix = {0: "user", 1: "trusted", 2: "security", 3: "system", 4: "raw"}[x.namespace]
    return f"{prefix}.{x.name}"


def _xattr(name: str, value: bytes | None) -> Any:
    prefix, _, rest = name.partition(".")
    kinds = {"user": 0, "trusted": 1, "security": 2, "system": 3, "raw": 4}
    x = cn.XAttrProto(namespace=kinds.get(prefix.lower(), 0), name=rest)
    if value is not None:
        x.value = value
    return x
