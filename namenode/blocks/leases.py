"""Leases: a file being written belongs to its writer, and startup recovery of cut-off uploads.

The lease table lives in memory: path -> ``Lease`` (holder, its machine, last progress). An
upload takes the lease of its path before its first byte and gives it back once its blocks
are recorded or dropped; TRUNCATE holds it while it copies. Anyone else who wants to write
the path (CREATE, APPEND, TRUNCATE, CONCAT) gets ``AlreadyBeingCreatedException`` while the
holder makes progress. A holder silent for the soft limit (``nnlite.lease.soft-limit``, 60 s)
loses the lease to the next writer: its upload is revoked (its blocks are deleted, its later
bytes ignored, its end answered with ``LeaseExpiredException``). A holder silent for the hard
limit (``dfs.namenode.lease-hard-limit-sec``, 1200 s) is revoked by housekeeping even when
nobody waits. A lease whose upload is being recorded cannot be revoked.

Client names are ``webhdfs-<kind>-<n>``: kind ``create``, ``append`` or ``truncate``, n a
per-process counter. An upload opens its file under its client name when it starts (AddFileOp
or AppendOp) and closes it at its end (CloseFileOp, upload.py); a truncate inside a block logs
TruncateOp, AppendOp, CloseFileOp as one batch. So a file still under construction by one of
them after startup was being written when the namenode stopped: nothing of it was
acknowledged. ``recover_uploads`` runs after loading and closes each such file with the
blocks it has (a create: empty; an append: its content before; a truncate: after it), as
HDFS's lease recovery completes a file whose writer is gone. Files under construction by
other clients are left alone and logged.
"""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass
from typing import Callable

from nnlite.namenode import errors
from nnlite.namenode.namespace.inode import walk

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
    def __init__(self, soft_limit: float = SOFT_LIMIT, hard_limit: float = HARD_LIMIT,
                 clock: Callable[[], float] = time.monotonic):
        self.soft_limit = soft_limit
        self.hard_limit = hard_limit
        self.clock = clock
        self.leases: dict[str, Lease] = {}
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self.leases)

    def holder(self, path: str) -> Lease | None:
        return self.leases.get(path)

    def held_under(self, directory: str) -> list[Lease]:
        """Leases on files below ``directory`` whose holders still make progress."""
        prefix = directory.rstrip("/") + "/"
        return [lease for path, lease in self.leases.items()
                if path.startswith(prefix) and not self._expired(lease)]

    def check_free(self, path: str, action: str, machine: str = "") -> None:
        """Raise LeaseError if a writer that still makes progress holds ``path``."""
        lease = self.leases.get(path)
        if lease is not None and not self._expired(lease):
            raise self._refusal(lease, action, "a new writer", machine)

    def acquire(self, path: str, kind: str, machine: str = "",
                on_revoke: Callable[[str], None] | None = None) -> Lease:
        """A new lease on ``path`` for a new client of ``kind``; an expired holder is revoked."""
        name = client_name(kind, next(self._numbers))
        current = self.leases.get(path)
        if current is not None:
            if not self._expired(current):
                raise self._refusal(current, kind, name, machine)
            self.revoke(current, f"Lease of {path} held by {current.holder} expired after "
                                 f"{self.soft_limit:g} s without progress; {name} took over")
        lease = Lease(path, name, machine, self.clock(), on_revoke)
        self.leases[path] = lease
        return lease

    def renew(self, lease: Lease) -> None:
        lease.renewed = self.clock()

    def release(self, lease: Lease) -> None:
        if self.leases.get(lease.path) is lease:
            del self.leases[lease.path]

    def revoke(self, lease: Lease, reason: str) -> None:
        lease.revoked = reason
        self.release(lease)
        log.warning("lease revoked: %s", reason)
        if lease.on_revoke is not None:
            lease.on_revoke(reason)

    def expire(self) -> int:
        """Revoke every lease silent past the hard limit; returns how many."""
        now = self.clock()
        stale = [lease for lease in self.leases.values()
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


def recover_uploads(fs) -> list[tuple[str, str]]:
    """Startup lease recovery (see the module docstring): ``(path, action)`` per file."""
    with fs.lock:
        torn = [(node.path(), node.id, node.client_name) for node in walk(fs.ns.root)
                if not node.is_dir and node.client_name is not None]
    done = []
    for path, inode_id, holder in torn:
        kind = upload_kind(holder)
        if kind is None:
            log.warning("%s is under construction by %s, not one of ours: left as it is",
                        path, holder)
            continue
        fs._mutate(fs.ns.recover_upload, path, inode_id)
        action = "closed with the blocks it has"
        log.warning("lease recovery: %s (%s by %s, cut off) %s", path, kind, holder, action)
        done.append((path, action))
    return done
