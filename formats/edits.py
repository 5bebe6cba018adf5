"""The edits log: a header, then length-and-CRC framed msgpack records, one per namespace op.

Byte layout (all integers little-endian)::

    file    := header record*
    header  := magic[8] = b"NNLEDITS"
               version u32          -- LAYOUT_VERSION when written; READABLE_VERSIONS
                                       are read, others refused
               first_txid u64       -- txid of the first record this file holds (or will hold)
               header_crc u32       -- CRC-32 of the 20 bytes before it
    record  := length u32           -- payload bytes, 1 .. max_record
               crc u32              -- CRC-32 of the 4 length bytes followed by the payload
               payload[length]      -- msgpack array [op_code, txid, field...]

Fields follow the declaration order of the op's dataclass; ``None`` is msgpack nil, a block is
``[block_id, num_bytes, generation_stamp]``, byte strings are msgpack bin. Op codes are stable
forever: a retired code stays reserved in ``OpCode``. Code 0 is never used, so a zero-filled
region can never decode as an op.

Txids are contiguous: the first record carries ``first_txid`` and each next record one more.
Every segment starts with START_LOG_SEGMENT and, once rolled, ends with END_LOG_SEGMENT.

How a reader classifies what it finds at a record boundary:

* no bytes left: a clean end.
* a partial header, a record running past the end of the file, or a bad last record whose
  bytes from a sector boundary (``DISK_UNIT``) on are zeros to the end of the file (the file grew
  before its data reached the disk, as a crash between write and fdatasync leaves it; a tail
  of zeros is the same): a *torn tail* (``is_torn``). It is reported on
  ``EditsReader.torn_tail``; the owner of the file truncates it to ``valid_length`` before
  appending. A torn tail can only hold an op that was never acknowledged, because an op is
  acknowledged only after the record and everything before it are fsynced.
* a complete last record that fails its CRC or does not decode, with nothing or only zeros
  after it but not torn as above (a bit flip in a record that was synced, so possibly an
  acknowledged op): ``CorruptRecordError``, for recovery mode to decide.
* a CRC mismatch or an undecodable payload with more (non-zero) data after it:
  ``CorruptRecordError`` with file, offset and the txid expected there. Never skipped.
* a record that looks torn but whose CRC matches the msgpack object after its header at a
  different length, with data after that object: a damaged length field, so
  ``CorruptRecordError`` (a bit flip in a middle record's length is not a torn tail).
* a length above ``max_record``: ``RecordTooLargeError`` before any memory is allocated.
* a txid other than the expected one: ``TxidGapError``.

File names (in ``<name-dir>/current/``): ``edits`` and, between a roll and the end of a
checkpoint, ``edits.new``.
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from operator import attrgetter
from typing import Any, ClassVar, TypeVar, dataclass_transform

import msgpack

from nnlite.formats.errors import (
    BadHeaderError,
    CorruptRecordError,
    RecordTooLargeError,
    TxidGapError,
    UnsupportedVersionError,
)

MAGIC = b"NNLEDITS"
LAYOUT_VERSION = 3
# 3 added the delegation token ops; 2 SET_ACL and the snapshot ops; 1 reads as it always did
READABLE_VERSIONS = (1, 2, 3)
HEADER = struct.Struct("<8sIQ")
HEADER_SIZE = HEADER.size + 4
RECORD_HEADER = struct.Struct("<II")
RECORD_HEADER_SIZE = RECORD_HEADER.size
LENGTH = struct.Struct("<I")
DEFAULT_MAX_RECORD = 1 << 20
# The smallest unit a file system maps a file's data in (a sector; ext4 and XFS blocks are
# multiples of it): a crash leaves unwritten data as zeros from such a boundary (is_torn).
DISK_UNIT = 512

Block = tuple[int, int, int]  # (block_id, num_bytes, generation_stamp)


class OpCode(IntEnum):
    """Stable op codes. Never renumber; retire a code by leaving it here, commented as retired."""

    START_LOG_SEGMENT = 1
    END_LOG_SEGMENT = 2
    MKDIR = 3
    ADD_FILE = 4
    CLOSE_FILE = 5
    ADD_BLOCK = 6
    UPDATE_BLOCKS = 7
    DELETE = 8
    RENAME_OLD = 9
    RENAME = 10
    SET_PERMISSIONS = 11
    SET_OWNER = 12
    SET_TIMES = 13
    SET_REPLICATION = 14
    SET_QUOTA = 15
    SET_XATTR = 16
    REMOVE_XATTR = 17
    CONCAT = 18
    TRUNCATE = 19
    APPEND = 20
    DELETE_MANY = 21
    SET_ACL = 22
    ALLOW_SNAPSHOT = 23
    DISALLOW_SNAPSHOT = 24
    CREATE_SNAPSHOT = 25
    DELETE_SNAPSHOT = 26
    RENAME_SNAPSHOT = 27
    GET_DELEGATION_TOKEN = 28       # Hadoop's OP_GET_DELEGATION_TOKEN (18 in FSEditLogOpCodes)
    RENEW_DELEGATION_TOKEN = 29     # OP_RENEW_DELEGATION_TOKEN (19)
    CANCEL_DELEGATION_TOKEN = 30    # OP_CANCEL_DELEGATION_TOKEN (20)
    UPDATE_MASTER_KEY = 31          # OP_UPDATE_MASTER_KEY (21)


OPS: dict[int, type[Op]] = {}
ARITY: dict[int, int] = {}    # op code -> items in its payload array (op code, txid, fields)
OpT = TypeVar("OpT", bound="Op")


@dataclass_transform(frozen_default=True)
def _op(op_class: type[OpT]) -> type[OpT]:
    """Register an op class under its op code (and make it a frozen slotted dataclass)."""
    # Any: what follows fills the class in at run time (FIELDS, CODE, __init__, _values)
    cls: Any = dataclass(frozen=True, slots=True)(op_class)
    if cls.OP_CODE in OPS:
        raise RuntimeError(f"op code {cls.OP_CODE} registered twice")
    cls.FIELDS = tuple(f.name for f in dataclasses.fields(cls))
    if 2 + len(cls.FIELDS) > 15 or not 0 < cls.OP_CODE < 0x80:
        # record_at relies on it: a fixarray head and a one-byte positive fixint code
        raise RuntimeError(f"{cls.__name__}: at most 13 fields and an op code below 128")
    OPS[int(cls.OP_CODE)] = cls
    ARITY[int(cls.OP_CODE)] = 2 + len(cls.FIELDS)
    cls.CODE = int(cls.OP_CODE)     # a plain int: an IntEnum's .value is a slow property
    if cls.FIELDS:
        cls.__init__ = _fast_init(cls)
    if len(cls.FIELDS) > 1:
        cls._values = staticmethod(attrgetter(*cls.FIELDS))
    elif cls.FIELDS:
        cls._values = staticmethod(lambda op, name=cls.FIELDS[0]: (getattr(op, name),))
    return cls


def _fast_init(cls: Any) -> Callable[..., None]:
    """The dataclass's ``__init__`` with each field set through its slot descriptor, about
    twice as fast as the generated one (``object.__setattr__`` per field, to get past the
    frozen ``__setattr__``). Only for ops without defaults or ``__post_init__``."""
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or any(
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            for f in fields):
        return cls.__init__
    names = [f.name for f in fields]
    scope = {f"_set_{name}": getattr(cls, name).__set__ for name in names}
    body = "".join(f"    _set_{name}(self, {name})\n" for name in names)
    exec(f"def __init__(self, {', '.join(names)}):\n{body}", scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    return init


class Op:
    """Base of every op. Subclasses are frozen dataclasses; txids live beside them, not in them."""

    __slots__ = ()
    OP_CODE: ClassVar[OpCode]
    CODE: ClassVar[int]
    FIELDS: ClassVar[tuple[str, ...]]

    def values(self) -> tuple:
        """The fields in declaration order: the payload after ``[op_code, txid]``."""
        return self._values(self)

    def payload(self, txid: int = 0) -> tuple:
        """The record payload ``(op_code, txid, field...)``, as ``EditsReader.payloads``
        yields it (txid 0: not assigned yet, as for a live op before the journal logs it)."""
        return (self.CODE, txid, *self._values(self))

    def to_list(self) -> list:
        return list(self._values(self))

    @staticmethod
    def _values(op: Op) -> tuple:
        return ()


@_op
class StartLogSegmentOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.START_LOG_SEGMENT


@_op
class EndLogSegmentOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.END_LOG_SEGMENT


@_op
class MkdirOp(Op):
    """Create ``path`` and any missing ancestors; new inodes get ids ``inode_id``, +1, ...

    Ancestors are numbered from the top down, so ``path`` itself gets the highest id.
    """
    OP_CODE: ClassVar[OpCode] = OpCode.MKDIR
    path: str
    inode_id: int
    permission: int
    owner: str
    group: str
    mtime: int


@_op
class AddFileOp(Op):
    """Create a file entry. With a ``client_name`` it is under construction, leased to it;
    with ``client_name == ""`` it is complete at ``length`` bytes. ``overwrite`` replaces an
    existing file at ``path``."""
    OP_CODE: ClassVar[OpCode] = OpCode.ADD_FILE
    path: str
    inode_id: int
    replication: int
    block_size: int
    length: int
    permission: int
    owner: str
    group: str
    mtime: int
    atime: int
    overwrite: bool
    client_name: str
    client_machine: str


@_op
class CloseFileOp(Op):
    """Complete a file under construction with its final blocks, length and content checksum
    (None: unknown, as after a lease recovery or a truncate)."""
    OP_CODE: ClassVar[OpCode] = OpCode.CLOSE_FILE
    path: str
    inode_id: int
    length: int
    mtime: int
    atime: int
    blocks: tuple
    checksum: bytes | None


@_op
class AddBlockOp(Op):
    """Append one block to a file under construction."""
    OP_CODE: ClassVar[OpCode] = OpCode.ADD_BLOCK
    path: str
    inode_id: int
    block: tuple


@_op
class UpdateBlocksOp(Op):
    """Replace the block list of a file under construction."""
    OP_CODE: ClassVar[OpCode] = OpCode.UPDATE_BLOCKS
    path: str
    inode_id: int
    blocks: tuple


@_op
class DeleteOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.DELETE
    path: str
    mtime: int


@_op
class RenameOldOp(Op):
    """HDFS ``rename``: into ``dst`` if it is a directory, else to ``dst``."""
    OP_CODE: ClassVar[OpCode] = OpCode.RENAME_OLD
    src: str
    dst: str
    mtime: int


@_op
class RenameOp(Op):
    """HDFS ``rename2``: to exactly ``dst``; ``overwrite`` replaces a file or empty directory."""
    OP_CODE: ClassVar[OpCode] = OpCode.RENAME
    src: str
    dst: str
    mtime: int
    overwrite: bool


@_op
class SetPermissionsOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.SET_PERMISSIONS
    path: str
    permission: int


@_op
class SetOwnerOp(Op):
    """``None`` leaves that part unchanged."""
    OP_CODE: ClassVar[OpCode] = OpCode.SET_OWNER
    path: str
    owner: str | None
    group: str | None


@_op
class SetTimesOp(Op):
    """-1 leaves that time unchanged."""
    OP_CODE: ClassVar[OpCode] = OpCode.SET_TIMES
    path: str
    mtime: int
    atime: int


@_op
class SetReplicationOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.SET_REPLICATION
    path: str
    replication: int


@_op
class SetQuotaOp(Op):
    """Quotas after the op; -1 means no quota."""
    OP_CODE: ClassVar[OpCode] = OpCode.SET_QUOTA
    path: str
    ns_quota: int
    ss_quota: int


@_op
class SetXAttrOp(Op):
    """``flag``: 1 = CREATE (must not exist), 2 = REPLACE (must exist), 3 = either."""
    OP_CODE: ClassVar[OpCode] = OpCode.SET_XATTR
    path: str
    name: str
    value: bytes
    flag: int


@_op
class RemoveXAttrOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.REMOVE_XATTR
    path: str
    name: str


@_op
class ConcatOp(Op):
    """Move the blocks of ``srcs`` (in order) to the end of ``target`` and delete ``srcs``."""
    OP_CODE: ClassVar[OpCode] = OpCode.CONCAT
    target: str
    srcs: tuple
    mtime: int


@_op
class TruncateOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.TRUNCATE
    path: str
    new_length: int
    mtime: int


@_op
class AppendOp(Op):
    """Reopen a complete file for appending: it is under construction again, leased to
    ``client_name``, until a CLOSE_FILE records its new blocks and length."""
    OP_CODE: ClassVar[OpCode] = OpCode.APPEND
    path: str
    inode_id: int
    client_name: str
    client_machine: str


@_op
class DeleteManyOp(Op):
    """Delete every path in ``paths`` (subtrees included) as one transaction: either all of
    them exist, none is the root and none lies under another, or nothing changes. The
    checkpoint catalog's rollback and retention rely on it being all or nothing."""
    OP_CODE: ClassVar[OpCode] = OpCode.DELETE_MANY
    paths: tuple
    mtime: int


