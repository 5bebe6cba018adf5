"""A stateful Structured Streaming query checkpointing into an HA set through Hadoop's own
WebHDFS client, configured as a user configures it -- the nameservice, its namenodes'
``dfs.namenode.http-address`` (what ``WebHdfsFileSystem`` reads for a logical URI:
``DFSUtilClient.getHaNnWebHdfsAddresses``) and the failover proxy provider, every retry
setting at Hadoop's default -- keeps running while the active namenode is SIGKILLed three
times, and its every batch is exactly the uninterrupted run's (the same query on one plain
namenode) and the result computed in Python. The same over ``hdfs://ns1`` through Hadoop's
``DistributedFileSystem`` (``dfs.namenode.rpc-address`` instead of the http-address): its
files take HDFS's pipeline through the active's and a standby's datanodes.

The failovers: one between two batches (the next batch's first call meets a dead active), one
inside a batch before its state-store deltas are written (the tasks write them while there is
no active), one inside a batch after its output and before its commit log. The killed namenode
rejoins as a standby after each. Then the catalog's verdict on the checkpoint is checked
against Spark's own restart (as tests/catalog/test_spark_catalog.py does): the catalog's
latest batch is where the restarted query resumes, with the exact result -- which needs every
checkpoint file's bytes on whichever namenode is active at the end (the blocks replicated to
the standby before each close is acknowledged, and copied to a restarted one by the resync).

The kills come when none of Spark's calls is on the wire. A kill during a call can fail the
query: Hadoop's client never retries the data step of a CREATE (``runWithRetry``:
``checkRetry = !redirected``), which runs on the killed active itself; and it resends a RENAME
whose answer was lost (``FailoverOnNetworkExceptionRetry`` fails over on any socket error, and
WebHDFS calls every op idempotent), which the new active refuses, its source gone (HDFS answers
a resent RPC from its retry cache; a WebHDFS call carries no call id to find it by). Spark in
local mode does not retry the failed task.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nnlite.catalog.client import CatalogClient
from tests.catalog.conformance import OPERATORS, Query, feed
from tests.namenode.ha.haset import NAMESERVICE, USER, HASet
from tests.servers import NamenodeProcess, wait_for
from tests.spark import batch_ids

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.crash]

PROVIDER = "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"
AGGREGATION = OPERATORS["aggregation"]
CHECKPOINT = "/ckpt/q1"
BATCHES = 8
Rows = list[tuple]


def ha_client_settings(ha: HASet, scheme: str) -> dict[str, str]:
    """What a user puts in hdfs-site.xml for ``<scheme>://ns1``, and nothing else."""
    if scheme == "webhdfs":
        addresses = {f"dfs.namenode.http-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
                     for nn, port in zip(ha.ids, ha.ports, strict=True)}
    else:
        addresses = {
            **{f"dfs.namenode.rpc-address.{NAMESERVICE}.{nn}": f"127.0.0.1:{port}"
               for nn, port in zip(ha.ids, ha.rpc_ports, strict=True)},
            # Not dfs.client.block.write.replace-datanode-on-failure.best-effort: README,
            # "High availability", asks for it when a standby is lost in the middle of a block
            # (for replication 3, the default Spark's files take, the client first asks for a
            # datanode in the lost one's place, which a set of two has not). Here no kill
            # comes while a file is open, so no pipeline loses a datanode mid-block; a new
            # active may still name the killed one's datanode for a moment, and the client
            # leaves it out when it opens the pipeline (abandonBlock, addBlock excluding it).
            # Without the key such a loss would fail the query rather than pass unseen.
        }
    return {
        "dfs.nameservices": NAMESERVICE,
        f"dfs.ha.namenodes.{NAMESERVICE}": ",".join(ha.ids),
        **addresses,
        f"dfs.client.failover.proxy.provider.{NAMESERVICE}": PROVIDER,
    }


@contextmanager
def hadoop_conf(spark: SparkSession, settings: dict[str, str],
                scheme: str = "webhdfs") -> Iterator[None]:
    """``settings`` in the session's Hadoop configuration (which every query started meanwhile
    copies), then the old values back and the cached ``<scheme>://ns1`` FileSystem closed, so
    that no later test gets one bound to this test's ports."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    old = {key: conf.get(key) for key in settings}
    for key, value in settings.items():
        conf.set(key, value)
    try:
        yield
    finally:
        jvm = spark.sparkContext._jvm
        uri = jvm.java.net.URI.create(f"{scheme}://{NAMESERVICE}/")
        jvm.org.apache.hadoop.fs.FileSystem.get(uri, conf).close()
        for key, value in old.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)


class Driven(Query):
    """The conformance matrix's aggregation, run a batch at a time; ``hooks[(batch, when)]``
    runs inside batch ``batch``'s foreachBatch, ``"before"`` its output is computed (and its
    state-store deltas written) or ``"after"`` (before its commit log)."""

    def __init__(self, spark: SparkSession, src: Path, checkpoint: str,
                 hooks: dict[tuple[int, str], Callable[[], None]] | None = None):
        self.hooks = hooks or {}
        super().__init__(spark, AGGREGATION, src, checkpoint)

    def _record(self, df: DataFrame, batch_id: int) -> None:
        self.hooks.get((batch_id, "before"), lambda: None)()
        self.batches[batch_id] = sorted(tuple(r) for r in df.collect())
        self.hooks.get((batch_id, "after"), lambda: None)()

    def step(self, src: Path, index: int) -> list[tuple[str, int]]:
        """Input file ``index``, and the batch that reads it."""
        rows = feed(src, index)
        self.query.processAllAvailable()
        return rows


@dataclass
class Failover:
    """One SIGKILL of the active and what followed, timed by the test's clock."""
    where: str
    killed: int
    killed_at: float
    active: int | None = None
    active_after: float | None = None
    watcher: threading.Thread | None = field(default=None, repr=False)

    def __str__(self) -> str:
        if self.active is None or self.active_after is None:
            return f"{self.where}: nn{self.killed + 1} killed, no active since"
        return (f"{self.where}: nn{self.killed + 1} killed, nn{self.active + 1} active "
                f"{self.active_after:.2f} s later")


