"""Structured Streaming analysis on checkpoints built in memory: the structure ``scan`` finds,
the restorable batch, and each kind of damage ``validate`` must name precisely."""

from __future__ import annotations

import pytest

from nnlite.catalog import layout, report, retention, streaming
from tests.catalog.builder import BASE, QUERY_ID, Checkpoint


def analyse(ckpt: Checkpoint) -> streaming.Layout:
    return streaming.scan(ckpt.node(), BASE)


def validate(ckpt: Checkpoint) -> dict:
    return report.validate(analyse(ckpt), ckpt.files)


def codes(report: dict) -> list[tuple[str, str]]:
    return [(i["level"], i["code"]) for i in report["issues"]]


def test_scan_finds_batches_sources_and_state_stores():
    found = analyse(Checkpoint(4, partitions=3, pending=True))
    assert sorted(found.offsets) == [0, 1, 2, 3, 4] and sorted(found.commits) == [0, 1, 2, 3]
    assert found.last_committed == 3
    assert sorted(found.sources["0"]) == ["0", "1", "2", "3"]
    assert [(s.operator, s.partition, s.name) for s in
            sorted(found.stores, key=lambda s: s.partition)] == [
        ("0", "0", "default"), ("0", "1", "default"), ("0", "2", "default")]
    assert found.stores[0].versions.keys() == {1, 2, 3, 4}
    assert found.metadata.path == f"{BASE}/metadata"


def test_a_healthy_checkpoint_with_a_planned_batch_is_restorable_with_a_warning():
    report = validate(Checkpoint(5, pending=True))
    assert report["restorable"] and report["lastBatch"] == report["restorableBatch"] == 4
    assert codes(report) == [("warning", "pending-batch")]


def test_ls_summary_reads_structure_only():
    row = streaming.summary(analyse(Checkpoint(3)))
    assert row["health"] == "ok" and (row["lastBatch"], row["restorableBatch"]) == (2, 2)
    # the state's bytes include the operator metadata (len(b"v1\n{}") == 5)
    assert row["files"] == 1 + 3 * 3 + 3 * 2 + 1 and row["stateBytes"] == 3 * (5 + 10) + 5


def test_show_reports_watermarks_timestamps_and_operators():
    doc = report.show(analyse(Checkpoint(3, snapshot_every=2)), Checkpoint(3).files)
    assert doc["queryId"] == QUERY_ID
    assert [(b["batch"], b["watermarkMs"], b["stateVersion"]) for b in doc["batches"]] == [
        (0, 0, 1), (1, 10, 2), (2, 20, 3)]
    assert doc["operators"][0]["snapshots"] == [2]
    assert doc["operators"][0]["partitions"] == 2


# ------------------------------------------------------------------------- damage


def missing_commit(c):
    c.remove("commits/5")


def truncated_offsets(c):
    c.files[f"{BASE}/offsets/5"] = c.files[f"{BASE}/offsets/5"][:30]


def stray_tmp(c):
    c.put("offsets/.6.7c3e4b8a-0d1f-4f5e-9a7b-3c2d1e0f9a8b.tmp", b"v1\n{")


def missing_state_version(c):
    c.remove("state/0/1/4.delta")


def missing_metadata(c):
    c.remove("metadata")


def gap_in_offsets(c):
    c.remove("offsets/2")
    c.remove("commits/2")


def empty_commit(c):
    c.files[f"{BASE}/commits/5"] = b""


DAMAGE = {
    # name: (damage, expected (level, code), words the message must hold, restorable)
    "missing-commit": (missing_commit, ("warning", "pending-batch"),
                       ["batch 5 was planned but not committed"], True),
    "truncated-offsets": (truncated_offsets, ("error", "corrupt-log"),
                          [f"{BASE}/offsets/5", "line 2 is not valid JSON", "truncated"], False),
    "stray-tmp": (stray_tmp, ("warning", "leftover-temp"),
                  ["leftover temporary file", ".tmp"], True),
    "missing-state-version": (missing_state_version, ("error", "not-restorable"),
                              [f"{BASE}/state/0/1: state version 4 is missing",
                               "needed to rebuild version 6"], False),
    "missing-metadata": (missing_metadata, ("error", "missing-metadata"),
                         [f"{BASE}/metadata is missing",
                          "STREAMING_CHECKPOINT_MISSING_METADATA_FILE"], False),
    "gap": (gap_in_offsets, ("error", "gap"), ["offsets has a gap: batch 2 missing"], False),
    "empty-commit": (empty_commit, ("error", "corrupt-log"),
                     [f"{BASE}/commits/5 is empty (0 bytes)"], False),
}


