"""Job checkpoints (Flink's lifecycle) on an in-memory namespace: ids, completion checks,
abort, latest, retention with pins, and that a failure applies nothing or logs what applied."""

from __future__ import annotations

import pytest

from nnlite.catalog import jobs
from nnlite.catalog.errors import CheckpointNotFoundError, IncompleteCheckpointError
from nnlite.formats import edits
from nnlite.namenode import errors
from tests.namenode.helpers import ALICE, BOB, SUPER, mkdir, new_ns, write_file

JOB = "/jobs/etl"


def begin(ns, caller=SUPER):
    result, ops = jobs.begin(ns, JOB, caller)
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
    assert ns.get(JOB).xattrs[jobs.LAST_ID_XATTR] == b"2"


def test_an_aborted_id_is_never_handed_out_again():
    ns = new_ns()
    begin(ns)
    jobs.abort(ns, JOB, 1, SUPER)
    assert begin(ns)[0]["id"] == 2


def test_complete_is_one_rename_after_the_parts_are_checked():
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"], 3)
    result, ops = jobs.complete(ns, JOB, 1, 3, SUPER)
    assert result["path"] == f"{JOB}/chk-1" and result["parts"] == 3
    assert ops == [edits.RenameOp(chk["path"], f"{JOB}/chk-1", 1000, False)]
    assert jobs.latest(ns.get(JOB), JOB) == {"id": 1, "path": f"{JOB}/chk-1"}
    assert jobs.complete(ns, JOB, 1, 3, SUPER)[0]["alreadyComplete"] is True


@pytest.mark.parametrize("parts, expected, success, words", [
    (2, 3, True, "holds 2 part files, 3 expected"),
    (3, None, False, "no _SUCCESS marker"),
])
def test_complete_refuses_missing_parts_and_changes_nothing(parts, expected, success, words):
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"], parts, success)
    with pytest.raises(IncompleteCheckpointError, match=words):
        jobs.complete(ns, JOB, 1, expected, SUPER)
    assert jobs.latest(ns.get(JOB), JOB) is None


def test_complete_refuses_an_unfinished_output_commit():
    ns = new_ns()
    chk = begin(ns)[0]
    write_parts(ns, chk["path"] + "/_temporary/0", 1)
    with pytest.raises(IncompleteCheckpointError, match="_temporary still exists"):
        jobs.complete(ns, JOB, 1, 0, SUPER)


def test_complete_of_an_id_never_begun_is_not_found():
    ns = new_ns()
    begin(ns)
    with pytest.raises(CheckpointNotFoundError, match="never begun"):
        jobs.complete(ns, JOB, 7, 0, SUPER)


def test_retain_keeps_the_newest_and_the_pinned():
    ns = new_ns()
    for i in range(1, 7):
        write_parts(ns, begin(ns)[0]["path"], 1)
        jobs.complete(ns, JOB, i, 1, SUPER)
    jobs.set_pin(ns, JOB, 2, True, SUPER)
    result, ops = jobs.retain(ns, JOB, 2, SUPER)
    assert result == {"kept": [2, 5, 6], "deleted": 3}
    assert len(ops) == 1 and isinstance(ops[0], edits.DeleteManyOp)
    assert jobs.complete_ids(ns.get(JOB)) == [2, 5, 6]


def test_a_failing_step_after_others_applied_is_reported_with_their_ops():
    ns = new_ns()
    mkdir(ns, "/jobs", 0o777)
    begin(ns, ALICE)                        # alice owns /jobs/etl (755)
    result, ops = jobs.steps(lambda: ns.mkdirs("/jobs/other", 0o755, BOB),
                             lambda: jobs.begin(ns, JOB, BOB))
    assert isinstance(result, jobs.Partial)
    assert isinstance(result.error, errors.AccessControlError)
    assert [type(op) for op in ops] == [edits.MkdirOp]      # logged by the service, not lost
