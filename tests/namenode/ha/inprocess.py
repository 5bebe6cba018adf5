"""In-process HA namenodes for the tests of the controller's parts (tailer, health, positions,
takeover, and the loop that composes them): namesystems on name dirs of one namespace and
``HAController``s on a real etcd member, driven step by step (``_follow``; no threads).

The fixtures ``etcd`` (a client of ``etcd_single``), ``dirs`` (two name dirs, one formatted
and its copy) and ``open_namesystem`` (a namesystem on a name dir, closed after the test) are
in this folder's ``conftest.py``.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from pathlib import Path

from nnlite.client.etcd.client import Etcd
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.controller import HAController
from nnlite.namenode.ha.quorum_journal import Layout
from nnlite.namenode.ha.state import HAServiceState
from tests.namenode.ha.haset import diverged, local_records, shared_records

USER = getpass.getuser()
LAYOUT = Layout.of("/nnlite", "ns1")


def controller(fs: FSNamesystem, etcd: Etcd, nnid: str,
               on_active: Callable[[int], None] = lambda first_block_id: None) -> HAController:
    return HAController(fs, etcd, LAYOUT, nnid, f"127.0.0.1:{hash(nnid) % 1000 + 1}", ttl=5,
                        tail_interval=0.05, journal_timeout=1.0, edits_retained=0,
                        drain=lambda exc: None, on_active=on_active, max_lag=30)


def lead(fs: FSNamesystem, etcd: Etcd, nnid: str,
         on_active: Callable[[int], None] = lambda first_block_id: None) -> HAController:
    ha = controller(fs, etcd, nnid, on_active)
    ha._follow()                   # no leader: it campaigns and takes over
    assert ha.state.state is HAServiceState.ACTIVE
    return ha


def mkdir(fs: FSNamesystem, path: str) -> int:
    logged = fs.mkdirs(path, 0o755, USER)
    fs.durable(logged)
    return logged.txid


def exists(fs: FSNamesystem, path: str) -> bool:
    """Whether the tree holds ``path`` (read past the HA state's check: a standby's too)."""
    with fs.lock:
        return fs.ns.tree.lookup(tuple(path.strip("/").split("/"))) is not None


def assert_prefix_of_the_journal(root: Path, endpoints: list[str]) -> None:
    """The name dir's edits are a prefix of the shared journal (haset.py's ``diverged``)."""
    assert diverged(local_records(str(root)), shared_records(endpoints)) == []
