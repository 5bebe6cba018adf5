"""StandbyPositions: where each standby stands, published in etcd (``standbys/<id>``) and read
by the active, as HDFS's datanodes' heartbeats tell the ``DatanodeManager`` which are live.

A standby publishes, about once a second, its last applied txid, the worst lag of that second
(``EditLogTailer.take_lag``), its HTTP address, its datanode (``DatanodeID``'s fields: host,
xferPort, ipcPort, infoPort, uuid; None when none runs) and whether it is healthy. The active
reads them at most once a second (its loop calls ``read`` each round, so the cache stays warm)
for its report, its lag figures and the datanodes of new pipelines (``datanodes``): a
position older than ``STALE_POSITION`` names no datanode, as ``DatanodeManager`` leaves a
datanode whose heartbeat is older than ``dfs.namenode.stale.datanode.interval`` out of new
pipelines. Taking over, a namenode withdraws its own position (``leave``).
"""

from __future__ import annotations

import json
import time

from nnlite.client.errors import EtcdError
from nnlite.client.etcd.client import Etcd
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.quorum_journal import Layout
from nnlite.namenode.ha.state import HAServiceState, HAState
from nnlite.namenode.ha.tailer import EditLogTailer

# a standby position older than this (seconds) names no datanode for new blocks; a standby
# publishes it about once a second
STALE_POSITION = 5.0
ACTIVE = HAServiceState.ACTIVE


class StandbyPositions:
    def __init__(self, fs: FSNamesystem, etcd: Etcd, layout: Layout, state: HAState,
                 namenode_id: str, http: str):
        self.fs = fs
        self.etcd = etcd
        self.layout = layout
        self.state = state
        self.id = namenode_id
        self.http = http
        # this namenode's datanode as the others name it (``DatanodeID``'s fields: host,
        # xferPort, ipcPort, infoPort, uuid), published with its position; None: none runs
        self.datanode: dict | None = None
        self.stale = STALE_POSITION
        self.published = 0.0
        self._positions: dict = {}
        self._positions_read = 0.0

    def publish(self, tailer: EditLogTailer, *, healthy: bool) -> None:
        """Put this standby's position where the active reads its lag, about once a
        second: its txid, and the worst lag of that second -- the most txids it saw
        committed and not yet applied, and the longest time from seeing a committed txid
        it lacked to having applied it -- with its health and its datanode."""
        now = time.monotonic()
        if now - self.published < 1.0:
            return
        self.published = now
        lag_txns, lag = tailer.take_lag()
        value = json.dumps({"txid": self.fs.last_synced_txid, "lagTxns": lag_txns,
                            "lagMs": int(lag * 1000), "http": self.http,
                            "at": time.time(), "datanode": self.datanode,
                            "healthy": healthy}).encode()
        self.etcd.put(self.layout.standbys + self.id.encode(), value)

    def read(self) -> dict:
        """The active's view of each standby: its txid, how many txids and how long it is
        behind, and how old that report is (``ageMs``: by the wall clocks of both, which an
        HA set keeps in step as etcd's leases assume). Reads etcd at most once a second:
        the active's loop calls it each round, so the cache stays warm for ``datanodes``."""
        if self.state.state is not ACTIVE:
            return {}
        now = time.monotonic()
        if now - self._positions_read < 1.0:
            return self._positions
        self._positions_read = now
        committed = self.fs.last_synced_txid
        positions = {}
        try:
            for kv in self.etcd.range(self.layout.standbys, prefix=True).kvs:
                name = kv.key[len(self.layout.standbys):].decode()
                if name == self.id:
                    continue
                doc = json.loads(kv.value)
                positions[name] = {"txid": doc["txid"], "lagTxns": int(doc["lagTxns"]),
                                   "lagMs": int(doc["lagMs"]),
                                   "behindNow": max(0, committed - int(doc["txid"])),
                                   "ageMs": int((time.time() - doc.get("at", 0)) * 1000),
                                   "datanode": doc.get("datanode"),
                                   "healthy": bool(doc.get("healthy", True))}
        except (EtcdError, ValueError, KeyError):
            return self._positions
        self._positions = positions
        return positions

    def datanodes(self) -> list[dict]:
        """The datanodes of the standbys whose position is fresh (younger than
        ``STALE_POSITION`` seconds when last read), in the set's order of ids; no etcd
        call (the cache ``read`` keeps)."""
        positions = self._positions if self.state.state is ACTIVE else {}
        return [p["datanode"] for _, p in sorted(positions.items())
                if p.get("datanode") and p["ageMs"] < self.stale * 1000]

    def leave(self) -> None:
        """This namenode is no longer a standby: its position goes, so that once it dies no
        active names its datanode in a pipeline while that position would still look fresh
        (``STALE_POSITION``); and the positions of the others are read afresh, not from the
        cache of an earlier time as the active."""
        self.etcd.delete(self.layout.standbys + self.id.encode())
        self._positions, self._positions_read = {}, 0.0
