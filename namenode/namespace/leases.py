"""Leases: a file being written belongs to its writer.

The lease table lives in memory: path -> ``Lease`` (holder, its machine, last progress). An
upload takes the lease of its path before its first byte and gives it back once its blocks
are recorded or dropped; TRUNCATE holds it while it copies. Anyone else who wants to write
the path (CREATE, APPEND, TRUNCATE, CONCAT) gets ``AlreadyBeingCreatedException`` while the
holder makes progress. A holder silent for the soft limit (``nnlite.lease.soft-limit``, 60 s)
loses the lease to the next writer: its upload is revoked (its blocks are deleted, its later
bytes ignored, its end answered with ``LeaseExpiredException``). A holder silent for the hard
limit (``dfs.namenode.lease-hard-limit-sec``, 1200 s) is revoked by housekeeping even when
nobody waits. A lease whose upload is being recorded cannot be revoked.

A lease follows its file (``follow``, given every applied request's ops under the namesystem
lock): a rename moves the leases at and under its source to the destination
(``LeaseManager.changeLease``), and a delete, a rename over a file or a concat drops the
leases of the files it removes (``FSNamesystem.removeLeasesAndINodes``), so the old path is
free for a new writer at once while the writer of a removed file fails at its close.

Client names are ``webhdfs-<kind>-<n>``: kind ``create``, ``append`` or ``truncate``, n a
per-process counter. An upload opens its file under its client name when it starts (AddFileOp
or AppendOp) and closes it at its end (CloseFileOp, ``namenode/http/upload.py``); a truncate
inside a block logs TruncateOp, AppendOp, CloseFileOp as one batch. ``upload_kind`` reads a
client name back, which is how startup lease recovery
(``namenode/blocks/lease_recovery.py``) knows an upload of ours that a stop cut off.

The table is keyed by path and follows the namespace's ops, with an injected clock and no
I/O: it lives with the namespace, as Hadoop's ``LeaseManager`` beside ``FSDirectory``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from nnlite.formats import edits
from nnlite.namenode import errors

log = logging.getLogger(__name__)

CREATE, APPEND, TRUNCATE = "create", "append", "truncate"
CLIENT_PREFIX = "webhdfs-"
SOFT_LIMIT = 60.0
HARD_LIMIT = 1200.0


def client_name(kind: str, number: int) -> str:
    return f"{CLIENT_PREFIX}{kind}-{number}"


def upload_kind(name: str | None) -> str | None:
    """CREATE, APPEND or TRUNCATE for one of our client names, else None."""
    if not name or not name.startswith(CLIENT_PREFIX):
        return None
    kind, _, number = name[len(CLIENT_PREFIX):].partition("-")
    return kind if kind in (CREATE, APPEND, TRUNCATE) and number.isdigit() else None


@dataclass(eq=False)
class Lease:
    path: str
    holder: str
    machine: str
    renewed: float
    on_revoke: Callable[[str], None] | None = None
    recording: bool = False         # the upload is being sealed and logged: not revocable
    revoked: str | None = None

    def check(self) -> None:
        if self.revoked is not None:
            raise errors.LeaseExpiredError(self.revoked, path=self.path)


class LeaseManager:
    """path -> Lease. The table is changed from the event loop (uploads) and from whichever
    thread applies a rename or delete (``follow``), so every change holds ``_lock``; a
    revoked holder's callback runs after it is released (it logs a close)."""

    def __init__(self, soft_limit: float = SOFT_LIMIT, hard_limit: float = HARD_LIMIT,
                 clock: Callable[[], float] = time.monotonic):
        self.soft_limit = soft_limit
        self.hard_limit = hard_limit
        self.clock = clock
        self.leases: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self.leases)

    def holder(self, path: str) -> Lease | None:
        return self.leases.get(path)

    def held_under(self, directory: str) -> list[Lease]:
        """Leases on files below ``directory`` whose holders still make progress."""
        prefix = directory.rstrip("/") + "/"
        with self._lock:
            held = [lease for path, lease in self.leases.items() if path.startswith(prefix)]
        return [lease for lease in held if not self._expired(lease)]

    def check_free(self, path: str, action: str, machine: str = "") -> None:
        """Raise LeaseError if a writer that still makes progress holds ``path``."""
        lease = self.leases.get(path)
        if lease is not None and not self._expired(lease):
            raise self._refusal(lease, action, "a new writer", machine)

    def admit_writer(self, path: str, action: str, machine: str,
                     check: Callable[[], object]) -> None:
        """The door for a new writer of ``path`` (a normalized path), whichever protocol
        (WebHDFS's CREATE/APPEND, RPC's create/append), as HDFS's ``startFileInternal`` and
        ``appendFile`` call ``FSNamesystem.recoverLeaseInternal`` before their checks: a
        holder silent past the soft limit is revoked first (its file closes with what it
        had), then ``check`` runs the namespace's checks; a holder that still makes progress
        is named in the refusal (AlreadyBeingCreatedException), also when ``check`` failed
        for the file being under construction."""
        lease = self.holder(path)
        if lease is not None and self.expired(lease):
            self.revoke(lease, f"Lease of {path} held by {lease.holder} expired after "
                               f"{self.soft_limit:g} s without progress; a new writer "
                               f"took over")
        try:
            check()
        except errors.LeaseError:
            self.check_free(path, action, machine)
            raise
        self.check_free(path, action, machine)

    def acquire(self, path: str, kind: str, machine: str = "",
                on_revoke: Callable[[str], None] | None = None) -> Lease:
        """A new lease on ``path`` for a new client of ``kind``; an expired holder is revoked."""
        name = client_name(kind, next(self._numbers))
        with self._lock:
            current = self.leases.get(path)
            if current is not None and not self._expired(current):
                raise self._refusal(current, kind, name, machine)
            lease = Lease(path, name, machine, self.clock(), on_revoke)
            self.leases[path] = lease
        if current is not None:
            self._revoked(current, f"Lease of {path} held by {current.holder} expired after "
                                   f"{self.soft_limit:g} s without progress; {name} took over")
        return lease

    def follow(self, ops: list[edits.Op]) -> None:
        """Keep the table on the files' paths as ``ops`` (one applied request) move and
        remove them; called under the namesystem lock, before the ops are logged."""
        if not self.leases:
            return
        for op in ops:
            if isinstance(op, (edits.RenameOp, edits.RenameOldOp)):
                with self._lock:
                    self._drop(op.dst)              # a file renamed over is deleted
                    moved = self._pop_under(op.src)
                    for suffix, lease in moved:
                        lease.path = op.dst + suffix
                        self.leases[lease.path] = lease
            elif isinstance(op, edits.DeleteOp):
                with self._lock:
                    self._drop(op.path)
            elif isinstance(op, edits.ConcatOp):
                with self._lock:
                    for src in op.srcs:
                        self._drop(src)

    def _pop_under(self, path: str) -> list[tuple[str, Lease]]:
        """Remove and return (suffix, lease) for ``path`` itself and every path below it."""
        prefix = path.rstrip("/") + "/"
        found = [(p[len(path):], lease) for p, lease in self.leases.items()
                 if p == path or p.startswith(prefix)]
        for suffix, _ in found:
            del self.leases[path + suffix]
        return found

    def _drop(self, path: str) -> None:
        for _, lease in self._pop_under(path):
            log.info("lease of %s held by %s dropped: the file was removed", lease.path,
                     lease.holder)

    def renew(self, lease: Lease) -> None:
        lease.renewed = self.clock()

    def release(self, lease: Lease) -> None:
        with self._lock:
            if self.leases.get(lease.path) is lease:
                del self.leases[lease.path]

    def revoke(self, lease: Lease, reason: str) -> None:
        self.release(lease)
        self._revoked(lease, reason)

    def _revoked(self, lease: Lease, reason: str) -> None:
        lease.revoked = reason
        log.warning("lease revoked: %s", reason)
        if lease.on_revoke is not None:
            lease.on_revoke(reason)

    def revoke_all(self, reason: str) -> int:
        """Revoke every lease (the namespace was reloaded, or this namenode stepped down: no
        upload under way may complete here); returns how many."""
        with self._lock:
            held = list(self.leases.values())
        for lease in held:
            self.revoke(lease, f"Lease of {lease.path} held by {lease.holder} revoked: {reason}")
        return len(held)

    def expire(self) -> int:
        """Revoke every lease silent past the hard limit; returns how many."""
        now = self.clock()
        with self._lock:
            held = list(self.leases.values())
        stale = [lease for lease in held
                 if not lease.recording and now - lease.renewed > self.hard_limit]
        for lease in stale:
            self.revoke(lease, f"Lease of {lease.path} held by {lease.holder} expired after "
                               f"{self.hard_limit:g} s without progress (hard limit)")
        return len(stale)

    def expired(self, lease: Lease) -> bool:
        """Silent past the soft limit: the next writer may take the lease over."""
        return self._expired(lease)

    def _expired(self, lease: Lease) -> bool:
        return not lease.recording and self.clock() - lease.renewed > self.soft_limit

    def _refusal(self, lease: Lease, action: str, client: str,
                 machine: str) -> errors.LeaseError:
        age = self.clock() - lease.renewed
        return errors.LeaseError(
            f"Failed to {action} {lease.path} for {client} on {machine or 'unknown'} because "
            f"this file lease is currently owned by {lease.holder} on "
            f"{lease.machine or 'unknown'} (last progress {age:.1f} s ago; another writer "
            f"may take over after {self.soft_limit:g} s without progress)", path=lease.path)

