"""Real PyFlink jobs checkpoint into nnlite over ``webhdfs://`` and ``hdfs://`` (Hadoop IPC
and the built-in datanode) with no plug-in of ours; the catalog reads what they leave; a job
killed with SIGKILL or stopped is restored from the path the catalog names, and its state
and output come out exactly right.

The job (``examples/flink_count.py``, the README's) counts and sums ``v % 10`` over
``v = 1..ROWS`` with its state (the source's position and the aggregates) in the checkpoint; a
run restored from any complete checkpoint ends with exactly ``ROWS / 10`` per key and the
matching sums, having inserted no key afresh, or the restore was wrong."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client.webhdfs import WebHdfsClient
from nnlite.formats import flink_metadata
from tests.servers import HDFS_LEASES, wait_for

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


# A restored run reads the rest at this rate: the source's position is in the checkpoint, not
# its rate (the operators' ids come from the graph's shape, StreamGraphHasherV2), so only the
# first run, killed or stopped after a few 300 ms checkpoints, needs the slow one.
CATCH_UP = ("--rate", "6000")

EXPECTED = {k: (ROWS // KEYS, sum(v for v in range(1, ROWS + 1) if v % KEYS == k))
            for k in range(KEYS)}


def job_args(web: str, backend: str = "rocksdb", incremental: bool = True) -> list[str]:
    return [f"{web}/flink/ckpt", "--backend", backend, "--rows", str(ROWS), "--rate", "300",
            "--keys", str(KEYS), "--print", *(["--incremental"] if incremental else [])]


def after_a_kill(shown: dict) -> list[int]:
    """The ids of the complete checkpoints that restore, checked against what a SIGKILL
    leaves as Flink leaves it: the checkpoints Flink retained (the newest three) all restore;
    a complete one that does not is older than them (subsumed: Flink was deleting its files)
    or newer (the kill cut its ``_metadata`` off while Flink wrote it), never in between."""
    complete = [c for c in shown["checkpoints"] if c["complete"]]
    good = [c["id"] for c in complete if c["restorable"]]
    assert len(good) >= 2, shown
    assert good == [c["id"] for c in complete if good[0] <= c["id"] <= good[-1]], shown
    assert shown["latest"] == good[-1], shown
    return good


def base_uri(namenode, scheme: str) -> str:
    """The namenode as Flink names it: its WebHDFS port, or its Hadoop IPC port."""
    return namenode.hdfs if scheme == "hdfs" else f"webhdfs://127.0.0.1:{namenode.port}"


# hdfs:// runs one combination, the one that writes the most kinds of files (RocksDB's
# shared SSTs, private state, _metadata) and restores from a retained checkpoint, to add one
# job pair (about a minute) rather than two; the state backends' own files are the same
# whichever scheme carries them.
@pytest.mark.parametrize("backend, incremental, restore_from, scheme", [
    ("hashmap", False, "savepoint", "webhdfs"),
    ("rocksdb", True, "checkpoint", "webhdfs"),
    ("rocksdb", True, "checkpoint", "hdfs"),
])
def test_a_killed_job_restores_from_what_the_catalog_names(
        start_namenode, run_job, backend, incremental, restore_from, scheme):
    namenode = start_namenode(*(HDFS_LEASES if scheme == "hdfs" else ()))
    web = base_uri(namenode, scheme)
    common = job_args(web, backend, incremental)
    # The savepoint is taken once Flink has completed a checkpoint: every task is running.
    first = run_job(*common, "--savepoints", f"{web}/flink/sp",
                    "--savepoint-after-checkpoints", "1")
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    savepoint = first.wait_for("savepoint")["path"]
    with CatalogClient(namenode.url, "root") as catalog:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 3, 300, "3 checkpoints", 0.3)
        first.kill()                                    # SIGKILL: the JVM and Python alike
        first.settle(namenode)

        listed = {row["path"]: row["kind"] for row in catalog.ls("/flink")}
        assert listed[job_dir] == "flink"
        assert [k for p, k in listed.items() if p.startswith("/flink/sp/")] == ["savepoint"]
        shown = catalog.show(job_dir)
        good = after_a_kill(shown)
        if incremental:
            assert shown["sharedFiles"] > 0             # RocksDB's files shared across chk-n
        report = catalog.validate(job_dir)
        newest_complete = max(c["id"] for c in shown["checkpoints"] if c["complete"])
        assert report["restorable"] == (newest_complete == good[-1]), report
        assert report["restorableBatch"] == good[-1], report
        latest = catalog.latest("/flink/ckpt")["latest"]
        assert latest["path"] == f"{job_dir}/chk-{good[-1]}"
        sp_path = urlsplit(savepoint).path
        assert savepoint == f"{web}{sp_path}"
        assert catalog.latest(sp_path)["latest"]["path"] == sp_path
        restore = web + (latest["path"] if restore_from == "checkpoint" else sp_path)

    second = run_job(*common, *CATCH_UP, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_retain_keeps_every_file_a_kept_incremental_checkpoint_needs(namenode, run_job):
    """On a stopped job (cancelled, so Flink keeps its newest three checkpoints, with its
    own clean-up over when the job's process ends): pin the oldest, keep one more."""
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = job_args(web)
    first = run_job(*common, "--stop-after-checkpoints", "4")
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    assert first.finish() == 0, first.log_tail()
    first.wait_for("stopped")
    first.settle(namenode)
    with CatalogClient(namenode.url, "root") as catalog:
        before = catalog.show(job_dir)
        complete = [c for c in before["checkpoints"] if c["complete"]]
        ids = [c["id"] for c in complete]
        assert len(ids) == 3, before                    # num-retained
        assert all(c["restorable"] for c in complete), before
        # Flink aborted the checkpoint it was taking; whatever of it is left is unfinished.
        assert all(c["id"] > ids[-1] for c in before["checkpoints"] if not c["complete"])
        catalog.pin(job_dir, ids[0])
        result = catalog.retain(job_dir, 1)
        assert result["kept"] == [ids[0], ids[-1]]
        after = catalog.show(job_dir)
        complete = [c for c in after["checkpoints"] if c["complete"]]
        assert [c["id"] for c in complete] == [ids[0], ids[-1]]
        assert all(c["restorable"] for c in complete), after
        # Retention leaves an unfinished checkpoint newer than every kept one alone.
        assert [c["id"] for c in after["checkpoints"] if not c["complete"]] == \
            [c["id"] for c in before["checkpoints"] if not c["complete"]]
        with WebHdfsClient(namenode.url, "root") as hdfs:
            shared = {s["pathSuffix"] for s in hdfs.list(f"{job_dir}/shared")}
        assert len(shared) <= before["sharedFiles"]
        restore = catalog.webhdfs_uri(catalog.latest(job_dir)["latest"]["path"])
    second = run_job(*common, *CATCH_UP, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_flink_fails_on_the_checkpoint_the_catalog_refuses(namenode, run_job):
    """A file that only the newest restorable incremental checkpoint references is gone: the
    catalog calls that checkpoint not restorable, naming the file, and `latest` names the one
    before. Flink agrees: restored from the broken checkpoint the job fails, from the one the
    catalog names it ends with exactly the uninterrupted result."""
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = job_args(web)
    first = run_job(*common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    with CatalogClient(namenode.url, "root") as catalog, \
            WebHdfsClient(namenode.url, "root") as hdfs:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 3, 300, "3 checkpoints", 0.3)
        first.kill()
        first.settle(namenode)
        shown = catalog.show(job_dir)
        good = after_a_kill(shown)
        by_id = {c["id"]: c for c in shown["checkpoints"]}
        newest = by_id[good[-1]]
        older = [c for c in shown["checkpoints"] if c["complete"] and c["id"] < newest["id"]]

        def references(chk) -> set[str]:
            meta = flink_metadata.parse(b"".join(hdfs.read(f"{chk['path']}/_metadata")))
            return {flink_metadata.resolve(ref.path, chk["path"]) for ref in meta.files}

        only_newest = references(newest) - set().union(*(references(c) for c in older))
        assert only_newest, shown
        gone = sorted(only_newest)[0]
        hdfs.delete(gone)
        report = catalog.validate(job_dir)
        assert not report["restorable"]
        assert any(gone in issue["message"] for issue in report["issues"]), report
        named = catalog.latest("/flink/ckpt")["latest"]["path"]
        assert named == by_id[good[-2]]["path"]
        broken_uri = catalog.webhdfs_uri(newest["path"])
        named_uri = catalog.webhdfs_uri(named)

    broken = run_job(*common, *CATCH_UP, "--restore", broken_uri, "--fail-fast")
    assert broken.finish() != 0
    assert re.search(r"FileNotFoundException|does not exist|File not found", broken.log()), \
        broken.log_tail()
    second = run_job(*common, *CATCH_UP, "--restore", named_uri)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_a_cut_off_metadata_and_a_lost_shared_file_fail_flink_as_the_catalog_says(
        namenode, run_job):
    """Two damages Flink's restore meets, each on a retained incremental RocksDB checkpoint
    of its own: the newest one's ``_metadata`` cut off halfway, as a kill in its write leaves
    it, and a ``shared/`` file (an SST) only the one before references lost. The catalog
    refuses both, naming the file, and ``latest`` names the one before them; Flink's restore
    fails from each broken one and ends exactly right from the one the catalog names."""
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = job_args(web)
    first = run_job(*common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    with CatalogClient(namenode.url, "root") as catalog, \
            WebHdfsClient(namenode.url, "root") as hdfs:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 4, 300, "4 checkpoints", 0.3)
        first.kill()
        first.settle(namenode)
        shown = catalog.show(job_dir)
        good = after_a_kill(shown)
        assert len(good) >= 3, shown
        by_id = {c["id"]: c for c in shown["checkpoints"]}
        cut, lost_in, named = (by_id[i] for i in good[-1:-4:-1])

        def references(chk) -> set[str]:
            meta = flink_metadata.parse(b"".join(hdfs.read(f"{chk['path']}/_metadata")))
            return {flink_metadata.resolve(ref.path, chk["path"]) for ref in meta.files}

        shared = sorted(p for p in references(lost_in) - references(named)
                        if f"{job_dir}/shared/" in p)
        assert shared, shown
        hdfs.delete(shared[0])
        metadata = b"".join(hdfs.read(f"{cut['path']}/_metadata"))
        hdfs.create(f"{cut['path']}/_metadata", metadata[:len(metadata) // 2],
                    overwrite=True)
        report = catalog.validate(job_dir)
        messages = " ".join(issue["message"] for issue in report["issues"])
        assert f"{cut['path']}/_metadata" in messages and shared[0] in messages, report
        assert catalog.latest("/flink/ckpt")["latest"]["path"] == named["path"]
        uris = [catalog.webhdfs_uri(c["path"]) for c in (cut, lost_in, named)]
    whys = (r"EOFException", r"FileNotFoundException|does not exist")
    for uri, why in zip(uris[:2], whys, strict=True):
        broken = run_job(*common, *CATCH_UP, "--restore", uri, "--fail-fast")
        assert broken.finish() != 0, broken.log_tail()
        assert re.search(why, broken.log()), broken.log_tail()
    second = run_job(*common, *CATCH_UP, "--restore", uris[2])
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)


def test_retention_while_the_job_checkpoints_keeps_what_its_next_checkpoint_uses(
        namenode, run_job):
    """``retain --keep 1`` over and over while an incremental RocksDB job takes
    checkpoints (each new one reuses shared SSTs earlier ones uploaded, and one being taken
    has no ``_metadata`` yet): every checkpoint Flink completes afterwards still restores,
    and a restore from the newest, after a kill, ends exactly right."""
    web = f"webhdfs://127.0.0.1:{namenode.port}"
    common = job_args(web)
    first = run_job(*common)
    job_dir = f"/flink/ckpt/{first.wait_for('started')['job_id']}"
    removed = []
    with CatalogClient(namenode.url, "root") as catalog:
        wait_for(lambda: (catalog.show(job_dir)["latest"] or 0) >= 2, 300, "2 checkpoints", 0.3)

        def retained_until_the_sixth() -> bool:
            result = catalog.retain(job_dir, 1)
            removed.extend(result["removedCheckpoints"])
            return (catalog.show(job_dir)["latest"] or 0) >= 6
        wait_for(retained_until_the_sixth, 300, "6 checkpoints under retention", 0.3)
        first.kill()
        first.settle(namenode)
        shown = catalog.show(job_dir)
        assert removed and shown["latest"] >= 6, shown
        complete = [c for c in shown["checkpoints"] if c["complete"]]
        # Flink's own newest three and the catalog's keep of one: all that is left restores
        # but a _metadata the kill cut off
        assert [c["id"] for c in complete if c["restorable"]][-1] == shown["latest"], shown
        by_id = {c["id"]: c for c in shown["checkpoints"]}
        restore = catalog.webhdfs_uri(by_id[shown["latest"]]["path"])
    second = run_job(*common, *CATCH_UP, "--restore", restore)
    assert second.finish() == 0, second.log_tail()
    check_restored_exactly(second)
