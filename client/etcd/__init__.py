"""A client of etcd's v3 API over its JSON gateway (grpc-gateway: ``POST /v3/kv/range`` and the
like), on the client's own HTTP stack (``client/connection.py``): no gRPC, standard library
only; the store of the namenodes' high availability (``namenode/ha/``). Cut as kazoo cuts its
client: the messages, their wire encoding, and the API that sends them.

* ``messages.py`` -- the requests and answers as immutable records, with etcd's names:
  ``Op.put``/``delete``/``get`` (``PutRequest``, ``DeleteRangeRequest``, ``RangeRequest``),
  ``Compare`` conditions, ``KeyValue``, ``RangeResult``, ``TxnResult``, ``Lease``,
  ``WatchEvent``, ``MemberStatus``; key ranges (``prefix_end``); etcd's limits
  (``MAX_TXN_OPS``, ``MAX_REQUEST_BYTES``).
* ``codec.py`` -- the JSON gateway's encoding of those records (base64 keys and values, int64
  as strings, defaults left out) and of answers back to them; an error answer as its typed
  ``EtcdError`` (``classify``: try another member, or the request itself is refused).
* ``client.py`` -- ``Etcd``: keys, txns, leases, maintenance, each call failing over between
  members, a pool of keep-alive connections per member; ``Watch``: one watch stream.

The errors are ``client/errors.py``'s ``EtcdError`` family.
"""
