"""The catalog's Flink rules on a namespace laid out as the job that wrote the fixture's
``_metadata`` left it (tests/flink checks the same rules against Flink's own restore)."""

from __future__ import annotations

from pathlib import Path

from nnlite.catalog import flink, layout
from nnlite.formats import flink_metadata
from tests.namenode.helpers import SUPER, new_ns, write_file

METADATA = (Path(__file__).parents[1] / "formats" / "data"
            / "flink-rocksdb-incremental-chk1-v6.metadata").read_bytes()
JOB = "/flink/ckpt/bca53422186449487288181be5553f68"


def job_namespace(skip: str | None = None, resize: str | None = None):
    """chk-1 with every file its metadata references (less ``skip``; ``resize`` one byte
    short), an unfinished chk-2, an unreferenced shared file, and taskowned/."""
    ns = new_ns()
    meta = flink_metadata.parse(METADATA)
    for ref in meta.files:
        path = flink_metadata.resolve(ref.path, f"{JOB}/chk-1")
        if path.rsplit("/", 1)[1] == skip:
            continue
        size = ref.size - 1 if path.rsplit("/", 1)[1] == resize else ref.size
        write_file(ns, path, sizes=(size,), caller=SUPER)
    write_file(ns, f"{JOB}/chk-1/_metadata", sizes=(len(METADATA),), caller=SUPER)
    write_file(ns, f"{JOB}/shared/old-unreferenced", sizes=(10,), caller=SUPER)
    ns.mkdirs(f"{JOB}/chk-2", 0o755, SUPER)
    ns.mkdirs(f"{JOB}/taskowned", 0o755, SUPER)
    return ns


def judged(ns):
    node = ns.tree.lookup(tuple(JOB.strip("/").split("/")))
    assert layout.kind_of(node) == layout.FLINK
    job = flink.scan(node, JOB, layout.FLINK)
    return job, flink.verdicts(job, {f"{JOB}/chk-1/_metadata": METADATA})


def test_a_checkpoint_with_every_referenced_file_restores():
    job, verdicts = judged(job_namespace())
    assert [(v.id, v.restorable) for v in verdicts] == [(1, True), (2, False)]
    assert "chk-2/_metadata is missing" in verdicts[1].problems[0]
    report = flink.validate(job, verdicts)
    assert report["restorable"] and report["restorableBatch"] == 1
    assert [i["code"] for i in report["issues"]] == ["incomplete-checkpoint"]
    assert flink.summary(job)["lastBatch"] == 1


def test_a_missing_or_short_file_is_named():
    _, verdicts = judged(job_namespace(skip="86626c24-a20a-44cd-a210-8cacfb59bdd3"))
    assert not verdicts[0].restorable
    assert verdicts[0].problems == [f"{JOB}/shared/86626c24-a20a-44cd-a210-8cacfb59bdd3 is "
                                    f"missing (referenced by {JOB}/chk-1/_metadata)"]
    _, verdicts = judged(job_namespace(resize="4c6b269c-4c43-41f0-a01f-27b68f056bd2"))
    assert "holds 32020 bytes, 32021 recorded" in verdicts[0].problems[0]


def test_unreadable_metadata_is_not_restorable():
    job, _ = judged(job_namespace())
    chk = job.checkpoints[1]
    assert not flink.verdict(job, chk, b"garbage").restorable
    assert "cannot be read" in flink.verdict(job, chk, OSError("gone")).problems[0]


def test_retention_keeps_what_the_kept_checkpoint_references():
    job, verdicts = judged(job_namespace())
    doomed, kept = flink.plan_retain(job, verdicts, keep=1)
    assert kept == [1]
    assert f"{JOB}/chk-2" not in doomed            # newer than the newest complete: may run
    referenced = set(verdicts[0].referenced)
    assert not referenced & set(doomed)
    # the unreferenced shared file goes only when older than the kept metadata
    old = job.shared[f"{JOB}/shared/old-unreferenced"]
    assert (f"{JOB}/shared/old-unreferenced" in doomed) == (
        old.mtime < job.checkpoints[1].metadata.mtime)


def test_retention_says_what_it_removes():
    job, _ = judged(job_namespace())
    doomed = [f"{JOB}/chk-1", f"{JOB}/chk-2", f"{JOB}/shared/old-unreferenced"]
    chk1 = [*job.checkpoints[1].files.values(), job.checkpoints[1].metadata]
    assert flink.removal(job, doomed) == {
        "removedCheckpoints": [1], "removedUnfinished": [2], "removedSharedFiles": 1,
        "files": len(chk1) + 1, "bytesFreed": sum(f.length for f in chk1) + 10}
