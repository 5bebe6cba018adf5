"""etcd's v3 JSON gateway encoding (grpc-gateway's mapping of etcd's protobuf messages): the
records of ``messages.py`` to request bodies, answer bodies back to records, and an error
answer to the typed error that says what to do about it. Pure functions; no I/O.

* **Wire.** Keys and values are base64; int64 fields travel as JSON strings; a field at its
  default (0, false, empty) is left out of an answer (and of a request).
* **Refusals.** A call's error answer is ``{"error", "message", "code"}``, a stream's
  ``{"error": {"grpc_code", "message"}}``; ``classify`` turns etcd's gRPC status code and
  message into ``EtcdUnavailableError`` (try another member: Unavailable, DeadlineExceeded,
  "too many requests"), ``EtcdRequestError`` (the request itself: malformed, over
  ``MAX_TXN_OPS`` or ``MAX_REQUEST_BYTES``; ``EtcdLeaseNotFoundError``),
  ``EtcdCompactedError`` or a plain ``EtcdError``. An answer that is not a JSON object is not
  etcd's gateway at all: ``EtcdUnavailableError``.
* **Answers this client cannot read** raise ``ValueError`` (and the like) here; the client
  names the member (``client.py``'s ``decoded``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any

from nnlite.client.errors import (
    EtcdCompactedError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdRequestError,
    EtcdUnavailableError,
)
from nnlite.client.etcd.messages import (
    COMPARE_FIELDS,
    MAX_REQUEST_BYTES,
    MAX_TXN_OPS,
    Compare,
    DeleteRangeRequest,
    KeyValue,
    Lease,
    MemberStatus,
    Op,
    PutRequest,
    RangeRequest,
    RangeResult,
    TxnResult,
    WatchCreateRequest,
    WatchEvent,
    checked,
)


class Code(IntEnum):
    """The gRPC status codes etcd answers with (google.golang.org/grpc/codes)."""
    CANCELLED = 1
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    RESOURCE_EXHAUSTED = 8
    OUT_OF_RANGE = 11
    UNAVAILABLE = 14
    DATA_LOSS = 15


# ------------------------------------------------------------------------------ requests

# The field of etcd's RequestOp that holds each kind of operation of a txn.
OP_FIELDS: dict[type[Op], str] = {PutRequest: "request_put",
                                  DeleteRangeRequest: "request_delete_range",
                                  RangeRequest: "request_range"}


def encode_op(op: Op) -> dict[str, object]:
    """``op`` as its call's JSON request (``/v3/kv/put``, ``deleterange``, ``range``)."""
    if isinstance(op, PutRequest):
        request: dict[str, object] = {"key": b64(op.key), "value": b64(op.value)}
        if op.lease:
            request["lease"] = str(op.lease)
        return request
    if isinstance(op, DeleteRangeRequest):
        return encode_key_range(op.key, op.range_end)
    if isinstance(op, RangeRequest):
        return encode_range(op)
    raise TypeError(f"not an etcd operation: {op!r}")


def encode_range(op: RangeRequest) -> dict[str, object]:
    request = encode_key_range(op.key, op.range_end)
    for name, value in (("limit", op.limit), ("revision", op.revision)):
        if value:
            request[name] = str(value)
    for name, flag in (("serializable", op.serializable), ("keys_only", op.keys_only)):
        if flag:
            request[name] = True
    return request


def encode_request_op(op: Op) -> dict[str, object]:
    """``op`` as one operation of a txn (etcd's RequestOp)."""
    return {OP_FIELDS[type(op)]: encode_op(op)}


def encode_compare(compare: Compare) -> dict[str, object]:
    operand = (b64(compare.operand) if isinstance(compare.operand, bytes)
               else str(compare.operand))
    return {"key": b64(compare.key), "target": compare.target, "result": compare.result,
            COMPARE_FIELDS[compare.target]: operand}


