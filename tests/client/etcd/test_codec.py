"""client/etcd/codec.py without a server: the records of messages.py to the JSON gateway's
bodies and back, and etcd's refusals to their typed errors (the same calls against real
members are tests/client/test_etcd.py)."""

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
    Code,
    classify,
    decode_txn,
    document,
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
)

# b"k" is "aw==", b"v" "dg==", b"l" (the end of prefix b"k") "bA==".
OPS = [
    pytest.param(Op.put(b"k", b"v"), {"key": "aw==", "value": "dg=="}, id="put"),
    pytest.param(Op.put(b"k", b"", lease=7), {"key": "aw==", "value": "", "lease": "7"},
                 id="put-with-lease"),
    pytest.param(Op.delete(b"k"), {"key": "aw=="}, id="delete-key"),
    pytest.param(Op.delete(b"k", prefix=True), {"key": "aw==", "range_end": "bA=="},
                 id="delete-prefix"),
    pytest.param(Op.delete(b"", prefix=True), {"key": "AA==", "range_end": "AA=="},
                 id="delete-everything"),
    pytest.param(Op.get(b"k", b"l", limit=2, revision=9, serializable=True, keys_only=True),
                 {"key": "aw==", "range_end": "bA==", "limit": "2", "revision": "9",
                  "serializable": True, "keys_only": True}, id="get-every-field"),
]


@pytest.mark.parametrize("op, request_", OPS)
def test_an_op_encodes_as_its_calls_request(op: Op, request_: dict) -> None:
    assert encode_op(op) == request_


def test_an_op_of_a_txn_is_named_by_its_kind() -> None:
    assert encode_request_op(Op.put(b"k", b"v")) == {"request_put": {"key": "aw==",
                                                                      "value": "dg=="}}
    assert list(encode_request_op(Op.delete(b"k"))) == ["request_delete_range"]
    assert list(encode_request_op(Op.get(b"k"))) == ["request_range"]


@pytest.mark.parametrize("compare, encoded", [
    pytest.param(Compare.version(b"k") == 0,
                 {"key": "aw==", "target": "VERSION", "result": "EQUAL", "version": "0"},
                 id="version"),
    pytest.param(Compare.value(b"k") != b"v",
                 {"key": "aw==", "target": "VALUE", "result": "NOT_EQUAL", "value": "dg=="},
                 id="value"),
    pytest.param(Compare.create_revision(b"k") > 3,
                 {"key": "aw==", "target": "CREATE", "result": "GREATER",
                  "create_revision": "3"}, id="create-revision"),
])
def test_a_compare_encodes_its_operand_in_its_targets_field(compare: Compare,
                                                            encoded: dict) -> None:
    assert encode_compare(compare) == encoded


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
    body = encode_watch_create(WatchCreateRequest(b"k", b"l", 5))
    assert body == (b'{"create_request": {"key": "aw==", "range_end": "bA==", '
                    b'"start_revision": "5"}}')


def test_a_txn_answer_decodes_each_response_with_defaults_left_out() -> None:
    doc = {"header": {"revision": "12"}, "succeeded": True, "responses": [
        {"response_put": {"header": {"revision": "12"}}},
        {"response_delete_range": {"deleted": "2"}},
        {"response_range": {"header": {}, "kvs": [{"key": "aw==", "create_revision": "3",
                                                   "mod_revision": "4", "version": "2"}]}},
    ]}
    kv = KeyValue(b"k", b"", 3, 4, 2, 0)
    assert decode_txn(doc).responses == (12, 2, RangeResult((kv,), 0, False, 0))
    assert decode_txn({"header": {"revision": "7"}}).succeeded is False


@pytest.mark.parametrize("code, message, cls", [
    pytest.param(Code.UNAVAILABLE, "etcdserver: no leader", EtcdUnavailableError,
                 id="no-leader"),
    pytest.param(Code.DEADLINE_EXCEEDED, "etcdserver: request timed out",
                 EtcdUnavailableError, id="timed-out"),
    pytest.param(Code.RESOURCE_EXHAUSTED, "etcdserver: too many requests",
                 EtcdUnavailableError, id="too-many-requests"),
    pytest.param(Code.NOT_FOUND, "etcdserver: requested lease not found",
                 EtcdLeaseNotFoundError, id="lease-gone"),
    pytest.param(Code.INVALID_ARGUMENT, "etcdserver: too many operations in txn request",
                 EtcdRequestError, id="max-txn-ops"),
    pytest.param(Code.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request",
                 EtcdRequestError, id="malformed"),
    pytest.param(Code.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted",
                 EtcdCompactedError, id="compacted"),
    pytest.param(None, "something else", EtcdError, id="unknown"),
])
def test_a_refusal_is_the_class_that_says_what_to_do(code, message: str, cls: type) -> None:
    error = classify(code, message, "http://127.0.0.1:2379")
    assert type(error) is cls and error.code == code


def test_an_answer_that_is_not_the_gateway_is_unavailable() -> None:
    with pytest.raises(EtcdUnavailableError, match="not etcd's v3 JSON gateway"):
        document(200, b"<html>", "http://127.0.0.1:2379")


def test_a_streams_error_object_is_a_refusal_even_with_status_200() -> None:
    line = b'{"error": {"grpc_code": 14, "message": "etcdserver: no leader"}}'
    with pytest.raises(EtcdUnavailableError):
        document(200, line, "http://127.0.0.1:2379")


def test_a_watch_canceled_at_a_compacted_revision_says_where_history_starts() -> None:
    error = watch_refusal({"canceled": True, "compact_revision": "40"}, "e")
    assert isinstance(error, EtcdCompactedError) and error.compact_revision == 40
    assert watch_refusal({"events": []}, "e") is None
