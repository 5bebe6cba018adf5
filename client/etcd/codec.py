"""etcd's v3 gRPC encoding: the messages of ``etcdserverpb`` (etcd 3.4's
``etcdserver/etcdserverpb/rpc.proto``, with ``mvccpb/kv.proto``'s ``KeyValue`` and ``Event``)
declared with the project's own protobuf schemas (``formats/hadoop/proto.py``: no generated
code, no ``protoc``), the records of ``messages.py`` to request messages, answers back to
records, the methods' paths, and a refusal's gRPC status to the typed error that says what to
do about it. Pure functions; no I/O.

* **Wire.** Field numbers, types and labels are etcd's; names are not on the wire. etcd's
  messages are proto3 and these are declared proto2 optionals, which read and write the same
  bytes (a oneof member such as ``Compare.version`` is a plain optional here: set, it is sent
  even at 0, as proto3 sends a oneof member that is set).
* **Refusals.** ``classify`` turns etcd's gRPC status code and message (its
  ``etcdserver/api/v3rpc/rpctypes/error.go`` table) into ``EtcdUnavailableError`` (try another
  member: Unavailable -- "no leader", "request timed out", "leader changed" --,
  DeadlineExceeded, "too many requests"), ``EtcdRequestError`` (the request itself: malformed,
  over ``MAX_TXN_OPS`` or ``MAX_REQUEST_BYTES``; ``EtcdLeaseNotFoundError``),
  ``EtcdCompactedError`` or a plain ``EtcdError``.
* **Answers this client cannot read** raise ``ValueError`` (and the like) here; the client
  names the member (``client.py``'s ``decoded``).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any, NamedTuple

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
)
from nnlite.formats.hadoop.proto import Schema


class Code(IntEnum):
    """The gRPC status codes etcd answers with (google.golang.org/grpc/codes)."""
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    RESOURCE_EXHAUSTED = 8
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15


# ------------------------------------------------------------------------------ schema

S = Schema("nnlite.etcdserverpb")
S.enum("CompareResult", EQUAL=0, GREATER=1, LESS=2, NOT_EQUAL=3)
S.enum("CompareTarget", VERSION=0, CREATE=1, MOD=2, VALUE=3, LEASE=4)
S.enum("EventType", PUT=0, DELETE=1)
S.message("ResponseHeader", "optional uint64 cluster_id = 1", "optional uint64 member_id = 2",
          "optional int64 revision = 3", "optional uint64 raft_term = 4")
S.message("KeyValue", "optional bytes key = 1", "optional int64 create_revision = 2",
          "optional int64 mod_revision = 3", "optional int64 version = 4",
          "optional bytes value = 5", "optional int64 lease = 6")
S.message("Event", "optional EventType type = 1", "optional KeyValue kv = 2",
          "optional KeyValue prev_kv = 3")
S.message("RangeRequest", "optional bytes key = 1", "optional bytes range_end = 2",
          "optional int64 limit = 3", "optional int64 revision = 4",
          "optional bool serializable = 7", "optional bool keys_only = 8")
S.message("RangeResponse", "optional ResponseHeader header = 1", "repeated KeyValue kvs = 2",
          "optional bool more = 3", "optional int64 count = 4")
S.message("PutRequest", "optional bytes key = 1", "optional bytes value = 2",
          "optional int64 lease = 3")
S.message("PutResponse", "optional ResponseHeader header = 1")
S.message("DeleteRangeRequest", "optional bytes key = 1", "optional bytes range_end = 2")
S.message("DeleteRangeResponse", "optional ResponseHeader header = 1",
          "optional int64 deleted = 2")
S.message("RequestOp", "optional RangeRequest request_range = 1",
          "optional PutRequest request_put = 2",
          "optional DeleteRangeRequest request_delete_range = 3")
S.message("ResponseOp", "optional RangeResponse response_range = 1",
          "optional PutResponse response_put = 2",
          "optional DeleteRangeResponse response_delete_range = 3")
S.message("Compare",
          "optional CompareResult result = 1", "optional CompareTarget target = 2",
          "optional bytes key = 3", "optional int64 version = 4",
          "optional int64 create_revision = 5", "optional int64 mod_revision = 6",
          "optional bytes value = 7", "optional int64 lease = 8",
          "optional bytes range_end = 64")
S.message("TxnRequest", "repeated Compare compare = 1", "repeated RequestOp success = 2",
          "repeated RequestOp failure = 3")
S.message("TxnResponse", "optional ResponseHeader header = 1", "optional bool succeeded = 2",
          "repeated ResponseOp responses = 3")
S.message("CompactionRequest", "optional int64 revision = 1", "optional bool physical = 2")
S.message("CompactionResponse", "optional ResponseHeader header = 1")
S.message("LeaseGrantRequest", "optional int64 TTL = 1", "optional int64 ID = 2")
S.message("LeaseGrantResponse", "optional ResponseHeader header = 1", "optional int64 ID = 2",
          "optional int64 TTL = 3", "optional string error = 4")
S.message("LeaseRevokeRequest", "optional int64 ID = 1")
S.message("LeaseRevokeResponse", "optional ResponseHeader header = 1")
S.message("LeaseKeepAliveRequest", "optional int64 ID = 1")
S.message("LeaseKeepAliveResponse", "optional ResponseHeader header = 1",
          "optional int64 ID = 2", "optional int64 TTL = 3")
S.message("LeaseTimeToLiveRequest", "optional int64 ID = 1", "optional bool keys = 2")
S.message("LeaseTimeToLiveResponse", "optional ResponseHeader header = 1",
          "optional int64 ID = 2", "optional int64 TTL = 3", "optional int64 grantedTTL = 4")
S.message("WatchCreateRequest", "optional bytes key = 1", "optional bytes range_end = 2",
          "optional int64 start_revision = 3", "optional bool progress_notify = 4",
          "optional bool prev_kv = 6", "optional int64 watch_id = 7")
S.message("WatchRequest", "optional WatchCreateRequest create_request = 1")
S.message("WatchResponse", "optional ResponseHeader header = 1", "optional int64 watch_id = 2",
          "optional bool created = 3", "optional bool canceled = 4",
          "optional int64 compact_revision = 5", "optional string cancel_reason = 6",
          "optional bool fragment = 7", "repeated Event events = 11")
S.message("StatusRequest")
S.message("StatusResponse", "optional ResponseHeader header = 1", "optional string version = 2",
          "optional int64 dbSize = 3", "optional uint64 leader = 4",
          "optional uint64 raftIndex = 5", "optional uint64 raftTerm = 6")
M = S.build()
TARGETS = {"VERSION": 0, "CREATE": 1, "MOD": 2, "VALUE": 3, "LEASE": 4}
RESULTS = {"EQUAL": 0, "GREATER": 1, "LESS": 2, "NOT_EQUAL": 3}
EVENT_TYPES = {0: "PUT", 1: "DELETE"}


class Method(NamedTuple):
    """One gRPC method of etcd: its path and the class of its answer."""
    path: str
    answer: Any


def _method(service: str, name: str, answer: str) -> Method:
    return Method(f"/etcdserverpb.{service}/{name}", M[answer])


RANGE = _method("KV", "Range", "RangeResponse")
PUT = _method("KV", "Put", "PutResponse")
DELETE_RANGE = _method("KV", "DeleteRange", "DeleteRangeResponse")
TXN = _method("KV", "Txn", "TxnResponse")
COMPACT = _method("KV", "Compact", "CompactionResponse")
LEASE_GRANT = _method("Lease", "LeaseGrant", "LeaseGrantResponse")
LEASE_REVOKE = _method("Lease", "LeaseRevoke", "LeaseRevokeResponse")
LEASE_KEEP_ALIVE = _method("Lease", "LeaseKeepAlive", "LeaseKeepAliveResponse")   # a stream
LEASE_TIME_TO_LIVE = _method("Lease", "LeaseTimeToLive", "LeaseTimeToLiveResponse")
WATCH = _method("Watch", "Watch", "WatchResponse")                                # a stream
STATUS = _method("Maintenance", "Status", "StatusResponse")


def serialize(message: Any) -> bytes:
    """A request message's bytes (grpcio's request serializer)."""
    return message.SerializeToString()


# ------------------------------------------------------------------------------ requests

def encode_op(op: Op) -> Any:
    """``op`` as its call's request message (``Put``, ``DeleteRange``, ``Range``)."""
    if isinstance(op, PutRequest):
        return M["PutRequest"](key=op.key, value=op.value, lease=op.lease or None)
    if isinstance(op, DeleteRangeRequest):
        return M["DeleteRangeRequest"](key=op.key, range_end=op.range_end)
    if isinstance(op, RangeRequest):
        return M["RangeRequest"](key=op.key, range_end=op.range_end, limit=op.limit or None,
                                 revision=op.revision or None,
                                 serializable=op.serializable or None,
                                 keys_only=op.keys_only or None)
    raise TypeError(f"not an etcd operation: {op!r}")


