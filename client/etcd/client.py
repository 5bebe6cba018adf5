"""The client of etcd's v3 API: ``Etcd``, its calls over etcd's own gRPC API (``grpcio``, the
transport etcd documents for its clients and clientv3 uses; the messages are ``codec.py``'s),
failover between members, and ``Watch`` streams. The high-availability journal and election
use it (etcd 3.4, Debian's etcd-server).

* **Calls.** ``Etcd(endpoints)`` sends each call to its current member, one HTTP/2 channel per
  member. A member that cannot serve -- no connection, no answer within ``timeout`` seconds
  (the call's gRPC deadline), an answer that is not etcd's gRPC API, or etcd's own "no
  leader", "request timed out", "leader changed", "too many requests" (gRPC Unavailable,
  DeadlineExceeded; ``codec.classify``) -- passes the call to the next member, each member
  tried once; the one that serves becomes the current one. When none serves the call raises
  ``EtcdUnavailableError`` naming the endpoints and the last reason. So a call fails in
  ``timeout`` seconds per member that hangs, at once for one that refuses connections (a
  channel whose member refused waits at most ``RECONNECT_MS`` before it connects again).
  Requests carry gRPC metadata ``hasleader`` (etcd's ``clientv3.WithRequireLeader``): a
  member without a leader says so at once instead of holding a write until its own request
  timeout (7 s); serializable reads and ``status`` leave it out, since a member without a
  leader can answer them.
* **Writes retried elsewhere.** A write whose member timed out or dropped the connection after
  the request was sent may have been applied there before it went to the next member
  (clientv3's ``isSafeRetryMutableRPC`` would not retry it; the HA journal's writes are
  guarded): a txn guarded by what it writes (compare the version or the value) tells the two
  cases apart.
* **Threads.** An ``Etcd`` may be shared: a gRPC channel multiplexes concurrent calls.
* **TLS.** ``https://`` endpoints with ``tls`` (``tls_context``: the members' CA, this
  client's certificate and key, as ``grpc.ssl_channel_credentials``) reach members run with
  ``--client-cert-auth``.
* **Limits.** A request over ``MAX_REQUEST_BYTES`` or a txn over ``MAX_TXN_OPS`` operations
  (``messages.py``) is ``EtcdRequestError`` (etcd's refusal, or grpcio's for a message over
  clientv3's 2 MiB send limit, ``MAX_SEND_BYTES``), as is any request etcd finds malformed.
* **Watch.** ``watch()`` opens a ``Watch/Watch`` stream on a channel of its own on the first
  member that serves and returns a ``Watch``: iterating it yields ``WatchEvent``s in
  revision order until ``close()`` (from any thread) ends it. A broken stream raises
  ``EtcdUnavailableError`` (watch again from the revision after the last event's
  ``kv.mod_revision``); a start revision already compacted raises ``EtcdCompactedError`` with
  etcd's compact revision.
* **Leases.** ``keep_alive`` renews once on a short ``LeaseKeepAlive`` stream (a request, its
  answer, the stream closed), as ``clientv3.Lease.KeepAliveOnce``.

Cost (``python bench/bench_etcd.py``): see BENCHMARKS.md's etcd section.
"""

from __future__ import annotations

import functools
import os
import queue
import ssl
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

# gRPC core's EventEngine client hands each call's reads and writes to threads of its own, which
# cost the caller about 150 µs more CPU per unary call than the poller it runs on the calling
# thread (the HA journal's commit txn: 271 against 424 µs, BENCHMARKS.md's etcd section). Core
# reads GRPC_EXPERIMENTS once, at import, so it is set first; a value set by the user wins.
os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client")

import grpc  # noqa: E402

