"""How ``nnlite catalog`` prints answers: every column says what it holds, sizes carry a
unit, and each kind ``ls`` lists has its ``show`` table."""

from __future__ import annotations

from nnlite.catalog import display


def test_sizes_always_carry_a_unit():
    assert [display.nbytes(n) for n in (0, 312, 1024, 1536, 5 << 30, None)] == [
        "0 B", "312 B", "1 KiB", "1.5 KiB", "5 GiB", "-"]


def streaming_doc():
    batch = {"batch": 0, "offsets": True, "commit": True, "watermarkMs": 0,
             "timestampMs": 0, "bytes": 180, "stateVersion": 1, "stateBytes": 2048,
             "pinned": False, "restorable": True}
    return {"kind": "streaming", "path": "/ckpt/q", "queryId": "q-1", "lastBatch": 0,
            "batches": [batch], "operators": [], "sources": {"0": 1}, "corrupt": []}


def test_streaming_show_heads_each_column_with_what_it_holds():
    head, columns, row, source = display.show_lines(streaming_doc())
    assert head == "/ckpt/q: Structured Streaming checkpoint of query q-1, last committed batch 0"
    assert columns.split() == ["BATCH", "OFFSETS", "COMMIT", "WATERMARK", "STARTED", "LOG",
                               "SIZE", "STATE", "VERSION", "STATE", "SIZE", "RESTORES"]
    assert "180 B" in row and "2 KiB" in row and row.endswith("yes")
    assert source == "source 0: 1 log entries"


def test_job_rdd_and_dstream_show_tables():
    job = {"kind": "job", "path": "/jobs/etl", "latest": 1, "checkpoints": [
        {"id": 1, "complete": True, "parts": 2, "files": 3, "bytes": 10, "lastUpdate": 0,
         "writing": False, "pinned": True, "restorable": True, "problems": []},
        {"id": 2, "complete": True, "parts": 1, "files": 2, "bytes": 5, "lastUpdate": 0,
         "writing": False, "pinned": False, "restorable": False,
         "problems": ["/jobs/etl/chk-2/part-00001 is missing"]},
        {"id": 3, "complete": False, "parts": 0, "files": 0, "bytes": 0, "lastUpdate": 0,
         "writing": False, "pinned": False, "restorable": False, "problems": []}]}
    lines = display.show_lines(job)
    assert lines[0] == "/jobs/etl: job checkpoints, newest restorable 1"
    assert lines[1].split()[-2:] == ["PINNED", "RESTORES"]
    assert lines[2].split()[:5] == ["1", "complete", "2", "3", "10"]
    assert lines[2].split()[-2:] == ["yes", "yes"]
    assert lines[3].split()[-2:] == ["no", "no"]
    assert lines[4] == "    /jobs/etl/chk-2/part-00001 is missing"
    assert lines[5].split()[:3] == ["3", "in", "progress"]
    rdd = {"kind": "rdd", "path": "/r/u", "rdds": [
        {"rdd": 3, "parts": 1, "files": 1, "bytes": 2048, "lastUpdate": 0, "writing": False,
         "restorable": True, "problems": []}]}
    assert display.show_lines(rdd)[2].split()[:5] == ["3", "1", "1", "2", "KiB"]
    assert display.show_lines(rdd)[2].split()[-2:] == ["no", "yes"]
    dstream = {"kind": "dstream", "path": "/d", "checkpoints": [
        {"timeMs": 0, "bytes": 0, "backupBytes": 3, "restorable": True, "lastUpdate": 0,
         "writing": False}]}
    assert display.show_lines(dstream)[2].split()[-5:] == ["0", "B", "3", "B", "yes"]


def test_validate_names_what_each_kind_counts():
    def verdict(kind, restorable=True):
        return display.validate_lines({"kind": kind, "path": "/c", "restorable": restorable,
                                       "lastBatch": 7, "restorableBatch": 5, "issues": [],
                                       "advice": None})[-1]
    assert verdict("streaming") == "/c: restorable at batch 7"
    assert verdict("job") == "/c: restorable at checkpoint 7"
    assert verdict("rdd", False) == ("/c: NOT restorable as it is (last complete RDD 7, "
                                     "newest restorable 5)")
    assert verdict("dstream") == "/c: restorable at checkpoint time 7"


def test_retain_says_what_it_removed_with_units_for_every_kind():
    streaming = {"path": "/ckpt/q", "deletedPaths": 9, "keptBatches": [3, 4, 5],
                 "removedBatches": [0, 1, 2], "removedStateFiles": 6, "bytesFreed": 1234}
    assert display.change_line("retain", streaming) == (
        "/ckpt/q: kept batches 3-5; removed 3 batches and 6 state files (9 paths, 1.2 KiB)")
    flink = {"path": "/flink/job", "kept": [8, 9, 10], "deleted": 12,
             "removedCheckpoints": [1, 2, 3, 4, 5, 6, 7], "removedUnfinished": [],
             "removedSharedFiles": 5, "files": 40, "bytesFreed": 3 << 20}
    assert display.change_line("retain", flink) == (
        "/flink/job: kept checkpoints 8-10; removed 7 checkpoints and 5 shared files "
        "(12 paths, 40 files, 3 MiB)")
    flink |= {"removedUnfinished": [11], "removedSharedFiles": 1}
    assert "removed 7 checkpoints, 1 unfinished checkpoint and 1 shared file (" in \
        display.change_line("retain", flink)
    job = {"path": "/jobs/etl", "kept": [2, 5, 6], "deleted": 3,
           "removedCheckpoints": [1, 3, 4], "files": 6, "bytesFreed": 300}
    assert display.change_line("retain", job) == (
        "/jobs/etl: kept checkpoints 2, 5-6; removed 3 checkpoints (3 paths, 6 files, 300 B)")
