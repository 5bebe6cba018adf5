"""A client of etcd's v3 API over etcd's own gRPC API (``grpcio``, the transport etcd documents
for its clients, as clientv3 speaks it), its messages declared with the project's own protobuf
schemas (``formats/hadoop/proto.py``: no generated code); the store of the namenodes' high
availability (``namenode/ha/``). Cut as kazoo cuts its client: the messages, their wire
encoding, and the API that sends them.

* ``messages.py`` -- the requests and answers as immutable records, with etcd's names:
  ``Op.put``/``delete``/``get`` (``PutRequest``, ``DeleteRangeRequest``, ``RangeRequest``),
  ``Compare`` conditions, ``KeyValue``, ``RangeResult``, ``TxnResult``, ``Lease``,
  ``WatchEvent``, ``MemberStatus``; key ranges (``prefix_end``); etcd's limits
  (``MAX_TXN_OPS``, ``MAX_REQUEST_BYTES``).
* ``codec.py`` -- etcd's protobuf messages (``rpc.proto``'s field numbers) and methods, those
  records to request messages and answers back to them; a refusal's gRPC status as its typed
  ``EtcdError`` (``classify``, after etcd's ``rpctypes``: try another member, or the request
  itself is refused). ``bench/bench_etcd.py`` measures through the same client.
* ``client.py`` -- ``Etcd``: keys, txns, leases, maintenance, each call failing over between
  members, one gRPC channel per member; ``Watch``: one watch stream.

The errors are ``client/errors.py``'s ``EtcdError`` family.
"""
