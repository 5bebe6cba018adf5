"""The parity table (``namenode/ops.py``) against both dispatch tables: every WebHDFS op of
``WebHdfs.ops`` (and the data path's, added by ``DataPath.attach``) is a row, every row's
RPC twin is a ``ClientProtocol`` handler, every handler is a twin or RPC-only, and every call
named is one the namesystem (or ``files/``) has; then pairs run on one namenode, over WebHDFS
and over Hadoop IPC, and refuse with the same Java class and message, or answer the same
(each answer put in one shape: the fields both wires carry). A write runs on two siblings,
``/pair/<op>/web`` over WebHDFS and ``/pair/<op>/rpc`` over IPC, prepared alike, and must leave
both in the same state; every row with a twin is run, or ``NOT_COMPARED`` says why not."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop import acl, hdfs, ipc, security
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.acl import FsPermissionProto
from nnlite.formats.hadoop.proto import parse_delimited
from nnlite.namenode import ops
from nnlite.namenode.files import writers
from nnlite.namenode.files.truncate import Truncator
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http.data import DataPath
from nnlite.namenode.http.webhdfs import WebHdfs
from nnlite.namenode.rpc.client_protocol import ClientProtocol
from tests.namenode.http.helpers import WebHdfs as WebHdfsCalls
from tests.namenode.rpc.rawclient import RawClient

PERM = FsPermissionProto(perm=0o755)
OPEN_FILE = "/parity-open"     # a file an RPC writer ("holder") has open


def webhdfs_ops() -> set[tuple[str, str]]:
    webhdfs = WebHdfs(None, None)           # type: ignore[arg-type]  # the table only
    DataPath.__new__(DataPath).attach(webhdfs)
    return set(webhdfs.ops)


def rpc_calls() -> set[str]:
    return {name[len("call_"):] for name in dir(ClientProtocol) if name.startswith("call_")}


def test_every_webhdfs_op_is_a_row_and_every_row_an_op():
    rows = [(op.method, op.webhdfs) for op in ops.OPS]
    assert len(rows) == len(set(rows)), "a WebHDFS op is listed twice"
    assert set(rows) == webhdfs_ops()


def test_every_twin_is_an_rpc_handler_and_every_handler_a_twin_or_rpc_only():
    twins = {op.rpc for op in ops.OPS if op.rpc is not None}
    assert twins <= rpc_calls(), twins - rpc_calls()
    assert rpc_calls() - twins == ops.RPC_ONLY
    assert not twins & ops.RPC_ONLY


def test_every_call_is_the_namesystems_or_a_file_op():
    for op in ops.OPS:
        if op.call is None:
            continue
        owner, _, name = op.call.rpartition(".")
        where = {"": (FSNamesystem, writers), "Truncator": (Truncator,)}[owner]
        assert any(hasattr(w, name) for w in where), f"{op.webhdfs}: no {op.call}"


# ------------------------------------------------------------------ each pair on one namespace

TOKEN = security.TokenProto(identifier=b"", password=b"", kind="HDFS_DELEGATION_TOKEN",
                            service="")
EC = "RS-6-3-1024k"
# (WebHDFS method, op, params; RPC method, request fields): a refusal both must word the same
# (the calls come as "tester", the test namenode's superuser)
REFUSED = [
    ("PUT", "SETECPOLICY", {"ecpolicy": EC},
     "setErasureCodingPolicy", {"src": "/parity", "ecPolicyName": EC}),
    ("POST", "UNSETECPOLICY", {}, "unsetErasureCodingPolicy", {"src": "/parity"}),
    ("PUT", "ENABLEECPOLICY", {"ecpolicy": EC},
     "enableErasureCodingPolicy", {"ecPolicyName": EC}),
    ("PUT", "SATISFYSTORAGEPOLICY", {}, "satisfyStoragePolicy", {"src": "/parity"}),
    ("PUT", "SETQUOTABYSTORAGETYPE", {"storagetype": "DISK", "storagespacequota": "10"},
     "setQuota", {"path": "/parity", "namespaceQuota": (1 << 63) - 1,
                  "storagespaceQuota": 10, "storageType": hdfs.StorageTypeProto.DISK}),
    ("PUT", "RENEWDELEGATIONTOKEN", {"token": "x"}, "renewDelegationToken", {"token": TOKEN}),
    ("PUT", "CANCELDELEGATIONTOKEN", {"token": "x"}, "cancelDelegationToken", {"token": TOKEN}),
    ("PUT", "SETOWNER", {}, "setOwner", {"src": "/parity"}),
    ("PUT", "MKDIRS", {}, "mkdirs", {"src": "/parity/missing/../x/..", "masked": PERM,
                                     "createParent": True}),
    ("DELETE", "DELETE", {"recursive": "false"}, "delete", {"src": "/parity",
                                                            "recursive": False}),
]


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    server = start_module_namenode(files={f"/pair/{op}/{side}": 3 for op in FILE_PAIRS
                                          for side in ("web", "rpc", "web-src", "rpc-src")})
    web = WebHdfsCalls(server)
    assert web.put("/parity", "MKDIRS").status == 200
    assert web.put("/parity/child", "MKDIRS").status == 200
    with RawClient(server.rpc_port).connect(user="tester") as raw:    # a writer holds it
        raw.answer("create", cn.CreateRequestProto(
            src=OPEN_FILE, masked=PERM, clientName="holder", createFlag=1, createParent=True,
            replication=1, blockSize=1 << 27))
    for op, steps in PREPARED.items():
        for side in ("web", "rpc"):
            for method, step, suffix, params in steps:
                reply = web.call(method, f"/pair/{op}/{side}{suffix}", step, **params)
                assert reply.status == 200, (op, step, reply.body)
    return server


# ------------------------------------------------------------------ answers, in one shape

def signed(value: int) -> int:
    """A proto uint64 as the Java long it carries (PBHelperClient: -1 for "no quota")."""
    return value - (1 << 64) if value >= 1 << 63 else value


def status_of_web(answer: dict) -> dict:
    s = answer["FileStatus"]
    return {"type": s["type"], "permission": int(s["permission"], 8), "owner": s["owner"],
            "group": s["group"], "length": s["length"], "replication": s["replication"],
            "blockSize": s["blockSize"], "childrenNum": s["childrenNum"],
            "fileId": s["fileId"], "modificationTime": s["modificationTime"]}


def status_of_rpc(answer) -> dict:
    s = answer.fs
    return {"type": {1: "DIRECTORY", 2: "FILE", 3: "SYMLINK"}[s.fileType],
            "permission": s.permission.perm, "owner": s.owner, "group": s.group,
            "length": s.length, "replication": s.block_replication, "blockSize": s.blocksize,
            "childrenNum": s.childrenNum, "fileId": s.fileId,
            "modificationTime": s.modification_time}


SUMMARY = ("length", "fileCount", "directoryCount", "quota", "spaceConsumed", "spaceQuota")
QUOTA = ("fileAndDirectoryCount", "quota", "spaceConsumed", "spaceQuota")
DEFAULTS = ("blockSize", "bytesPerChecksum", "writePacketSize", "replication",
            "fileBufferSize", "trashInterval")


def fields(message, names) -> dict:
    return {name: signed(getattr(message, name)) for name in names}


def acl_of_web(answer: dict) -> dict:
    a = answer["AclStatus"]
    return {"owner": a["owner"], "group": a["group"], "sticky": a["stickyBit"],
            "permission": int(a["permission"], 8), "entries": len(a["entries"])}


def acl_of_rpc(answer) -> dict:
    a = answer.result
    return {"owner": a.owner, "group": a.group, "sticky": a.sticky,
            "permission": a.permission.perm, "entries": len(a.entries)}


def nothing(_answer) -> None:
    return None


# (WebHDFS method, op, path, params, its answer in the common shape; RPC method, request
# fields, its answer in that shape): a success both must answer the same
ANSWERED = [
    ("GET", "GETFILESTATUS", "/parity", {}, status_of_web,
     "getFileInfo", {"src": "/parity"}, status_of_rpc),
    ("GET", "LISTSTATUS", "/parity", {},
     lambda a: [s["pathSuffix"] for s in a["FileStatuses"]["FileStatus"]],
     "getListing", {"src": "/parity", "startAfter": b"", "needLocation": False},
     lambda a: [s.path.decode() for s in a.dirList.partialListing]),
    ("GET", "GETCONTENTSUMMARY", "/parity", {},
     lambda a: {k: a["ContentSummary"][k] for k in SUMMARY},
     "getContentSummary", {"path": "/parity"}, lambda a: fields(a.summary, SUMMARY)),
    ("GET", "GETQUOTAUSAGE", "/parity", {},
     lambda a: {k: a["QuotaUsage"][k] for k in QUOTA},
     "getQuotaUsage", {"path": "/parity"}, lambda a: fields(a.usage, QUOTA)),
    ("GET", "GETACLSTATUS", "/parity", {}, acl_of_web,
     "getAclStatus", {"src": "/parity"}, acl_of_rpc),
    ("GET", "CHECKACCESS", "/parity", {"fsaction": "r-x"}, nothing,
     "checkAccess", {"path": "/parity", "mode": 5}, nothing),
    ("GET", "GETSERVERDEFAULTS", "/", {},
     lambda a: {k: a["FsServerDefaults"][k] for k in DEFAULTS},
     "getServerDefaults", {}, lambda a: fields(a.serverDefaults, DEFAULTS)),
    ("GET", "GETSTORAGEPOLICY", "/parity", {},
     lambda a: a["BlockStoragePolicy"]["name"],
     "getStoragePolicy", {"path": "/parity"}, lambda a: a.storagePolicy.name),
    ("PUT", "SETPERMISSION", "/parity/child", {"permission": "755"}, nothing,
     "setPermission", {"src": "/parity/child", "permission": PERM}, nothing),
    ("PUT", "MKDIRS", "/made/web", {}, lambda a: a["boolean"],
     "mkdirs", {"src": "/made/rpc", "masked": PERM, "createParent": True},
     lambda a: a.result),
]


# ------------------------------------------------------------------ pairs on two siblings

def status_after(web: WebHdfsCalls, path: str) -> dict | None:
    """What a case leaves at ``path``: its status but for what tells siblings apart (None:
    no such path)."""
    reply = web.get(path, "GETFILESTATUS")
    if reply.status == 404:
        return None
    assert reply.status == 200, (path, reply.body)
    status = reply.json["FileStatus"]
    return {k: v for k, v in status.items()
            if k not in ("fileId", "modificationTime", "accessTime", "pathSuffix")}


def times_after(web: WebHdfsCalls, path: str) -> tuple[int, int]:
    status = web.status(path)
    return status["modificationTime"], status["accessTime"]


def acl_after(web: WebHdfsCalls, path: str) -> tuple[list, str]:
    acl = web.get(path, "GETACLSTATUS").json["AclStatus"]
    return acl["entries"], acl["permission"]


def quota_after(web: WebHdfsCalls, path: str) -> dict:
    usage = web.get(path, "GETQUOTAUSAGE").json["QuotaUsage"]
    return {k: usage[k] for k in QUOTA}


def snapshots_after(web: WebHdfsCalls, path: str) -> list[str] | None:
    reply = web.get(path, "GETSNAPSHOTLIST")
    if reply.status != 200:
        return None
    return sorted(s["fullPath"].rpartition("/")[2] for s in reply.json["SnapshotList"])


def xattrs_after(web: WebHdfsCalls, path: str) -> str:
    return web.get(path, "LISTXATTRS").json["XAttrNames"]


def sibling(shape):
    """``shape`` but for the inode id and the time that tell two siblings apart."""
    return lambda answer: {k: v for k, v in shape(answer).items()
                           if k not in ("fileId", "modificationTime")}


def moved(after):
    """What a rename leaves: its source's status and ``after`` of its destination (the
    sibling's path with "2" added)."""
    return lambda web, path: (status_after(web, path), after(web, path + "2"))


