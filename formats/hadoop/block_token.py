"""Hadoop's block access token identifier (``BlockTokenIdentifier``, kind
``HDFS_BLOCK_TOKEN``): what a namenode signs for one block and the access modes its bearer
may use on a DataNode's transfer port. The token's password is an HMAC of these bytes
(``namenode/datanode/tokens.py``); clients carry them opaquely, DataNodes decode them.

Two layouts, told apart by the first byte as ``BlockTokenIdentifier.readFields`` does:

* **legacy** (Hadoop's ``writeLegacy``, what a NameNode issues unless
  ``dfs.block.access.token.protobuf.enable``), ``formats/hadoop/writable.py``'s primitives::

      identifier := vlong(expiryDate) vint(keyId) string(userId) string(blockPoolId)
                    vlong(blockId)
                    vint(n) enum(mode)[n]                   -- n in 0..4, in ordinal order
                    vint(m) enum(storageType)[m]            -- Hadoop 3: required on read
                    vint(k) string(storageId)[k]            -- Hadoop 3: required on read
                    [vint(h) handshakeSecret[h]]            -- only when h > 0
      string     := int32 length (big-endian; -1: null) utf8[length]   -- WritableUtils.writeString
      enum       := text(name)                              -- WritableUtils.writeEnum

  The first byte is the vlong of a date, a negative length byte (or 0).
* **protobuf** (``BlockTokenSecretProto``, ``formats/hadoop/hdfs.py``): the first byte is a
  field tag, positive.

``BlockTokenIdentifier.decode`` keeps the bytes it was given (``raw``): a password is
computed over the bytes a token carries, never over a re-encoding (Hadoop's ``cache``).
Bytes that are neither layout are a ``WritableError`` naming the offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from nnlite.formats.hadoop import writable
from nnlite.formats.hadoop.hdfs import BlockTokenSecretProto
from nnlite.formats.hadoop.proto import ProtoError, parse
from nnlite.formats.hadoop.writable import WritableError

KIND = "HDFS_BLOCK_TOKEN"
ACCESS_MODES = ("READ", "WRITE", "COPY", "REPLACE")     # BlockTokenIdentifier.AccessMode
STORAGE_TYPES = ("RAM_DISK", "SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM")   # StorageType
PROTO_STORAGE_TYPES = {1: "DISK", 2: "SSD", 3: "ARCHIVE", 4: "RAM_DISK", 5: "PROVIDED",
                       6: "NVDIMM"}                                    # StorageTypeProto
INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class BlockTokenIdentifier:
    """One block token's identifier. ``modes`` are ``ACCESS_MODES`` names; ``raw`` the bytes
    it was decoded from (empty for one built here: ``encode`` writes the legacy layout)."""
    expiry_date: int
    key_id: int
    user_id: str
    block_pool_id: str
    block_id: int
    modes: frozenset[str]
    storage_types: tuple[str, ...] = ()
    storage_ids: tuple[str, ...] = ()
    handshake_secret: bytes = b""
    raw: bytes = field(default=b"", compare=False, repr=False)

    def encode(self) -> bytes:
        """The bytes a token carries: ``raw`` if decoded, else the legacy layout."""
        if self.raw:
            return self.raw
        out = [writable.vlong(self.expiry_date), writable.vint(self.key_id),
               _string(self.user_id), _string(self.block_pool_id),
               writable.vlong(self.block_id), writable.vint(len(self.modes))]
        out += [writable.text(m) for m in ACCESS_MODES if m in self.modes]
        out.append(writable.vint(len(self.storage_types)))
        out += [writable.text(t) for t in self.storage_types]
        out.append(writable.vint(len(self.storage_ids)))
        out += [_string(s) for s in self.storage_ids]
        if self.handshake_secret:
            out.append(writable.blob(self.handshake_secret))
        return b"".join(out)

    @classmethod
    def decode(cls, data: bytes) -> BlockTokenIdentifier:
        """Either layout; ``WritableError`` for bytes that are neither (empty ones too)."""
        if not data:
            raise WritableError("no block token identifier (0 bytes)", offset=0)
        if data[0] == 0 or data[0] >= 0x80:
            return _decode_legacy(bytes(data))
        return _decode_protobuf(bytes(data))

    def __str__(self) -> str:
        """``BlockTokenIdentifier.toString``, the text of Hadoop's refusals."""
        modes = ", ".join(m for m in ACCESS_MODES if m in self.modes)
        return (f"block_token_identifier (expiryDate={self.expiry_date}, keyId={self.key_id}"
                f", userId={self.user_id or 'null'}, blockPoolId={self.block_pool_id}"
                f", blockId={self.block_id}, access modes=[{modes}], storageTypes= "
                f"[{', '.join(self.storage_types)}], storageIds= "
                f"[{', '.join(self.storage_ids)}])")