@_op
class SetAclOp(Op):
    """The whole ACL of ``path`` after the op, each entry in its text form
    (``[default:]type:name:perm``, as Hadoop's ``AclEntry.toStringStable`` writes it); an
    empty ``entries`` removes the ACL (Hadoop's OP_SET_ACL, logged the same way)."""
    OP_CODE: ClassVar[OpCode] = OpCode.SET_ACL
    path: str
    entries: tuple


@_op
class AllowSnapshotOp(Op):
    """Make a directory snapshottable (Hadoop's OP_ALLOW_SNAPSHOT)."""
    OP_CODE: ClassVar[OpCode] = OpCode.ALLOW_SNAPSHOT
    path: str


@_op
class DisallowSnapshotOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.DISALLOW_SNAPSHOT
    path: str


@_op
class CreateSnapshotOp(Op):
    """Take snapshot ``name`` of ``path`` at ``mtime``; its id is the next the namespace
    hands out, so a replay numbers it the same."""
    OP_CODE: ClassVar[OpCode] = OpCode.CREATE_SNAPSHOT
    path: str
    name: str
    mtime: int


@_op
class DeleteSnapshotOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.DELETE_SNAPSHOT
    path: str
    name: str
    mtime: int


@_op
class RenameSnapshotOp(Op):
    OP_CODE: ClassVar[OpCode] = OpCode.RENAME_SNAPSHOT
    path: str
    old_name: str
    new_name: str
    mtime: int


