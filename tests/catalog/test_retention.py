"""Retention and rollback plans: what they remove, what they must keep restorable, and that
applying one is a single DELETE_MANY op that leaves a valid checkpoint."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnlite.catalog import layout, report, retention, streaming
from nnlite.catalog.errors import InvalidRequestError, NotRestorableError
from nnlite.formats import edits
from nnlite.namenode.namespace import delete, xattrs
from tests.catalog.builder import BASE, Checkpoint, unique_id
from tests.namenode.helpers import SUPER


def apply(ckpt: Checkpoint, plan: retention.Plan) -> list:
    _, ops = delete.delete_many(ckpt.ns, plan.paths, SUPER)
    for path in plan.paths:
        ckpt.files.pop(path, None)
    return ops


def scan(ckpt: Checkpoint) -> streaming.Layout:
    return streaming.scan(ckpt.node(), BASE)


def read(ckpt: Checkpoint) -> streaming.Layout:
    """Scanned and its log files parsed, as the service does before a rollback."""
    found = scan(ckpt)
    report.parse_all(found, ckpt.files)
    return found


def pin(ckpt: Checkpoint, *batches: int) -> None:
    xattrs.set_xattr(ckpt.ns, BASE, layout.PINS_XATTR, layout.encode_pins(batches), 3, SUPER)


def test_retain_keeps_the_newest_batches_and_the_state_they_need():
    ckpt = Checkpoint(20, snapshot_every=5)
    plan = retention.retain(scan(ckpt), keep=3)
    assert plan.kept == (17, 18, 19) and plan.removed_batches == tuple(range(17))
    ops = apply(ckpt, plan)
    assert len(ops) == 1 and isinstance(ops[0], edits.DeleteManyOp)
    after = scan(ckpt)
    assert sorted(after.commits) == [17, 18, 19]
    for store in after.stores:      # version 18 rebuilds from snapshot 15 + deltas 16..18
        assert sorted(store.versions) == [15, 16, 17, 18, 19, 20]
        assert store.versions[15].keys() == {"snapshot"}
    assert report.validate(after, ckpt.files)["restorable"]


def test_a_pinned_batch_and_its_state_survive_retention():
    ckpt = Checkpoint(12, snapshot_every=5)
    pin(ckpt, 7)
    apply(ckpt, retention.retain(scan(ckpt), keep=2))
    after = scan(ckpt)
    assert sorted(after.commits) == [7, 10, 11]
    assert not streaming.problems(after, 7)
    result = report.validate(after, ckpt.files)
    assert result["restorable"], result["issues"]


def test_retain_never_touches_the_in_flight_batch():
    ckpt = Checkpoint(6, pending=True)
    ckpt.put("state/0/0/7.delta", b"in flight")
    apply(ckpt, retention.retain(scan(ckpt), keep=1))
    after = scan(ckpt)
    # offsets 4 stay too: a restart after kept batch 5 reads them
    assert sorted(after.offsets) == [4, 5, 6]
    assert 7 in after.stores[0].versions


def test_retain_of_keep_zero_is_refused():
    with pytest.raises(InvalidRequestError, match="at least 1"):
        retention.retain(scan(Checkpoint(2)), keep=0)


def test_rollback_removes_later_batches_sources_and_state():
    ckpt = Checkpoint(10, pending=True)
    plan = retention.rollback(read(ckpt), 6)
    assert plan.removed_batches == (7, 8, 9, 10)
    apply(ckpt, plan)
    after = scan(ckpt)
    assert after.last_committed == 6 and max(after.offsets) == 6
    assert max(int(n) for n in after.sources["0"]) == 6
    assert all(max(s.versions) == 7 for s in after.stores)
    assert report.validate(after, ckpt.files)["restorable"]


def test_rollback_to_a_batch_that_cannot_be_restored_is_refused_and_changes_nothing():
    ckpt = Checkpoint(8)
    ckpt.remove("state/0/1/4.delta")
    # versions 4 and up need 4.delta: batches 3..7 do not restore, 2 is the nearest that does
    with pytest.raises(NotRestorableError, match="state version 4 is missing.*nearest batch "
                                                 "that restores is 2"):
        retention.rollback(scan(ckpt), 5)
    with pytest.raises(NotRestorableError, match="not committed.*nearest batch that restores "
                                                 "is 2 \\(--to-batch 2\\)"):
        retention.rollback(scan(ckpt), 11)


def test_after_retain_the_oldest_kept_batch_still_rolls_back():
    """Spark's restart after batch k reads offsets k - 1 as the committed offsets
    (MicroBatchExecution.validateOffsetLogAndGetPrevOffset): retention keeps them, and a
    batch whose predecessor's offsets are gone is refused, naming the nearest that restores."""
    ckpt = Checkpoint(10)
    apply(ckpt, retention.retain(scan(ckpt), keep=3))
    after = scan(ckpt)
    assert sorted(after.commits) == [7, 8, 9] and sorted(after.offsets) == [6, 7, 8, 9]
    apply(ckpt, retention.rollback(read(ckpt), 7))
    assert not streaming.problems(scan(ckpt), 7)
    ckpt.remove("offsets/6")
    assert "offsets/6 is missing: restarting after batch 7 reads it" in \
        streaming.problems(scan(ckpt), 7)[0]
    with pytest.raises(NotRestorableError, match="no batch of it restores"):
        retention.rollback(scan(ckpt), 7)