def _string(value: str | None) -> bytes:
    """``WritableUtils.writeString``: an int32 length (-1 for null), then UTF-8."""
    if value is None:
        return INT32.pack(-1)
    raw = value.encode("utf-8")
    return INT32.pack(len(raw)) + raw


def _read_string(reader: writable.Reader) -> str:
    """``WritableUtils.readString`` (a null reads as "")."""
    start = reader.offset
    if start + 4 > len(reader.data):
        raise WritableError("string length cut short", offset=start)
    (length,) = INT32.unpack_from(reader.data, start)
    reader.offset += 4
    if length == -1:
        return ""
    if length < 0 or reader.offset + length > len(reader.data):
        raise WritableError(f"string of {length} bytes does not fit", offset=start)
    raw = reader.data[reader.offset:reader.offset + length]
    reader.offset += length
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WritableError("string is not UTF-8", offset=start) from error


def _read_enum(reader: writable.Reader, names: tuple[str, ...]) -> str:
    start = reader.offset
    name = reader.text()
    if name not in names:
        raise WritableError(f"{name!r} is not one of {', '.join(names)}", offset=start)
    return name


def _count(reader: writable.Reader, most: int | None = None) -> int:
    start = reader.offset
    count = reader.vint()
    if count < 0 or (most is not None and count > most):
        raise WritableError(f"count {count} out of range", offset=start)
    return count


def _decode_legacy(data: bytes) -> BlockTokenIdentifier:
    reader = writable.Reader(data)
    expiry, key_id = reader.vlong(), reader.vint()
    user, pool = _read_string(reader), _read_string(reader)
    block_id = reader.vlong()
    modes = frozenset(_read_enum(reader, ACCESS_MODES)
                      for _ in range(_count(reader, len(ACCESS_MODES))))
    types = tuple(_read_enum(reader, STORAGE_TYPES) for _ in range(_count(reader)))
    ids = tuple(_read_string(reader) for _ in range(_count(reader)))
    secret = b"" if reader.at_end() else reader.blob()
    if not reader.at_end():
        raise WritableError(f"{len(data) - reader.offset} bytes after the identifier",
                            offset=reader.offset)
    return BlockTokenIdentifier(expiry, key_id, user, pool, block_id, modes, types, ids,
                                secret, raw=data)


def _decode_protobuf(data: bytes) -> BlockTokenIdentifier:
    try:
        proto = parse(BlockTokenSecretProto, data)
    except ProtoError as error:
        raise WritableError(f"not a BlockTokenSecretProto: {error}", offset=0) from error
    modes = frozenset(ACCESS_MODES[m - 1] for m in proto.modes)
    types = tuple(PROTO_STORAGE_TYPES.get(t, str(t)) for t in proto.storageTypes)
    return BlockTokenIdentifier(proto.expiryDate, proto.keyId, proto.userId,
                                proto.blockPoolId, proto.blockId, modes, types,
                                tuple(proto.storageIds), proto.handshakeSecret, raw=data)