@_op
class GetDelegationTokenOp(Op):
    """A delegation token issued (secure mode): ``identifier`` is the token identifier's
    Writable bytes (owner, renewer, real user, dates, sequence number, master key id; no
    secret), valid until ``expiry`` (ms) unless renewed."""
    OP_CODE: ClassVar[OpCode] = OpCode.GET_DELEGATION_TOKEN
    identifier: bytes
    expiry: int


@_op
class RenewDelegationTokenOp(Op):
    """A delegation token renewed: valid until ``expiry`` (ms)."""
    OP_CODE: ClassVar[OpCode] = OpCode.RENEW_DELEGATION_TOKEN
    identifier: bytes
    expiry: int


@_op
class CancelDelegationTokenOp(Op):
    """A delegation token cancelled, or removed once it expired."""
    OP_CODE: ClassVar[OpCode] = OpCode.CANCEL_DELEGATION_TOKEN
    identifier: bytes


@_op
class UpdateMasterKeyOp(Op):
    """A delegation master key: its id, when it expires (ms) and its secret. The secret is
    what signs tokens, so an edits file of a secure namenode is as secret as its keytab."""
    OP_CODE: ClassVar[OpCode] = OpCode.UPDATE_MASTER_KEY
    key_id: int
    expiry_date: int
    key: bytes