@settings(max_examples=40, deadline=None)
@given(batches=st.integers(1, 14), keep=st.integers(1, 6), snapshot=st.sampled_from([0, 3, 5]),
       pins=st.sets(st.integers(0, 13), max_size=3))
def test_after_retain_every_kept_batch_still_restores(batches, keep, snapshot, pins):
    ckpt = Checkpoint(batches, snapshot_every=snapshot)
    pins = {p for p in pins if p < batches}
    if pins:
        pin(ckpt, *pins)
    plan = retention.retain(scan(ckpt), keep)
    apply(ckpt, plan)
    after = scan(ckpt)
    for batch in plan.kept:
        assert not streaming.problems(after, batch), batch
    assert set(plan.kept) >= pins | {batches - 1}
    assert report.validate(after, ckpt.files)["restorable"]


def test_a_large_retention_is_cut_into_records_under_the_limit():
    ckpt = Checkpoint(40, partitions=3)
    ckpt.ns.max_record = 2048           # as if the checkpoint were much larger
    plan = retention.retain(scan(ckpt), keep=2)
    pieces = retention.chunks(plan.paths, ckpt.ns.max_record // 2)
    assert len(pieces) > 1 and sum(pieces, ()) == plan.paths
    ops = []
    for piece in pieces:
        ops += delete.delete_many(ckpt.ns, piece, SUPER)[1]
    assert all(len(edits.encode_payload(1, op)) <= ckpt.ns.max_record for op in ops)
    assert sorted(scan(ckpt).commits) == [38, 39]


def test_rollback_keeps_the_file_source_log_up_to_the_offset_the_batch_recorded():
    """Source log ids are the file source's own (FileStreamSourceOffset.logOffset), not batch
    ids: a batch that read no new file (a no-data batch) leaves them behind. The rollback
    removes the entries after the offset ``offsets/<b>`` records, and no other source's."""
    ckpt = Checkpoint(0)
    for batch in range(8):
        ckpt.add_batch(batch)
        # batches 3 and 5 planned no new file: the source log stops one, then two behind
        offset = batch - (batch >= 3) - (batch >= 5)
        ckpt.remove(f"offsets/{batch}")
        ckpt.put(f"offsets/{batch}", f"v1\n{{\"batchTimestampMs\":1}}\n{{\"logOffset\":{offset}}}"
                 f"\n{{\"topic\":{{\"0\":{batch}}}}}".encode())
        ckpt.remove(f"sources/0/{batch}")
    for entry in range(6):
        ckpt.put(f"sources/0/{entry}", b'v1\n{"path":"x"}')
    ckpt.put("sources/1/0", b'v1\n{"topic":{"0":0}}')      # e.g. Kafka's initial offsets
    found = read(ckpt)
    assert found.log_offsets[6] == {"0": 4}               # sources/1 is not a file source
    plan = retention.rollback(found, 6)
    assert sorted(p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in plan.paths
                  if "/sources/" in p) == ["0/5"]
    apply(ckpt, plan)
    assert not streaming.problems(read(ckpt), 6)


def test_a_rollback_behind_a_cleaned_up_compaction_is_refused():
    """``CompactibleFileStreamLog.allFiles`` reads the entries from the compaction before the
    log offset up to it; once Spark has deleted the entries a later compaction holds, rolling
    back before that compaction would fail Spark's restart ("... doesn't exist")."""
    ckpt = Checkpoint(14)
    for entry in range(14):
        ckpt.remove(f"sources/0/{entry}")
    ckpt.put("sources/0/9.compact", b'v1\n{"path":"x"}')
    for entry in range(10, 14):
        ckpt.put(f"sources/0/{entry}", b'v1\n{"path":"x"}')
    found = read(ckpt)
    assert streaming.source_entries(found, "0", 12) == ["9.compact", "10", "11", "12"]
    assert not streaming.problems(found, 12)
    with pytest.raises(NotRestorableError, match="sources/0/0 is missing.*allFiles.*nearest "
                                                 "batch that restores is 9"):
        retention.rollback(found, 7)
    apply(ckpt, retention.rollback(found, 10))
    assert sorted(read(ckpt).sources["0"]) == ["10", "9.compact"]


def test_the_compact_interval_spark_derives():
    derive = streaming.derive_compact_interval
    assert [derive(10, 9), derive(10, 19), derive(10, 29), derive(5, 11), derive(10, 4)] == \
        [10, 20, 10, 6, 5]


def test_async_progress_tracking_reads_the_newest_offsets_below_the_batch():
    """With asyncProgressTrackingEnabled Spark writes offsets and commits only now and then,
    and a restart reads the newest offsets entry below the batch
    (AsyncProgressTrackingMicroBatchExecution.validateOffsetLogAndGetPrevOffset). Marked so,
    the catalog follows that; unmarked, it applies the ordinary rule and says why."""
    ckpt = Checkpoint(9, partitions=0)
    for gap in (2, 3, 6):
        ckpt.remove(f"offsets/{gap}")
        ckpt.remove(f"commits/{gap}")
    [message] = streaming.problems(read(ckpt), 7)
    assert "offsets/6 is missing" in message and "reads offsets/5 instead" in message
    xattrs.set_xattr(ckpt.ns, BASE, layout.ASYNC_PROGRESS_XATTR, b"true", 3, SUPER)
    found = read(ckpt)
    assert streaming.restart_reads(found, 7) == 5 and streaming.restart_reads(found, 4) == 1
    assert [b for b in sorted(found.commits) if not streaming.problems(found, b)] == \
        [0, 1, 4, 5, 7, 8]
    plan = retention.retain(found, keep=2)
    apply(ckpt, plan)
    assert sorted(scan(ckpt).offsets) == [5, 7, 8]        # 5: what a restart after 7 reads


# ------------------------------------------- checkpoint format version 2 (unique ids)

def names(paths) -> list[str]:
    return sorted(p[len(BASE) + 1:] for p in paths)


def test_format_v2_retention_keeps_the_committed_chains_and_removes_leftovers():
    """Each kept batch's chain is that of the ids its commits record (RocksDB.load with
    the commit's stateStoreCkptId): an uncommitted attempt's file of the same version is
    neither kept nor mistaken for it; after retention each version has one id left, so the
    chains still resolve with their older commits gone."""
    ckpt = Checkpoint(8, snapshot_every=3, unique_ids=True)
    leftover = ckpt.put(ckpt.state_name(8, 0, "delta", attempt=1), b"attempt 1")
    checked = report.validate(read(ckpt), ckpt.files)
    assert checked["restorable"]
    assert [(i["code"], i["path"]) for i in checked["issues"]] == [
        ("leftover-unique-id", leftover)]
    plan = retention.retain(read(ckpt), keep=2)
    assert plan.kept == (6, 7) and leftover in plan.paths
    apply(ckpt, plan)
    after = read(ckpt)
    assert sorted(after.commits) == [6, 7]
    for store in after.stores:      # versions 7 and 8 replay onto the snapshot of 6
        assert sorted(store.unique) == [6, 7, 8]
        assert [kinds.keys() for kinds in store.unique[6].values()] == [{"snapshot"}]
    assert report.validate(after, ckpt.files)["issues"] == []
    assert not streaming.problems(after, 6) and not streaming.problems(after, 7)


def test_format_v2_a_missing_committed_file_is_not_replaced_by_a_leftover():
    """The file the commit names is gone and another attempt's file of that version is
    there: Spark would not read it, so the batch does not restore (before: restorable, as
    the version had a file)."""
    ckpt = Checkpoint(6, unique_ids=True)
    ckpt.put(ckpt.state_name(4, 1, "delta", attempt=1), b"attempt 1")
    ckpt.remove(ckpt.state_name(4, 1, "delta"))
    found = read(ckpt)
    [why] = streaming.problems(found, 3)
    assert why == (f"{BASE}/state/0/1: state version 4 is missing: no file of unique id "
                   f"{unique_id(4, 1)}, which commits/3 records for it")
    assert "(needed to rebuild version 6)" in streaming.problems(found, 5)[0]
    assert streaming.latest_restorable(found, set()) == 2
    with pytest.raises(NotRestorableError, match="no file of unique id"):
        retention.rollback(found, 4)


def test_format_v2_without_the_commits_only_a_single_id_resolves():
    """Unread commits (ls reads none): a version whose files are of one id resolves to it;
    with two ids nothing tells which one a restore reads, and retention keeps both."""
    ckpt = Checkpoint(5, unique_ids=True)
    assert streaming.latest_restorable(scan(ckpt)) == 4
    ckpt.put(ckpt.state_name(3, 0, "delta", attempt=1), b"attempt 1")
    found = scan(ckpt)
    assert "files of unique ids" in streaming.problems(found, 4)[0]
    plan = retention.retain(found, keep=1)
    assert not [p for p in plan.paths if "/state/" in p]


def test_ls_reads_only_the_commits_that_tell_a_leftover_from_the_committed_file():
    """``ls`` reads no file, but where a version has files of two ids it reads the commit
    of that version (``streaming.ambiguous_commits``) and says what validate says."""
    ckpt = Checkpoint(5, unique_ids=True)
    ckpt.put(ckpt.state_name(3, 0, "delta", attempt=1), b"attempt 1")
    assert streaming.quick_summary(ckpt.node(), BASE)["health"] == "degraded"
    read = []

    def resolve(found):
        refs = streaming.ambiguous_commits(found)
        read.extend(ref.path for ref in refs)
        report.parse_all(found, {ref.path: ckpt.files[ref.path] for ref in refs})

    row = streaming.quick_summary(ckpt.node(), BASE, resolve)
    assert (row["health"], row["restorableBatch"]) == ("ok", 4)
    assert read == [f"{BASE}/commits/2"]


def test_checksum_sidecars_go_with_their_files():
    """ChecksumCheckpointFileManager.delete removes a file's ``.crc`` with it: retention
    and rollback do too, and an orphan ``.crc`` of a removed version goes as well."""
    ckpt = Checkpoint(6, snapshot_every=3, unique_ids=True)
    for path in [p for p in ckpt.files if "/state/0/" in p and "_metadata" not in p]:
        ckpt.put(path[len(BASE) + 1:] + ".crc", b"{}")
    ckpt.put(ckpt.state_name(2, 0, "delta", attempt=1) + ".crc", b"{}")   # an orphan
    found = read(ckpt)
    assert report.validate(found, ckpt.files)["issues"] == []
    plan = retention.retain(found, keep=2)        # 5 reads 3's zip, 4, 5; 6 its zip
    state = names(p for p in plan.paths if "/state/" in p)
    assert state == sorted([ckpt.state_name(v, p, "delta") + suffix for v in (1, 2, 3, 6)
                            for p in range(2) for suffix in ("", ".crc")] +
                           [ckpt.state_name(2, 0, "delta", attempt=1) + ".crc"])
    assert plan.removed_state_files == 8
    apply(ckpt, plan)
    rolled = retention.rollback(read(ckpt), 4)
    assert names(p for p in rolled.paths if "/state/" in p) == sorted(
        ckpt.state_name(6, p, "snapshot") + suffix for p in range(2) for suffix in ("", ".crc"))


def test_a_broken_chain_keeps_its_orphan_sidecars_as_evidence():
    """Where a kept batch's chain is broken retention keeps that store's files below it as
    they are, and their sidecars, an orphan's included; another store's orphans go."""
    ckpt = Checkpoint(6, snapshot_every=3, unique_ids=True)   # 5 reads 3's zip, 4, 5
    for p in range(2):
        ckpt.put(ckpt.state_name(2, p, "delta") + ".crc", b"{}")
        ckpt.remove(ckpt.state_name(2, p, "delta"))          # orphans: their files gone
    ckpt.remove(ckpt.state_name(5, 0, "delta"))               # partition 0 broken at 5
    plan = retention.retain(read(ckpt), keep=2)
    assert f"{BASE}/{ckpt.state_name(2, 0, 'delta')}.crc" not in plan.paths
    assert f"{BASE}/{ckpt.state_name(2, 1, 'delta')}.crc" in plan.paths