# The field of etcd's RequestOp that holds each kind of operation of a txn.
OP_FIELDS: dict[type[Op], str] = {PutRequest: "request_put",
                                  DeleteRangeRequest: "request_delete_range",
                                  RangeRequest: "request_range"}


def encode_request_op(op: Op) -> Any:
    """``op`` as one operation of a txn (etcd's RequestOp)."""
    return M["RequestOp"](**{OP_FIELDS[type(op)]: encode_op(op)})


def encode_compare(compare: Compare) -> Any:
    return M["Compare"](result=RESULTS[compare.result], target=TARGETS[compare.target],
                        key=compare.key, **{COMPARE_FIELDS[compare.target]: compare.operand})


def encode_txn(compare: Iterable[Compare], success: Iterable[Op],
               failure: Iterable[Op]) -> Any:
    return M["TxnRequest"](compare=[encode_compare(c) for c in compare],
                           success=[encode_request_op(op) for op in success],
                           failure=[encode_request_op(op) for op in failure])


def encode_watch_create(request: WatchCreateRequest) -> Any:
    """The message that opens a watch on a stream."""
    create = M["WatchCreateRequest"](key=request.key, range_end=request.range_end,
                                     start_revision=request.start_revision or None)
    return M["WatchRequest"](create_request=create)


