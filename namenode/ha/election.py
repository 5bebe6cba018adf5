"""The leader election of an HA set, on an etcd lease.

A candidate grants itself a lease of ``ttl`` seconds and puts the ``leader`` key bound to it
in one transaction that succeeds only if the key does not exist (``create_revision == 0``):
at most one namenode holds it. The key's create revision is the winner's *epoch*, which
guards each of its journal writes (``quorum_journal.py``). The winner renews the lease
(``keep_alive``) a few times per TTL; if it stops -- killed, hung, cut off from etcd's
quorum -- etcd deletes the key when the lease expires and a standby's next campaign wins.
A leader that resigns (a clean stop) revokes its lease, so the key goes at once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from nnlite.client.etcd.client import Etcd
from nnlite.client.etcd.messages import Compare, KeyValue, Op
from nnlite.namenode.ha.quorum_journal import Layout, parse_leader

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Leadership:
    epoch: int
    lease: int
    ttl: int


class Election:
    def __init__(self, etcd: Etcd, layout: Layout, value: bytes, ttl: int):
        self.etcd = etcd
        self.layout = layout
        self.value = value
        self.ttl = ttl
        self.held: Leadership | None = None
        self.renewed = 0.0     # monotonic time of the last renewal etcd confirmed

    def leader(self) -> KeyValue | None:
        return self.etcd.get(self.layout.leader)

    def leader_info(self) -> dict | None:
        kv = self.leader()
        return None if kv is None else {**parse_leader(kv.value), "epoch": kv.create_revision}

    def campaign(self) -> Leadership | None:
        """Take the leader key if nobody holds it; the leadership, or None."""
        lease = self.etcd.grant_lease(self.ttl)
        granted = time.monotonic()
        key = self.layout.leader
        result = self.etcd.txn([Compare.create_revision(key) == 0],
                               [Op.put(key, self.value, lease=lease.id)])
        if not result.succeeded:
            self.etcd.revoke_lease(lease.id)
            return None
        self.held = Leadership(result.revision, lease.id, lease.ttl)
        self.renewed = granted
        log.info("won the election: epoch %d, lease %x of %d s", result.revision, lease.id,
                 lease.ttl)
        return self.held

    def keep_alive(self) -> bool:
        """Renew the lease; False when it is gone (expired: the leadership is lost)."""
        if self.held is None:
            return False
        sent = time.monotonic()
        if self.etcd.keep_alive(self.held.lease) <= 0:
            self.held = None
            return False
        self.renewed = sent
        return True

    def expires_in(self) -> float:
        """Seconds until the lease surely expires unless renewed (by this process's clock,
        from when the last confirmed renewal was sent)."""
        if self.held is None:
            return 0.0
        return self.renewed + self.held.ttl - time.monotonic()

    def resign(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            self.etcd.revoke_lease(held.lease)