def pair(op: str, params: dict, rpc_method: str, request, web_shape=nothing,
         rpc_shape=nothing, *, method: str = "PUT", after=status_after) -> tuple:
    """A case on two siblings: ``op`` over WebHDFS on ``/pair/<op>/web``, its twin over IPC on
    ``/pair/<op>/rpc`` (``request(path)``: its fields), then ``after`` of each must match."""
    web, rpc = f"/pair/{op}/web", f"/pair/{op}/rpc"
    return (method, op, web, params, web_shape, rpc_method, request(rpc), rpc_shape,
            (web, rpc, after))


def acl_entry(kind: str, perms: int, name: str = "alice"):
    """An access entry of the aclspec ``<kind>:<name>:<perms>`` (perms as rwx bits)."""
    return acl.AclEntryProto(type=getattr(acl.AclEntryTypeProto, kind),
                             scope=acl.AclEntryScopeProto.ACCESS, permissions=perms, name=name)


XATTR = cn.XAttrProto(namespace=cn.XAttrNamespaceProto.USER, name="a", value=b"1")
SET_XATTR = ("PUT", "SETXATTR", "", {"xattr.name": "user.a", "xattr.value": "0x31",
                                    "flag": "CREATE"})
DIR, ALLOW = ("PUT", "MKDIRS", "", {}), ("PUT", "ALLOWSNAPSHOT", "", {})
SNAP = ("PUT", "CREATESNAPSHOT", "", {"snapshotname": "s1"})
DIFFERED = [DIR, ALLOW, SNAP, ("PUT", "MKDIRS", "/d", {}),
            ("PUT", "CREATESNAPSHOT", "", {"snapshotname": "s2"})]