@pytest.mark.parametrize("name", DAMAGE)
def test_validate_names_each_damage_precisely(name):
    damage, issue, words, restorable = DAMAGE[name]
    ckpt = Checkpoint(6)
    damage(ckpt)
    report = validate(ckpt)
    matching = [i for i in report["issues"] if (i["level"], i["code"]) == issue]
    assert matching, report["issues"]
    assert any(all(w in i["message"] for w in words) for i in matching), matching
    assert report["restorable"] is restorable


def test_a_damaged_last_batch_points_at_the_newest_restorable_one():
    ckpt = Checkpoint(6)
    truncated_offsets(ckpt)
    report = validate(ckpt)
    assert report["restorableBatch"] == 4
    assert report["advice"] == (f"nnlite catalog rollback {BASE} --to-batch 4 makes the query "
                                f"restart from batch 5")


def test_snapshots_shorten_the_chain_a_restore_needs():
    ckpt = Checkpoint(8, snapshot_every=4)
    ckpt.remove("state/0/0/2.delta")      # before the snapshot at version 4: not needed for 8
    found = analyse(ckpt)
    assert streaming.latest_restorable(found) == 7
    store = next(s for s in found.stores if s.partition == "0")
    assert [f.path.rsplit("/", 1)[1] for f in store.chain(7)] == [
        "7.delta", "6.delta", "5.delta", "4.snapshot"]
    assert [f.path.rsplit("/", 1)[1] for f in store.chain(8)] == ["8.snapshot"]
    assert store.chain(3) is None


@pytest.mark.parametrize("name, expected", [
    ("12.delta", (12, layout.DELTA)), ("12.snapshot", (12, layout.SNAPSHOT)),
    ("3.zip", (3, layout.SNAPSHOT)), ("3_6c1d5b0e-8f7a-4c2b-9e1d-0a1b2c3d4e5f.zip",
                                      (3, layout.SNAPSHOT)),
    ("7.changelog", (7, layout.DELTA)), ("schema", None), ("x.delta", None), (".1.delta.crc", None),
])
def test_state_file_names(name, expected):
    assert layout.state_file(name) == expected


def test_discover_finds_each_kind_without_descending_into_a_checkpoint():
    ckpt = Checkpoint(2)
    other = Checkpoint(1, base="/ckpt/deep/q2", ns=ckpt.ns)
    for path in ("/rdd/5c1e/rdd-7/part-00000", "/dstream/app/checkpoint-1700000000000",
                 "/jobs/etl/chk-3/part-00000"):
        from tests.namenode.helpers import write_file
        write_file(ckpt.ns, path)
    found = [(p, k) for p, k, _ in layout.discover(ckpt.ns.tree.root, "/")]
    assert found == [(other.base, "streaming"), (BASE, "streaming"),
                     ("/dstream/app", "dstream"), ("/jobs/etl", "job"), ("/rdd/5c1e", "rdd")]


def test_parse_log_refuses_what_spark_could_not_read():
    assert report.parse_log(b"v1\n{\"a\":1}\n-\n{\"b\":2}", "f") == [{"a": 1}, {"b": 2}]
    for data, words in ((b"", "empty"), (b"{\"a\":1}", "version line"),
                        (b"v1\n{\"a\":", "line 2 is not valid JSON"),
                        (b"v1\n\xff\xfe", "not UTF-8")):
        with pytest.raises(report.LogFormatError, match=words):
            report.parse_log(data, "f")