# Fields a viewer must not show (tools/oev.py): the secrets that sign delegation tokens.
SECRET_FIELDS: dict[int, frozenset[str]] = {OpCode.UPDATE_MASTER_KEY: frozenset({"key"})}


# --------------------------------------------------------------------------------- encoding

_packb = msgpack.Packer(use_bin_type=True).pack
_crc32 = zlib.crc32
_pack_record_header = RECORD_HEADER.pack


def encode_header(first_txid: int) -> bytes:
    head = HEADER.pack(MAGIC, LAYOUT_VERSION, first_txid)
    return head + LENGTH.pack(_crc32(head))


def encode_payload(txid: int, op: Op) -> bytes:
    return _packb(op.payload(txid))


def frame(payload: bytes) -> bytes:
    """Frame one payload as a record: length, CRC of length+payload, payload."""
    length = LENGTH.pack(len(payload))
    return length + LENGTH.pack(_crc32(payload, _crc32(length))) + payload


def encode_record(txid: int, op: Op) -> bytes:
    """``frame(encode_payload(txid, op))``, with the length field's CRC from the table."""
    return _framed(_packb(op.payload(txid)))


def _framed(payload: bytes) -> bytes:
    n = len(payload)
    return _pack_record_header(n, frame_crc(payload)) + payload