class Killer:
    """SIGKILLs the active of ``ha`` on request, watches for the next active, and brings the
    killed namenode back as a standby once the batch under way is done (``rejoin``)."""

    def __init__(self, ha: HASet):
        self.ha = ha
        self.failovers: list[Failover] = []

    def kill_active(self, where: str) -> None:
        old = self.ha.active()
        replicated(self.ha, old)
        self.ha.kill(old)
        failover = Failover(where, old, time.monotonic())
        failover.watcher = threading.Thread(target=self._watch, args=(failover,), daemon=True)
        failover.watcher.start()
        self.failovers.append(failover)

    def _watch(self, failover: Failover) -> None:
        failover.active = self.ha.active(timeout=60, excluding=failover.killed)
        failover.active_after = time.monotonic() - failover.killed_at

    def rejoin(self) -> None:
        """The last killed namenode restarted, following the new active's journal and
        holding its blocks again."""
        failover = self.failovers[-1]
        assert failover.watcher is not None
        failover.watcher.join(timeout=60)
        new = failover.active
        assert new is not None and new != failover.killed
        self.ha.start(failover.killed)
        wait_for(lambda: self.ha.synced_txid(failover.killed) >= self.ha.synced_txid(new), 60,
                 "the restarted namenode to follow the new active")
        assert not self.ha.is_active(failover.killed)
        replicated(self.ha, new)


def replicated(ha: HASet, active: int) -> None:
    """Wait until the active counts no block without a copy on a standby (HDFS's
    ``UnderReplicatedBlocks``; a namenode that does not replicate reports none): killing the
    only holder of a block loses it on any file system."""
    def count() -> int:
        return int(ha.jmx(active).get("UnderReplicatedBlocks", 0))
    try:
        wait_for(lambda: count() == 0, 60, "the active's blocks to be on a standby too")
    except TimeoutError as exc:
        raise AssertionError(f"{exc}: nn{active + 1}'s UnderReplicatedBlocks is still "
                             f"{count()}") from exc


def uninterrupted(spark: SparkSession, namenode: NamenodeProcess, src: Path,
                  scheme: str) -> dict[int, Rows]:
    """Every batch of the query over files 0..BATCHES-1 on one plain namenode."""
    src.mkdir()
    port = namenode.port if scheme == "webhdfs" else namenode.rpc_port
    query = Driven(spark, src, f"{scheme}://127.0.0.1:{port}{CHECKPOINT}")
    try:
        for i in range(BATCHES):
            query.step(src, i)
    finally:
        query.query.stop()
    return query.batches


def merged(*runs: dict[int, Rows]) -> dict:
    return AGGREGATION.merge(run[b] for run in runs for b in sorted(run))


@pytest.mark.parametrize("scheme", ["webhdfs", "hdfs"])
def test_a_stateful_query_runs_through_three_failovers_with_hadoops_own_client(
        spark: SparkSession, haset: HASet, namenode: NamenodeProcess,
        tmp_path: Path, scheme: str) -> None:
    want = uninterrupted(spark, namenode, tmp_path / "plain-in", scheme)
    haset.start_all()
    killer = Killer(haset)
    src = tmp_path / "in"
    src.mkdir()
    uri = f"{scheme}://{NAMESERVICE}{CHECKPOINT}"
    with hadoop_conf(spark, ha_client_settings(haset, scheme), scheme):
        query = Driven(spark, src, uri, {
            (4, "before"): lambda: killer.kill_active("in batch 4, before its state writes"),
            (6, "after"): lambda: killer.kill_active("in batch 6, before its commit log")})
        files = []
        try:
            for i in range(BATCHES):
                failovers = len(killer.failovers)
                if i == 2:
                    killer.kill_active("between batches 1 and 2")
                files.append(query.step(src, i))
                if len(killer.failovers) > failovers:
                    killer.rejoin()
        finally:
            query.query.stop()
        assert query.query.exception() is None
        print(*killer.failovers, sep="\n")
        assert [f.where for f in killer.failovers] == [
            "between batches 1 and 2", "in batch 4, before its state writes",
            "in batch 6, before its commit log"]
        assert query.batches == want                     # batch for batch, the plain run's
        assert merged(query.batches) == AGGREGATION.expected(files)
        active = haset.active()
        assert batch_ids(haset.url(active), f"{CHECKPOINT}/offsets") == list(range(BATCHES))
        assert batch_ids(haset.url(active), f"{CHECKPOINT}/commits") == list(range(BATCHES))

        # The catalog's verdict, then Spark's own restart from the checkpoint.
        with CatalogClient(haset.url(active), USER) as catalog:
            report = catalog.validate(CHECKPOINT)
            assert report["restorable"], "\n".join(i["message"] for i in report["issues"])
            latest = catalog.latest(CHECKPOINT)["latest"]
        assert report["restorableBatch"] == latest == BATCHES - 1
        files.append(feed(src, BATCHES))
        again = Driven(spark, src, uri)
        again.run()
    assert min(again.batches) == latest + 1              # resumed where the catalog said
    assert merged(query.batches, again.batches) == AGGREGATION.expected(files)
