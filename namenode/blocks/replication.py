"""File contents on two hosts: the active copies each new block to a standby of its HA set.

HDFS's minimum replication (``dfs.namenode.replication.min``) in nnlite's shape, where every
namenode of an HA set keeps a block store:

* **At close.** An upload's new blocks (and a truncate's copied block) are pushed to one
  standby before the close is logged, so a file's close is acknowledged only once its blocks
  are on the active and on a standby (``Replicator.replicate``). The standby recomputes the
  block's CRC32C chunks from the bytes it received and compares their digest (the MD5 of the
  chunk CRCs, as the block's meta file holds them) and its length with the active's before
  it publishes the block (fsync, rename, fsync the directory: ``BlockStore.publish_block``).
* **No standby reachable in time.** The write proceeds; the blocks are *under-replicated*
  (``under_replicated``: the status page and ``/jmx``) and ``resync`` copies them once a
  standby answers again. A close never waits on its copies past ``close_timeout``
  (``nnlite.ha.replication.timeout``) in all: a slow or paused standby is left out as HDFS's
  pipeline drops a datanode that does not answer (``DataStreamer``, with minimum replication
  1), not waited for (a paused standby once held every close for the whole pause). Closes
  do not even try a standby whose published position is stale (``stale``: older than
  ``ha/positions.py``'s ``STALE_POSITION``, as ``DatanodeManager`` keeps stale datanodes out of
  new pipelines), nor one that took none of a close's blocks in time, until a resync reaches
  it again (as ``DFSOutputStream``'s excluded nodes); one that took some (a large file's
  blocks, slower than the bound) stays in.
* **Through the write pipeline.** An ``hdfs://`` write's pipeline runs through the
  active's datanode and a live standby's (``namenode/rpc/status.py``'s ``Locator``), so
  its blocks reach the standby as the client writes them; a block whose pipeline named no
  standby is reported at its close (``lacking``) and is under-replicated like the above.
* **Resync.** Every ``nnlite.ha.replication.interval`` seconds the active asks each standby
  for its block report (the ids it holds) and pushes every block the namespace references
  that the standby lacks -- a standby that was down, or was bootstrapped late, catches up the
  way a DataNode's block report lets HDFS re-replicate.

Pushes are ``PUT /blocks/v1/blk_<id>?length=<n>`` with the shared secret of the set
(``nnlite.checkpoint.secret``, ``X-Nnlite-Secret``) and the digest in ``X-Block-Digest``
(``<checksum type>:<md5 hex of the chunk CRCs>``); a report is ``GET /blocks/v1?op=REPORT``
answering ``{"blocks": [id, ...]}``. The requests are ``client/peer.py``'s (the client between
namenodes, which names the headers for both sides); the HTTP side is
``namenode/http/replica.py``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet

from nnlite.client.connection import Connection
from nnlite.client.errors import NamenodeUnreachableError, ProtocolError
from nnlite.client.peer import (
    BLOCK_DIGEST_HEADER,
    BLOCKS_PREFIX,
    Credentials,
    Peer,
    PeerRefusedError,
)
from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.blocks.store import META, BlockStore

log = logging.getLogger(__name__)

PREFIX = BLOCKS_PREFIX             # the endpoints of namenode/http/replica.py


def digest_text(store: BlockStore, block_id: int, num_bytes: int) -> str:
    count, md5, kind = store.digest(block_id, num_bytes)
    return f"{kind}:{md5.hex()}"


_copies = itertools.count()


class BlockReceiver:
    """A standby's sink for one pushed block: bytes to ``tmp/``, CRCs computed as they
    arrive; ``finish`` checks length and digest, then publishes."""

    def __init__(self, store: BlockStore, block_id: int, length: int, digest: str):
        kind_text, _, self.md5 = digest.partition(":")
        self.kind = int(kind_text)
        self.store = store
        self.block_id = block_id
        self.length = length
        self.received = 0
        self.chunker = checksum.CrcChunker(kind=self.kind)
        store.hold(block_id)
        base = store.tmp_path(block_id)
        unique = f".copy-{os.getpid()}-{next(_copies)}"
        self.data_tmp = base.with_name(base.name + unique)
        self.meta_tmp = base.with_name(base.name + META + unique)
        # open across the copy's write() calls; finish() or abort() closes it
        self.handle = open(self.data_tmp, "wb")  # noqa: SIM115

    def write(self, data) -> None:
        self.handle.write(data)
        self.chunker.feed(data)
        self.received += len(data)

    def abort(self, reason: str) -> None:
        log.info("copy of blk_%d cut off (%s)", self.block_id, reason)
        self.handle.close()
        self._remove_temps()
        self.store.release([self.block_id])

    def _remove_temps(self) -> None:
        for path in (self.data_tmp, self.meta_tmp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def finish(self) -> None:
        """Verify and publish (blocking: call in a thread)."""
        self.handle.close()
        try:
            crcs = self.chunker.finish()
            _, md5, _ = checksum.block_digest(crcs, self.kind)
            if self.received != self.length or md5.hex() != self.md5:
                raise errors.NamenodeError(
                    f"copy of blk_{self.block_id} damaged in transit: {self.received} bytes "
                    f"(expected {self.length}), digest {md5.hex()} (expected {self.md5})")
            with open(self.meta_tmp, "wb") as meta:
                meta.write(checksum.meta_header(self.kind) + crcs)
            self.store.publish_from(self.block_id, self.data_tmp, self.meta_tmp)
        except BaseException:
            self._remove_temps()
            raise
        finally:
            self.store.release([self.block_id])


class Replicator:
    """The active's side. ``standbys()`` names the other namenodes (``host:port``) in the
    set's order; ``referenced()`` is ``FSNamesystem.blocks_in_use``; ``stale()`` the
    standbys whose published position is stale (not tried at a close, nor by the resync).
    ``timeout``: seconds a resync or fetch waits on a standby's socket; ``close_timeout``:
    seconds a close's copies may take in all."""

    def __init__(self, store: BlockStore, referenced: Callable[[], AbstractSet[int]],
                 standbys: Callable[[], list[str]], secret: Credentials,
                 is_active: Callable[[], bool],
                 timeout: float = 60.0, close_timeout: float = 5.0,
                 stale: Callable[[], set[str]] = set, scheme: str = "http"):
        self.store = store
        self.scheme = scheme             # https in an HTTPS_ONLY set (``Config.http_scheme``)
        self.referenced = referenced     # every block id the namespace refers to
        self.standbys = standbys
        self.secret = secret
        self.timeout = timeout
        self.close_timeout = close_timeout
        self.stale = stale
        self.is_active = is_active           # only the active pushes
        self.under_replicated: set[int] = set()
        # standbys a close could not reach: left out of closes until a resync reaches them
        self.excluded: set[str] = set()
        self.pushed = 0
        self.pushed_bytes = 0
        self.left_out = 0           # closes that left a standby out (stale, excluded, late)
        self._run_without = 0       # ... since the last close a standby took
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ at close

    def replicate(self, blocks: Iterable[tuple]) -> bool:
        """Copy ``blocks`` ((id, length, genstamp) each) to a standby within
        ``close_timeout`` seconds, in the set's order (what one did not take in time goes to
        the next); True once every block is on one, False when some are not (they are
        under-replicated). Standbys whose position is stale, or that took none of a
        close's blocks since the last resync reached them, are not tried."""
        blocks = [b for b in blocks if b[1] > 0]
        if not self.is_active() or not blocks:
            return True
        deadline = time.monotonic() + self.close_timeout
        reasons: list[str] = []
        left = list(blocks)             # not yet on a standby
        for standby in self._candidates(reasons):
            offered = len(left)
            try:
                with self._peer(standby, deadline - time.monotonic()) as peer:
                    while left:
                        self._push(peer, standby, left[0][0], left[0][1], deadline)
                        left.pop(0)
                self._copied_again(standby)
                return True
            except NamenodeUnreachableError as exc:
                why = f"{standby}: {exc}"
                if len(left) == offered:        # took none: silent, not merely slow with
                    with self._lock:            # a large file's blocks
                        self.excluded.add(standby)
                    why += " (left out of closes until a resync reaches it)"
                reasons.append(why)
            except errors.NamenodeError as exc:
                reasons.append(f"{standby}: {exc}")
        with self._lock:
            self.under_replicated.update(b[0] for b in left)
            self.left_out += 1
            self._run_without += 1
            first = self._run_without == 1
        # one warning per run of such closes (a paused standby meets thousands of them)
        log.log(logging.WARNING if first else logging.DEBUG,
                "%d block(s) under-replicated: no standby took them (%s)%s", len(left),
                "; ".join(reasons) or "no standby configured",
                "; the closes after this one go on without a standby's copy quietly until "
                "one reaches a standby again" if first else "")
        return False

    def _copied_again(self, standby: str) -> None:
        with self._lock:
            run, self._run_without = self._run_without, 0
        if run:
            log.info("a close's blocks reached %s again, after %d close(s) without a "
                     "standby's copy", standby, run)

    def _candidates(self, reasons: list[str]) -> list[str]:
        """The standbys a close tries, in the set's order; why the others are not."""
        stale = self.stale()
        with self._lock:
            excluded = set(self.excluded)
        chosen = []
        for standby in self.standbys():
            if standby in stale:
                reasons.append(f"{standby}: its position is stale (paused, cut off or gone)")
            elif standby in excluded:
                reasons.append(f"{standby}: left out since a copy to it failed")
            else:
                chosen.append(standby)
        return chosen

    def lacking(self, block_ids: list[int]) -> None:
        """Blocks a close recorded without a copy on a standby (an RPC write whose pipeline
        named no standby's datanode): under-replicated until the resync copies them."""
        with self._lock:
            self.under_replicated.update(block_ids)
        log.info("%d block(s) closed without a standby's copy: under-replicated until the "
                 "resync copies them", len(block_ids))

    def lacks(self, block_id: int) -> bool:
        """Whether ``block_id`` is known to be missing from the standbys."""
        return block_id in self.under_replicated

    def _peer(self, standby: str, timeout: float | None = None) -> Peer:
        if timeout is not None and timeout <= 0:
            raise NamenodeUnreachableError(f"no time left to copy to {standby}",
                                           url=f"{self.scheme}://{standby}", sent=False)
        return Peer(f"{self.scheme}://{standby}", self.secret, timeout or self.timeout)

    def _push(self, peer: Peer, standby: str, block_id: int, num_bytes: int,
              deadline: float | None = None) -> None:
        """PUT one block; with a ``deadline`` (a close's), every socket wait is cut to the
        time left and the body stops at it (``_Paced``)."""
        digest = digest_text(self.store, block_id, num_bytes)
        with self.store.open_block(block_id, num_bytes) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size != num_bytes:
                raise errors.NamenodeError(f"blk_{block_id} holds {size} bytes, the namespace "
                                           f"records {num_bytes}")
            body: object = handle
            if deadline is not None:
                body = _Paced(handle, peer.connection, deadline)
            try:
                peer.push_block(block_id, num_bytes, body, digest, sized=deadline is not None)
            except PeerRefusedError as exc:
                raise errors.NamenodeError(f"{standby} refused blk_{block_id}: {exc.status} "
                                           f"{exc.body[:200]!r}") from exc
        with self._lock:
            self.under_replicated.discard(block_id)
            self.pushed += 1
            self.pushed_bytes += num_bytes

    # ------------------------------------------------------------------ fetching

    def fetch(self, blocks: Iterable[tuple]) -> int:
        """Copy ``blocks`` (tuples whose first item is the id) this namenode lacks from the
        first standby that holds each (a
        file written while this one was down, read now that it is active); returns how many
        arrived. A block no standby has stays missing: the read fails as HDFS's does when no
        replica is left."""
        wanted = {b[0] for b in blocks if not self.store.has(b[0])}
        got = 0
        for standby in self.standbys():
            if not wanted:
                break
            try:
                with self._peer(standby) as peer:
                    for block_id in sorted(wanted):
                        if self._pull(peer, standby, block_id):
                            wanted.discard(block_id)
                            got += 1
            except (NamenodeUnreachableError, errors.NamenodeError) as exc:
                log.info("could not fetch blocks from %s: %s", standby, exc)
        return got

    def _pull(self, peer: Peer, standby: str, block_id: int) -> bool:
        response = peer.open_block(block_id)
        if response is None:
            return False
        try:
            num_bytes = int(response.getheader("Content-Length", "-1"))
            receiver = BlockReceiver(self.store, block_id, num_bytes,
                                     response.getheader(BLOCK_DIGEST_HEADER, ""))
            try:
                while chunk := response.read(1 << 20):
                    receiver.write(chunk)
            except BaseException as exc:
                receiver.abort(str(exc))
                raise
            receiver.finish()
        finally:
            response.close()
        log.info("fetched blk_%d (%d bytes) from %s", block_id, num_bytes, standby)
        return True

    # ------------------------------------------------------------------ resync

    def resync(self) -> int:
        """Push every referenced block a reachable standby lacks; returns how many."""
        if not self.is_active():
            return 0
        referenced = self.referenced()
        # published blocks: a replica being written (rbw/, an open file's last block) is not
        # one to copy or count yet, as HDFS leaves blocks under construction out
        local = {block_id for block_id, _ in self.store.scan() if self.store.has(block_id)}
        wanted = referenced & local
        copied = 0
        confirmed: set[int] = set()
        stale = self.stale()
        for standby in self.standbys():
            if standby in stale:
                continue
            try:
                with self._peer(standby) as peer:
                    try:
                        held = peer.block_report()
                    except PeerRefusedError as exc:
                        raise errors.NamenodeError(f"{exc.status} {exc.body[:200]!r}") from exc
                    with self._lock:
                        self.excluded.discard(standby)      # closes may try it again
                    lacking = (referenced - local) & held
                    if lacking:
                        self.fetch([(b,) for b in lacking])
                        local |= {b for b in lacking if self.store.has(b)}
                        wanted = referenced & local
                    confirmed |= held & wanted
                    for block_id, num_bytes in sorted(self._lengths(wanted - held).items()):
                        self._push(peer, standby, block_id, num_bytes)
                        confirmed.add(block_id)
                        copied += 1
            except (NamenodeUnreachableError, ProtocolError, errors.NamenodeError,
                    ValueError) as exc:
                log.info("block report of %s not taken: %s", standby, exc)
        # referenced now, not at the start: a report that took long (a standby paused
        # meanwhile) must not drop the blocks closed under-replicated while it waited
        referenced = self.referenced()
        with self._lock:
            # a block a standby's report confirms is replicated, wherever it was counted
            self.under_replicated = ((self.under_replicated | wanted) - confirmed) & referenced
        if copied:
            log.info("resync copied %d block(s) to the standbys; %d under-replicated", copied,
                     len(self.under_replicated))
        return copied

    def _lengths(self, ids: Iterable[int]) -> dict[int, int]:
        """The bytes of each block on disk (a published block never changes)."""
        out = {}
        for block_id in ids:
            try:
                out[block_id] = os.stat(self.store.data_path(block_id)).st_size
            except FileNotFoundError:
                continue
        return out

    def run(self, interval: float, stopping: threading.Event) -> None:
        """The resync loop (a thread of the daemon)."""
        while not stopping.wait(interval):
            try:
                self.resync()
            except Exception:
                log.exception("block resync failed (retried)")

    def metrics(self) -> dict:
        return {"UnderReplicatedBlocks": len(self.under_replicated),
                "BlocksReplicated": self.pushed, "BytesReplicated": self.pushed_bytes,
                "ClosesWithoutStandbyCopy": self.left_out}


class _Paced:
    """A block file sent to a standby within a close's deadline: each read first cuts the
    socket's timeout to the time left, and a read past the deadline is a TimeoutError, so
    a standby taking the bytes slowly cannot hold the close past its bound either."""

    def __init__(self, handle, conn: Connection, deadline: float):
        self.handle = handle
        self.conn = conn
        self.deadline = deadline

    def read(self, size: int = -1) -> bytes:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the close's time for its copies ran out")
        self.conn.set_timeout(left)
        return self.handle.read(size)

