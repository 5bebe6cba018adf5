"""Spark's checkpoint checksum files, checked against the block store's chunk CRCs.

With ``spark.sql.streaming.checkpoint.fileChecksum.enabled`` (on by default with checkpoint
format version 2 in Spark 4.3) a state file ``<f>`` is written beside ``<f>.crc``
(``ChecksumCheckpointFileManager``), one JSON object (``Checksum``)::

    {"algorithm": "CRC32C", "value": <the file's CRC32C as a signed 32-bit int>,
     "mainFileSize": <bytes>, "timestampMs": ..., "creator": {"executorId": ..., ...}}

Reading ``<f>`` through the manager computes the CRC32C of every byte and, on close, fails
with CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED when value or size differ
(``ChecksumFSDataInputStream.verifyChecksum``); a sidecar json4s cannot read fails the read
too (``Checksum.fromJson``), and a file without one is read unchecked.

The catalog checks the same without reading the file: the block store keeps the CRC32C of
every 512-byte chunk of every block (its meta files), and the CRC of a concatenation is
composed from its parts' CRCs as Hadoop's ``CrcUtil.composeWithMonomial`` does for
COMPOSITE_CRC (``CrcComposer``): ``crc(A + B) = crc(A) * x^(8 * len(B)) mod P xor crc(B)``
in GF(2)[x] with CRC32C's polynomial, in the reflected bit order Hadoop uses (bit 31 is the
coefficient of x^0). A multiplication by a fixed monomial is linear, so for the one length
that recurs (a full run) it is four table look-ups (``_Multiplier``); a run of whole chunks
is folded with one CRC32C call over zeros holding the chunk CRCs (``_fold``), about 10x
faster in Python than a look-up per chunk.
Blocks whose chunk CRCs are CRC32 (nnlite's first layout) cannot compose into a CRC32C: their
bytes are read instead. Pure functions, but for ``file_crc``'s
calls to the store it is handed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import NamedTuple

from crc32c import crc32c

from nnlite.namenode.blocks.checksum import BYTES_PER_CRC, CRC32C, CRC_SIZE

CRC32C_POLYNOMIAL = 0x82F63B78          # reflected (CrcUtil: DataChecksum.Type.CRC32C)
IDENTITY = 0x80000000                   # x^0 in the reflected order (MULTIPLICATIVE_IDENTITY)
CHECKSUM_ALGORITHM = "CRC32C"
RUN_CHUNKS = 2048                       # chunks folded by one CRC32C call (1 MiB of zeros)
# The fields json4s needs to build a Checksum (Serialization.read[Checksum]).
CHECKSUM_FIELDS = ("algorithm", "value", "mainFileSize", "timestampMs", "creator")


def multiply(p: int, q: int, m: int = CRC32C_POLYNOMIAL) -> int:
    """``CrcUtil.galoisFieldMultiply``: ``p * q mod m``, reflected."""
    product, term = 0, IDENTITY
    while term:
        if q & term:
            product ^= p
        p = (p >> 1) ^ m if p & 1 else p >> 1
        term >>= 1
    return product


@functools.lru_cache(maxsize=64)
def monomial(length: int, m: int = CRC32C_POLYNOMIAL) -> int:
    """``CrcUtil.getMonomial``: ``x^(8 * length) mod m``."""
    product, power = IDENTITY, IDENTITY >> 8          # x^0, x^8
    while length:
        if length & 1:
            product = multiply(product, power, m)
        power = multiply(power, power, m)
        length >>= 1
    return product


class _Multiplier:
    """Multiplication by one monomial, a byte of the operand at a time (it is linear)."""

    def __init__(self, factor: int):
        self.tables = [[multiply(b << shift, factor) for b in range(256)]
                       for shift in (0, 8, 16, 24)]

    def __call__(self, p: int) -> int:
        t0, t1, t2, t3 = self.tables
        return t0[p & 0xFF] ^ t1[(p >> 8) & 0xFF] ^ t2[(p >> 16) & 0xFF] ^ t3[p >> 24]


@functools.cache
def _run_shift() -> _Multiplier:
    return _Multiplier(monomial(RUN_CHUNKS * BYTES_PER_CRC))


def compose(crc: int, more: int, length: int) -> int:
    """``CrcUtil.composeWithMonomial``: the CRC of A + B from ``crc`` of A, ``more`` of B and
    B's ``length``. Only a full run's length recurs often enough to pay for a table (1,024
    multiplications to build, some ms); another length is one multiplication."""
    if not crc:
        return more
    if length == RUN_CHUNKS * BYTES_PER_CRC:
        return _run_shift()(crc) ^ more
    return multiply(crc, monomial(length)) ^ more


def compose_chunks(crc: int, crcs: bytes, length: int) -> int:
    """Continue ``crc`` over a block of ``length`` bytes whose chunk CRCs (4 big-endian
    bytes per 512-byte chunk, the last chunk shorter) are ``crcs``: ``CrcComposer.update``
    per chunk, the whole chunks folded a run at a time (``_fold``)."""
    full = length // BYTES_PER_CRC
    block = 0
    for first in range(0, full, RUN_CHUNKS):
        n = min(RUN_CHUNKS, full - first)
        block = compose(block, _fold(crcs[first * CRC_SIZE:(first + n) * CRC_SIZE], n),
                        n * BYTES_PER_CRC)
    rest = length - full * BYTES_PER_CRC
    if rest:
        block = compose(block, int.from_bytes(crcs[full * CRC_SIZE:(full + 1) * CRC_SIZE],
                                              "big"), rest)
    return compose(crc, block, length)


def _fold(crcs: bytes, n: int) -> int:
    """The CRC of ``n`` whole chunks from their CRCs, ``c0 * x^(8*512*(n-1)) + ... + c(n-1)``,
    with one CRC32C call instead of a multiplication per chunk: the CRC is linear and
    reflected, so XORing 4 bytes into a message XORs their little-endian value into the CRC
    register where they stand (as ``checksum.chunks_match`` uses it). Each chunk's CRC but the
    last, placed where its chunk begins in ``(n - 1) * 512`` zero bytes run from a zero
    register, comes out multiplied by x to the bits that follow it; the last is added."""
    last = int.from_bytes(crcs[(n - 1) * CRC_SIZE:n * CRC_SIZE], "big")
    if n == 1:
        return last
    buffer = bytearray((n - 1) * BYTES_PER_CRC)
    for k in range(CRC_SIZE):   # byte k of each little-endian CRC: byte 3 - k of the stored
        buffer[k::BYTES_PER_CRC] = crcs[CRC_SIZE - 1 - k:(n - 1) * CRC_SIZE:CRC_SIZE]
    register = crc32c(buffer, 0xFFFFFFFF) ^ 0xFFFFFFFF      # from, and as, a bare register
    return register ^ last


def file_crc(blocks, read_crcs: Callable, read_bytes: Callable) -> int:
    """The CRC32C of a file's bytes from its blocks ``(id, length, genstamp)``, composed from
    0 (the empty file's CRC) as ``CrcComposer`` does: ``read_crcs(id, length) -> (chunk
    CRCs, type)`` is the store's (``BlockStore.read_crcs``: its meta file, a partial last
    chunk recomputed from its bytes); a block of another type is read whole with
    ``read_bytes(id, length)`` and the CRC continued over it."""
    crc = 0
    for block_id, length, _ in blocks:
        crcs, kind = read_crcs(block_id, length)
        if kind == CRC32C:
            crc = compose_chunks(crc, crcs, length)
        else:
            crc = crc32c(read_bytes(block_id, length), crc)
    return crc


class Sidecar(NamedTuple):
    value: int          # unsigned, as crc32c gives it
    size: int


def parse_sidecar(data: bytes, what: str) -> Sidecar:
    """A ``.crc`` file's ``Checksum``; ValueError, with ``what`` and the reason, when json4s
    could not read it."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{what} is not a JSON checksum: truncated or corrupt") from exc
    if not isinstance(doc, dict) or any(key not in doc for key in CHECKSUM_FIELDS):
        raise ValueError(f"{what} lacks one of {', '.join(CHECKSUM_FIELDS)}")
    value, size = doc["value"], doc["mainFileSize"]
    if not isinstance(value, int) or not -(1 << 31) <= value < (1 << 31) or \
            not isinstance(size, int) or size < 0:
        raise ValueError(f"{what}: value is not a 32-bit int or mainFileSize not a size")
    return Sidecar(value & 0xFFFFFFFF, size)


