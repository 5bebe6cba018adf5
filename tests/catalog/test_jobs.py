"""Job checkpoints (Flink's lifecycle) on an in-memory namespace: ids, completion checks,
abort, latest, retention with pins, and that a failure applies nothing or logs what applied."""

from __future__ import annotations

import pytest

from nnlite.catalog import jobs
from nnlite.catalog.errors import CheckpointNotFoundError, IncompleteCheckpointError
from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import delete, xattrs
from nnlite.namenode.namespace.catalog_view import CatalogView
from tests.namenode.helpers import ALICE, BOB, SUPER, mkdir, new_ns, write_file

JOB = "/jobs/etl"


def begin(ns, caller=SUPER):
    result, ops = jobs.begin(CatalogView(ns), JOB, caller)
    return result, ops


def write_parts(ns, where: str, n: int, success: bool = True) -> None:
    for i in range(n):
        write_file(ns, f"{where}/part-{i:05d}-c000.snappy.parquet")
    if success:
        write_file(ns, f"{where}/_SUCCESS", sizes=())


def test_begin_hands_out_increasing_ids_and_a_directory_each():
    ns = new_ns()
    first, ops = begin(ns)
    assert first == {"id": 1, "path": f"{JOB}/chk-1.inprogress"}
    assert [type(op) for op in ops] == [edits.MkdirOp, edits.SetXAttrOp, edits.MkdirOp]
    assert begin(ns)[0]["id"] == 2
    assert ns.tree.get(JOB).xattrs[jobs.LAST_ID_XATTR] == b"2"


def test_an_aborted_id_is_never_handed_out_again():
    ns = new_ns()
    begin(ns)
    jobs.abort(CatalogView(ns), JOB, 1, SUPER)
    assert begin(ns)[0]["id"] == 2


def test_complete_records_the_manifest_then_is_one_rename_after_the_parts_are_checked():
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"], 3)
    result, ops = jobs.complete(CatalogView(ns), JOB, 1, 3, SUPER)
    assert result["path"] == f"{JOB}/chk-1" and result["parts"] == 3
    assert (result["files"], result["bytes"]) == (4, 300)
    manifest, rename = ops
    assert (manifest.path, manifest.name) == (chk["path"], jobs.MANIFEST_XATTR)
    assert jobs.decode_manifest(manifest.value)["files"] == {
        **{f"part-{i:05d}-c000.snappy.parquet": 100 for i in range(3)}, "_SUCCESS": 0}
    assert rename == edits.RenameOp(chk["path"], f"{JOB}/chk-1", 1000, False)
    assert jobs.latest(ns.tree.get(JOB), JOB) == {"id": 1, "path": f"{JOB}/chk-1"}
    assert jobs.complete(CatalogView(ns), JOB, 1, 3, SUPER)[0]["alreadyComplete"] is True


@pytest.mark.parametrize("parts, expected, success, words", [
    (2, 3, True, "holds 2 part files, 3 expected"),
    (3, None, False, "no _SUCCESS marker"),
])
def test_complete_refuses_missing_parts_and_changes_nothing(parts, expected, success, words):
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"], parts, success)
    with pytest.raises(IncompleteCheckpointError, match=words):
        jobs.complete(CatalogView(ns), JOB, 1, expected, SUPER)
    assert jobs.latest(ns.tree.get(JOB), JOB) is None


def test_complete_refuses_an_unfinished_output_commit():
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"] + "/_temporary/0", 1)
    with pytest.raises(IncompleteCheckpointError, match="_temporary still exists"):
        jobs.complete(CatalogView(ns), JOB, 1, 0, SUPER)


def test_complete_of_an_id_never_begun_is_not_found():
    ns = new_ns()
    begin(ns)
    with pytest.raises(CheckpointNotFoundError, match="never begun"):
        jobs.complete(CatalogView(ns), JOB, 7, 0, SUPER)


def test_retain_keeps_the_newest_and_the_pinned():
    ns = new_ns()
    for i in range(1, 7):
        write_parts(ns, begin(ns)[0]["path"], 1)
        jobs.complete(CatalogView(ns), JOB, i, 1, SUPER)
    jobs.set_pin(CatalogView(ns), JOB, 2, True, SUPER)
    result, ops = jobs.retain(CatalogView(ns), JOB, 2, SUPER)
    assert result == {"path": JOB, "kept": [2, 5, 6], "deleted": 3,
                      "removedCheckpoints": [1, 3, 4], "files": 6, "bytesFreed": 300}
    assert len(ops) == 1 and isinstance(ops[0], edits.DeleteManyOp)
    assert jobs.complete_ids(ns.tree.get(JOB)) == [2, 5, 6]