ALICE_RWX = ("PUT", "MODIFYACLENTRIES", "", {"aclspec": "user:alice:rwx"})
# what each sibling holds before its case runs (besides the seeded files of FILE_PAIRS)
PREPARED = {
    "GETFILELINKSTATUS": [DIR], "LISTSTATUS_BATCH": [DIR, ("PUT", "MKDIRS", "/a", {})],
    "GETXATTRS": [DIR, SET_XATTR], "LISTXATTRS": [DIR, SET_XATTR], "SETXATTR": [DIR],
    "REMOVEXATTR": [DIR, SET_XATTR], "GETECPOLICY": [DIR],
    "SETSTORAGEPOLICY": [DIR],
    "UNSETSTORAGEPOLICY": [DIR, ("PUT", "SETSTORAGEPOLICY", "", {"storagepolicy": "COLD"})],
    "SETQUOTA": [DIR], "ALLOWSNAPSHOT": [DIR], "DISALLOWSNAPSHOT": [DIR, ALLOW],
    "CREATESNAPSHOT": [DIR, ALLOW], "RENAMESNAPSHOT": [DIR, ALLOW, SNAP],
    "DELETESNAPSHOT": [DIR, ALLOW, SNAP], "GETSNAPSHOTLIST": [DIR, ALLOW, SNAP],
    "GETSNAPSHOTDIFF": DIFFERED, "GETSNAPSHOTDIFFLISTING": DIFFERED,
    "SETACL": [DIR], "MODIFYACLENTRIES": [DIR], "REMOVEACLENTRIES": [DIR, ALICE_RWX],
    "REMOVEACL": [DIR, ALICE_RWX],
    "REMOVEDEFAULTACL": [DIR, ("PUT", "MODIFYACLENTRIES", "",
                               {"aclspec": "default:user:alice:r-x"})],
    "RENAME": [DIR, ("PUT", "MKDIRS", "2", {})], "SETOWNER": [DIR], "SETTIMES": [DIR],
    "DELETE": [DIR, ("PUT", "MKDIRS", "/d", {})],
}
# seeded files (3 bytes, one block): the siblings and a second file each ("-src")
FILE_PAIRS = ("SETREPLICATION", "TRUNCATE", "CONCAT", "GETFILEBLOCKLOCATIONS",
              "GET_BLOCK_LOCATIONS", "CREATE")


