"""Flink's exactly-once file sink writing into nnlite over ``hdfs://``: the job of
``examples/flink_count.py`` with ``--files`` also writes every ``v`` into part files through
Flink's ``RecoverableWriter`` for Hadoop (``HadoopRecoverableWriter``, offered for the
``hdfs`` scheme only). Killed with SIGKILL mid-run and restored from the checkpoint the
catalog names, it ends with committed files that hold each ``v`` exactly once.

What Flink does with the files (``FileWriter``/``Bucket`` over the recoverable writer), and
so what the test checks: a part file is written as ``.part-<id>.inprogress.<uuid>`` and
renamed to ``part-<id>`` when the checkpoint after its roll completes
(``HadoopFsCommitter.commit``); a restore commits the pending files its checkpoint names
(``commitAfterRecovery``) and resumes its in-progress file where the checkpoint left it
(``HadoopRecoverableFsDataOutputStream``: ``recoverLease``, ``isFileClosed``, ``truncate``,
``append`` -- nnlite's lease recovery keeps the killed writer's last block, the datanode's
``recover``). In-progress files of the killed run that no checkpoint names stay behind,
hidden (a dot name), as Flink leaves them on HDFS."""

from __future__ import annotations

import json
import re

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client.errors import PathNotFoundError
from nnlite.client.webhdfs import WebHdfsClient
from tests.flink.test_flink_checkpoints import CATCH_UP
from tests.servers import HDFS_LEASES, wait_for

pytestmark = pytest.mark.flink

ROWS = 9000
OUT = "/flink/out"
IN_PROGRESS = re.compile(r"^\.(part-[^.]+)\.inprogress\.[0-9a-f-]+$")


def part_files(hdfs: WebHdfsClient) -> tuple[set[str], set[str]]:
    """The committed part files of ``OUT`` and its other (hidden) files, by name."""
    try:
        names = {s["pathSuffix"] for s in hdfs.list(OUT)}
    except PathNotFoundError:
        return set(), set()
    return {n for n in names if not n.startswith(".")}, {n for n in names if n.startswith(".")}


def values(hdfs: WebHdfsClient, names: set[str]) -> list[int]:
    """The ``v`` of every JSON line of the files ``names``."""
    out: list[int] = []
    for name in names:
        text = b"".join(hdfs.read(f"{OUT}/{name}")).decode()
        out += [json.loads(line)["v"] for line in text.splitlines() if line]
    return out


def test_the_exactly_once_file_sink_restores_after_a_kill(start_namenode, run_job):
    # the killed job's open files recovered by the namenode within seconds (its lease's hard
    # limit, as HDFS's LeaseManager), so the test can settle; Flink's restore then finds them
    # closed with the killed writer's bytes, as after its own recoverLease
    namenode = start_namenode(*HDFS_LEASES)
    base = namenode.hdfs
    common = [f"{base}/flink/ckpt", "--backend", "hashmap", "--rows", str(ROWS),
              "--rate", "300", "--files", f"{base}{OUT}"]
    first = run_job(*common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    with CatalogClient(namenode.url, "root") as catalog, \
            WebHdfsClient(namenode.url, "root") as hdfs:
        # killed once files were committed and others are being written
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 3
                 and all(part_files(hdfs)), 300, "committed and in-progress part files", 0.3)
        first.kill()
        first.settle(namenode)
        committed, hidden = part_files(hdfs)
        assert all(IN_PROGRESS.match(n) for n in hidden), hidden
        interrupted = {IN_PROGRESS.match(n).group(1) for n in hidden} - committed
        killed_with = values(hdfs, committed)
        assert len(killed_with) == len(set(killed_with)) < ROWS
        restore = base + catalog.latest("/flink/ckpt")["latest"]["path"]

    second = run_job(*common, *CATCH_UP, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    assert second.wait_for("finished")
    with WebHdfsClient(namenode.url, "root") as hdfs:
        final, leftovers = part_files(hdfs)
        assert committed <= final                       # a commit is never taken back
        assert sorted(values(hdfs, final)) == list(range(1, ROWS + 1))
    # the restore resumed an in-progress file of the checkpoint and committed it
    assert interrupted & final, (interrupted, final)
    assert all(IN_PROGRESS.match(n) for n in leftovers), leftovers
