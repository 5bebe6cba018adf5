"""Startup lease recovery: the writes a stop cut off, closed with the blocks they have.

A write opens its file under one of the data path's client names (``webhdfs-<kind>-<n>``,
``namenode/namespace/leases.py``), so a file still under construction by one of them after
startup was being written when the namenode stopped. A WebHDFS upload logs its blocks only
at its end: nothing of it was acknowledged, and the file closes with the blocks it has (a
create: empty; an append: its content before; a truncate: after it). A write over
``hdfs://`` logs its blocks as they are handed out and as its writer's fsync reports them
(``rpc/writes.py``), and the datanode's replica of the block being written survives in
``rbw/``: ``finalize`` (``rwr.finalize``, or the datanode's ``recover`` once it runs) keeps
each block the store has not published at the length its checksums vouch for, so every
byte an hflush or hsync returned for is kept, as HDFS's block recovery keeps an RWR
replica; the file closes with its blocks up to the first one the store has nothing of.
That is HDFS's lease recovery of a file whose writer is gone; the sweep (``sweep.py``)
later removes the block files it never recorded. Files under construction by other
clients are left alone and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from nnlite.formats.edits import Block
from nnlite.namenode.namespace.leases import upload_kind

log = logging.getLogger(__name__)

# What a write of the namesystem returns to wait on (journal.Logged): only handed back here.
L = TypeVar("L")


class Recovering(Protocol[L]):
    """What the lease recovery calls on the ``FSNamesystem`` just loaded, which the blocks
    may not import (the namesystem is above them)."""

    def files_under_construction(self) -> list[tuple[str, int, str]]: ...

    def blocks_under_construction(self, path: str, inode_id: int) -> tuple[Block, ...]: ...

    def recover_upload(self, path: str, inode_id: int, blocks: tuple | None = None) -> L: ...

    def durable(self, logged: L) -> object: ...


def recover_uploads(fs: Recovering[L], finalize: Callable[[int], int | None] | None = None,
                    published: Callable[[int], bool] | None = None) -> list[tuple[str, str]]:
    """Close the writes a stop cut off (module docstring) through ``fs``, the
    ``FSNamesystem`` just loaded: ``(path, action)`` per file. ``published(block_id)`` tells
    a block the store holds; ``finalize(block_id)`` keeps one it does not, returning its
    length (None: nothing of it). Without them the files close with the blocks recorded."""
    done: list[tuple[str, str]] = []
    for path, inode_id, holder in fs.files_under_construction():
        kind = upload_kind(holder)
        if kind is None:
            log.warning("%s is under construction by %s, not one of ours: left as it is",
                        path, holder)
            continue
        blocks = None
        if finalize is not None and published is not None:
            blocks = kept(fs.blocks_under_construction(path, inode_id), finalize, published)
        fs.durable(fs.recover_upload(path, inode_id, blocks))
        action = "closed with the blocks it has"
        log.warning("lease recovery: %s (%s by %s, cut off) %s", path, kind, holder, action)
        done.append((path, action))
    return done


def kept(blocks: tuple[Block, ...], finalize: Callable[[int], int | None],
         published: Callable[[int], bool]) -> tuple[Block, ...]:
    """``blocks`` as the store keeps them: a published one at its recorded length (its
    writer's, reported when it asked for the next: HDFS commits a block so), except the
    last, and any not published, at the length ``finalize`` keeps it at
    (``internalReleaseLease`` recovers the last block; a finalized one's length is the
    replica's). A block the store has nothing of is dropped with the rest when nothing of it
    was recorded either (HDFS removes a last block no datanode holds); one recorded with
    bytes stays as recorded, a missing block for readers to report, never a file shortened
    in silence."""
    out: list[Block] = []
    for i, (block_id, length, genstamp) in enumerate(blocks):
        if i == len(blocks) - 1 or not published(block_id):
            recovered = finalize(block_id)
            if recovered:
                length = recovered
            elif length == 0:
                break
            else:
                log.error("lease recovery: blk_%d (%d bytes recorded) is not in the block "
                          "store: kept as recorded, missing", block_id, length)
        out.append((block_id, length, genstamp))
    return tuple(out)