DIFF_TYPES = {"+": "CREATE", "-": "DELETE", "M": "MODIFY", "R": "RENAME"}


def diff_of_web(answer: dict) -> list:
    return sorted((d["type"], d["sourcePath"]) for d in answer["SnapshotDiffReport"]["diffList"])


def diff_of_rpc(answer) -> list:
    return sorted((DIFF_TYPES[d.modificationLabel], d.fullpath.decode())
                  for d in answer.diffReport.diffReportEntries)


def listing_of_web(answer: dict) -> list:
    report = answer["SnapshotDiffReportListing"]
    return [len(report[k]) for k in ("modifyList", "createList", "deleteList")]


def listing_of_rpc(answer) -> list:
    report = answer.diffReport
    return [len(report.modifiedEntries), len(report.createdEntries), len(report.deletedEntries)]


def optional(name: str):
    """The answer's field ``name``, None when the message leaves it out (JSON's null)."""
    return lambda answer: getattr(answer, name) if answer.HasField(name) else None


ANSWERED += [
    pair("GETFILELINKSTATUS", {}, "getFileLinkInfo", lambda p: {"src": p},
         sibling(status_of_web), sibling(status_of_rpc), method="GET"),
    pair("LISTSTATUS_BATCH", {},
         "getListing", lambda p: {"src": p, "startAfter": b"", "needLocation": False},
         lambda a: [s["pathSuffix"] for s in
                    a["DirectoryListing"]["partialListing"]["FileStatuses"]["FileStatus"]],
         lambda a: [s.path.decode() for s in a.dirList.partialListing], method="GET"),
    pair("GETXATTRS", {"encoding": "hex"}, "getXAttrs", lambda p: {"src": p},
         lambda a: [(x["name"], x["value"]) for x in a["XAttrs"]],
         lambda a: [(f"user.{x.name}", "0x" + x.value.hex()) for x in a.xAttrs], method="GET"),
    pair("LISTXATTRS", {}, "listXAttrs", lambda p: {"src": p},
         lambda a: a["XAttrNames"],
         lambda a: '["' + '","'.join(f"user.{x.name}" for x in a.xAttrs) + '"]', method="GET"),
    pair("SETXATTR", SET_XATTR[3], "setXAttr",
         lambda p: {"src": p, "xAttr": XATTR, "flag": cn.XAttrSetFlagProto.XATTR_CREATE},
         after=xattrs_after),
    pair("REMOVEXATTR", {"xattr.name": "user.a"}, "removeXAttr",
         lambda p: {"src": p, "xAttr": cn.XAttrProto(
             namespace=cn.XAttrNamespaceProto.USER, name="a")},
         after=xattrs_after),
    pair("GETECPOLICY", {}, "getErasureCodingPolicy", lambda p: {"src": p},
         lambda a: a, optional("ecPolicy"), method="GET"),
    pair("SETSTORAGEPOLICY", {"storagepolicy": "COLD"}, "setStoragePolicy",
         lambda p: {"src": p, "policyName": "COLD"}),
    pair("UNSETSTORAGEPOLICY", {}, "unsetStoragePolicy", lambda p: {"src": p},
         method="POST"),
    pair("SETQUOTA", {"namespacequota": "100", "storagespacequota": "1000"}, "setQuota",
         lambda p: {"path": p, "namespaceQuota": 100, "storagespaceQuota": 1000},
         after=quota_after),
    pair("ALLOWSNAPSHOT", {}, "allowSnapshot", lambda p: {"snapshotRoot": p},
         after=snapshots_after),
    pair("DISALLOWSNAPSHOT", {}, "disallowSnapshot", lambda p: {"snapshotRoot": p},
         after=snapshots_after),
    pair("CREATESNAPSHOT", {"snapshotname": "s2"}, "createSnapshot",
         lambda p: {"snapshotRoot": p, "snapshotName": "s2"},
         lambda a: a["Path"].rpartition("/.snapshot/")[2],
         lambda a: a.snapshotPath.rpartition("/.snapshot/")[2], after=snapshots_after),
    pair("RENAMESNAPSHOT", {"oldsnapshotname": "s1", "snapshotname": "s3"}, "renameSnapshot",
         lambda p: {"snapshotRoot": p, "snapshotOldName": "s1", "snapshotNewName": "s3"},
         after=snapshots_after),
    pair("DELETESNAPSHOT", {"snapshotname": "s1"}, "deleteSnapshot",
         lambda p: {"snapshotRoot": p, "snapshotName": "s1"}, method="DELETE",
         after=snapshots_after),
    pair("GETSNAPSHOTLIST", {}, "getSnapshotListing", lambda p: {"snapshotRoot": p},
         lambda a: [s["fullPath"].rpartition("/")[2] for s in a["SnapshotList"]],
         lambda a: [s.dirStatus.path.decode() for s in a.snapshotList.snapshotListing],
         method="GET"),
    pair("GETSNAPSHOTDIFF", {"oldsnapshotname": "s1", "snapshotname": "s2"},
         "getSnapshotDiffReport",
         lambda p: {"snapshotRoot": p, "fromSnapshot": "s1", "toSnapshot": "s2"},
         diff_of_web, diff_of_rpc, method="GET"),
    pair("GETSNAPSHOTDIFFLISTING", {"oldsnapshotname": "s1", "snapshotname": "s2"},
         "getSnapshotDiffReportListing",
         lambda p: {"snapshotRoot": p, "fromSnapshot": "s1", "toSnapshot": "s2"},
         listing_of_web, listing_of_rpc, method="GET"),
    pair("SETACL", {"aclspec": "user::rwx,user:alice:r-x,group::r-x,other::---"}, "setAcl",
         lambda p: {"src": p, "aclSpec": [
             acl_entry("USER", 7, ""), acl_entry("USER", 5), acl_entry("GROUP", 5, ""),
             acl_entry("OTHER", 0, "")]},
         after=acl_after),
    pair("MODIFYACLENTRIES", {"aclspec": "user:alice:rwx"}, "modifyAclEntries",
         lambda p: {"src": p, "aclSpec": [acl_entry("USER", 7)]}, after=acl_after),
    pair("REMOVEACLENTRIES", {"aclspec": "user:alice:"}, "removeAclEntries",
         lambda p: {"src": p, "aclSpec": [acl_entry("USER", 0)]}, after=acl_after),
    pair("REMOVEDEFAULTACL", {}, "removeDefaultAcl", lambda p: {"src": p}, after=acl_after),
    pair("REMOVEACL", {}, "removeAcl", lambda p: {"src": p}, after=acl_after),
    pair("RENAME", {"destination": "/pair/RENAME/web2", "renameoptions": "OVERWRITE"},
         "rename2", lambda p: {"src": p, "dst": p + "2", "overwriteDest": True},
         after=moved(status_after)),
    pair("SETOWNER", {"owner": "alice", "group": "staff"}, "setOwner",
         lambda p: {"src": p, "username": "alice", "groupname": "staff"}),
    pair("SETTIMES", {"modificationtime": "1000", "accesstime": "2000"}, "setTimes",
         lambda p: {"src": p, "mtime": 1000, "atime": 2000}, after=times_after),
    pair("DELETE", {"recursive": "true"}, "delete", lambda p: {"src": p, "recursive": True},
         lambda a: a["boolean"], lambda a: a.result, method="DELETE"),
    pair("SETREPLICATION", {"replication": "2"}, "setReplication",
         lambda p: {"src": p, "replication": 2}, lambda a: a["boolean"], lambda a: a.result),
    pair("TRUNCATE", {"newlength": "0"}, "truncate",
         lambda p: {"src": p, "newLength": 0, "clientName": "parity"},
         lambda a: a["boolean"], lambda a: a.result, method="POST"),
    pair("CONCAT", {"sources": "/pair/CONCAT/web-src"}, "concat",
         lambda p: {"trg": p, "srcs": [p + "-src"]}, method="POST",
         after=lambda web, path: (status_after(web, path), status_after(web, path + "-src"))),
    pair("GETFILEBLOCKLOCATIONS", {}, "getBlockLocations",
         lambda p: {"src": p, "offset": 0, "length": 3},
         lambda a: [(b["offset"], b["length"]) for b in a["BlockLocations"]["BlockLocation"]],
         lambda a: [(b.offset, b.b.numBytes) for b in a.locations.blocks], method="GET"),
    pair("GET_BLOCK_LOCATIONS", {}, "getBlockLocations",
         lambda p: {"src": p, "offset": 0, "length": 3},
         lambda a: (a["LocatedBlocks"]["fileLength"],
                    [b["block"]["numBytes"] for b in a["LocatedBlocks"]["locatedBlocks"]]),
         lambda a: (a.locations.fileLength, [b.b.numBytes for b in a.locations.blocks]),
         method="GET"),
    ("GET", "GETDELEGATIONTOKEN", "/", {}, lambda a: a["Token"],
     "getDelegationToken", {"renewer": "tester"}, optional("token")),
    ("GET", "GETALLSTORAGEPOLICY", "/", {},
     lambda a: [p["name"] for p in a["BlockStoragePolicies"]["BlockStoragePolicy"]],
     "getStoragePolicies", {}, lambda a: [p.name for p in a.policies]),
    ("GET", "GETECPOLICIES", "/", {},
     lambda a: [p["policy"]["name"] for p in a["ErasureCodingPolicies"]
                ["ErasureCodingPolicyInfo"]],
     "getErasureCodingPolicies", {}, lambda a: [p.name for p in a.ecPolicies]),
    ("GET", "GETECCODECS", "/", {}, lambda a: a["ErasureCodingCodecs"],
     "getErasureCodingCodecs", {}, lambda a: {c.codec: c.coders for c in a.codec}),
    ("GET", "GETSNAPSHOTTABLEDIRECTORYLIST", "/", {},
     lambda a: sorted(d["parentFullPath"] + "/" + d["dirStatus"]["pathSuffix"]
                      for d in a["SnapshottableDirectoryList"]),
     "getSnapshottableDirListing", {},
     lambda a: sorted(d.parent_fullpath.decode() + "/" + d.dirStatus.path.decode() for d in
                      a.snapshottableDirList.snapshottableDirListing)),
    ("PUT", "DISABLEECPOLICY", "/", {"ecpolicy": EC}, nothing,
     "disableErasureCodingPolicy", {"ecPolicyName": EC}, nothing),
    ("GET", "GETSTATUS", "/", {}, lambda a: a["FsStatus"]["capacity"],
     "getFsStats", {}, lambda a: a.capacity),
]

