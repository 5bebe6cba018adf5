"""The quorum journal: an HA set's edits, batch by batch, in etcd.

Keys, under ``<prefix>/<nameservice>/`` (``Layout``):

* ``leader``: the active's JSON ``{"id", "http"}``, bound to its lease; its create revision is the
  active's *epoch*
* ``namespace``: the namespace id every member must have (set by the first active)
* ``committed``: the last txid durable in etcd, as decimal text
* ``standbys/<id>``: each standby's position, JSON ``{"txid", "lagTxns", "lagMs", "http", "at",
  "datanode", "healthy"}``, put about once a second: the active's figures of its standbys' lag, and
  the datanode (``{"host", "xferPort", "ipcPort", "infoPort", "uuid"}``) it names in pipelines and
  block locations while the position is fresh
* ``term``: how many times a namenode became active, as decimal text: each active allocates block
  ids from ``term << TERM_SHIFT`` up, so two actives never hand out one id
* ``txns/<last txid, 20 digits>``: framed edits records (``formats/edits.py``), whole records, txids
  contiguous, ending at that txid

Invariants:

* **Fencing.** Every write is one etcd transaction guarded by ``create_revision(leader) ==
  epoch``. A namenode whose lease expired, or whose key another took, can never append: its
  guarded write fails and it steps down (Jepsen showed that etcd's locks alone do not give
  mutual exclusion; a write guarded by the lock's revision does).
* **A batch is all or nothing.** A batch that fits etcd's limits (``MAX_TXN_OPS`` operations and
  ``MAX_REQUEST_BYTES`` per request) is one transaction that puts its chunks and moves
  ``committed``. A larger one puts its chunks in several guarded transactions and moves
  ``committed`` in the last; readers read only up to ``committed``, and every chunk above it
  (a deposed active's half batch) has a last txid above it, so it is never read, and a new
  active deletes such leftovers before its first write.
* **Exactly once.** The committing transaction also compares ``committed`` with the batch's
  first txid - 1. A retry after an ambiguous failure (a timeout after etcd applied it) finds
  ``committed`` already at the batch's end under the same epoch: that is success.
* **Small.** After each checkpoint the chunks wholly below the image's txid (less
  ``nnlite.ha.edits.retained``) are deleted and etcd's history is compacted.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from nnlite.client.errors import EtcdError, EtcdRequestError, EtcdUnavailableError
from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import (
    MAX_REQUEST_BYTES,
    MAX_TXN_OPS,
    Compare,
    KeyValue,
    Op,
    RangeResult,
)
from nnlite.formats import edits
from nnlite.namenode.errors import FencedError, SharedJournalError

log = logging.getLogger(__name__)

# Room for the guard, the keys and the protobuf framing in one request.
CHUNK_BYTES = 512 << 10
TXN_BYTES = MAX_REQUEST_BYTES - (64 << 10)
TXN_PUTS = MAX_TXN_OPS - 4
TXID_DIGITS = 20
# Block ids of term t start at t << TERM_SHIFT: 2^40 ids per term, 2^23 terms in a long.
TERM_SHIFT = 40


@dataclass(frozen=True)
class Layout:
    """The keys of one nameservice (module docstring)."""
    base: bytes

    @classmethod
    def of(cls, prefix: str, nameservice: str) -> Layout:
        return cls(f"{prefix.rstrip('/')}/{nameservice}/".encode())

    @property
    def leader(self) -> bytes:
        return self.base + b"leader"

    @property
    def namespace(self) -> bytes:
        return self.base + b"namespace"

    @property
    def standbys(self) -> bytes:
        return self.base + b"standbys/"

    @property
    def term(self) -> bytes:
        return self.base + b"term"

    @property
    def committed(self) -> bytes:
        return self.base + b"committed"

    @property
    def txns(self) -> bytes:
        return self.base + b"txns/"

    def txn_key(self, last_txid: int) -> bytes:
        return self.txns + b"%0*d" % (TXID_DIGITS, last_txid)

    def txid_of(self, key: bytes) -> int:
        return int(key[len(self.txns):])


@dataclass(frozen=True, slots=True)
class Batch:
    """Records ``first_txid..last_txid`` as they are in etcd (one chunk)."""
    first_txid: int
    last_txid: int
    data: bytes


def leader_value(namenode_id: str, http: str) -> bytes:
    return json.dumps({"id": namenode_id, "http": http}, separators=(",", ":")).encode()


def parse_leader(value: bytes) -> dict:
    try:
        parsed = json.loads(value)
        return {"id": str(parsed["id"]), "http": str(parsed["http"])}
    except (ValueError, KeyError, TypeError):
        return {"id": "?", "http": ""}


def committed_txid(etcd: Etcd, layout: Layout) -> int | None:
    """The last txid durable in etcd (None: the journal was never initialised)."""
    kv = etcd.get(layout.committed)
    return None if kv is None else int(kv.value)


def first_txid_of(data: bytes) -> int:
    frame = edits.frame_at(data, 0, len(data), edits.DEFAULT_MAX_RECORD)
    if isinstance(frame, str):
        raise SharedJournalError(f"a chunk of the shared journal is damaged: {frame}")
    return frame.txid


def read_batches(etcd: Etcd, layout: Layout, after_txid: int, upto_txid: int,
                 limit: int = 64) -> list[Batch]:
    """The chunks holding txids ``after_txid + 1 .. upto_txid`` (a committed txid), in order,
    at most ``limit`` of them; the first may start at or before ``after_txid``."""
    if upto_txid <= after_txid:
        return []
    found = etcd.range(layout.txn_key(after_txid + 1), layout.txn_key(upto_txid + 1),
                       limit=limit)
    return [Batch(first_txid_of(kv.value), layout.txid_of(kv.key), kv.value)
            for kv in found.kvs]


def split(data: bytes, first_txid: int, last_txid: int) -> list[Batch]:
    """``data`` in chunks of whole records of at most CHUNK_BYTES each (a record larger than
    that makes a chunk of its own)."""
    if len(data) <= CHUNK_BYTES:
        return [Batch(first_txid, last_txid, data)]
    records = edits.payloads_in(data, first_txid, source="a batch to share")
    chunks: list[Batch] = []
    start_off, start_txid = 0, first_txid
    for i, (off, items) in enumerate(records):
        end = records[i + 1][0] if i + 1 < len(records) else len(data)
        if end - start_off > CHUNK_BYTES and off > start_off:
            chunks.append(Batch(start_txid, items[1] - 1, data[start_off:off]))
            start_off, start_txid = off, items[1]
    chunks.append(Batch(start_txid, last_txid, data[start_off:]))
    return chunks


class QuorumJournal:
    """The active's side: ``append`` is the shared log of its Journal
    (``namenode/journal/journal.py``'s SharedLog), valid for one epoch."""

    def __init__(self, etcd: Etcd, layout: Layout, epoch: int, timeout: float):
        self.etcd = etcd
        self.layout = layout
        self.epoch = epoch
        self.timeout = timeout
        self.appends = 0
        self.append_seconds = 0.0
        self.last_txid = 0

    def _guard(self) -> Compare:
        return Compare.create_revision(self.layout.leader) == self.epoch

    def append(self, data: bytes, first_txid: int, last_txid: int) -> None:
        start = time.perf_counter()
        chunks = split(data, first_txid, last_txid)
        groups = _groups(chunks)
        for group in groups[:-1]:
            self._retrying(functools.partial(self._put_chunks, group), first_txid, last_txid)
        self._retrying(lambda: self._commit(groups[-1], first_txid, last_txid), first_txid,
                       last_txid)
        self.appends += 1
        self.append_seconds += time.perf_counter() - start
        self.last_txid = last_txid

    def _put_chunks(self, chunks: list[Batch]) -> None:
        result = self.etcd.txn([self._guard()],
                               [Op.put(self.layout.txn_key(c.last_txid), c.data) for c in chunks])
        if not result.succeeded:
            raise FencedError(self._fenced())

    def _commit(self, chunks: list[Batch], first_txid: int, last_txid: int) -> None:
        layout = self.layout
        puts = [Op.put(layout.txn_key(c.last_txid), c.data) for c in chunks]
        puts.append(Op.put(layout.committed, str(last_txid).encode()))
        result = self.etcd.txn(
            [self._guard(), Compare.value(layout.committed) == str(first_txid - 1).encode()],
            puts, [Op.get(layout.leader), Op.get(layout.committed)])
        if result.succeeded:
            return
        leader, committed = (_only(r) for r in result.responses)
        if leader is None or leader.create_revision != self.epoch:
            raise FencedError(self._fenced())
        if committed is not None and int(committed.value) == last_txid:
            return      # an earlier try of this very batch landed (module docstring)
        raise FencedError(f"the shared journal is at txid "
                          f"{committed.value.decode() if committed else 'none'}, not "
                          f"{first_txid - 1}: another namenode wrote it; stepping down")

    def _fenced(self) -> str:
        return (f"this namenode's leadership (epoch {self.epoch}) was taken over: its write to "
                f"the shared journal was refused; stepping down")

    def _retrying(self, attempt: Callable[[], None], first_txid: int,
                  last_txid: int) -> None:
        """``attempt`` until it succeeds, is fenced, or etcd has been unavailable for
        ``timeout`` seconds (then SharedJournalError: nothing of the batch acknowledged)."""
        deadline = time.monotonic() + self.timeout
        pause = 0.05
        while True:
            try:
                attempt()
                return
            except EtcdRequestError as exc:
                raise SharedJournalError(f"etcd refused txids {first_txid}-{last_txid}: {exc}") \
                    from exc
            except EtcdUnavailableError as exc:
                if time.monotonic() + pause > deadline:
                    raise SharedJournalError(
                        f"etcd did not make txids {first_txid}-{last_txid} durable within "
                        f"{self.timeout:g} s ({exc}); nothing of them was acknowledged. "
                        f"Writes resume once etcd has a quorum again.") from exc
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def clear_uncommitted(self, committed: int) -> int:
        """Delete the chunks above ``committed`` (a deposed active's half batch), guarded by
        this epoch; returns how many."""
        layout = self.layout
        result = self.etcd.txn([self._guard()],
                               [Op.delete(layout.txn_key(committed + 1),
                                          layout.txns + b"\xff")])
        if not result.succeeded:
            raise FencedError(self._fenced())
        deleted = result.responses[0] if result.responses else 0
        return deleted if isinstance(deleted, int) else 0

    def purge(self, below_txid: int) -> int:
        """Delete the chunks whose last txid is below ``below_txid`` and compact etcd's
        history to now; returns the revision compacted to (0: nothing to do)."""
        if below_txid <= 1:
            return 0
        try:
            layout = self.layout
            result = self.etcd.txn([self._guard()],
                                   [Op.delete(layout.txns, layout.txn_key(below_txid))])
            if not result.succeeded:
                return 0
            try:
                self.etcd.compact(result.revision)
            except EtcdRequestError as exc:
                # The history is already compacted to or past it (another active purged, or
                # the delete found nothing and made no revision): the chunks are gone.
                if "compacted" not in str(exc):
                    raise
            return result.revision
        except EtcdError as exc:
            log.warning("could not purge the shared journal below txid %d: %s", below_txid, exc)
            return 0


def _groups(chunks: list[Batch]) -> list[list[Batch]]:
    """Chunks grouped into transactions within etcd's limits, in order."""
    groups: list[list[Batch]] = [[]]
    size = 0
    for chunk in chunks:
        if groups[-1] and (size + len(chunk.data) > TXN_BYTES or len(groups[-1]) >= TXN_PUTS):
            groups.append([])
            size = 0
        groups[-1].append(chunk)
        size += len(chunk.data)
    return groups


def _only(response: RangeResult | int) -> KeyValue | None:
    """The key a txn's get found, if any."""
    return response.kvs[0] if isinstance(response, RangeResult) and response.kvs else None