def frame_crc(payload) -> int:
    """The CRC a record's header holds for ``payload``: over the length field, then the
    payload (the length field's part from a table)."""
    n = len(payload)
    return _crc32(payload, _LENGTH_CRC[n] if n < len(_LENGTH_CRC) else _crc32(LENGTH.pack(n)))


def pack_untimed(op: Op) -> bytes:
    """The op's payload before the journal assigns its txid: ``encode_payload(0, op)``.
    Every op's payload is a msgpack fixarray (at most 15 items, enforced when an op class is
    registered) whose first item is the op code as a one-byte positive fixint, so these bytes
    are ``<array head> <op code> 0x00 <fields>``; ``record_at`` puts the txid in that place."""
    return _packb(op.payload(0))


def record_at(txid: int, untimed: bytes) -> bytes:
    """``encode_record(txid, op)`` from ``pack_untimed(op)``, byte for byte, without packing
    the op again: the txid's msgpack bytes replace the 0x00 at offset 2 (layout above)."""
    return _framed(untimed[:2] + _packb(txid) + untimed[3:])


class PackedOps(list[Op]):
    """Ops in the order they applied, with each one's ``pack_untimed`` bytes in ``packed``
    (same order): the namespace packed them to check their size, so the journal frames them
    with ``record_at`` instead of packing each op a second time."""

    __slots__ = ("packed",)
    packed: list[bytes]

    @classmethod
    def of(cls, ops: Iterable[Op], packed: list[bytes]) -> PackedOps:
        batch = cls(ops)        # list's own constructor: no Python-level __init__ per request
        batch.packed = packed
        return batch


def decode_payload(payload, *, path: str | None = None, offset: int | None = None,
                   expected_txid: int | None = None) -> tuple[int, Op]:
    """Turn one payload into ``(txid, op)``; any decoding failure becomes CorruptRecordError."""
    try:
        items = msgpack.unpackb(payload, use_list=False, raw=False, strict_map_key=True)
        if (type(items) is not tuple or len(items) < 2 or type(items[0]) is not int
                or type(items[1]) is not int):
            raise TypeError("payload is not an array [op_code, txid, field...] of integers")
        op = OPS[items[0]](*items[2:])
    except (ValueError, TypeError, KeyError, msgpack.UnpackException) as exc:
        raise CorruptRecordError(f"undecodable edits record: {exc!r}", path=path, offset=offset,
                                 txid=expected_txid) from exc
    return items[1], op


def payloads_in(data: bytes, first_txid: int, *, source: str = "a batch",
                max_record: int = DEFAULT_MAX_RECORD) -> list[tuple[int, tuple]]:
    """``(offset, payload)`` for each record of ``data``, the payload decoded as
    ``(op_code, txid, field...)``; ``data`` is a run of whole framed
    records (no file header) whose txids are ``first_txid, first_txid + 1, ...``: a batch of a
    shared journal. Unlike a file, a batch has no torn tail: any bad frame, an undecodable
    payload or a txid out of order raises CorruptRecordError naming ``source``."""
    out = []
    off, size, expected = 0, len(data), first_txid
    while off < size:
        found = frame_at(data, off, size, max_record)
        if isinstance(found, str):
            raise CorruptRecordError(f"{source}: {found} at byte {off}", path=source,
                                     offset=off, txid=expected)
        if found.txid != expected:
            raise CorruptRecordError(f"{source}: expected txid {expected}, found {found.txid}",
                                     path=source, offset=off, txid=found.txid)
        out.append((off, found.op.payload(found.txid)))
        off, expected = found.end, expected + 1
    return out


def decode_header(data: bytes, *, path: str | None = None) -> int:
    """Check a header and return its first txid."""
    if len(data) < HEADER_SIZE:
        raise BadHeaderError(f"edits header is {len(data)} bytes, expected {HEADER_SIZE}",
                             path=path, offset=0)
    magic, version, first_txid = HEADER.unpack_from(data)
    (crc,) = LENGTH.unpack_from(data, HEADER.size)
    if magic != MAGIC:
        raise BadHeaderError(f"not an edits file (magic {magic!r})", path=path, offset=0)
    if crc != _crc32(data[:HEADER.size]):
        raise BadHeaderError("edits header CRC mismatch", path=path, offset=0)
    if version not in READABLE_VERSIONS:
        raise UnsupportedVersionError(
            f"edits layout version {version}, this build reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
            path=path, offset=0)
    return first_txid


# --------------------------------------------------------------------------------- reading

