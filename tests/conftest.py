"""Shared fixtures. One SparkSession serves the whole session: starting a JVM costs seconds.
Every test that needs a namenode process gets it from ``namenode``, ``module_namenode`` or their
factories ``start_namenode`` / ``start_module_namenode`` (options, seeded files, restarts on
the same name dirs), which stop whatever they started."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.etcd_cluster import EtcdCluster


# The fixtures that start a JVM or etcd members; `make test-fast` deselects what uses them.
JVM_FIXTURES = {"spark"}
ETCD_FIXTURES = {"etcd_cluster", "etcd_single"}


def pytest_collection_modifyitems(items):
    """Mark every test by what it starts, whichever fixture brings it in: ``spark`` (a JVM)
    and ``etcd`` (real etcd members), so `make test-fast` (``-m "not spark and not flink and
    not etcd"``) runs the rest."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & JVM_FIXTURES and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)
        if used & ETCD_FIXTURES and not item.get_closest_marker("etcd"):
            item.add_marker(pytest.mark.etcd)


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # lazily: most tests never start a JVM

    # Python workers (UDFs, RDD code) must run this interpreter, not whatever "python3" is.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("nnlite-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


def _namenodes(root: Path):
    from tests.servers import Namenodes  # lazily: most tests start no namenode
    namenodes = Namenodes(root)
    try:
        yield namenodes.start
    finally:
        namenodes.stop()


@pytest.fixture
def start_namenode(tmp_path):
    """``start_namenode(*args, files=, dirs=, name_dirs=, users=, env=)``: a real namenode
    process on a free loopback port (tests/servers.py, ``Namenodes.start``), each one it
    started stopped after the test; the first fresh name dir is ``tmp_path / "name"``."""
    yield from _namenodes(tmp_path)


@pytest.fixture(scope="module")
def start_module_namenode(tmp_path_factory):
    """``start_namenode`` for namenodes a module's tests share, stopped after the module."""
    yield from _namenodes(tmp_path_factory.mktemp("nn"))


@pytest.fixture
def namenode(start_namenode):
    """A real namenode process, stopped after the test. The test user "tester" is a member of
    the supergroup and "alice" of "staff"; everyone else gets the permission model."""
    return start_namenode()


@pytest.fixture(scope="module")
def module_namenode(start_module_namenode):
    """One such namenode for a module's tests that share it, stopped after the module."""
    return start_module_namenode()


def _etcd(tmp_path: Path, members: int) -> Iterator["EtcdCluster"]:
    """A real etcd cluster of ``members`` on free loopback ports, killed after the test;
    skipped, saying how to install it, only when there is no ``etcd`` binary."""
    from tests.etcd_cluster import INSTALL, EtcdCluster, etcd_binary
    if etcd_binary() is None:
        pytest.skip(INSTALL)
    cluster = EtcdCluster(tmp_path / "etcd", members)
    try:
        yield cluster.start()
    finally:
        cluster.close()


@pytest.fixture
def etcd_cluster(tmp_path: Path) -> Iterator["EtcdCluster"]:
    """Three etcd members (tests/etcd_cluster.py): failover and quorum."""
    yield from _etcd(tmp_path, 3)


@pytest.fixture
def etcd_single(tmp_path: Path) -> Iterator["EtcdCluster"]:
    """One etcd member (tests/etcd_cluster.py)."""
    yield from _etcd(tmp_path, 1)


@pytest.fixture
def haset(tmp_path, etcd_cluster):
    """Two namenodes of HA set ns1 on a three-member etcd cluster
    (tests/namenode/ha/haset.py), not started yet; every one started is killed after."""
    from tests.namenode.ha.haset import HASet
    ha = HASet(tmp_path, etcd_cluster)
    try:
        yield ha
    finally:
        ha.close()


@pytest.fixture(scope="session")
def kdc(tmp_path_factory):
    """A real MIT Kerberos realm (tests/kerberos_realm.py) for the session, on a free loopback
    port; skipped, saying how to install it, only when MIT Kerberos or gssapi is missing."""
    from tests.kerberos_realm import Realm, available
    missing = available()
    if missing:
        pytest.skip(missing)
    realm = Realm.start(tmp_path_factory.mktemp("kdc"))
    try:
        yield realm
    finally:
        realm.stop()
