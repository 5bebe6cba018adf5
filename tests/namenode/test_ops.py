"""The parity table (``namenode/ops.py``) against both dispatch tables: every WebHDFS op of
``WebHdfs.ops`` (and the data path's, added by ``DataPath.attach``) is a row, every row's
RPC twin is a ``ClientProtocol`` handler, every handler is a twin or RPC-only, and every call
named is one the namesystem (or ``files/``) has; then pairs run on one namenode, over WebHDFS
and over Hadoop IPC, and refuse with the same Java class and message, or answer the same
(each answer put in one shape: the fields both wires carry)."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import hdfs, ipc, security
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
    server = start_module_namenode()
    web = WebHdfsCalls(server)
    assert web.put("/parity", "MKDIRS").status == 200
    assert web.put("/parity/child", "MKDIRS").status == 200
    return server


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


@pytest.mark.parametrize("case", ANSWERED, ids=[c[1] for c in ANSWERED])
def test_an_answer_is_the_same_over_both_transports(nn, case):
    method, op, path, params, web_shape, rpc_method, request, rpc_shape = case
    reply = WebHdfsCalls(nn).call(method, path, op, **params)
    assert reply.status == 200, (reply.status, reply.body)
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        header, payload = raw.call(rpc_method, cn.METHODS[rpc_method][0](**request))
    assert header.status == ipc.RpcResponseHeaderRpcStatusProto.SUCCESS, header
    answer, _ = parse_delimited(cn.METHODS[rpc_method][1], payload)
    assert web_shape(reply.json if reply.body else None) == rpc_shape(answer)