@dataclass(frozen=True, slots=True)
class TornTail:
    """A partial last record: where it starts, how many bytes it spans, and what was seen."""
    offset: int
    length: int
    reason: str


class EditsReader:
    """Iterate ``(txid, op)`` over one edits file, in order, checking CRCs and txids.

    After the iteration ends, ``valid_length`` is the offset just past the last good record,
    ``last_txid`` its txid (``first_txid - 1`` if none) and ``torn_tail`` a TornTail or None.
    """

    def __init__(self, path: str, *, max_record: int = DEFAULT_MAX_RECORD):
        self.path = str(path)
        self.max_record = max_record
        with open(self.path, "rb") as f:
            head = f.read(HEADER_SIZE)
        self.first_txid = decode_header(head, path=self.path)
        self.layout_version = HEADER.unpack_from(head)[1]
        self._reset()

    def _reset(self) -> None:
        self.valid_length = HEADER_SIZE
        self._next_txid = self.first_txid
        self.torn_tail: TornTail | None = None

    @property
    def last_txid(self) -> int:
        return self._next_txid - 1

    @property
    def records(self) -> int:
        return self._next_txid - self.first_txid

    def __iter__(self) -> Iterator[tuple[int, Op]]:
        ops = OPS
        for items in self.payloads():
            yield items[1], ops[items[0]](*items[2:])

    def payloads(self) -> Iterator[tuple]:
        """Iterate the decoded payloads ``(op_code, txid, field...)`` with every check of
        ``__iter__`` (CRC, decodable, a known op code with its number of fields, txids), but
        without building op objects: replay dispatches on the op code itself."""
        self._reset()
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size <= HEADER_SIZE:
                return
            # Slicing an mmap copies, so no view of it outlives the map (an exception's
            # traceback holding a memoryview slice would make closing it raise BufferError).
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                yield from self._records(buf, size)

    def _records(self, buf, size: int) -> Iterator[tuple]:
        """The hot loop of every replay: locals only, one CRC call per record (the CRC of
        the length field comes from a table), decode_payload's checks inlined; a record that
        fails them goes through decode_payload again for its exact error."""
        off = HEADER_SIZE
        expected = self.first_txid
        unpack_header = RECORD_HEADER.unpack_from
        unpackb, crc32, length_crc, arity = msgpack.unpackb, _crc32, _LENGTH_CRC, ARITY
        small, max_record = len(_LENGTH_CRC), self.max_record
        while off < size:
            try:
                length, crc = unpack_header(buf, off)
            except struct.error:
                self._torn(off, size, "partial record header")
                return
            start = off + RECORD_HEADER_SIZE
            end = start + length
            if length > max_record or end > size:
                self._bad_length(buf, off, end, size, expected, length)
                return
            payload = buf[start:end]
            if length == 0 or crc != crc32(payload, length_crc[length] if length < small
                                           else crc32(LENGTH.pack(length))):
                self._bad_crc(buf, off, end, size, expected, crc)
                return
            try:
                items = unpackb(payload, use_list=False, raw=False, strict_map_key=True)
                if (type(items) is not tuple or arity.get(items[0], -1) != len(items)
                        or type(items[0]) is not int or type(items[1]) is not int):
                    raise TypeError("not an op")    # handled just below, like the others
            except (ValueError, TypeError, IndexError, msgpack.UnpackException):
                self._undecodable(buf, off, end, size, expected, payload)
                return
            if items[1] != expected:
                raise TxidGapError(f"expected txid {expected}, found {items[1]}",
                                   path=self.path, offset=off, txid=items[1])
            yield items
            # Updated after the consumer is done with the record (oev reads it mid-way).
            self.valid_length = off = end
            self._next_txid = expected = expected + 1

    def _undecodable(self, buf, off: int, end: int, size: int, expected: int,
                     payload: bytes) -> None:
        try:
            decode_payload(payload, path=self.path, offset=off, expected_txid=expected)
            error = CorruptRecordError("edits record is not an op", path=self.path,
                                       offset=off, txid=expected)
        except CorruptRecordError as exc:
            error = exc
        self._bad_record(buf, off, end, size, expected, "undecodable last record", error)

    def _bad_length(self, buf, off: int, end: int, size: int, expected: int,
                    length: int) -> None:
        """A length above the maximum is an error; one running past the end may be torn."""
        if length > self.max_record:
            raise RecordTooLargeError(
                f"record claims {length} bytes, the maximum is {self.max_record}",
                path=self.path, offset=off, txid=expected)
        self._bad_record(buf, off, end, size, expected,
                         f"record of {length} bytes runs past the end", None)

    def _bad_crc(self, buf, off: int, end: int, size: int, expected: int, crc: int) -> None:
        """A record failing its CRC: a zero-filled or torn tail, or a CorruptRecordError."""
        if end == off + RECORD_HEADER_SIZE and crc == 0 and only_zeros(buf, off, size):
            self._torn(off, size, "zero-filled tail")
            return
        error = CorruptRecordError("edits record CRC mismatch", path=self.path, offset=off,
                                   txid=expected)
        self._bad_record(buf, off, end, size, expected, "bad CRC in the last record", error)

    def _bad_record(self, buf, off: int, end: int, size: int, expected: int, reason: str,
                    error: CorruptRecordError | None) -> None:
        """A record that fails its checks is a torn tail only if nothing but zeros follows it,
        its length field is intact and it is torn (``is_torn``); otherwise ``error`` (or a
        length-field error) is raised."""
        if end < size and not only_zeros(buf, end, size):
            # error is None only for a record running past the end (end > size), never here
            raise error or CorruptRecordError(reason, path=self.path, offset=off, txid=expected)
        true_end = _true_end(buf, off, size, self.max_record)
        if true_end is not None and not only_zeros(buf, true_end, size):
            raise CorruptRecordError(
                f"edits record length field is damaged: its CRC matches a record of "
                f"{true_end - off - RECORD_HEADER_SIZE} bytes, and data follows it",
                path=self.path, offset=off, txid=expected) from error
        if error is not None and not is_torn(buf, off, size):
            raise CorruptRecordError(
                f"the last edits record is complete but damaged ({reason}): it was written "
                f"whole, so it may hold an acknowledged op; start the namenode with --recover "
                f"to decide", path=self.path, offset=off, txid=expected) from error
        return self._torn(off, size, reason)

    def _torn(self, off: int, size: int, reason: str) -> None:
        self.torn_tail = TornTail(off, size - off, reason)


