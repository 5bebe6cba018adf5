"""The client of etcd's v3 API: ``Etcd``, its calls over the JSON gateway (``codec.py``) on
nnlite's own HTTP stack (``client/connection.py``), failover between members, and ``Watch``
streams. The high-availability journal and election use it (etcd 3.4, Debian's etcd-server).

* **Calls.** ``Etcd(endpoints)`` sends each call to its current member. A member that cannot
  serve -- no connection, no answer within ``timeout`` seconds, an answer that is not etcd's
  gateway, or etcd's own "no leader", "request timed out", "leader changed", "too many
  requests" (gRPC Unavailable, DeadlineExceeded) -- passes the call to the next member, each
  member tried once; the one that serves becomes the current one. When none serves the call
  raises ``EtcdUnavailableError`` naming the endpoints and the last reason. So a call fails in
  ``timeout`` seconds per member that hangs, at once for one that refuses connections.
  Requests carry gRPC metadata ``hasleader`` (header ``Grpc-Metadata-Hasleader``, as etcd's
  ``clientv3.WithRequireLeader``): a member without a leader says so at once instead of
  holding a write until its own request timeout (7 s); serializable reads and ``status``
  leave it out, since a member without a leader can answer them.
* **Writes retried elsewhere.** A write whose member timed out or dropped the connection after
  the request was sent may have been applied there before it went to the next member; a txn
  guarded by what it writes (compare the version or the value) tells the two cases apart.
* **Threads.** An ``Etcd`` may be shared: each call takes an idle keep-alive connection of its
  member from a small pool (or opens one) and gives it back after the answer.
* **TLS.** ``https://`` endpoints with ``tls`` (``tls_context``: the members' CA, this
  client's certificate and key) reach members run with ``--client-cert-auth``.
* **Limits.** A request over ``MAX_REQUEST_BYTES`` or a txn over ``MAX_TXN_OPS`` operations
  (``messages.py``) is ``EtcdRequestError``, as is any request etcd finds malformed.
* **Watch.** ``watch()`` opens a stream (``POST /v3/watch``) on the first member that serves and
  returns a ``Watch``: iterating it yields ``WatchEvent``s in revision order until ``close()``
  (from any thread) ends it. A broken stream raises ``EtcdUnavailableError`` (watch again from
  the revision after the last event's ``kv.mod_revision``); a start revision already compacted
  raises ``EtcdCompactedError`` with etcd's compact revision.

Cost (``python bench/bench_etcd.py``): a guarded one-put txn, loopback, one-member etcd 3.4:
0.76 ms median, p99 2.2 ms (1,000 sequential; 2-core VM at load 1.7 whose fdatasync takes 0.12
ms, so etcd's WAL fsync is a small part here; a disk with a real flush adds its own to each).
"""

from __future__ import annotations

import binascii
import functools
import http.client
import json
import ssl
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit

from nnlite.client.connection import NETWORK_ERRORS, Connection, describe
from nnlite.client.errors import (
    BadArgumentError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdUnavailableError,
    NamenodeUnreachableError,
)
from nnlite.client.etcd.codec import (
    decode_deleted,
    decode_events,
    decode_keep_alive,
    decode_lease,
    decode_range,
    decode_revision,
    decode_status,
    decode_ttl,
    decode_txn,
    document,
    encode_compaction,
    encode_lease_grant,
    encode_lease_id,
    encode_op,
    encode_txn,
    encode_watch_create,
    watch_refusal,
)
from nnlite.client.etcd.messages import (
    Compare,
    KeyValue,
    Lease,
    MemberStatus,
    Op,
    RangeResult,
    TxnResult,
    WatchCreateRequest,
    WatchEvent,
    key_range,
)

TIMEOUT = 2.0                   # seconds each member gets to answer a call
POOL = 4                        # idle keep-alive connections kept per member
HEADERS = {"Content-Type": "application/json"}
LEADER_HEADERS = {**HEADERS, "Grpc-Metadata-Hasleader": "true"}
T = TypeVar("T")


# ------------------------------------------------------------------------------ the client