# CREATE, APPEND and OPEN succeed in different steps on the two wires (WebHDFS's first step only
# checks, then redirects to the data step; the twin opens the file and its lease, or locates its
# blocks): what both decide alike is whom they refuse -- "file exists", the lease another
# writer holds, a directory
REFUSED += [
    ("PUT", "CREATE", {"overwrite": "false"}, "create", {
        "src": "/pair/CREATE/web", "masked": PERM, "clientName": "parity", "createFlag": 1,
        "createParent": True, "replication": 1, "blockSize": 1 << 27}),
    ("POST", "APPEND", {}, "append", {"src": "/parity", "clientName": "parity"}),
    ("POST", "APPEND", {}, "append", {"src": OPEN_FILE, "clientName": "parity"}),
    ("PUT", "CREATE", {"overwrite": "true"}, "create", {
        "src": OPEN_FILE, "masked": PERM, "clientName": "parity", "createFlag": 3,
        "createParent": True, "replication": 1, "blockSize": 1 << 27}),
    ("GET", "OPEN", {}, "getBlockLocations", {"src": "/parity", "offset": 0, "length": 1}),
    ("GET", "GETLINKTARGET", {}, "getLinkTarget", {"path": "/parity"}),
    ("POST", "CONCAT", {"sources": "/parity/child"}, "concat",
     {"trg": "/parity", "srcs": ["/parity/child"]}),
]

