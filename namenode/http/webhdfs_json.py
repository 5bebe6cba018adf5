"""The JSON that WebHDFS answers: Hadoop's JsonUtil shapes (FileStatus, listings, content
summary, quota usage, server defaults, xattrs) and the fixed answers of ops that return a
boolean or nothing.

Invariant: every body is compact JSON (``,`` and ``:`` without spaces, ASCII only, keys of a
FileStatus in sorted order) exactly as ``dumps`` writes it; the pre-formatted FileStatus of
the hot read path (``file_status_json``) gives the same bytes as ``dumps(file_status(...))``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from json.encoder import encode_basestring_ascii

from nnlite.namenode.http import remote
from nnlite.namenode.http.wire import Response
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.snapshot import Report
from nnlite.namenode.namespace.storage_policy import effective_id

CHECKSUM_TYPE_IDS = {"NULL": 0, "CRC32": 1, "CRC32C": 2}   # Hadoop's DataChecksum.Type.id
REPLICATED = "Replicated"          # ContentSummaryComputationContext.REPLICATED
EMPTY_OK = Response(200, b"", "application/octet-stream")
TRUE = Response(200, b'{"boolean":true}', remote.JSON)
FALSE = Response(200, b'{"boolean":false}', remote.JSON)


def answer_true(_result: object) -> Response:
    return TRUE


def answer_boolean(ok: bool) -> Response:
    return TRUE if ok else FALSE


def answer_empty(_result: object) -> Response:
    return EMPTY_OK


# built once: json.dumps(**kw) builds one per call
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_string = encode_basestring_ascii     # how _ENCODER writes a str (ensure_ascii)


def dumps(obj: object) -> bytes:
    return _ENCODER.encode(obj).encode()


def json_response(obj: object) -> Response:
    """200 with ``obj`` as compact JSON (and no Content-Type header: see remote.JSON)."""
    return Response(200, dumps(obj), remote.JSON)


def file_status(node: INode, suffix: str, snapshot_enabled: bool = False) -> dict:
    """Hadoop's JsonUtil.toJsonMap(HdfsFileStatus). ``file_status_json`` is the same object
    already encoded, for the hot read path. ``aclBit`` and ``snapshotEnabled`` are there only
    when true, as JsonUtil puts them."""
    if node.is_dir:
        kind, length, block_size, replication = "DIRECTORY", 0, 0, 0
        children = len(node.children)
    else:
        kind, length, block_size = "FILE", node.length, node.block_size
        replication, children = node.replication, 0
    status = {"accessTime": node.atime, "blockSize": block_size, "childrenNum": children,
              "fileId": node.id, "group": node.group, "length": length,
              "modificationTime": node.mtime, "owner": node.owner, "pathSuffix": suffix,
              "permission": format(node.permission & 0o1777, "o"),
              "replication": replication, "storagePolicy": effective_id(node), "type": kind}
    if node.acl is not None:
        status["aclBit"] = True
    if snapshot_enabled:
        status["snapshotEnabled"] = True
    return dict(sorted(status.items()))


def file_status_json(node: INode, suffix: str, snapshot_enabled: bool = False) -> str:
    """``dumps(file_status(node, suffix))`` as a str, built in one format: the read path's
    JSON without a dict and an encoder pass. Keys in the encoder's order (sorted); strings
    escaped by the encoder's own function; a non-int time (never made by the namespace) takes
    the encoder's path, so the bytes are always the encoder's."""
    mtime, atime = node.mtime, node.atime
    if type(mtime) is not int or type(atime) is not int or node.acl is not None \
            or snapshot_enabled:
        return _ENCODER.encode(file_status(node, suffix, snapshot_enabled))
    if node.is_dir:
        return (f'{{"accessTime":{atime},"blockSize":0,"childrenNum":{len(node.children)},'
                f'"fileId":{node.id},"group":{_string(node.group)},"length":0,'
                f'"modificationTime":{mtime},"owner":{_string(node.owner)},'
                f'"pathSuffix":{_string(suffix)},"permission":"{node.permission & 0o1777:o}",'
                f'"replication":0,"storagePolicy":{effective_id(node)},'
                f'"type":"DIRECTORY"}}')
    return (f'{{"accessTime":{atime},"blockSize":{node.block_size},"childrenNum":0,'
            f'"fileId":{node.id},"group":{_string(node.group)},"length":{node.length},'
            f'"modificationTime":{mtime},"owner":{_string(node.owner)},'
            f'"pathSuffix":{_string(suffix)},"permission":"{node.permission & 0o1777:o}",'
            f'"replication":{node.replication},"storagePolicy":{effective_id(node)},'
            f'"type":"FILE"}}')


def trash_root_json(path: str, node: INode) -> dict:
    """JsonUtil.toJsonMap(FileStatus), the older map GETTRASHROOTS answers with."""
    return {"path": path, "length": 0 if node.is_dir else node.length,
            "isdir": node.is_dir, "block_replication": 0 if node.is_dir else node.replication,
            "blocksize": 0 if node.is_dir else node.block_size,
            "modification_time": node.mtime, "access_time": node.atime,
            "permission": format(node.permission & 0o1777, "o"), "owner": node.owner,
            "group": node.group}


def file_statuses_json(statuses: list[str]) -> str:
    """``{"FileStatuses":{"FileStatus":[...]}}`` around already encoded statuses."""
    return '{"FileStatuses":{"FileStatus":[' + ",".join(statuses) + "]}}"


def content_summary_json(summary: dict) -> dict:
    """JsonUtil.toJsonMap(ContentSummary): no erasure coding here."""
    return {"ContentSummary": {
        **summary, "ecPolicy": "" if summary["directoryCount"] else REPLICATED,
        "typeQuota": {}}}


def quota_usage_json(usage: dict) -> dict:
    return {"QuotaUsage": {**usage, "typeQuota": {}}}


def server_defaults_json(defaults: dict) -> dict:
    kind = defaults.get("checksumType")   # JsonUtil sends DataChecksum.Type's id
    sent = CHECKSUM_TYPE_IDS.get(kind, kind) if isinstance(kind, str) else kind
    return {"FsServerDefaults": {**defaults, "checksumType": sent}}


def _encode_xattr(value: bytes, encoding: str) -> str | None:
    """XAttrCodec.encodeValue; an empty value is stored as none at all and shows as null."""
    if not value:
        return None
    if encoding == "HEX":
        return "0x" + value.hex()
    if encoding == "BASE64":
        return "0s" + base64.b64encode(value).decode()
    return '"' + value.decode("utf-8", "replace") + '"'


def xattrs_json(attrs: dict, encoding: str) -> dict:
    """GETXATTRS: each name with its value in ``encoding`` (TEXT, HEX or BASE64)."""
    return {"XAttrs": [{"name": k, "value": _encode_xattr(v, encoding)}
                       for k, v in attrs.items()]}


def acl_status_json(node: INode) -> dict:
    """JsonUtil.toJsonString(AclStatus): owner, group, sticky bit, the ACL feature's entries
    (AclStorage.readINodeAcl: named and group access entries and the default ACL, not the
    owner, mask or other held in the permission bits) and the permission in octal."""
    return {"AclStatus": {
        "entries": [acl.to_text(e) for e in node.acl or ()], "group": node.group,
        "owner": node.owner, "permission": format(node.permission & 0o1777, "o"),
        "stickyBit": bool(node.permission & 0o1000)}}


def diff_report_json(path: str, older: str, newer: str, entries: Report) -> dict:
    """JsonUtil.toJsonMap(SnapshotDiffReport): paths relative to the snapshottable
    directory, "" for itself; an empty snapshot name is the current tree."""
    return {"SnapshotDiffReport": {
        "diffList": [{"sourcePath": source, "type": kind,
                      **({"targetPath": target} if target is not None else {})}
                     for kind, source, target in entries],
        "fromSnapshot": older, "snapshotRoot": path, "toSnapshot": newer}}


def xattr_names_json(names: Iterable[str]) -> dict:
    """LISTXATTRS: the names as a JSON array inside a string, as Hadoop sends them."""
    return {"XAttrNames": json.dumps(list(names), separators=(",", ":"))}
