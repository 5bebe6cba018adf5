"""client/etcd/codec.py without a server: the records of messages.py to etcd's protobuf
messages (bytes written from etcd 3.4's rpc.proto field numbers) and back, and etcd's
refusals to their typed errors (the same calls against real members are
tests/client/test_etcd.py)."""

from __future__ import annotations

import pytest

from nnlite.client.errors import (
    BadArgumentError,
    EtcdCompactedError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdRequestError,
    EtcdUnavailableError,
)
from nnlite.client.etcd.codec import (
    TXN,
    WATCH,
    Code,
    M,
    classify,
    decode_events,
    decode_txn,
    encode_compare,
    encode_op,
    encode_request_op,
    encode_watch_create,
    watch_refusal,
)
from nnlite.client.etcd.messages import (
    Compare,
    KeyValue,
    Op,
    RangeResult,
    WatchCreateRequest,
    WatchEvent,
)

# key = 1 (0a), range_end = 2 (12); b"k" 6b, b"v" 76, b"l" (the end of prefix b"k") 6c
OPS = [
    pytest.param(Op.put(b"k", b"v"), "0a016b 120176", id="put"),
    pytest.param(Op.put(b"k", b"", lease=7), "0a016b 1200 1807", id="put-with-lease"),
    pytest.param(Op.delete(b"k"), "0a016b", id="delete-key"),
    pytest.param(Op.delete(b"k", prefix=True), "0a016b 12016c", id="delete-prefix"),
    pytest.param(Op.delete(b"", prefix=True), "0a0100 120100", id="delete-everything"),
    # limit = 3, revision = 4, serializable = 7, keys_only = 8
    pytest.param(Op.get(b"k", b"l", limit=2, revision=9, serializable=True, keys_only=True),
                 "0a016b 12016c 1802 2009 3801 4001", id="get-every-field"),
    pytest.param(Op.get(b"k"), "0a016b", id="get-defaults-left-out"),
]


@pytest.mark.parametrize("op, wire", OPS)
def test_an_op_encodes_as_its_calls_request(op: Op, wire: str) -> None:
    assert encode_op(op).SerializeToString() == bytes.fromhex(wire)


def test_an_op_of_a_txn_is_named_by_its_kind() -> None:
    # RequestOp: request_range = 1 (0a), request_put = 2 (12), request_delete_range = 3 (1a)
    assert encode_request_op(Op.put(b"k", b"v")).SerializeToString() == bytes.fromhex(
        "1206 0a016b 120176")
    assert encode_request_op(Op.delete(b"k")).SerializeToString()[:1] == b"\x1a"
    assert encode_request_op(Op.get(b"k")).SerializeToString()[:1] == b"\x0a"


# Compare: result = 1, target = 2, key = 3, version = 4, create_revision = 5, value = 7
@pytest.mark.parametrize("compare, wire", [
    pytest.param(Compare.version(b"k") == 0, "0800 1000 1a016b 2000", id="version-zero-sent"),
    pytest.param(Compare.value(b"k") != b"v", "0803 1003 1a016b 3a0176", id="value"),
    pytest.param(Compare.create_revision(b"k") > 3, "0801 1001 1a016b 2803",
                 id="create-revision"),
])
def test_a_compare_encodes_its_operand_in_its_targets_field(compare: Compare,
                                                            wire: str) -> None:
    assert encode_compare(compare).SerializeToString() == bytes.fromhex(wire)


@pytest.mark.parametrize("build", [
    pytest.param(lambda: Op.put("k", b"v"), id="str-key"),
    pytest.param(lambda: Op.put(b"k", "v"), id="str-value"),
    pytest.param(lambda: Op.get(b"k", "l"), id="str-range-end"),
    pytest.param(lambda: Op.get(b"k", b"l", prefix=True), id="range-end-and-prefix"),
    pytest.param(lambda: Compare.version(b"k") == b"0", id="bytes-version"),
    pytest.param(lambda: Compare.value(b"k") == 0, id="int-value"),
])
def test_a_request_that_cannot_be_sent_is_refused_when_built(build) -> None:
    with pytest.raises(BadArgumentError):
        build()


def test_a_watch_from_a_revision() -> None:
    # WatchRequest.create_request = 1; WatchCreateRequest.start_revision = 3
    wire = encode_watch_create(WatchCreateRequest(b"k", b"l", 5)).SerializeToString()
    assert wire == bytes.fromhex("0a08 0a016b 12016c 1805")


def test_a_txn_answer_decodes_each_response_with_defaults_left_out() -> None:
    # ResponseHeader.revision = 3; TxnResponse: header = 1, succeeded = 2, responses = 3;
    # ResponseOp: response_range = 1, response_put = 2, response_delete_range = 3
    kv = "0a016b 1003 1804 2002"                                # key, create, mod, version
    wire = bytes.fromhex("0a02180c 1001"                        # revision 12, succeeded
                         "1a06 1204 0a02180c"                   # put at 12
                         "1a04 1a02 1002"                       # deleted 2
                         f"1a0d 0a0b 1209 {kv}")                # a range of one key
    answer = TXN.answer.FromString(wire)
    assert decode_txn(answer).responses == (12, 2, RangeResult((KeyValue(b"k", b"", 3, 4, 2,
                                                                         0),), 0, False, 0))
    assert decode_txn(TXN.answer.FromString(bytes.fromhex("0a021807"))).succeeded is False


def test_a_watch_message_decodes_its_events() -> None:
    # WatchResponse.events = 11 (5a); Event: type = 1 (DELETE = 1), kv = 2
    answer = WATCH.answer.FromString(bytes.fromhex("5a07 0801 1203 0a016b"))
    assert decode_events(answer) == [WatchEvent("DELETE", KeyValue(b"k", b"", 0, 0, 0, 0))]


@pytest.mark.parametrize("code, message, cls", [
    pytest.param(Code.UNAVAILABLE, "etcdserver: no leader", EtcdUnavailableError,
                 id="no-leader"),
    pytest.param(Code.UNAVAILABLE, "etcdserver: request timed out",
                 EtcdUnavailableError, id="timed-out"),
    pytest.param(Code.RESOURCE_EXHAUSTED, "etcdserver: too many requests",
                 EtcdUnavailableError, id="too-many-requests"),
    pytest.param(Code.NOT_FOUND, "etcdserver: requested lease not found",
                 EtcdLeaseNotFoundError, id="lease-gone"),
    pytest.param(Code.INVALID_ARGUMENT, "etcdserver: too many operations in txn request",
                 EtcdRequestError, id="max-txn-ops"),
    pytest.param(Code.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request",
                 EtcdRequestError, id="malformed"),
    pytest.param(Code.RESOURCE_EXHAUSTED,
                 "grpc: received message larger than max (4718602 vs. 2621440)",
                 EtcdRequestError, id="over-grpc-limit"),
    pytest.param(Code.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted",
                 EtcdCompactedError, id="compacted"),
    pytest.param(None, "something else", EtcdError, id="unknown"),
])
def test_a_refusal_is_the_class_that_says_what_to_do(code, message: str, cls: type) -> None:
    error = classify(code, message, "http://127.0.0.1:2379")
    assert type(error) is cls and error.code == code


def test_a_watch_canceled_at_a_compacted_revision_says_where_history_starts() -> None:
    error = watch_refusal(M["WatchResponse"](canceled=True, compact_revision=40), "e")
    assert isinstance(error, EtcdCompactedError) and error.compact_revision == 40
    assert watch_refusal(M["WatchResponse"](), "e") is None
