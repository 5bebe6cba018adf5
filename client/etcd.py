"""A client of etcd's v3 API, spoken over its JSON gateway (grpc-gateway: ``POST /v3/kv/range``
and the like) on nnlite's own HTTP stack (``connection.py``): no gRPC, standard library only.
The high-availability journal and election use it (etcd 3.4, Debian's etcd-server).

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
* **Wire.** Keys and values are base64; int64 fields travel as JSON strings; a field at its
  default (0, false, empty) is left out of an answer. etcd refuses requests over
  ``MAX_REQUEST_BYTES`` (``--max-request-bytes``) and txns over ``MAX_TXN_OPS`` operations
  (``--max-txn-ops``), their defaults; either refusal is ``EtcdRequestError``, as is any
  request etcd finds malformed.
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

import base64
import binascii
import http.client
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypedDict, TypeVar
from urllib.parse import urlsplit

from nnlite.client.connection import NETWORK_ERRORS, Connection, describe
from nnlite.client.errors import (
    BadArgumentError,
    EtcdCompactedError,
    EtcdError,
    EtcdLeaseNotFoundError,
    EtcdRequestError,
    EtcdUnavailableError,
    NamenodeUnreachableError,
)

TIMEOUT = 2.0                   # seconds each member gets to answer a call
MAX_TXN_OPS = 128               # etcd's --max-txn-ops default
MAX_REQUEST_BYTES = 1_572_864   # etcd's --max-request-bytes default (1.5 MiB)
POOL = 4                        # idle keep-alive connections kept per member
HEADERS = {"Content-Type": "application/json"}
LEADER_HEADERS = {**HEADERS, "Grpc-Metadata-Hasleader": "true"}
T = TypeVar("T")


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


# ------------------------------------------------------------------------------ records

@dataclass(frozen=True, slots=True)
class KeyValue:
    key: bytes
    value: bytes
    create_revision: int
    mod_revision: int
    version: int
    lease: int


@dataclass(frozen=True, slots=True)
class RangeResult:
    kvs: tuple[KeyValue, ...]
    revision: int           # the store's revision the range was read at
    more: bool              # a limit left keys out
    count: int              # keys in the range, whatever the limit


@dataclass(frozen=True, slots=True)
class TxnResult:
    """``responses``: one per op of the branch that ran, in order -- a ``RangeResult`` for a
    get, the revision for a put, the number of keys deleted for a delete."""
    succeeded: bool
    revision: int
    responses: tuple[RangeResult | int, ...]


@dataclass(frozen=True, slots=True)
class Lease:
    id: int
    ttl: int


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: str               # "PUT" or "DELETE"
    kv: KeyValue            # a DELETE's kv has the key and the deletion's mod_revision


class MemberStatus(TypedDict):
    """``status()``: etcd's maintenance status of one member, with etcd's field names."""
    endpoint: str
    version: str
    member_id: int
    leader: int             # the leader's member id; 0 when the member knows of none
    raftTerm: int
    raftIndex: int
    dbSize: int
    revision: int


# ------------------------------------------------------------------------------ requests

def _target(target: str) -> staticmethod[[bytes], CompareTarget]:
    """A builder of ``Compare``: ``Compare.version(key)`` is ``CompareTarget("VERSION", key)``."""
    def build(key: bytes) -> CompareTarget:
        return CompareTarget(target, key)
    return staticmethod(build)


@dataclass(frozen=True, slots=True)
class Compare:
    """One condition of a txn, built as ``Compare.version(key) == 0``, ``Compare.value(key) !=
    b"x"``, ``Compare.mod_revision(key) < n``. A missing key has every revision and version 0."""
    target: str             # etcd's Compare.CompareTarget: CREATE, MOD, VERSION, VALUE, LEASE
    key: bytes
    result: str             # EQUAL, NOT_EQUAL, LESS, GREATER
    operand: int | bytes

    create_revision = _target("CREATE")
    mod_revision = _target("MOD")
    version = _target("VERSION")
    value = _target("VALUE")
    lease = _target("LEASE")

    def encode(self) -> dict[str, object]:
        field = COMPARE_FIELDS[self.target]
        operand = (_b64(self.operand) if isinstance(self.operand, bytes)
                   else str(self.operand))
        return {"key": _b64(self.key), "target": self.target, "result": self.result,
                field: operand}


COMPARE_FIELDS = {"CREATE": "create_revision", "MOD": "mod_revision", "VERSION": "version",
                  "VALUE": "value", "LEASE": "lease"}


class CompareTarget:
    """What a ``Compare`` looks at (a key's create revision, ...), before its operator."""

    __slots__ = ("target", "key")
    __hash__ = None         # type: ignore[assignment]  # == builds a Compare

    def __init__(self, target: str, key: bytes) -> None:
        self.target = target
        self.key = _checked(key)

    def __eq__(self, operand: object) -> Compare:  # type: ignore[override]
        return self._compare("EQUAL", operand)

    def __ne__(self, operand: object) -> Compare:  # type: ignore[override]
        return self._compare("NOT_EQUAL", operand)

    def __lt__(self, operand: object) -> Compare:
        return self._compare("LESS", operand)

    def __gt__(self, operand: object) -> Compare:
        return self._compare("GREATER", operand)

    def _compare(self, result: str, operand: object) -> Compare:
        wanted: type = bytes if self.target == "VALUE" else int
        if not isinstance(operand, wanted) or isinstance(operand, bool):
            raise BadArgumentError(f"a {COMPARE_FIELDS[self.target]} compare takes "
                                   f"{wanted.__name__}, not {operand!r}")
        assert isinstance(operand, (int, bytes))
        return Compare(self.target, self.key, result, operand)


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a txn (``kind`` names its field in etcd's RequestOp); ``request`` is
    its JSON request, the same body the operation's own call sends."""
    kind: str
    request: Mapping[str, object]

    @staticmethod
    def put(key: bytes, value: bytes, lease: int = 0) -> Op:
        request: dict[str, object] = {"key": _b64(key), "value": _b64(value, "value")}
        if lease:
            request["lease"] = str(lease)
        return Op("request_put", request)

    @staticmethod
    def delete(key: bytes, range_end: bytes | None = None, prefix: bool = False) -> Op:
        return Op("request_delete_range", _key_range(key, range_end, prefix))

    @staticmethod
    def get(key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
            limit: int = 0, revision: int = 0, serializable: bool = False,
            keys_only: bool = False) -> Op:
        request = _key_range(key, range_end, prefix)
        for name, value in (("limit", limit), ("revision", revision)):
            if value:
                request[name] = str(value)
        for name, flag in (("serializable", serializable), ("keys_only", keys_only)):
            if flag:
                request[name] = True
        return Op("request_range", request)

    def encode(self) -> dict[str, object]:
        return {self.kind: self.request}


def prefix_end(prefix: bytes) -> bytes:
    """The range end that makes ``[prefix, end)`` every key starting with ``prefix``
    (etcd's ``GetPrefixRangeEnd``); ``b"\\0"`` (to the last key) for an empty prefix or one
    of 0xff bytes only."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\0"


def _key_range(key: bytes, range_end: bytes | None, prefix: bool) -> dict[str, object]:
    if prefix and range_end is not None:
        raise BadArgumentError("give range_end or prefix=True, not both")
    if prefix:
        key, range_end = (key or b"\0"), prefix_end(_checked(key))
    request: dict[str, object] = {"key": _b64(key)}
    if range_end is not None:
        request["range_end"] = _b64(range_end, "range_end")
    return request


def _checked(data: bytes, what: str = "key") -> bytes:
    if not isinstance(data, bytes):
        raise BadArgumentError(f"etcd {what}s are bytes, not {type(data).__name__} ({data!r})")
    return data


def _b64(data: bytes, what: str = "key") -> str:
    return base64.b64encode(_checked(data, what)).decode("ascii")


# ------------------------------------------------------------------------------ answers

def _int(value: object) -> int:
    """An int64 of an answer: a JSON string, or absent (0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"not an integer: {value!r}")
    return int(value)


def _bytes(value: object) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise ValueError(f"not base64: {value!r}")
    return base64.b64decode(value, validate=True)


def _revision(doc: Mapping[str, Any]) -> int:
    return _int(doc.get("header", {}).get("revision"))


def decode_kv(doc: Mapping[str, Any]) -> KeyValue:
    return KeyValue(_bytes(doc.get("key")), _bytes(doc.get("value")),
                    _int(doc.get("create_revision")), _int(doc.get("mod_revision")),
                    _int(doc.get("version")), _int(doc.get("lease")))


def decode_range(doc: Mapping[str, Any]) -> RangeResult:
    return RangeResult(tuple(decode_kv(kv) for kv in doc.get("kvs", ())), _revision(doc),
                       bool(doc.get("more", False)), _int(doc.get("count")))


def decode_txn(doc: Mapping[str, Any]) -> TxnResult:
    revision = _revision(doc)
    return TxnResult(bool(doc.get("succeeded", False)), revision,
                     tuple(_decode_op_response(r, revision) for r in doc.get("responses", ())))


def _decode_op_response(doc: Mapping[str, Any], revision: int) -> RangeResult | int:
    if "response_range" in doc:
        return decode_range(doc["response_range"])
    if "response_put" in doc:
        return _revision(doc["response_put"]) or revision
    if "response_delete_range" in doc:
        return _int(doc["response_delete_range"].get("deleted"))
    raise ValueError(f"a txn response of an unknown kind: {sorted(doc)}")


def decode_status(endpoint: str, doc: Mapping[str, Any]) -> MemberStatus:
    header = doc.get("header", {})
    return MemberStatus(endpoint=endpoint, version=str(doc.get("version", "")),
                        member_id=_int(header.get("member_id")), leader=_int(doc.get("leader")),
                        raftTerm=_int(doc.get("raftTerm")), raftIndex=_int(doc.get("raftIndex")),
                        dbSize=_int(doc.get("dbSize")), revision=_int(header.get("revision")))


def decode_event(doc: Mapping[str, Any]) -> WatchEvent:
    return WatchEvent(str(doc.get("type", "PUT")), decode_kv(doc.get("kv", {})))


def _events(result: Mapping[str, Any]) -> list[WatchEvent]:
    return [decode_event(e) for e in result.get("events", ())]


def _document(status: int, body: bytes, endpoint: str) -> dict[str, Any]:
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


# ------------------------------------------------------------------------------ the client

class Etcd:
    """A client of the etcd cluster whose members answer at ``endpoints``
    (``http://HOST:PORT``); ``timeout``: seconds each member gets to answer a call."""

    def __init__(self, endpoints: list[str], timeout: float = TIMEOUT) -> None:
        if not endpoints:
            raise BadArgumentError("no etcd endpoint given")
        self.endpoints = [_endpoint(e) for e in endpoints]
        self.timeout = timeout
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
        return self._call("/v3/kv/range", op.request, decode_range, leader=not serializable)

    def put(self, key: bytes, value: bytes, *, lease: int = 0) -> int:
        """Set ``key``; the revision of the write."""
        return self._call("/v3/kv/put", Op.put(key, value, lease).request, _revision)

    def delete(self, key: bytes, range_end: bytes | None = None, *,
               prefix: bool = False) -> int:
        """Delete ``key`` (or the range, or the prefix); how many keys were deleted."""
        request = Op.delete(key, range_end, prefix).request
        return self._call("/v3/kv/deleterange", request,
                          lambda doc: _int(doc.get("deleted")))

    def txn(self, compare: Iterable[Compare], success: Iterable[Op],
            failure: Iterable[Op] = ()) -> TxnResult:
        """If every ``compare`` holds, run ``success``, else ``failure``, atomically."""
        request = {"compare": [c.encode() for c in compare],
                   "success": [op.encode() for op in success],
                   "failure": [op.encode() for op in failure]}
        return self._call("/v3/kv/txn", request, decode_txn)

    # ---------------------------------------------------------------- leases

    def grant_lease(self, ttl: int) -> Lease:
        """A new lease of ``ttl`` seconds (etcd may grant a longer one, never shorter)."""
        return self._call("/v3/lease/grant", {"TTL": str(ttl)},
                          lambda doc: Lease(_int(doc.get("ID")), _int(doc.get("TTL"))))

    def keep_alive(self, lease_id: int) -> int:
        """Renew the lease once; the TTL it has again, 0 when it is gone."""
        return self._call("/v3/lease/keepalive", {"ID": str(lease_id)},
                          lambda doc: _int(doc.get("result", {}).get("TTL")))

    def revoke_lease(self, lease_id: int) -> bool:
        """Revoke the lease, deleting its keys; False when it was already gone."""
        try:
            self._call("/v3/lease/revoke", {"ID": str(lease_id)}, _revision)
        except EtcdLeaseNotFoundError:
            return False
        return True

    def time_to_live(self, lease_id: int) -> int:
        """The lease's seconds left; -1 when it is gone."""
        return self._call("/v3/lease/timetolive", {"ID": str(lease_id)},
                          lambda doc: _int(doc.get("TTL")))

    # ---------------------------------------------------------------- maintenance

    def compact(self, revision: int, physical: bool = False) -> None:
        """Drop the history before ``revision``; ``physical``: return once it is gone from
        the store, not only from the index."""
        request = {"revision": str(revision), "physical": physical}
        self._call("/v3/kv/compaction", request, _revision)

    def status(self) -> MemberStatus:
        """The status of the member that answers (the current one, or the next that does)."""
        endpoint, doc = self._failover("/v3/maintenance/status", b"{}", HEADERS)
        return _decoded(endpoint, doc, lambda d: decode_status(endpoint, d))

    def member_status(self) -> dict[str, MemberStatus | str]:
        """Every endpoint's status, or the text of why it has none."""
        found: dict[str, MemberStatus | str] = {}
        for endpoint in self.endpoints:
            try:
                doc = self._exchange(endpoint, "/v3/maintenance/status", b"{}", HEADERS)
                found[endpoint] = _decoded(endpoint, doc,
                                           lambda d: decode_status(endpoint, d))
            except EtcdError as exc:
                found[endpoint] = str(exc)
        return found

    # ---------------------------------------------------------------- watch

    def watch(self, key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
              start_revision: int = 0) -> Watch:
        """A stream of the changes to the key (or range, or prefix) from ``start_revision``
        (0: from now on), opened on the first member that serves it."""
        create = _key_range(key, range_end, prefix)
        if start_revision:
            create["start_revision"] = str(start_revision)
        body = json.dumps({"create_request": create}).encode()
        return self._each_member("/v3/watch", lambda e: Watch.open(e, body, self.timeout))

    # ---------------------------------------------------------------- calls

    def _call(self, path: str, request: Mapping[str, object],
              decode: Callable[[dict[str, Any]], T], *, leader: bool = True) -> T:
        body = json.dumps(request).encode()
        endpoint, doc = self._failover(path, body, LEADER_HEADERS if leader else HEADERS)
        return _decoded(endpoint, doc, decode)

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
        try:
            reply = conn.request("POST", path, body, headers)
        except NamenodeUnreachableError as exc:
            conn.close()
            raise EtcdUnavailableError(_reason(exc), endpoint=endpoint) from exc
        except BaseException:
            conn.close()
            raise
        self._give_back(endpoint, conn)
        return _document(reply.status, reply.body, endpoint)

    def _take(self, endpoint: str) -> Connection:
        with self._lock:
            idle = self._idle[endpoint]
            if idle:
                return idle.pop()
        return Connection(endpoint, self.timeout)

    def _give_back(self, endpoint: str, conn: Connection) -> None:
        with self._lock:
            idle = self._idle[endpoint]
            if len(idle) < POOL:
                idle.append(conn)
                return
        conn.close()


def _endpoint(url: str) -> str:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
        raise BadArgumentError(f"an etcd endpoint is http://HOST:PORT, not {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _reason(exc: NamenodeUnreachableError) -> str:
    """A network error in a few words (the connection's own message is about a namenode)."""
    return describe(exc.__cause__) if exc.__cause__ is not None else str(exc)


def _decoded(endpoint: str, doc: dict[str, Any], decode: Callable[[dict[str, Any]], T]) -> T:
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
    def open(cls, endpoint: str, body: bytes, timeout: float) -> Watch:
        """Open the stream and read etcd's "created" answer within ``timeout`` seconds."""
        conn = Connection(endpoint, timeout)
        try:
            response = conn.stream("POST", "/v3/watch", LEADER_HEADERS, body)
            if response.status != 200:
                _document(response.status, response.read(), endpoint)
            watch = cls(conn, response, endpoint)
            watch._created()
        except NamenodeUnreachableError as exc:
            conn.close()
            raise EtcdUnavailableError(_reason(exc), endpoint=endpoint) from exc
        except BaseException:
            conn.close()
            raise
        conn.set_timeout(None)
        return watch

    def _created(self) -> None:
        result = self._message()
        self._check_canceled(result)
        self._pending.extend(_decoded(self.endpoint, result, _events))

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
            return _decoded(self.endpoint, result, _events)
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
            doc = _document(200, line, self.endpoint)
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
        if not result.get("canceled"):
            return
        compacted = _int(result.get("compact_revision"))
        reason = str(result.get("cancel_reason") or "the watch was canceled")
        if compacted:
            raise EtcdCompactedError(
                f"the watch's start revision is compacted: etcd keeps revisions from "
                f"{compacted} ({reason})", compact_revision=compacted, endpoint=self.endpoint)
        raise classify(None, reason, self.endpoint)
