"""Startup lease recovery: the uploads a stop cut off, closed with the blocks they have.

An upload opens its file under one of the data path's client names (``webhdfs-<kind>-<n>``,
``namenode/namespace/leases.py``) and logs its close only at its end, so a file still under
construction by one of them after startup was being written when the namenode stopped:
nothing of it was acknowledged. ``recover_uploads`` runs after loading and closes each such
file with the blocks it has (a create: empty; an append: its content before; a truncate:
after it), as HDFS's lease recovery completes a file whose writer is gone; the sweep
(``sweep.py``) later removes the block files it never recorded. Files under construction by
other clients are left alone and logged.
"""

from __future__ import annotations

import logging
from typing import Protocol, TypeVar

from nnlite.namenode.namespace.leases import upload_kind

log = logging.getLogger(__name__)

# What a write of the namesystem returns to wait on (journal.Logged): only handed back here.
L = TypeVar("L")


class Recovering(Protocol[L]):
    """What the lease recovery calls on the ``FSNamesystem`` just loaded, which the blocks
    may not import (the namesystem is above them)."""

    def files_under_construction(self) -> list[tuple[str, int, str]]: ...

    def recover_upload(self, path: str, inode_id: int) -> L: ...

    def durable(self, logged: L) -> object: ...


def recover_uploads(fs: Recovering[L]) -> list[tuple[str, str]]:
    """Close the uploads a stop cut off (module docstring) through ``fs``, the
    ``FSNamesystem`` just loaded: ``(path, action)`` per file."""
    done: list[tuple[str, str]] = []
    for path, inode_id, holder in fs.files_under_construction():
        kind = upload_kind(holder)
        if kind is None:
            log.warning("%s is under construction by %s, not one of ours: left as it is",
                        path, holder)
            continue
        fs.durable(fs.recover_upload(path, inode_id))
        action = "closed with the blocks it has"
        log.warning("lease recovery: %s (%s by %s, cut off) %s", path, kind, holder, action)
        done.append((path, action))
    return done