def test_a_failing_step_after_others_applied_is_reported_with_their_ops():
    ns = new_ns()
    mkdir(ns, "/jobs", 0o777)
    begin(ns, ALICE)                        # alice owns /jobs/etl (755)
    result, ops = jobs.steps(lambda: ns.mkdirs("/jobs/other", 0o755, BOB),
                             lambda: jobs.begin(CatalogView(ns), JOB, BOB))
    assert isinstance(result, jobs.Partial)
    assert isinstance(result.error, errors.AccessControlError)
    assert [type(op) for op in ops] == [edits.MkdirOp]      # logged by the service, not lost


# ------------------------------------------------------------------ validate, latest, ls

def completed(n: int, parts: int = 2, ns=None):
    """A job with checkpoints 1..n complete, each ``parts`` parts of 100 bytes."""
    ns = ns or new_ns()
    for i in range(1, n + 1):
        write_parts(ns, begin(ns)[0]["path"], parts)
        jobs.complete(CatalogView(ns), JOB, i, parts, SUPER)
    return ns


def answers(ns) -> tuple:
    """What validate, latest and the ls row say: (restorable, last, restorable id, latest
    id, health)."""
    node = ns.tree.get(JOB)
    doc = jobs.validate(node, JOB)
    row = jobs.summary(node, JOB, 0, 0, 0)
    best = jobs.latest(node, JOB)
    assert row["restorableBatch"] == doc["restorableBatch"] == (best and best["id"])
    return doc["restorable"], doc["lastBatch"], doc["restorableBatch"], row["health"]


PART = "part-00001-c000.snappy.parquet"


def test_validate_latest_and_ls_agree_on_whole_checkpoints():
    ns = completed(2)
    begin(ns)                                   # 3 in progress: never judged, never latest
    assert answers(ns) == (True, 2, 2, "writing")
    doc = jobs.validate(ns.tree.get(JOB), JOB)
    assert [(i["level"], i["code"]) for i in doc["issues"]] == [
        ("warning", "incomplete-checkpoint")]
    assert "nnlite catalog abort /jobs/etl 3" in doc["issues"][0]["message"]


@pytest.mark.parametrize("damage, words", [
    ("delete", f"chk-2/{PART} is missing (100 bytes when the checkpoint completed)"),
    ("shorten", f"chk-2/{PART} holds 60 bytes, 100 when the checkpoint completed"),
    ("add", "chk-2/part-00009 was not there when the checkpoint completed"),
    ("temporary", "chk-2/_temporary exists"),
])
def test_a_checkpoint_changed_after_it_completed_is_not_restorable(damage, words):
    ns = completed(2)
    where = f"{JOB}/chk-2"
    if damage in ("delete", "shorten"):
        delete.delete(ns, f"{where}/{PART}", False, SUPER)
    if damage == "shorten":
        write_file(ns, f"{where}/{PART}", sizes=(60,))
    if damage == "add":
        write_file(ns, f"{where}/part-00009")
    if damage == "temporary":
        mkdir(ns, f"{where}/_temporary")
    assert answers(ns) == (False, 2, 1, "degraded")
    doc = jobs.validate(ns.tree.get(JOB), JOB)
    assert [(i["level"], i["path"]) for i in doc["issues"]] == [("error", where)]
    assert words in doc["issues"][0]["message"]
    assert doc["advice"].startswith(f"catalog latest (and read_latest) answers {JOB}/chk-1")
    assert jobs.latest(ns.tree.get(JOB), JOB) == {"id": 1, "path": f"{JOB}/chk-1"}
    delete.delete(ns, f"{JOB}/chk-1/{PART}", False, SUPER)
    assert answers(ns) == (False, 2, None, "broken")


def test_a_manifest_too_large_for_an_xattr_keeps_the_count_and_the_bytes():
    ns = new_ns()
    ns.tree.max_xattr_size = 120
    completed(1, parts=40, ns=ns)
    recorded = jobs.decode_manifest(ns.tree.get(f"{JOB}/chk-1").xattrs[jobs.MANIFEST_XATTR])
    assert recorded == {"v": 1, "count": 41, "bytes": 4000}
    assert answers(ns) == (True, 1, 1, "ok")
    delete.delete(ns, f"{JOB}/chk-1/{PART}", False, SUPER)
    assert "holds 40 files of 3900 bytes; it held 41 files of 4000 bytes" in jobs.validate(
        ns.tree.get(JOB), JOB)["issues"][0]["message"]


def test_a_checkpoint_completed_without_a_manifest_is_checked_by_structure_and_says_so():
    ns = completed(1)
    xattrs.remove_xattr(ns, f"{JOB}/chk-1", jobs.MANIFEST_XATTR, SUPER)
    assert answers(ns) == (True, 1, 1, "ok")
    [warning] = jobs.validate(ns.tree.get(JOB), JOB)["issues"]
    assert (warning["level"], warning["code"]) == ("warning", "no-manifest")
