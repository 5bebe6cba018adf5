"""Shared fixtures. One SparkSession serves the whole session: starting a JVM costs seconds."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.etcd_cluster import EtcdCluster


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


@pytest.fixture
def namenode(tmp_path):
    """A real namenode process on a free loopback port, stopped after the test. The test
    user "tester" is a member of the supergroup; everyone else gets the permission model."""
    from tests.servers import NamenodeProcess
    server = NamenodeProcess.start(
        [str(tmp_path / "name")],
        "-D", "hadoop.user.group.static.mapping.overrides=tester=supergroup;alice=staff")
    try:
        yield server
    finally:
        server.stop()


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
