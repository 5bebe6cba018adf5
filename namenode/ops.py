"""The parity table: every WebHDFS op, the ``ClientNamenodeProtocol`` call that is its twin, the
``FSNamesystem`` call (or ``files/`` helper) both make (None for a constant answer), and the
``OperationCategory`` it is checked under -- as Hadoop's ``NamenodeWebHdfsMethods`` calls the
``ClientProtocol`` methods ``NameNodeRpcServer`` serves. The twin is None for an op with no RPC call
(HttpFS and WebHDFS extras). ``tests/namenode/test_ops.py`` checks the table against WebHDFS's op
table (``http/webhdfs.py``, ``http/data.py``'s ``attach``) and ``ClientProtocol``'s
``call_*`` handlers, and runs each pair on one namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlite.namenode.fsnamesystem import OperationCategory

READ, WRITE, UNCHECKED = (OperationCategory.READ, OperationCategory.WRITE,
                          OperationCategory.UNCHECKED)


@dataclass(frozen=True, slots=True)
class Op:
    """One row: the HTTP method and op, the RPC twin, the call both make, its category."""
    method: str
    webhdfs: str
    rpc: str | None
    call: str | None            # None: a constant answer, no namespace call
    category: OperationCategory


OPS = (
    Op("GET", "GETFILESTATUS", "getFileInfo", "get_file_info", READ),
    Op("GET", "GETFILELINKSTATUS", "getFileLinkInfo", "get_file_info", READ),
    Op("GET", "LISTSTATUS", "getListing", "list_status", READ),
    Op("GET", "LISTSTATUS_BATCH", "getListing", "listing_page", READ),
    Op("GET", "GETCONTENTSUMMARY", "getContentSummary", "get_content_summary", READ),
    Op("GET", "GETQUOTAUSAGE", "getQuotaUsage", "get_quota_usage", READ),
    Op("GET", "GETHOMEDIRECTORY", None, None, UNCHECKED),
    Op("GET", "GETTRASHROOT", None, "get_trash_roots", READ),
    Op("GET", "GETTRASHROOTS", None, "get_trash_roots", READ),
    Op("GET", "GETSERVERDEFAULTS", "getServerDefaults", "server_defaults", READ),
    Op("GET", "GETXATTRS", "getXAttrs", "get_xattrs", READ),
    Op("GET", "LISTXATTRS", "listXAttrs", "get_xattrs", READ),
    Op("GET", "CHECKACCESS", "checkAccess", "check_access", READ),
    Op("GET", "GETLINKTARGET", "getLinkTarget", "get_file_info", READ),
    Op("PUT", "CREATESYMLINK", None, None, UNCHECKED),
    Op("GET", "GETDELEGATIONTOKEN", "getDelegationToken", "get_delegation_token", WRITE),
    Op("PUT", "RENEWDELEGATIONTOKEN", "renewDelegationToken", "renew_delegation_token", WRITE),
    Op("PUT", "CANCELDELEGATIONTOKEN", "cancelDelegationToken", "cancel_delegation_token",
       WRITE),
    Op("GET", "GETALLSTORAGEPOLICY", "getStoragePolicies", None, UNCHECKED),
    Op("GET", "GETSTORAGEPOLICY", "getStoragePolicy", "get_storage_policy", READ),
    Op("PUT", "SETSTORAGEPOLICY", "setStoragePolicy", "set_storage_policy", WRITE),
    Op("POST", "UNSETSTORAGEPOLICY", "unsetStoragePolicy", "unset_storage_policy", WRITE),
    Op("PUT", "SATISFYSTORAGEPOLICY", "satisfyStoragePolicy", "satisfy_storage_policy", WRITE),
    Op("GET", "GETACLSTATUS", "getAclStatus", "get_acl_status", READ),
    Op("GET", "GETECPOLICY", "getErasureCodingPolicy", "check_access", READ),
    Op("GET", "GETECPOLICIES", "getErasureCodingPolicies", None, UNCHECKED),
    Op("GET", "GETECCODECS", "getErasureCodingCodecs", None, UNCHECKED),
    Op("PUT", "SETECPOLICY", "setErasureCodingPolicy", "set_ec_policy", WRITE),
    Op("POST", "UNSETECPOLICY", "unsetErasureCodingPolicy", "unset_ec_policy", WRITE),
    Op("PUT", "ENABLEECPOLICY", "enableErasureCodingPolicy", "enable_ec_policy", WRITE),
    Op("PUT", "DISABLEECPOLICY", "disableErasureCodingPolicy", "disable_ec_policy", WRITE),
    Op("PUT", "SETQUOTABYSTORAGETYPE", "setQuota", "set_quota", WRITE),
    Op("PUT", "SETQUOTA", "setQuota", "set_quota", WRITE),
    Op("PUT", "ALLOWSNAPSHOT", "allowSnapshot", "allow_snapshot", WRITE),
    Op("PUT", "DISALLOWSNAPSHOT", "disallowSnapshot", "disallow_snapshot", WRITE),
    Op("PUT", "CREATESNAPSHOT", "createSnapshot", "create_snapshot", WRITE),
    Op("DELETE", "DELETESNAPSHOT", "deleteSnapshot", "delete_snapshot", WRITE),
    Op("PUT", "RENAMESNAPSHOT", "renameSnapshot", "rename_snapshot", WRITE),
    Op("GET", "GETSNAPSHOTDIFF", "getSnapshotDiffReport", "get_snapshot_diff", READ),
    Op("GET", "GETSNAPSHOTDIFFLISTING", "getSnapshotDiffReportListing", "get_snapshot_diff",
       READ),
    Op("GET", "GETSNAPSHOTTABLEDIRECTORYLIST", "getSnapshottableDirListing",
       "get_snapshottable_dirs", READ),
    Op("GET", "GETSNAPSHOTLIST", "getSnapshotListing", "get_snapshot_list", READ),
    Op("PUT", "SETACL", "setAcl", "change_acl", WRITE),
    Op("PUT", "MODIFYACLENTRIES", "modifyAclEntries", "change_acl", WRITE),
    Op("PUT", "REMOVEACLENTRIES", "removeAclEntries", "change_acl", WRITE),
    Op("PUT", "REMOVEDEFAULTACL", "removeDefaultAcl", "change_acl", WRITE),
    Op("PUT", "REMOVEACL", "removeAcl", "change_acl", WRITE),
    Op("PUT", "MKDIRS", "mkdirs", "mkdirs", WRITE),
    Op("PUT", "RENAME", "rename2", "rename", WRITE),
    Op("PUT", "SETPERMISSION", "setPermission", "set_permission", WRITE),
    Op("PUT", "SETOWNER", "setOwner", "set_owner", WRITE),
    Op("PUT", "SETREPLICATION", "setReplication", "set_replication", WRITE),
    Op("PUT", "SETTIMES", "setTimes", "set_times", WRITE),
    Op("PUT", "SETXATTR", "setXAttr", "set_xattr", WRITE),
    Op("PUT", "REMOVEXATTR", "removeXAttr", "remove_xattr", WRITE),
    Op("DELETE", "DELETE", "delete", "delete", WRITE),
    # the data path (http/data.py): file contents
    Op("PUT", "CREATE", "create", "start_file", WRITE),
    Op("POST", "APPEND", "append", "append_file", WRITE),
    Op("GET", "OPEN", "getBlockLocations", "get_readable_file", READ),
    Op("GET", "GETFILECHECKSUM", None, "get_readable_file", READ),
    Op("GET", "GETFILEBLOCKLOCATIONS", "getBlockLocations", "get_readable_file", READ),
    Op("GET", "GET_BLOCK_LOCATIONS", "getBlockLocations", "get_readable_file", READ),
    Op("POST", "CONCAT", "concat", "concat_files", WRITE),
    Op("POST", "TRUNCATE", "truncate", "Truncator.truncate", WRITE),
    Op("GET", "GETSTATUS", "getFsStats", None, UNCHECKED),
)

# ClientNamenodeProtocol calls no WebHDFS op twins: the steps of an RPC write (WebHDFS writes a
# body in one request), hdfs:// admin calls and the HA and datanode reports.
RPC_ONLY = frozenset({
    "getPreferredBlockSize", "isFileClosed", "getDatanodeReport", "msync", "getHAServiceState",
    "setSafeMode", "getLocatedFileInfo", "rollEdits", "saveNamespace", "listOpenFiles",
    "getCurrentEditLogTxid", "getEZForPath", "rename", "addBlock", "updateBlockForPipeline",
    "getAdditionalDatanode", "updatePipeline", "abandonBlock", "complete", "fsync",
    "renewLease", "recoverLease",
})
