"""The messages of etcd's v3 API this client speaks: requests and answers as immutable
records, with etcd's names (``RangeRequest``, ``PutRequest``, ``KeyValue``, ``TxnResponse``'s
fields ...), and the limits etcd puts on them. No encoding here (that is ``codec.py``) and no
I/O (``client.py``).

* **Requests.** ``Op.put`` / ``Op.delete`` / ``Op.get`` build a ``PutRequest``,
  ``DeleteRangeRequest`` or ``RangeRequest`` -- the operations of a txn, and the bodies of the
  client's own ``put`` / ``delete`` / ``range``. ``Compare.version(key) == 0`` (and
  ``create_revision``, ``mod_revision``, ``value``, ``lease``; ``==``, ``!=``, ``<``, ``>``)
  builds a txn's condition. Keys, values and range ends are ``bytes``; anything else is
  refused when the record is built (``BadArgumentError``), before anything is sent.
* **Ranges.** ``key`` alone is that key; ``range_end`` makes ``[key, range_end)``; ``prefix``
  every key starting with ``key`` (``prefix_end``, etcd's ``GetPrefixRangeEnd``).
* **Limits.** etcd refuses requests over ``MAX_REQUEST_BYTES`` (``--max-request-bytes``) and
  txns over ``MAX_TXN_OPS`` operations (``--max-txn-ops``), their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from nnlite.client.errors import BadArgumentError

MAX_TXN_OPS = 128               # etcd's --max-txn-ops default
MAX_REQUEST_BYTES = 1_572_864   # etcd's --max-request-bytes default (1.5 MiB)


# ------------------------------------------------------------------------------ answers

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


# ------------------------------------------------------------------------------ conditions

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


# The field of etcd's Compare that holds the operand of each target.
COMPARE_FIELDS = {"CREATE": "create_revision", "MOD": "mod_revision", "VERSION": "version",
                  "VALUE": "value", "LEASE": "lease"}


class CompareTarget:
    """What a ``Compare`` looks at (a key's create revision, ...), before its operator."""

    __slots__ = ("target", "key")
    __hash__ = None         # type: ignore[assignment]  # == builds a Compare

    def __init__(self, target: str, key: bytes) -> None:
        self.target = target
        self.key = checked(key)

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


# ------------------------------------------------------------------------------ requests

class Op:
    """One operation of a txn: ``Op.put``, ``Op.delete`` or ``Op.get`` build the request
    record (the same request the operation's own call sends)."""

    __slots__ = ()

    @staticmethod
    def put(key: bytes, value: bytes, lease: int = 0) -> PutRequest:
        return PutRequest(checked(key), checked(value, "value"), lease)

    @staticmethod
    def delete(key: bytes, range_end: bytes | None = None,
               prefix: bool = False) -> DeleteRangeRequest:
        return DeleteRangeRequest(*key_range(key, range_end, prefix))

    @staticmethod
    def get(key: bytes, range_end: bytes | None = None, *, prefix: bool = False,
            limit: int = 0, revision: int = 0, serializable: bool = False,
            keys_only: bool = False) -> RangeRequest:
        return RangeRequest(*key_range(key, range_end, prefix), limit=limit, revision=revision,
                            serializable=serializable, keys_only=keys_only)


@dataclass(frozen=True, slots=True)
class PutRequest(Op):
    key: bytes
    value: bytes
    lease: int = 0          # 0: none


@dataclass(frozen=True, slots=True)
class DeleteRangeRequest(Op):
    key: bytes
    range_end: bytes | None = None


@dataclass(frozen=True, slots=True)
class RangeRequest(Op):
    key: bytes
    range_end: bytes | None = None
    limit: int = 0          # 0: no limit
    revision: int = 0       # 0: the latest
    serializable: bool = False
    keys_only: bool = False


@dataclass(frozen=True, slots=True)
class WatchCreateRequest:
    key: bytes
    range_end: bytes | None = None
    start_revision: int = 0     # 0: from now on


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


def key_range(key: bytes, range_end: bytes | None,
              prefix: bool) -> tuple[bytes, bytes | None]:
    """``(key, range_end)`` of a request: the key alone, ``[key, range_end)``, or every key
    starting with ``key``."""
    if prefix and range_end is not None:
        raise BadArgumentError("give range_end or prefix=True, not both")
    if prefix:
        key, range_end = (key or b"\0"), prefix_end(checked(key))
    checked(key)
    if range_end is not None:
        checked(range_end, "range_end")
    return key, range_end


def checked(data: bytes, what: str = "key") -> bytes:
    """``data``, refused unless it is bytes (etcd's keys, values and range ends are)."""
    if not isinstance(data, bytes):
        raise BadArgumentError(f"etcd {what}s are bytes, not {type(data).__name__} ({data!r})")
    return data
