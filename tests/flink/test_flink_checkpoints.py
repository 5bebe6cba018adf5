"""Real PyFlink jobs checkpoint into nnlite over ``webhdfs://`` with no plug-in of ours; the
catalog reads what they leave; the job killed with SIGKILL is restored from the path the
catalog names, and its state and output come out exactly right.

The job (``jobs/keyed_count.py``) counts and sums ``v % 10`` over ``v = 1..ROWS`` with its
state (the source's position and the aggregates) in the checkpoint; a run restored from any
complete checkpoint ends with exactly ``ROWS / 10`` per key and the matching sums, having
inserted no key afresh, or the restore was wrong."""

from __future__ import annotations

import re

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats import flink_metadata
from tests.servers import wait_for

pytestmark = pytest.mark.flink

ROWS, KEYS = 12_000, 10


ROW = re.compile(r"^(?:\S+> )?([+-][IUD])\[(-?\d+), (\d+), (\d+)\]$")


def changelog(job) -> list[tuple[str, int, int, int]]:
    """The job's result rows, as Flink's print sink wrote them."""
    rows = []
    for line in job.output().splitlines():
        match = ROW.match(line.strip())
        if match:
            rows.append((match.group(1), *map(int, match.group(2, 3, 4))))
    return rows


def check_restored_exactly(job) -> None:
    """The restored run ends with exactly the uninterrupted result, and it did restore: no
    key is new to it (a fresh start inserts each key first) and it read fewer rows than all
    (its source resumed where the checkpoint left it)."""
    rows = changelog(job)
    final = {k: (c, total) for kind, k, c, total in rows if kind in ("+I", "+U")}
    assert final == EXPECTED
    assert not [r for r in rows if r[0] == "+I"], "the job started afresh instead of restoring"
    assert len([r for r in rows if r[0] == "+U"]) < ROWS


EXPECTED = {k: (ROWS // KEYS, sum(v for v in range(1, ROWS + 1) if v % KEYS == k))
            for k in range(KEYS)}


@pytest.mark.parametrize("backend, incremental, restore_from", [
    ("hashmap", False, "savepoint"),
    ("rocksdb", True, "checkpoint"),
])
def test_a_killed_job_restores_from_what_the_catalog_names(
        namenode, run_job, tmp_path, backend, incremental, restore_from):
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = ["--checkpoints", f"{web}/flink/ckpt", "--savepoints", f"{web}/flink/sp",
              "--backend", backend, "--rows", str(ROWS), "--rate", "300", "--keys", str(KEYS),
              *(["--incremental"] if incremental else [])]
    first = run_job("keyed_count.py", *common, "--savepoint-after", "3")
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    savepoint = first.wait_for("savepoint")["path"]
    with CatalogClient(namenode.url, "root") as catalog:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 3, 120, "3 checkpoints", 0.3)
        first.kill()                                    # SIGKILL: the JVM and Python alike

        listed = {row["path"]: row["kind"] for row in catalog.ls("/flink")}
        assert listed[job_dir] == "flink"
        assert [k for p, k in listed.items() if p.startswith("/flink/sp/")] == ["savepoint"]
        shown = catalog.show(job_dir)
        complete = [c for c in shown["checkpoints"] if c["complete"]]
        assert complete and all(c["restorable"] for c in complete), shown
        if incremental:
            assert shown["sharedFiles"] > 0             # RocksDB's files shared across chk-n
        assert catalog.validate(job_dir)["restorable"]
        latest = catalog.latest("/flink/ckpt")["latest"]
        assert latest["path"] == f"{job_dir}/chk-{complete[-1]['id']}"
        sp_path = savepoint.split(str(namenode.port), 1)[1]
        assert catalog.latest(sp_path)["latest"]["path"] == sp_path
        restore = catalog.webhdfs_uri(latest["path"] if restore_from == "checkpoint"
                                      else sp_path)

    second = run_job("keyed_count.py", *common, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_retain_keeps_every_file_a_kept_incremental_checkpoint_needs(
        namenode, run_job, tmp_path):
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = ["--checkpoints", f"{web}/flink/ckpt", "--backend", "rocksdb", "--incremental",
              "--rows", str(ROWS), "--rate", "300", "--keys", str(KEYS)]
    first = run_job("keyed_count.py", *common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    with CatalogClient(namenode.url, "root") as catalog:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 4, 120, "4 checkpoints", 0.3)
        first.kill()
        before = catalog.show(job_dir)
        ids = [c["id"] for c in before["checkpoints"] if c["complete"]]
        catalog.pin(job_dir, ids[0])
        result = catalog.retain(job_dir, 1)
        assert result["kept"] == [ids[0], ids[-1]]
        after = catalog.show(job_dir)
        # The job was killed while taking its next checkpoint: that one's files are there,
        # unfinished (an upload opens its file when it starts, as on HDFS), and retention
        # leaves an unfinished checkpoint newer than every kept one alone.
        complete = [c for c in after["checkpoints"] if c["complete"]]
        assert [c["id"] for c in complete] == [ids[0], ids[-1]]
        assert all(c["id"] > ids[-1] for c in after["checkpoints"] if not c["complete"])
        assert all(c["restorable"] for c in complete), after
        with WebHdfsClient(namenode.url, "root") as hdfs:
            shared = {s["pathSuffix"] for s in hdfs.list(f"{job_dir}/shared")}
        assert len(shared) <= before["sharedFiles"]
        restore = catalog.webhdfs_uri(catalog.latest(job_dir)["latest"]["path"])
    second = run_job("keyed_count.py", *common, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_flink_fails_on_the_checkpoint_the_catalog_refuses(namenode, run_job, tmp_path):
    """A file that only the newest incremental checkpoint references is gone: the catalog
    calls that checkpoint not restorable, naming the file, and `latest` names an older one.
    Flink agrees: restored from the broken checkpoint the job fails, from the one the catalog
    names it ends with exactly the uninterrupted result."""
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = ["--checkpoints", f"{web}/flink/ckpt", "--backend", "rocksdb", "--incremental",
              "--rows", str(ROWS), "--rate", "300", "--keys", str(KEYS)]
    first = run_job("keyed_count.py", *common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    with CatalogClient(namenode.url, "root") as catalog, \
            WebHdfsClient(namenode.url, "root") as hdfs:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 3, 120, "3 checkpoints", 0.3)
        first.kill()
        complete = [c for c in catalog.show(job_dir)["checkpoints"] if c["complete"]]
        newest, older = complete[-1], complete[:-1]

        def references(chk) -> set[str]:
            meta = flink_metadata.parse(b"".join(hdfs.read(f"{chk['path']}/_metadata")))
            return {flink_metadata.resolve(ref.path, chk["path"]) for ref in meta.files}

        only_newest = references(newest) - set().union(*(references(c) for c in older))
        gone = sorted(only_newest)[0]
        hdfs.delete(gone)
        report = catalog.validate(job_dir)
        assert not report["restorable"]
        assert any(gone in issue["message"] for issue in report["issues"]), report
        named = catalog.latest("/flink/ckpt")["latest"]["path"]
        assert named == older[-1]["path"]
        broken_uri = catalog.webhdfs_uri(newest["path"])
        named_uri = catalog.webhdfs_uri(named)

    broken = run_job("keyed_count.py", *common, "--restore", broken_uri, "--fail-fast")
    assert broken.finish() != 0
    assert re.search(r"FileNotFoundException|does not exist|File not found", broken.log()), \
        broken.log_tail()
    second = run_job("keyed_count.py", *common, "--restore", named_uri)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)
