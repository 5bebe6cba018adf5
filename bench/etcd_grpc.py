"""etcd's own protocol for ``bench/bench_etcd.py --transport``: the KV service's ``Txn`` over
gRPC (``grpcio``, etcd's documented client transport, as clientv3 uses it), against the JSON
gateway ``nnlite.client.etcd`` speaks. A measurement, not a client: one unary method, the
messages declared here from etcd 3.4's ``etcdserverpb/rpc.proto`` and ``mvccpb/kv.proto``
field numbers (proto3 fields are wire-compatible with these proto2 optionals) and built by the
project's own protobuf schemas (``formats/hadoop/proto.py``): no generated code.

``grpcio`` is not a dependency of nnlite: install it where the bench can import it (for
instance ``pip install --target DIR grpcio`` and ``PYTHONPATH=DIR``).
"""

from __future__ import annotations

from typing import Any

from nnlite.client.etcd.messages import COMPARE_FIELDS, Compare, Op, PutRequest, RangeRequest
from nnlite.formats.hadoop.proto import Schema

S = Schema("nnlite.bench.etcdserverpb")
S.enum("CompareResult", EQUAL=0, GREATER=1, LESS=2, NOT_EQUAL=3)
S.enum("CompareTarget", VERSION=0, CREATE=1, MOD=2, VALUE=3, LEASE=4)
S.message("Compare",
          "optional CompareResult result = 1", "optional CompareTarget target = 2",
          "optional bytes key = 3", "optional int64 version = 4",
          "optional int64 create_revision = 5", "optional int64 mod_revision = 6",
          "optional bytes value = 7", "optional int64 lease = 8",
          "optional bytes range_end = 64")
S.message("RangeRequest", "optional bytes key = 1", "optional bytes range_end = 2",
          "optional int64 limit = 3", "optional int64 revision = 4",
          "optional bool serializable = 7", "optional bool keys_only = 8")
S.message("PutRequest", "optional bytes key = 1", "optional bytes value = 2",
          "optional int64 lease = 3")
S.message("RequestOp", "optional RangeRequest request_range = 1",
          "optional PutRequest request_put = 2")
S.message("TxnRequest", "repeated Compare compare = 1", "repeated RequestOp success = 2",
          "repeated RequestOp failure = 3")
S.message("ResponseHeader", "optional uint64 cluster_id = 1", "optional uint64 member_id = 2",
          "optional int64 revision = 3", "optional uint64 raft_term = 4")
S.message("KeyValue", "optional bytes key = 1", "optional int64 create_revision = 2",
          "optional int64 mod_revision = 3", "optional int64 version = 4",
          "optional bytes value = 5", "optional int64 lease = 6")
S.message("RangeResponse", "optional ResponseHeader header = 1", "repeated KeyValue kvs = 2",
          "optional bool more = 3", "optional int64 count = 4")
S.message("PutResponse", "optional ResponseHeader header = 1")
S.message("ResponseOp", "optional RangeResponse response_range = 1",
          "optional PutResponse response_put = 2")
S.message("TxnResponse", "optional ResponseHeader header = 1", "optional bool succeeded = 2",
          "repeated ResponseOp responses = 3")
M = S.build()
TARGETS = {"VERSION": 0, "CREATE": 1, "MOD": 2, "VALUE": 3, "LEASE": 4}
RESULTS = {"EQUAL": 0, "GREATER": 1, "LESS": 2, "NOT_EQUAL": 3}
# clientv3.WithRequireLeader: a member without a leader refuses at once
METADATA = (("hasleader", "true"),)


def encode_txn(compare: list[Compare], success: list[Op], failure: list[Op]) -> bytes:
    request = M["TxnRequest"]()
    for c in compare:
        m = request.compare.add(result=RESULTS[c.result], target=TARGETS[c.target], key=c.key)
        setattr(m, COMPARE_FIELDS[c.target], c.operand)
    for ops, into in ((success, request.success), (failure, request.failure)):
        for op in ops:
            if isinstance(op, PutRequest):
                into.add().request_put.CopyFrom(M["PutRequest"](key=op.key, value=op.value,
                                                                lease=op.lease))
            elif isinstance(op, RangeRequest):
                into.add().request_range.CopyFrom(M["RangeRequest"](key=op.key))
            else:
                raise TypeError(f"not measured here: {op!r}")
    return request.SerializeToString()


class GrpcKV:
    """``Txn`` on one member's gRPC port (its client URL), over one HTTP/2 channel."""

    def __init__(self, client_url: str) -> None:
        import grpc  # a bench-only dependency (module docstring)
        self.channel = grpc.insecure_channel(client_url.split("://", 1)[-1])
        self._txn = self.channel.unary_unary("/etcdserverpb.KV/Txn",
                                             request_serializer=None,
                                             response_deserializer=M["TxnResponse"].FromString)

    def txn(self, compare: list[Compare], success: list[Op],
            failure: list[Op] = ()) -> Any:
        return self._txn(encode_txn(compare, success, failure), metadata=METADATA, timeout=2.0)

    def close(self) -> None:
        self.channel.close()