def encode_lease_grant(ttl: int) -> Any:
    return M["LeaseGrantRequest"](TTL=ttl)


def encode_lease_id(request: str, lease_id: int) -> Any:
    """The request of ``LeaseRevoke``, ``LeaseKeepAlive`` and ``LeaseTimeToLive``."""
    return M[request](ID=lease_id)


def encode_compaction(revision: int, physical: bool) -> Any:
    return M["CompactionRequest"](revision=revision, physical=physical or None)


def encode_status() -> Any:
    return M["StatusRequest"]()


# ------------------------------------------------------------------------------ answers

def decode_revision(answer: Any) -> int:
    """The store's revision in an answer's header."""
    return int(answer.header.revision)


def decode_kv(kv: Any) -> KeyValue:
    return KeyValue(kv.key, kv.value, kv.create_revision, kv.mod_revision, kv.version,
                    kv.lease)


def decode_range(answer: Any) -> RangeResult:
    return RangeResult(tuple(decode_kv(kv) for kv in answer.kvs), decode_revision(answer),
                       answer.more, answer.count)


def decode_deleted(answer: Any) -> int:
    """How many keys a delete removed."""
    return int(answer.deleted)


def decode_txn(answer: Any) -> TxnResult:
    revision = decode_revision(answer)
    return TxnResult(answer.succeeded, revision,
                     tuple(decode_op_response(r, revision) for r in answer.responses))


def decode_op_response(answer: Any, revision: int) -> RangeResult | int:
    if answer.HasField("response_range"):
        return decode_range(answer.response_range)
    if answer.HasField("response_put"):
        return decode_revision(answer.response_put) or revision
    if answer.HasField("response_delete_range"):
        return decode_deleted(answer.response_delete_range)
    raise ValueError(f"a txn response of an unknown kind: {answer}")


def decode_lease(answer: Any) -> Lease:
    if answer.error:
        raise ValueError(f"the lease was not granted: {answer.error}")
    return Lease(answer.ID, answer.TTL)


def decode_ttl(answer: Any) -> int:
    """A keepalive's renewed TTL (0 when the lease is gone); timetolive's seconds left (-1
    when the lease is gone)."""
    return int(answer.TTL)


def decode_status(endpoint: str, answer: Any) -> MemberStatus:
    return MemberStatus(endpoint=endpoint, version=answer.version,
                        member_id=answer.header.member_id, leader=answer.leader,
                        raftTerm=answer.raftTerm, raftIndex=answer.raftIndex,
                        dbSize=answer.dbSize, revision=answer.header.revision)


def decode_event(event: Any) -> WatchEvent:
    return WatchEvent(EVENT_TYPES[event.type], decode_kv(event.kv))


def decode_events(answer: Any) -> list[WatchEvent]:
    """The events of one message of a watch stream (none in a progress message)."""
    return [decode_event(e) for e in answer.events]


# ------------------------------------------------------------------------------ refusals

def watch_refusal(answer: Any, endpoint: str) -> EtcdError | None:
    """Why etcd canceled a watch, when this message of its stream says it did: a start
    revision already compacted is ``EtcdCompactedError`` with etcd's compact revision."""
    if not answer.canceled:
        return None
    compacted = int(answer.compact_revision)
    reason = answer.cancel_reason or "the watch was canceled"
    if compacted:
        return EtcdCompactedError(
            f"the watch's start revision is compacted: etcd keeps revisions from "
            f"{compacted} ({reason})", compact_revision=compacted, endpoint=endpoint)
    return classify(None, reason, endpoint)


def classify(code: int | None, message: str, endpoint: str) -> EtcdError:
    """etcd's refusal as the error class that says what to do about it: the codes and
    messages of etcd's ``rpctypes/error.go``; Unavailable is what clientv3's
    ``isSafeRetryImmutableRPC`` (``clientv3/retry.go``) takes to another member."""
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