def mismatch(path: str, length: int, crc: int, sidecar: Sidecar) -> str:
    """Why ``path`` (``length`` bytes, CRC32C ``crc``) fails its sidecar, or ""."""
    if crc == sidecar.value and length == sidecar.size:
        return ""
    signed = crc - (1 << 32) if crc >= 1 << 31 else crc
    expected = sidecar.value - (1 << 32) if sidecar.value >= 1 << 31 else sidecar.value
    return (f"{path} does not match its checksum file: {length} bytes with CRC32C {signed}, "
            f"the .crc says {sidecar.size} bytes with {expected}: Spark fails reading it "
            f"(CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED)")


def sidecars(stores, only: set[str] | None = None) -> list[tuple[object, object]]:
    """``(state file, its .crc)`` of every state file of ``stores`` that has one (those
    whose path is in ``only``, when given)."""
    return [(f, store.sidecars[f.path]) for store in stores for _, _, f in store.files()
            if f.path in store.sidecars and (only is None or f.path in only)]


def verify(pairs, read: Callable, read_crcs: Callable, read_bytes: Callable) -> dict[str, str]:
    """``{path: why}`` for each ``(state file, sidecar)`` of ``pairs`` that Spark's read
    would fail: a sidecar that does not parse, a size or CRC32C that differs (``file_crc``),
    or a file or sidecar that cannot be read (its blocks missing: Spark cannot read it
    either). ``read(ref)`` reads a sidecar's bytes."""
    out = {}
    for main, side in pairs:
        try:
            sidecar = parse_sidecar(read(side), side.path)
            crc = file_crc(main.blocks, read_crcs, read_bytes)
        except ValueError as exc:
            out[main.path] = f"{exc}: Spark fails reading {main.path} (Checksum.fromJson)"
        except Exception as exc:        # a missing block is reported, not raised
            out[main.path] = f"{main.path} or its checksum file could not be read: {exc}"
        else:
            why = mismatch(main.path, main.length, crc, sidecar)
            if why:
                out[main.path] = why
    return out