from nnlite.client.errors import (
    BadArgumentError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdUnavailableError,
)
from nnlite.client.etcd.codec import (
    COMPACT,
    DELETE_RANGE,
    LEASE_GRANT,
    LEASE_KEEP_ALIVE,
    LEASE_REVOKE,
    LEASE_TIME_TO_LIVE,
    PUT,
    RANGE,
    STATUS,
    TXN,
    WATCH,
    Code,
    Method,
    classify,
    decode_deleted,
    decode_events,
    decode_lease,
    decode_range,
    decode_revision,
    decode_status,
    decode_ttl,
    decode_txn,
    encode_compaction,
    encode_lease_grant,
    encode_lease_id,
    encode_op,
    encode_status,
    encode_txn,
    encode_watch_create,
    serialize,
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
LEADER = (("hasleader", "true"),)   # clientv3.WithRequireLeader's metadata
MAX_SEND_BYTES = 2 * 1024 * 1024    # clientv3's defaultMaxCallSendMsgSize
RECONNECT_MS = 1000             # the longest a channel waits to connect again to a member
CHANNEL_OPTIONS = (
    ("grpc.max_send_message_length", MAX_SEND_BYTES),
    ("grpc.max_receive_message_length", 2**31 - 1),     # clientv3's MaxCallRecvMsgSize
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", RECONNECT_MS),
)
T = TypeVar("T")


@dataclass(frozen=True)
class EtcdTLS:
    """What a client of members run with ``--client-cert-auth`` presents: the CA's
    certificates it trusts and its own certificate with its key (PEM bytes; None: the
    system's CAs, no client certificate)."""
    ca: bytes | None
    cert: bytes | None
    key: bytes | None

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(self.ca, self.key, self.cert)


# ------------------------------------------------------------------------------ the client

class Etcd:
    """A client of the etcd cluster whose members answer at ``endpoints``
    (``http://HOST:PORT``, ``https://`` with TLS); ``timeout``: seconds each member gets to
    answer a call."""

    def __init__(self, endpoints: list[str], timeout: float = TIMEOUT,
                 tls: EtcdTLS | None = None) -> None:
        if not endpoints:
            raise BadArgumentError("no etcd endpoint given")
        self.endpoints = [_endpoint(e) for e in endpoints]
        self.timeout = timeout
        self.tls = tls        # https endpoints: the CA and this client's certificate
        self._lock = threading.Lock()
        self._current = 0
        self._channels: dict[str, grpc.Channel] = {}
        self._stubs: dict[tuple[str, str], Any] = {}

    @property
    def endpoint(self) -> str:
        """The member calls go to first."""
        with self._lock:
            return self.endpoints[self._current]

    def close(self) -> None:
        """Close the channels (a later call opens new ones; a ``Watch`` has its own)."""
        with self._lock:
            channels = list(self._channels.values())
            self._channels.clear()
            self._stubs.clear()
        for channel in channels:
            channel.close()

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
        return self._call(RANGE, encode_op(op), decode_range, leader=not serializable)

    def put(self, key: bytes, value: bytes, *, lease: int = 0) -> int:
        """Set ``key``; the revision of the write."""
        return self._call(PUT, encode_op(Op.put(key, value, lease)), decode_revision)

    def delete(self, key: bytes, range_end: bytes | None = None, *,
               prefix: bool = False) -> int:
        """Delete ``key`` (or the range, or the prefix); how many keys were deleted."""
        return self._call(DELETE_RANGE, encode_op(Op.delete(key, range_end, prefix)),
                          decode_deleted)

    def txn(self, compare: Iterable[Compare], success: Iterable[Op],
            failure: Iterable[Op] = ()) -> TxnResult:
        """If every ``compare`` holds, run ``success``, else ``failure``, atomically."""
        return self._call(TXN, encode_txn(compare, success, failure), decode_txn)

    # ---------------------------------------------------------------- leases

    def grant_lease(self, ttl: int) -> Lease:
        """A new lease of ``ttl`` seconds (etcd may grant a longer one, never shorter)."""
        return self._call(LEASE_GRANT, encode_lease_grant(ttl), decode_lease)

    def keep_alive(self, lease_id: int) -> int:
        """Renew the lease once; the TTL it has again, 0 when it is gone."""
        request = encode_lease_id("LeaseKeepAliveRequest", lease_id)
        return self._call(LEASE_KEEP_ALIVE, request, decode_ttl, stream=True)

    def revoke_lease(self, lease_id: int) -> bool:
        """Revoke the lease, deleting its keys; False when it was already gone."""
        try:
            self._call(LEASE_REVOKE, encode_lease_id("LeaseRevokeRequest", lease_id),
                       decode_revision)
        except EtcdLeaseNotFoundError:
            return False
        return True

    def time_to_live(self, lease_id: int) -> int:
        """The lease's seconds left; -1 when it is gone."""
        return self._call(LEASE_TIME_TO_LIVE,
                          encode_lease_id("LeaseTimeToLiveRequest", lease_id), decode_ttl)

    # ---------------------------------------------------------------- maintenance

    def compact(self, revision: int, physical: bool = False) -> None:
        """Drop the history before ``revision``; ``physical``: return once it is gone from
        the store, not only from the index."""
        self._call(COMPACT, encode_compaction(revision, physical), decode_revision)

    def status(self) -> MemberStatus:
        """The status of the member that answers (the current one, or the next that does)."""
        endpoint, answer = self._failover(STATUS, encode_status(), leader=False)
        return decoded(endpoint, answer, functools.partial(decode_status, endpoint))

    def member_status(self) -> dict[str, MemberStatus | str]:
        """Every endpoint's status, or the text of why it has none."""
        found: dict[str, MemberStatus | str] = {}
        for endpoint in self.endpoints:
            try:
                answer = self._exchange(endpoint, STATUS, encode_status(), leader=False)
                found[endpoint] = decoded(endpoint, answer,
                                          functools.partial(decode_status, endpoint))
            except EtcdError as exc:
                found[endpoint] = str(exc)
        return found

    # ---------------------------------------------------------------- watch

    def watch(self, key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
              start_revision: int = 0) -> Watch:
        """A stream of the changes to the key (or range, or prefix) from ``start_revision``
        (0: from now on), opened on the first member that serves it."""
        request = encode_watch_create(
            WatchCreateRequest(*key_range(key, range_end, prefix), start_revision))
        return self._each_member(WATCH.path, lambda e: Watch.open(
            e, self._new_channel(e), request, self.timeout))

    # ---------------------------------------------------------------- calls

    def _call(self, method: Method, request: Any, decode: Callable[[Any], T], *,
              leader: bool = True, stream: bool = False) -> T:
        endpoint, answer = self._failover(method, request, leader=leader, stream=stream)
        return decoded(endpoint, answer, decode)

    def _failover(self, method: Method, request: Any, *, leader: bool,
                  stream: bool = False) -> tuple[str, Any]:
        return self._each_member(method.path, lambda e: (
            e, self._exchange(e, method, request, leader=leader, stream=stream)))

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

    def _exchange(self, endpoint: str, method: Method, request: Any, *, leader: bool,
                  stream: bool = False) -> Any:
        """One request to one member: its answer, or its typed refusal. A ``stream`` method
        gets the request alone (then the client's end of the stream) and the first answer."""
        stub = self._stub(endpoint, method, stream)
        metadata = LEADER if leader else None
        try:
            if not stream:
                return stub(request, timeout=self.timeout, metadata=metadata)
            answers = stub(iter((request,)), timeout=self.timeout, metadata=metadata)
            try:
                return next(answers)
            finally:
                answers.cancel()
        except grpc.RpcError as exc:
            error = refusal(exc, endpoint, self.timeout)
            if isinstance(error, EtcdUnavailableError) and not answered(exc):
                self._forget(endpoint)
            raise error from exc
        except StopIteration:
            raise EtcdUnavailableError(f"{method.path}'s stream ended without an answer",
                                       endpoint=endpoint) from None

    def _stub(self, endpoint: str, method: Method, stream: bool) -> Any:
        """The callable of ``method`` on ``endpoint``'s channel (made once)."""
        with self._lock:
            stub = self._stubs.get((endpoint, method.path))
            if stub is not None:
                return stub
            channel = self._channels.get(endpoint)
            if channel is None:
                channel = self._channels[endpoint] = self._new_channel(endpoint)
            kind = channel.stream_stream if stream else channel.unary_unary
            stub = self._stubs[(endpoint, method.path)] = kind(
                method.path, request_serializer=serialize,
                response_deserializer=method.answer.FromString)
            return stub

    def _forget(self, endpoint: str) -> None:
        """Drop ``endpoint``'s channel after a call found no connection: the next call makes
        a new one, which connects at once. The poller on the calling thread drives a channel
        only while a call waits on it, and a call fails at once while its channel waits out
        a reconnect backoff, so a kept channel would take many seconds to see a member that
        is back (longer than a leader lease). Calls under way on the old channel keep it
        until they end."""
        with self._lock:
            self._channels.pop(endpoint, None)
            for key in [k for k in self._stubs if k[0] == endpoint]:
                del self._stubs[key]

    def _new_channel(self, endpoint: str) -> grpc.Channel:
        scheme, target = endpoint.split("://", 1)
        if scheme == "https":
            credentials = (self.tls or EtcdTLS(None, None, None)).credentials()
            return grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS)
        return grpc.insecure_channel(target, options=CHANNEL_OPTIONS)