# rows with a twin that no case here runs, and why
NOT_COMPARED: dict[str, str] = {}


def test_every_row_with_a_twin_is_compared_or_says_why_not():
    twinned = {op.webhdfs for op in ops.OPS if op.rpc is not None}
    compared = {c[1] for c in ANSWERED} | {c[1] for c in REFUSED}
    assert twinned - compared == set(NOT_COMPARED), twinned - compared
    assert not compared & set(NOT_COMPARED)


# ------------------------------------------------------------------ the runs

@pytest.mark.parametrize("case", REFUSED, ids=[c[1] for c in REFUSED])
def test_a_refusal_is_the_same_over_both_transports(nn, case):
    method, op, params, rpc_method, fields = case
    path = fields.get("src", fields.get("path", "/parity"))
    reply = WebHdfsCalls(nn).call(method, path, op, **params)
    assert reply.status >= 400, (reply.status, reply.body)
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        header, _ = raw.call(rpc_method, cn.METHODS[rpc_method][0](**fields))
    assert header.status == ipc.RpcResponseHeaderRpcStatusProto.ERROR, header
    assert (header.exceptionClassName, header.errorMsg) == (reply.java_class, reply.message)


@pytest.mark.parametrize("case", ANSWERED, ids=[c[1] for c in ANSWERED])
def test_an_answer_is_the_same_over_both_transports(nn, case):
    method, op, path, params, web_shape, rpc_method, request, rpc_shape, *leaves = case
    reply = WebHdfsCalls(nn).call(method, path, op, **params)
    assert reply.status == 200, (reply.status, reply.body)
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        header, payload = raw.call(rpc_method, cn.METHODS[rpc_method][0](**request))
    assert header.status == ipc.RpcResponseHeaderRpcStatusProto.SUCCESS, header
    answer, _ = parse_delimited(cn.METHODS[rpc_method][1], payload)
    assert web_shape(reply.json if reply.body else None) == rpc_shape(answer)
    for web_path, rpc_path, after in leaves:
        web = WebHdfsCalls(nn)
        assert after(web, web_path) == after(web, rpc_path)