# CRC-32 of the 4-byte length field for every length below 4096 (nearly every record).
_LENGTH_CRC = [_crc32(LENGTH.pack(n)) for n in range(4096)]

_NONZERO = re.compile(rb"[^\x00]")


def only_zeros(buf, start: int, stop: int) -> bool:
    """True when ``buf[start:stop]`` holds only zero bytes (or nothing)."""
    return start >= stop or _NONZERO.search(buf, start, stop) is None


def _true_end(buf, off: int, size: int, max_record: int) -> int | None:
    """Where the record at ``off`` ends if its length field is wrong but the rest is intact:
    the end of the first msgpack object after the record header, if the CRC confirms it."""
    start = off + RECORD_HEADER_SIZE
    data = buf[start:min(size, start + max_record)]
    unpacker = msgpack.Unpacker(max_buffer_size=max(len(data), 1))
    unpacker.feed(data)
    try:
        unpacker.skip()
    except (ValueError, msgpack.UnpackException):
        return None
    n = unpacker.tell()
    (crc,) = LENGTH.unpack_from(buf, off + 4)
    if frame_crc(data[:n]) != crc:
        return None
    return start + n


# ------------------------------------------------------------------------------ scanning
# For readers that look past damage (recovery, ``nnlite edits verify``): a frame is valid when
# its length is possible, it fits in the file, its CRC matches and its payload decodes.

@dataclass(frozen=True, slots=True)
class Frame:
    """One valid record found by a scan: its byte span and what it decodes to."""
    offset: int
    end: int
    txid: int
    op: Op


def frame_at(buf, off: int, size: int, max_record: int) -> Frame | str:
    """The record at ``off`` if its frame is valid and its payload decodes, else why not."""
    if size - off < RECORD_HEADER_SIZE:
        return "partial record header"
    length, crc = RECORD_HEADER.unpack_from(buf, off)
    end = off + RECORD_HEADER_SIZE + length
    if length == 0 or length > max_record:
        return f"impossible record length {length}"
    if end > size:
        return f"record of {length} bytes runs past the end of the file"
    payload = buf[off + RECORD_HEADER_SIZE:end]
    if frame_crc(payload) != crc:
        return "record CRC mismatch"
    try:
        txid, op = decode_payload(payload)
    except CorruptRecordError as exc:
        return f"undecodable payload ({exc})"
    return Frame(off, end, txid, op)