def tls_context(ca: str, cert: str, key: str) -> EtcdTLS:
    """The TLS of a client of etcd members run with ``--client-cert-auth``: trust ``ca``'s
    certificates (``--trusted-ca-file``'s), present ``cert`` with its ``key`` (PEM files),
    as etcdctl's ``--cacert``, ``--cert`` and ``--key``. The files are read (and checked
    with the ``ssl`` module) now."""
    try:
        context = ssl.create_default_context(cafile=ca or None)
        if cert:
            context.load_cert_chain(cert, key or None)
        return EtcdTLS(Path(ca).read_bytes() if ca else None,
                       Path(cert).read_bytes() if cert else None,
                       Path(key or cert).read_bytes() if cert else None)
    except (OSError, ssl.SSLError) as exc:
        raise BadArgumentError(f"etcd's TLS files cannot be used (CA {ca!r}, certificate "
                               f"{cert!r}, key {key!r}): {exc}") from exc


def _endpoint(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        raise BadArgumentError(f"an etcd endpoint is http://HOST:PORT, not {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


def refusal(exc: grpc.RpcError, endpoint: str, timeout: float) -> EtcdError:
    """A failed gRPC call as its typed error. What grpcio says of the connection itself
    (refused, no answer in time, a peer that is not etcd's gRPC API) is the member's
    unavailability, in a few words."""
    code, details = exc.code(), exc.details() or ""
    number = code.value[0] if isinstance(code, grpc.StatusCode) else None
    if answered(exc):
        return classify(number, details, endpoint)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return EtcdUnavailableError(f"no answer within {timeout:g} s", code=number,
                                    endpoint=endpoint)
    if "Connection refused" in details:
        return EtcdUnavailableError("connection refused", code=number, endpoint=endpoint)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNIMPLEMENTED,
                grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL,
                grpc.StatusCode.CANCELLED):
        return EtcdUnavailableError(f"{code.name}: {' '.join(details.split())}"
                                    " (not etcd's gRPC API, or no connection)",
                                    code=number, endpoint=endpoint)
    return classify(number, details, endpoint)


def answered(exc: grpc.RpcError) -> bool:
    """Whether the member itself answered the refusal (an ``etcdserver:`` status), so the
    connection to it stands."""
    return (exc.details() or "").startswith(("etcdserver:", "mvcc:"))


def decoded(endpoint: str, answer: Any, decode: Callable[[Any], T]) -> T:
    try:
        return decode(answer)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise EtcdError(f"{endpoint} answered what this client cannot read ({exc})",
                        endpoint=endpoint) from exc


# ------------------------------------------------------------------------------ watch

class Watch:
    """One watch stream, on a channel of its own. Iterate it for ``WatchEvent``s in revision
    order; ``close()``, from any thread, ends the iteration at once (a reader blocked in it
    sees the end). The stream waits for events for ever once open: a member that dies breaks
    it, one that loses its leader ends it ("no leader", thanks to ``hasleader``)."""

    def __init__(self, endpoint: str, channel: grpc.Channel) -> None:
        self.endpoint = endpoint
        self._channel = channel
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._answers: Any = None
        self._pending: deque[WatchEvent] = deque()
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(cls, endpoint: str, channel: grpc.Channel, request: Any,
             timeout: float) -> Watch:
        """Open the stream and read etcd's "created" answer within ``timeout`` seconds."""
        watch = cls(endpoint, channel)
        watch._requests.put(request)
        stub = channel.stream_stream(WATCH.path, request_serializer=serialize,
                                     response_deserializer=WATCH.answer.FromString)
        watch._answers = stub(watch._outgoing(), metadata=LEADER)
        timer = threading.Timer(timeout, watch._answers.cancel)
        timer.start()
        try:
            watch._pending.extend(watch._events())
        except BaseException:
            watch._end()
            raise
        finally:
            timer.cancel()
        return watch

    def _outgoing(self) -> Iterator[Any]:
        """The requests of the stream: the create request, then none until ``_end``."""
        while (request := self._requests.get()) is not None:
            yield request

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
        self._end()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _end(self) -> None:
        self._requests.put(None)
        if self._answers is not None:
            self._answers.cancel()
        self._channel.close()

    def _next_events(self) -> list[WatchEvent]:
        """The events of the next message (none in a progress message); StopIteration once
        closed. An error ends the stream: raised, unless ``close()`` caused it."""
        with self._lock:
            if self._closed:
                raise StopIteration
        try:
            return self._events()
        except EtcdError:
            with self._lock:
                by_caller, self._closed = self._closed, True
            self._end()
            if by_caller:
                raise StopIteration from None
            raise

    def _events(self) -> list[WatchEvent]:
        """The events of the stream's next message; its refusal as its typed error."""
        try:
            answer = next(self._answers)
        except StopIteration:
            raise self._broken("the stream ended") from None
        except grpc.RpcError as exc:
            error = refusal(exc, self.endpoint, 0)
            if isinstance(error, EtcdUnavailableError) or exc.code() in (
                    grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise self._broken(str(error)) from exc
            raise error from exc
        refused = watch_refusal(answer, self.endpoint)
        if refused is not None:
            raise refused
        return decoded(self.endpoint, answer, decode_events)

    def _broken(self, reason: str) -> EtcdUnavailableError:
        return EtcdUnavailableError(f"the watch stream from {self.endpoint} broke ({reason}); "
                                    "watch again from the last revision seen",
                                    endpoint=self.endpoint, code=Code.UNAVAILABLE)
