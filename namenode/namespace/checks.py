"""Checks the namespace's requests share: values the edits log and the fsimage can hold.

A request validates its arguments with these before it builds an op, and ``check_loggable``
runs on every op before it applies: an op the journal could not encode, or one larger than a
reader accepts, must fail before it changes the tree, not after.
"""

from __future__ import annotations

from nnlite.formats import edits
from nnlite.namenode import errors

MAX_REPLICATION = 512
MAX_PERMISSION = 0o7777
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
TXID_ROOM = 8         # a txid's msgpack bytes beyond the untimed payload's one-byte 0


def check_loggable(op: edits.Op, max_record: int = edits.DEFAULT_MAX_RECORD) -> bytes:
    """An op the journal could not encode (a lone surrogate in a name, an integer beyond 64
    bits), or one larger than a reader accepts (it would be logged and then refuse to load),
    would change the tree and then fail; refuse it before it applies. Returns the op packed
    without its txid (``E.pack_untimed``), which the journal frames as it logs the op.

    The size is checked with room for the txid the journal will assign: its msgpack bytes
    (at most 9, for a uint64) replace the untimed payload's one-byte 0."""
    try:
        untimed = edits.pack_untimed(op)
    except (OverflowError, UnicodeEncodeError, TypeError, ValueError) as exc:
        raise errors.IllegalArgumentError(
            f"{type(op).__name__} cannot be logged: {exc}") from exc
    size = len(untimed) + TXID_ROOM
    if size > max_record:
        raise errors.IllegalArgumentError(
            f"{type(op).__name__} would be an edits record of up to {size} bytes, above the "
            f"{max_record}-byte limit of the edits log: split the request")
    return untimed


def check_replication(replication: int, path: str) -> None:
    if replication < 1:
        raise errors.NamenodeError(
            f"Requested replication factor of {replication} is less than the required minimum "
            f"of 1 for {path}", path=path)
    if replication > MAX_REPLICATION:
        raise errors.NamenodeError(
            f"Requested replication factor of {replication} exceeds maximum of "
            f"{MAX_REPLICATION} for {path}", path=path)


def check_permission(permission: int, path: str) -> None:
    """Mode bits, sticky and set-id bits included: what the fsimage column holds."""
    if not 0 <= permission <= MAX_PERMISSION:
        raise errors.IllegalArgumentError(
            f"Invalid permission {permission:#o} for {path}: not within 0..{MAX_PERMISSION:#o}",
            path=path)


def check_long(value: int, what: str, path: str, minimum: int = LONG_MIN) -> None:
    """A value the edits log and the fsimage store as a signed 64-bit integer (a Java long):
    a larger one would be applied and then fail to be logged."""
    if not minimum <= value <= LONG_MAX:
        raise errors.IllegalArgumentError(
            f"Invalid {what} {value} for {path}: not within {minimum}..{LONG_MAX}", path=path)