def framed_records(path: str, max_record: int = DEFAULT_MAX_RECORD) -> list[tuple[int, bytes]]:
    """``(txid, bytes)`` of each whole record of the edits file at ``path``, framing
    included, in file order, up to the first frame that is not whole (a torn tail)."""
    with open(path, "rb") as f:
        data = f.read()
    decode_header(data[:HEADER_SIZE], path=path)
    found: list[tuple[int, bytes]] = []
    off, size = HEADER_SIZE, len(data)
    while off < size:
        frame = frame_at(data, off, size, max_record)
        if isinstance(frame, str):
            break
        found.append((frame.txid, data[off:frame.end]))
        off = frame.end
    return found


def record_end(path: str, last_txid: int, max_record: int = DEFAULT_MAX_RECORD) -> int:
    """The offset just past the record ``last_txid`` in the edits file at ``path`` (the
    header's end when the file's records all come after it; its valid length when none
    reaches it)."""
    with open(path, "rb") as f:
        data = f.read()
    decode_header(data[:HEADER_SIZE], path=path)
    off, size = HEADER_SIZE, len(data)
    while off < size:
        frame = frame_at(data, off, size, max_record)
        if isinstance(frame, str) or frame.txid > last_txid:
            break
        off = frame.end
    return off


def next_frame(buf, start: int, size: int, min_txid: int, max_record: int) -> Frame | None:
    """Resync: the first offset from ``start`` holding a valid frame with txid >= min_txid."""
    for off in range(start, size - RECORD_HEADER_SIZE):
        length = LENGTH.unpack_from(buf, off)[0]
        if 0 < length <= max_record and off + RECORD_HEADER_SIZE + length <= size:
            found = frame_at(buf, off, size, max_record)
            if isinstance(found, Frame) and found.txid >= min_txid:
                return found
    return None


def is_torn(buf, off: int, size: int) -> bool:
    """Whether the bad last record at ``off`` is a torn write rather than a damaged one: it
    runs past the end of the file (or its header does), or from some sector boundary within
    it the file holds only zeros to its end -- the file's size reached the disk before those
    sectors did (nnlite never preallocates, so nothing else puts zeros there). A synced
    record with a flipped bit is neither."""
    end = claimed_end(buf, off, size)
    if size - off < RECORD_HEADER_SIZE or end > size:
        return True
    first = -(-off // DISK_UNIT) * DISK_UNIT
    return any(only_zeros(buf, unit, size)
               for unit in range(first, max(end, off + 1), DISK_UNIT))


def claimed_end(buf, off: int, size: int) -> int:
    """Where the record at ``off`` would end by its length field (the file's end if no header)."""
    if size - off < RECORD_HEADER_SIZE:
        return size
    return off + RECORD_HEADER_SIZE + LENGTH.unpack_from(buf, off)[0]


def read_all(path: str, **kw) -> tuple[list[tuple[int, Op]], EditsReader]:
    """Read every record of a file; returns the records and the finished reader."""
    reader = EditsReader(path, **kw)
    return list(reader), reader


# --------------------------------------------------------------------------------- writing

class EditsWriter:
    """Appends framed records to one edits file. It only writes bytes; when to fsync is the
    journal's decision (``fsync()`` is exposed so the journal can make it)."""

    def __init__(self, path: str, fd: int, first_txid: int):
        self.path = str(path)
        self.fd = fd
        self.first_txid = first_txid
        self.size = os.lseek(fd, 0, os.SEEK_END)

    @classmethod
    def create(cls, path: str, first_txid: int) -> EditsWriter:
        """Create a new file holding only the header (it replaces any file at ``path``)."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, encode_header(first_txid))
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, first_txid)

    @classmethod
    def open_append(cls, path: str, valid_length: int) -> EditsWriter:
        """Open an existing file for appending after truncating it to ``valid_length``
        (the end of its last good record, from an EditsReader that read it to the end)."""
        with open(path, "rb") as f:
            first_txid = decode_header(f.read(HEADER_SIZE), path=str(path))
        fd = os.open(path, os.O_RDWR)
        try:
            if os.fstat(fd).st_size != valid_length:
                os.ftruncate(fd, valid_length)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, first_txid)

    def write(self, data) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        self.size += len(data)

    def fsync(self) -> None:
        os.fdatasync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