def encode_txn(compare: Iterable[Compare], success: Iterable[Op],
               failure: Iterable[Op]) -> dict[str, object]:
    return {"compare": [encode_compare(c) for c in compare],
            "success": [encode_request_op(op) for op in success],
            "failure": [encode_request_op(op) for op in failure]}


def encode_watch_create(request: WatchCreateRequest) -> bytes:
    """The body that opens a watch stream (``/v3/watch``)."""
    create = encode_key_range(request.key, request.range_end)
    if request.start_revision:
        create["start_revision"] = str(request.start_revision)
    return json.dumps({"create_request": create}).encode()


def encode_key_range(key: bytes, range_end: bytes | None) -> dict[str, object]:
    request: dict[str, object] = {"key": b64(key)}
    if range_end is not None:
        request["range_end"] = b64(range_end, "range_end")
    return request


def encode_lease_grant(ttl: int) -> dict[str, object]:
    return {"TTL": str(ttl)}


def encode_lease_id(lease_id: int) -> dict[str, object]:
    """The request of keepalive, revoke and timetolive."""
    return {"ID": str(lease_id)}


def encode_compaction(revision: int, physical: bool) -> dict[str, object]:
    return {"revision": str(revision), "physical": physical}


def b64(data: bytes, what: str = "key") -> str:
    return base64.b64encode(checked(data, what)).decode("ascii")


# ------------------------------------------------------------------------------ answers

def decode_int(value: object) -> int:
    """An int64 of an answer: a JSON string, or absent (0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"not an integer: {value!r}")
    return int(value)


def decode_bytes(value: object) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise ValueError(f"not base64: {value!r}")
    return base64.b64decode(value, validate=True)


def decode_revision(doc: Mapping[str, Any]) -> int:
    """The store's revision in an answer's header."""
    return decode_int(doc.get("header", {}).get("revision"))


def decode_kv(doc: Mapping[str, Any]) -> KeyValue:
    return KeyValue(decode_bytes(doc.get("key")), decode_bytes(doc.get("value")),
                    decode_int(doc.get("create_revision")), decode_int(doc.get("mod_revision")),
                    decode_int(doc.get("version")), decode_int(doc.get("lease")))


def decode_range(doc: Mapping[str, Any]) -> RangeResult:
    return RangeResult(tuple(decode_kv(kv) for kv in doc.get("kvs", ())), decode_revision(doc),
                       bool(doc.get("more", False)), decode_int(doc.get("count")))


def decode_deleted(doc: Mapping[str, Any]) -> int:
    """How many keys a delete removed."""
    return decode_int(doc.get("deleted"))


def decode_txn(doc: Mapping[str, Any]) -> TxnResult:
    revision = decode_revision(doc)
    return TxnResult(bool(doc.get("succeeded", False)), revision,
                     tuple(decode_op_response(r, revision) for r in doc.get("responses", ())))


def decode_op_response(doc: Mapping[str, Any], revision: int) -> RangeResult | int:
    if "response_range" in doc:
        return decode_range(doc["response_range"])
    if "response_put" in doc:
        return decode_revision(doc["response_put"]) or revision
    if "response_delete_range" in doc:
        return decode_deleted(doc["response_delete_range"])
    raise ValueError(f"a txn response of an unknown kind: {sorted(doc)}")


def decode_lease(doc: Mapping[str, Any]) -> Lease:
    return Lease(decode_int(doc.get("ID")), decode_int(doc.get("TTL")))


def decode_keep_alive(doc: Mapping[str, Any]) -> int:
    """The TTL a keepalive renewed the lease to; 0 when it is gone."""
    return decode_int(doc.get("result", {}).get("TTL"))


def decode_ttl(doc: Mapping[str, Any]) -> int:
    """timetolive's seconds left; -1 when the lease is gone."""
    return decode_int(doc.get("TTL"))


