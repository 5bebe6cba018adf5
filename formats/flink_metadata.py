"""Flink's checkpoint metadata file (``_metadata``): which checkpoint it is and every state
file it references. Bytes only: what the references mean for a job is ``catalog/flink.py``'s.

Byte layout (Java ``DataOutputStream``: big-endian; ``UTF`` is a 2-byte length and modified
UTF-8), as ``Checkpoints.storeCheckpointMetadata`` and ``MetadataV2V3SerializerBase`` with its
subclasses ``MetadataV3Serializer`` .. ``MetadataV6Serializer`` write it (Flink 2.3)::

    int     magic 0x4960672d (Checkpoints.HEADER_MAGIC_NUMBER)
    int     version (3..6 read here; Flink 2.3 writes 6)
    long    checkpoint id
    int     master states; each: int magic 0xc96b1696, int n, n bytes
    int     operator states; each:
              v5+: UTF name, UTF uid
              long, long  operator id
              int parallelism, int max parallelism
              stream handle  coordinator state (null or inline bytes)
              int subtasks (negative: the operator finished, no subtask follows); each:
                int index (negative: -index-1, finished, nothing follows)
                int has managed operator state, [operator handle]
                int has raw operator state, [operator handle]
                keyed handle  managed, keyed handle raw
                int n + n input channel handles, int n + n output channel handles
    v4+: the Java-serialized CheckpointProperties (an ObjectOutputStream), to the end

Handles (``MetadataV2V3SerializerBase``: one type byte, then its fields):

    stream   0 null | 1 inline: UTF name, int n, n bytes | 2 file: long size, UTF path
             | 6 relative: UTF path, long size (under the ``_metadata``'s directory)
             | 3 key groups: int first, int count, count longs, stream
             | 15 segment: long offset, long size, int scope, UTF path, UTF logical id
             | 16 empty segment
    keyed    0 null | 3, 12 (+UTF id), 7 (savepoint): int first, int count, count longs,
             stream | 5, 11 incremental: long checkpoint, UTF backend, int first, int count,
             [11: long size], stream meta, list shared, list private, [11: UTF id]
             (list: int n, n x (UTF local path, stream))
             | 8, 14 changelog: int first, int count, long size, int n + n keyed,
             int m + m keyed, long materialization, [14: long], UTF id
             | 9 changelog bytes: int first, int count, long from, long to, int n +
             n x (int group, int n, n bytes), UTF id
             | 10, 13 changelog files: int first, int count, int n + n x (long offset,
             stream), long size, long incremental size, UTF id, [13: UTF storage]
    operator 0 null | 4, 17: int n + n x (UTF name, byte mode, int k, k longs),
             [17: UTF task-owned dir, UTF shared dir, boolean empty], stream
    channel  1, 2: int subtask, int, int, int n, n longs, long size, stream
             | 3, 4: int subtask, long size, stream, int n, n bytes

Anything else (another magic, a version outside 3..6, an unknown type byte, a length past the
end) is ``FlinkMetadataError``, ``BadHeaderError`` or ``UnsupportedVersionError`` naming the
offset.
"""

from __future__ import annotations

import builtins
import struct
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from nnlite.formats.errors import BadHeaderError, FlinkMetadataError, UnsupportedVersionError

MAGIC = 0x4960672D
MASTER_STATE_MAGIC = 0xC96B1696
VERSIONS = range(3, 7)
JAVA_SERIALIZATION_MAGIC = b"\xac\xed"

FILE, RELATIVE, SEGMENT = "file", "relative", "segment"


@dataclass(frozen=True)
class Reference:
    """A state file the checkpoint needs: ``path`` as Flink wrote it (a URI, or a path
    relative to the ``_metadata``'s directory), ``size`` the bytes recorded (a segment: the
    bytes it needs up to its end)."""
    kind: str
    path: str
    size: int


@dataclass
class Metadata:
    version: int
    checkpoint_id: int
    operators: int = 0
    files: list[Reference] = field(default_factory=list)
    inline_bytes: int = 0          # state kept inside _metadata itself


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise FlinkMetadataError(f"Flink metadata: {n} bytes wanted at offset {self.pos}, "
                                   f"the file ends at {len(self.data)}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def byte(self) -> int:
        return self.take(1)[0]

    def boolean(self) -> bool:
        return self.take(1)[0] != 0

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    # builtins.int below: inside the class body, ``int`` names the method above
    def long(self) -> builtins.int:
        return struct.unpack(">q", self.take(8))[0]

    def utf(self) -> str:
        raw = self.take(struct.unpack(">H", self.take(2))[0])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "replace")     # modified UTF-8's NUL and surrogates

    def count(self, what: str, limit: builtins.int = 1 << 24) -> builtins.int:
        n = self.int()
        if n < 0 or n > limit:
            raise FlinkMetadataError(f"Flink metadata: {n} {what} at offset {self.pos - 4}")
        return n

    def unknown(self, what: str, kind: builtins.int) -> FlinkMetadataError:
        return FlinkMetadataError(f"Flink metadata: unknown {what} handle type {kind} at offset "
                                f"{self.pos - 1}")