class Etcd:
    """A client of the etcd cluster whose members answer at ``endpoints``
    (``http://HOST:PORT``); ``timeout``: seconds each member gets to answer a call."""

    def __init__(self, endpoints: list[str], timeout: float = TIMEOUT,
                 tls: ssl.SSLContext | None = None) -> None:
        if not endpoints:
            raise BadArgumentError("no etcd endpoint given")
        self.endpoints = [_endpoint(e) for e in endpoints]
        self.timeout = timeout
        self.tls = tls        # https endpoints: the CA and this client's certificate
        self._lock = threading.Lock()
        self._current = 0
        self._idle: dict[str, list[Connection]] = {e: [] for e in self.endpoints}

    @property
    def endpoint(self) -> str:
        """The member calls go to first."""
        with self._lock:
            return self.endpoints[self._current]

    def close(self) -> None:
        """Close the idle connections (a later call opens new ones)."""
        with self._lock:
            idle = [conn for conns in self._idle.values() for conn in conns]
            for conns in self._idle.values():
                conns.clear()
        for conn in idle:
            conn.close()

    def __enter__(self) -> Etcd:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- keys

    def get(self, key: bytes) -> KeyValue | None:
        kvs = self.range(key).kvs
        return kvs[0] if kvs else None

    def range(self, key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
              limit: int = 0, revision: int = 0, serializable: bool = False,
              keys_only: bool = False) -> RangeResult:
        """The keys in ``[key, range_end)`` (or starting with ``key``: ``prefix``; ``key``
        alone without either), in key order, at ``revision`` (0: the latest)."""
        op = Op.get(key, range_end, prefix=prefix, limit=limit, revision=revision,
                    serializable=serializable, keys_only=keys_only)
        return self._call("/v3/kv/range", encode_op(op), decode_range, leader=not serializable)

    def put(self, key: bytes, value: bytes, *, lease: int = 0) -> int:
        """Set ``key``; the revision of the write."""
        return self._call("/v3/kv/put", encode_op(Op.put(key, value, lease)), decode_revision)

    def delete(self, key: bytes, range_end: bytes | None = None, *,
               prefix: bool = False) -> int:
        """Delete ``key`` (or the range, or the prefix); how many keys were deleted."""
        request = encode_op(Op.delete(key, range_end, prefix))
        return self._call("/v3/kv/deleterange", request, decode_deleted)

    def txn(self, compare: Iterable[Compare], success: Iterable[Op],
            failure: Iterable[Op] = ()) -> TxnResult:
        """If every ``compare`` holds, run ``success``, else ``failure``, atomically."""
        return self._call("/v3/kv/txn", encode_txn(compare, success, failure), decode_txn)

    # ---------------------------------------------------------------- leases

    def grant_lease(self, ttl: int) -> Lease:
        """A new lease of ``ttl`` seconds (etcd may grant a longer one, never shorter)."""
        return self._call("/v3/lease/grant", encode_lease_grant(ttl), decode_lease)

    def keep_alive(self, lease_id: int) -> int:
        """Renew the lease once; the TTL it has again, 0 when it is gone."""
        return self._call("/v3/lease/keepalive", encode_lease_id(lease_id), decode_keep_alive)

    def revoke_lease(self, lease_id: int) -> bool:
        """Revoke the lease, deleting its keys; False when it was already gone."""
        try:
            self._call("/v3/lease/revoke", encode_lease_id(lease_id), decode_revision)
        except EtcdLeaseNotFoundError:
            return False
        return True

    def time_to_live(self, lease_id: int) -> int:
        """The lease's seconds left; -1 when it is gone."""
        return self._call("/v3/lease/timetolive", encode_lease_id(lease_id), decode_ttl)

    # ---------------------------------------------------------------- maintenance

    def compact(self, revision: int, physical: bool = False) -> None:
        """Drop the history before ``revision``; ``physical``: return once it is gone from
        the store, not only from the index."""
        self._call("/v3/kv/compaction", encode_compaction(revision, physical), decode_revision)

    def status(self) -> MemberStatus:
        """The status of the member that answers (the current one, or the next that does)."""
        endpoint, doc = self._failover("/v3/maintenance/status", b"{}", HEADERS)
        return decoded(endpoint, doc, lambda d: decode_status(endpoint, d))

    def member_status(self) -> dict[str, MemberStatus | str]:
        """Every endpoint's status, or the text of why it has none."""
        found: dict[str, MemberStatus | str] = {}
        for endpoint in self.endpoints:
            try:
                doc = self._exchange(endpoint, "/v3/maintenance/status", b"{}", HEADERS)
                found[endpoint] = decoded(endpoint, doc, functools.partial(decode_status, endpoint))
            except EtcdError as exc:
                found[endpoint] = str(exc)
        return found

    # ---------------------------------------------------------------- watch

    def watch(self, key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
              start_revision: int = 0) -> Watch:
        """A stream of the changes to the key (or range, or prefix) from ``start_revision``
        (0: from now on), opened on the first member that serves it."""
        request = WatchCreateRequest(*key_range(key, range_end, prefix), start_revision)
        body = encode_watch_create(request)
        return self._each_member("/v3/watch", lambda e: Watch.open(e, body, self.timeout,
                                                                       self.tls))

    # ---------------------------------------------------------------- calls

    def _call(self, path: str, request: Mapping[str, object],
              decode: Callable[[dict[str, Any]], T], *, leader: bool = True) -> T:
        body = json.dumps(request).encode()
        endpoint, doc = self._failover(path, body, LEADER_HEADERS if leader else HEADERS)
        return decoded(endpoint, doc, decode)

    def _failover(self, path: str, body: bytes,
                  headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
        return self._each_member(
            path, lambda e: (e, self._exchange(e, path, body, headers)))

    def _each_member(self, path: str, attempt: Callable[[str], T]) -> T:
        """``attempt`` on the current member, then on each next one while they cannot
        serve; the first that serves becomes the current one."""
        with self._lock:
            first = self._current
        last = ""
        for step in range(len(self.endpoints)):
            index = (first + step) % len(self.endpoints)
            try:
                return attempt(self.endpoints[index])
            except EtcdUnavailableError as exc:
                last = f"{self.endpoints[index]}: {exc}"
                with self._lock:
                    if self._current == index:
                        self._current = (index + 1) % len(self.endpoints)
        raise EtcdUnavailableError(
            f"no etcd member could serve {path} (tried {', '.join(self.endpoints)}); "
            f"last: {last}")

    def _exchange(self, endpoint: str, path: str, body: bytes,
                  headers: dict[str, str]) -> dict[str, Any]:
        """One request to one member: its answer's JSON object, or its typed refusal."""
        conn = self._take(endpoint)
        with _closed_on_failure(conn, endpoint):
            reply = conn.request("POST", path, body, headers)
        self._give_back(endpoint, conn)
        return document(reply.status, reply.body, endpoint)

    def _take(self, endpoint: str) -> Connection:
        with self._lock:
            idle = self._idle[endpoint]
            if idle:
                return idle.pop()
        return Connection(endpoint, self.timeout, self.tls)

    def _give_back(self, endpoint: str, conn: Connection) -> None:
        with self._lock:
            idle = self._idle[endpoint]
            if len(idle) < POOL:
                idle.append(conn)
                return
        conn.close()


def tls_context(ca: str, cert: str, key: str) -> ssl.SSLContext:
    """The TLS of a client of etcd members run with ``--client-cert-auth``: trust ``ca``'s
    certificates (``--trusted-ca-file``'s), present ``cert`` with its ``key`` (PEM files),
    as etcdctl's ``--cacert``, ``--cert`` and ``--key``."""
    try:
        context = ssl.create_default_context(cafile=ca or None)
        if cert:
            context.load_cert_chain(cert, key or None)
    except (OSError, ssl.SSLError) as exc:
        raise BadArgumentError(f"etcd's TLS files cannot be used (CA {ca!r}, certificate "
                               f"{cert!r}, key {key!r}): {exc}") from exc
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _endpoint(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        raise BadArgumentError(f"an etcd endpoint is http://HOST:PORT, not {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


@contextmanager
def _closed_on_failure(conn: Connection, endpoint: str) -> Iterator[None]:
    """Close ``conn`` when the block fails; a network error is the member's unavailability."""
    try:
        yield
    except NamenodeUnreachableError as exc:
        conn.close()
        raise EtcdUnavailableError(_reason(exc), endpoint=endpoint) from exc
    except BaseException:
        conn.close()
        raise


def _reason(exc: NamenodeUnreachableError) -> str:
    """A network error in a few words (the connection's own message is about a namenode)."""
    return describe(exc.__cause__) if exc.__cause__ is not None else str(exc)


def decoded(endpoint: str, doc: dict[str, Any], decode: Callable[[dict[str, Any]], T]) -> T:
    try:
        return decode(doc)
    except (ValueError, TypeError, AttributeError, KeyError, binascii.Error) as exc:
        raise EtcdError(f"{endpoint} answered what this client cannot read ({exc})",
                        endpoint=endpoint) from exc


# ------------------------------------------------------------------------------ watch

class Watch:
    """One watch stream. Iterate it for ``WatchEvent``s in revision order; ``close()``, from
    any thread, ends the iteration at once (a reader blocked in it sees the end). The stream
    waits for events for ever once open: a member that dies breaks it (connection reset), one
    that loses its leader ends it ("no leader", thanks to ``hasleader``)."""

    def __init__(self, conn: Connection, response: http.client.HTTPResponse,
                 endpoint: str) -> None:
        self.endpoint = endpoint
        self._conn = conn
        self._response = response
        self._pending: deque[WatchEvent] = deque()
        self._lock = threading.Lock()
        self._closed = False
        self._reading = False

    @classmethod
    def open(cls, endpoint: str, body: bytes, timeout: float,
             tls: ssl.SSLContext | None = None) -> Watch:
        """Open the stream and read etcd's "created" answer within ``timeout`` seconds."""
        conn = Connection(endpoint, timeout, tls)
        with _closed_on_failure(conn, endpoint):
            response = conn.stream("POST", "/v3/watch", LEADER_HEADERS, body)
            if response.status != 200:
                document(response.status, response.read(), endpoint)
            watch = cls(conn, response, endpoint)
            watch._created()
        conn.set_timeout(None)
        return watch

    def _created(self) -> None:
        result = self._message()
        self._check_canceled(result)
        self._pending.extend(decoded(self.endpoint, result, decode_events))

    def __iter__(self) -> Iterator[WatchEvent]:
        return self

    def __next__(self) -> WatchEvent:
        while not self._pending:
            self._pending.extend(self._next_events())
        return self._pending.popleft()

    def close(self) -> None:
        """End the stream (from any thread): iterating ends, now or at its next event."""
        with self._lock:
            self._closed = True
            reading = self._reading
        self._conn.abort()
        if not reading:
            self._conn.close()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_events(self) -> list[WatchEvent]:
        """The events of the next message (none in a progress message); StopIteration once
        closed. An error ends the stream: raised, unless ``close()`` caused it."""
        with self._lock:
            if self._closed:
                raise StopIteration
            self._reading = True
        try:
            result = self._message()
            self._check_canceled(result)
            return decoded(self.endpoint, result, decode_events)
        except EtcdError:
            with self._lock:
                by_caller, self._closed = self._closed, True
            self._conn.close()
            if by_caller:
                raise StopIteration from None
            raise
        finally:
            with self._lock:
                self._reading = False

    def _message(self) -> dict[str, Any]:
        """The ``result`` of the stream's next JSON object (one a line)."""
        try:
            line = self._response.readline()
        except (*NETWORK_ERRORS, ValueError) as exc:
            raise self._broken(describe(exc)) from exc
        if not line:
            raise self._broken("the stream ended")
        try:
            doc = document(200, line, self.endpoint)
        except EtcdUnavailableError as exc:     # "no leader": the member lost its quorum
            raise self._broken(str(exc)) from exc
        result = doc.get("result")
        if not isinstance(result, dict):
            raise EtcdError(f"{self.endpoint} sent a watch message without a result: {doc}",
                            endpoint=self.endpoint)
        return result

    def _broken(self, reason: str) -> EtcdUnavailableError:
        return EtcdUnavailableError(f"the watch stream from {self.endpoint} broke ({reason}); "
                                    "watch again from the last revision seen",
                                    endpoint=self.endpoint)

    def _check_canceled(self, result: Mapping[str, Any]) -> None:
        refused = watch_refusal(result, self.endpoint)
        if refused is not None:
            raise refused