def decode_status(endpoint: str, doc: Mapping[str, Any]) -> MemberStatus:
    header = doc.get("header", {})
    return MemberStatus(endpoint=endpoint, version=str(doc.get("version", "")),
                        member_id=decode_int(header.get("member_id")),
                        leader=decode_int(doc.get("leader")),
                        raftTerm=decode_int(doc.get("raftTerm")),
                        raftIndex=decode_int(doc.get("raftIndex")),
                        dbSize=decode_int(doc.get("dbSize")),
                        revision=decode_int(header.get("revision")))


def decode_event(doc: Mapping[str, Any]) -> WatchEvent:
    return WatchEvent(str(doc.get("type", "PUT")), decode_kv(doc.get("kv", {})))


def decode_events(result: Mapping[str, Any]) -> list[WatchEvent]:
    """The events of one message of a watch stream (none in a progress message)."""
    return [decode_event(e) for e in result.get("events", ())]


# ------------------------------------------------------------------------------ refusals

def document(status: int, body: bytes, endpoint: str) -> dict[str, Any]:
    """The JSON object of an answer; a refusal (a status other than 200, or a stream's
    ``{"error": {...}}``) as its typed error."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        text = body[:80].decode("utf-8", "replace").strip()
        raise EtcdUnavailableError(f"HTTP {status} that is not etcd's v3 JSON gateway "
                                   f"({text!r})", endpoint=endpoint)
    if status != 200 or isinstance(doc.get("error"), dict):
        raise refusal(doc, status, endpoint)
    return doc


def refusal(doc: Mapping[str, Any], status: int, endpoint: str) -> EtcdError:
    """The typed error of etcd's error answer: ``{"error", "message", "code"}`` of a call, or
    ``{"error": {"grpc_code", "message"}}`` in a stream."""
    error = doc.get("error")
    if isinstance(error, dict):
        code, message = error.get("grpc_code"), error.get("message")
    else:
        code, message = doc.get("code"), doc.get("message") or error
    return classify(code if isinstance(code, int) else None,
                    str(message or f"HTTP {status}"), endpoint)


def watch_refusal(result: Mapping[str, Any], endpoint: str) -> EtcdError | None:
    """Why etcd canceled a watch, when this message of its stream says it did: a start
    revision already compacted is ``EtcdCompactedError`` with etcd's compact revision."""
    if not result.get("canceled"):
        return None
    compacted = decode_int(result.get("compact_revision"))
    reason = str(result.get("cancel_reason") or "the watch was canceled")
    if compacted:
        return EtcdCompactedError(
            f"the watch's start revision is compacted: etcd keeps revisions from "
            f"{compacted} ({reason})", compact_revision=compacted, endpoint=endpoint)
    return classify(None, reason, endpoint)


def classify(code: int | None, message: str, endpoint: str) -> EtcdError:
    """etcd's refusal as the error class that says what to do about it."""
    cls: type[EtcdError] = EtcdError
    if "compacted" in message:
        cls = EtcdCompactedError
    elif (code in (Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED, Code.DATA_LOSS)
            or message == "etcdserver: too many requests"):
        cls = EtcdUnavailableError
    elif code == Code.NOT_FOUND and "lease" in message:
        cls = EtcdLeaseNotFoundError
    elif "too many operations" in message:
        cls, message = EtcdRequestError, (f"{message} (etcd's --max-txn-ops, {MAX_TXN_OPS} "
                                          "by default: MAX_TXN_OPS)")
    elif "request is too large" in message or "larger than max" in message:
        cls, message = EtcdRequestError, (f"{message} (etcd's --max-request-bytes, "
                                          f"{MAX_REQUEST_BYTES} bytes by default: "
                                          "MAX_REQUEST_BYTES)")
    elif code in (Code.INVALID_ARGUMENT, Code.OUT_OF_RANGE):
        cls = EtcdRequestError
    return cls(message, code=code, endpoint=endpoint)