def parse(data: bytes) -> Metadata:
    """Every reference of a ``_metadata`` file (``Checkpoints.loadCheckpointMetadata``)."""
    r = _Reader(data)
    magic = r.int() & 0xFFFFFFFF
    if magic != MAGIC:
        raise BadHeaderError(f"not a Flink checkpoint metadata file (magic {magic:#010x}, "
                             f"not {MAGIC:#010x})")
    version = r.int()
    if version not in VERSIONS:
        raise UnsupportedVersionError(
            f"Flink checkpoint metadata version {version}: this catalog reads versions "
            f"{VERSIONS.start}-{VERSIONS.stop - 1} (what Flink 1.15 to 2.3 write)")
    meta = Metadata(version, r.long())
    if meta.checkpoint_id < 0:
        raise FlinkMetadataError(f"Flink metadata: invalid checkpoint id {meta.checkpoint_id}")
    for _ in range(r.count("master states")):
        if r.int() & 0xFFFFFFFF != MASTER_STATE_MAGIC:
            raise FlinkMetadataError(f"Flink metadata: bad master state magic at {r.pos - 4}")
        r.take(r.count("master state bytes", 1 << 30))
    meta.operators = r.count("operator states")
    for _ in range(meta.operators):
        _operator(r, meta)
    rest = data[r.pos:]
    if version >= 4 and not rest.startswith(JAVA_SERIALIZATION_MAGIC):
        raise FlinkMetadataError(f"Flink metadata: no checkpoint properties at offset {r.pos}")
    if version == 3 and rest:
        raise FlinkMetadataError(f"Flink metadata: {len(rest)} trailing bytes at {r.pos}")
    return meta


def _operator(r: _Reader, meta: Metadata) -> None:
    if meta.version >= 5:
        r.utf(), r.utf()                          # name, uid
    r.long(), r.long(), r.int(), r.int()          # operator id, parallelism, max parallelism
    _stream(r, meta)                              # the coordinator's state
    subtasks = r.int()
    for _ in range(max(subtasks, 0)):
        if r.int() < 0:
            continue                              # a finished subtask: no state follows
        for _raw_or_managed in range(2):
            if r.int() != 0:
                _operator_handle(r, meta)
        _keyed(r, meta)
        _keyed(r, meta)
        for _direction in range(2):
            for _ in range(r.count("channel state handles")):
                _channel(r, meta)


def _stream(r: _Reader, meta: Metadata) -> None:
    kind = r.byte()
    if kind in (0, 16):
        return
    if kind == 1:
        r.utf()
        meta.inline_bytes += len(r.take(r.count("inline state bytes", 1 << 30)))
    elif kind == 2:
        size = r.long()
        meta.files.append(Reference(FILE, r.utf(), size))
    elif kind == 6:
        path = r.utf()
        meta.files.append(Reference(RELATIVE, path, r.long()))
    elif kind == 3:
        _key_group_offsets(r)
        _stream(r, meta)
    elif kind == 15:
        offset, size = r.long(), r.long()
        r.int()                                   # exclusive or shared scope
        meta.files.append(Reference(SEGMENT, r.utf(), offset + size))
        r.utf()                                   # the logical file's id
    else:
        raise r.unknown("stream state", kind)


def _key_group_offsets(r: _Reader) -> None:
    r.int()
    r.take(8 * r.count("key groups"))


def _keyed(r: _Reader, meta: Metadata) -> None:
    kind = r.byte()
    if kind == 0:
        return
    if kind in (3, 7, 12):
        _key_group_offsets(r)
        _stream(r, meta)
        if kind == 12:
            r.utf()
    elif kind in (5, 11):
        r.long(), r.utf(), r.int(), r.int()       # checkpoint, backend, key groups
        if kind == 11:
            r.long()                              # checkpointed size
        _stream(r, meta)                          # the backend's meta data
        for _shared_then_private in range(2):
            for _ in range(r.count("incremental state files")):
                r.utf()                           # the file's local name in the backend
                _stream(r, meta)
        if kind == 11:
            r.utf()
    elif kind in (8, 14):
        r.int(), r.int(), r.long()
        for _materialized_then_not in range(2):
            for _ in range(r.count("changelog handles")):
                _keyed(r, meta)
        r.long()
        if kind == 14:
            r.long()
        r.utf()
    elif kind == 9:
        r.int(), r.int(), r.long(), r.long()
        for _ in range(r.count("state changes")):
            r.int()
            meta.inline_bytes += len(r.take(r.count("state change bytes", 1 << 30)))
        r.utf()
    elif kind in (10, 13):
        r.int(), r.int()
        for _ in range(r.count("changelog files")):
            r.long()
            _stream(r, meta)
        r.long(), r.long(), r.utf()
        if kind == 13:
            r.utf()
    else:
        raise r.unknown("keyed state", kind)


def _operator_handle(r: _Reader, meta: Metadata) -> None:
    kind = r.byte()
    if kind == 0:
        return
    if kind not in (4, 17):
        raise r.unknown("operator state", kind)
    for _ in range(r.count("operator state names")):
        r.utf(), r.byte()
        r.take(8 * r.count("operator state offsets"))
    if kind == 17:
        r.utf(), r.utf(), r.boolean()             # task-owned dir, shared dir, empty
    _stream(r, meta)


def _channel(r: _Reader, meta: Metadata) -> None:
    kind = r.byte()
    if kind in (1, 2):
        r.int(), r.int(), r.int()                 # subtask, gate or partition, channel
        r.take(8 * r.count("channel offsets"))
        r.long()
        _stream(r, meta)
    elif kind in (3, 4):
        r.int(), r.long()
        _stream(r, meta)
        r.take(r.count("channel info bytes", 1 << 30))
    else:
        raise r.unknown("channel state", kind)


def resolve(path: str, metadata_dir: str) -> str:
    """A reference's path in nnlite's namespace: a ``webhdfs://``/``hdfs://`` URI's path, or
    a relative reference under the ``_metadata``'s directory. Anything else is returned as
    it is (it does not live in nnlite, and no namespace path equals it)."""
    if "://" not in path and not path.startswith("/"):
        return f"{metadata_dir.rstrip('/')}/{path}"
    parts = urlsplit(path)
    if parts.scheme in ("", "webhdfs", "swebhdfs", "hdfs"):
        return parts.path or "/"
    return path