META = b'{"batchWatermarkMs":0,"batchTimestampMs":1}'


@pytest.mark.parametrize("data, sources", [
    (b"v1\n" + META + b'\n{"logOffset":3}\n-\n{"p":{"0":7}}',
     {"0": {"logOffset": 3}, "1": None, "2": {"p": {"0": 7}}}),
    (b"v1\n" + META + b"\n", {}),
    (b"v2\n" + META + b'\n0:{"logOffset":3}\n1:-\nkafka_in:{"t":{"0":7}}',
     {"0": {"logOffset": 3}, "1": None, "kafka_in": {"t": {"0": 7}}}),
    (b"v2\n" + META + b'\n0:{"logOffset":3}\n', {"0": {"logOffset": 3}}),
], ids=["v1", "v1-no-source", "v2", "v2-trailing-newline"])
def test_offsets_entries_of_both_offset_log_versions(data, sources):
    """OffsetSeqLog.deserialize: v1 lists the sources in order, v2 (OffsetMap) names them."""
    assert report.parse_offsets(data, "f") == ({"batchWatermarkMs": 0, "batchTimestampMs": 1},
                                               sources)


@pytest.mark.parametrize("data, words", [
    (b"v2\n" + META + b"\n-", "line 3 is not <sourceId>:<offset>"),
    # a v1 line in a v2 entry splits at its first colon, leaving '3}' (not JSON)
    (b"v2\n" + META + b'\n{"logOffset":3}', "line 3 is not valid JSON"),
    (b"v2\n" + META + b'\n0:{"logOffset":', "line 3 is not valid JSON"),
    (b"v3\n" + META + b'\n0:{"logOffset":3}', "v3: Spark reads offsets up to v2"),
    (b"v1\n" + META + b'\n{"logOffset":3}\n\n{"a":1}', "line 4 is not valid JSON"),
    (b"v2\n", "no batch metadata line"),
    (b'v2\n{"batchWatermarkMs":0}\n0:-', "no batchTimestampMs"),
])
def test_offsets_entries_spark_could_not_read(data, words):
    with pytest.raises(report.LogFormatError, match=words):
        report.parse_offsets(data, "f")


def test_commit_log_versions_up_to_v3_read():
    """CommitLog.MAX_VERSION is 3 in Spark 4.3 (CommitMetadataV3)."""
    assert report.check_entry("commits", b'v3\n{"nextBatchWatermarkMs":0}', "c") == {
        "nextBatchWatermarkMs": 0}
    with pytest.raises(report.LogFormatError, match="v4: Spark reads commits up to v3"):
        report.check_entry("commits", b'v4\n{"nextBatchWatermarkMs":0}', "c")


def test_a_checkpoint_with_offset_log_v2_restores_and_rolls_back_its_source_log():
    """With OffsetMap entries the file source's log offset is still found (rule 6): a
    missing source entry makes the batch unrestorable, and rollback removes the entries
    after the offset."""
    ckpt = Checkpoint(6, offsets_version=2)
    assert validate(ckpt)["restorable"] and validate(ckpt)["issues"] == []
    found = analyse(ckpt)
    assert report.parse_all(found, ckpt.files)[1] == {}
    assert found.log_offsets[5] == {"0": 5}
    plan = retention.rollback(found, 3)
    assert f"{BASE}/sources/0/4" in plan.paths and f"{BASE}/sources/0/3" not in plan.paths
    ckpt.remove("sources/0/5")
    checked = validate(ckpt)
    assert checked["restorableBatch"] == 4 and not checked["restorable"]
    assert any("sources/0/5 is missing" in i["message"] for i in checked["issues"])


@pytest.mark.parametrize("damage", [None, missing_commit, missing_state_version,
                                    missing_metadata, gap_in_offsets, stray_tmp])
def test_the_quick_ls_row_equals_the_full_one(damage):
    ckpt = Checkpoint(6, snapshot_every=3)
    if damage:
        damage(ckpt)
    assert streaming.quick_summary(ckpt.node(), BASE) == streaming.summary(analyse(ckpt))
