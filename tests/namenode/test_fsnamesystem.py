"""FSNamesystem on real name directories: format, the ownership lock, safe mode, save and reopen,
redundant dirs resynced from each other, torn tails, corruption, and group commit."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from nnlite.formats.edits import (
    HEADER_SIZE,
    RECORD_HEADER_SIZE,
    EditsReader,
    MkdirOp,
    encode_record,
)
from nnlite.formats.errors import CorruptRecordError
from nnlite.namenode import errors
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, IMAGE, IMAGE_MD5, NameDir
from tests.namenode.helpers import USER, acked, dump, formatted, open_fs

REPO = Path(__file__).resolve().parents[2]
def populate(fs: FSNamesystem) -> None:
    """A few ops of several kinds."""
    acked(fs).mkdirs("/data/in", 0o755, USER)
    acked(fs).create("/data/in/part-0", USER, replication=2)
    acked(fs).set_xattr("/data", "user.owner", b"etl", 1, USER)
    acked(fs).set_quota("/data", 100, None, USER)
    acked(fs).rename("/data/in/part-0", "/data/part-0", False, USER)
    acked(fs).set_permission("/data", 0o1777, USER)


def reopened_dump(dirs) -> dict:
    with open_fs(dirs) as fs:
        return dump(fs.ns)


def current(d: str, name: str) -> Path:
    return Path(d) / "current" / name


def record_starts(data: bytes) -> list[int]:
    """Offsets of the records of an edits file, from their length fields."""
    starts, off = [], HEADER_SIZE
    while off + RECORD_HEADER_SIZE <= len(data):
        starts.append(off)
        off += RECORD_HEADER_SIZE + struct.unpack_from("<I", data, off)[0]
    return starts


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


# ----------------------------------------------------------------------------- format and lock

def test_format_writes_the_documented_files(tmp_path):
    [d] = formatted(tmp_path)
    names = sorted(p.name for p in (Path(d) / "current").iterdir())
    assert names == ["VERSION", EDITS, IMAGE, IMAGE_MD5]
    assert NameDir(d).namespace_id() == 1234
    with open_fs([d]) as fs:
        loaded, tree = fs.loaded, fs.ns.tree
        assert (loaded.image_txid, loaded.last_txid, tree.dirs, tree.files) == (0, 1, 1, 0)


def test_format_refuses_to_clobber_without_force(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        acked(fs).mkdirs("/keep", 0o755, USER)
    with pytest.raises(errors.NameDirError, match="already formatted"):
        format_dirs([NameDir(d) for d in dirs])
    assert reopened_dump(dirs)["root"]["children"].keys() == {"keep"}
    format_dirs([NameDir(d) for d in dirs], force=True, namespace_id=99)
    with open_fs(dirs) as fs:
        assert (fs.namespace_id, fs.ns.tree.root.children) == (99, {})


def test_a_second_open_is_refused_while_the_first_holds_the_dirs(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs):
        with pytest.raises(errors.NameDirError, match="in use"):
            open_fs(dirs)
        with pytest.raises(errors.NameDirError, match="in use"):
            format_dirs([NameDir(d) for d in dirs], force=True)
    open_fs(dirs).close()                       # released on close


def test_another_process_cannot_open_the_dirs(tmp_path):
    dirs = formatted(tmp_path)
    code = textwrap.dedent("""
        import sys
        from nnlite.namenode.errors import NameDirError
        from nnlite.namenode.fsnamesystem import FSNamesystem
        try:
            FSNamesystem.open(sys.argv[1:])
        except NameDirError as exc:
            print(exc)
            sys.exit(3)
    """)
    with open_fs(dirs):
        done = subprocess.run([sys.executable, "-c", code, *dirs], cwd=REPO,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert f"pid {os.getpid()}" in done.stdout


# ----------------------------------------------------------------------------- writes and reopen

def test_acknowledged_writes_survive_a_reopen(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        populate(fs)
        assert fs.journal.synced_txid == fs.journal.txid == 7
        expected = dump(fs.ns)
    with open_fs(dirs) as fs:
        assert (fs.loaded.replayed, fs.loaded.last_txid) == (7, 7)   # START + 6 ops
        assert dump(fs.ns) == expected


def test_a_refused_request_logs_nothing(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        populate(fs)
        size, txid = current(dirs[0], EDITS).stat().st_size, fs.journal.txid
        with pytest.raises(errors.FileAlreadyExistsError):
            acked(fs).create("/data/part-0", USER)
        with pytest.raises(errors.AccessControlError):
            acked(fs).set_quota("/", 5, 5, "mallory")
        assert acked(fs).delete("/missing", True, USER) is False
        assert (current(dirs[0], EDITS).stat().st_size, fs.journal.txid) == (size, txid)


def test_safe_mode_refuses_writes_and_allows_reads(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        populate(fs)
        fs.set_safe_mode(True)
        before, txid = dump(fs.ns), fs.journal.txid
        for call in (lambda: acked(fs).mkdirs("/x", 0o755, USER),
                     lambda: acked(fs).create("/x", USER),
                     lambda: acked(fs).delete("/data", True, USER),
                     lambda: acked(fs).set_times("/data", 1, 1, USER)):
            with pytest.raises(errors.SafeModeError):
                call()
        caller = fs.caller(USER)
        assert fs.read(lambda ns: ns.status("/data/part-0", caller)).replication == 2
        assert (dump(fs.ns), fs.journal.txid, fs.report()["safeMode"]) == (before, txid, True)
        fs.set_safe_mode(False)
        assert acked(fs).mkdirs("/x", 0o755, USER) is True


def test_save_namespace_requires_safe_mode(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs, pytest.raises(errors.SafeModeError):
        fs.save_namespace()


def test_save_namespace_then_reopen_loads_the_image(tmp_path):
    dirs = formatted(tmp_path, 2)
    with open_fs(dirs) as fs:
        populate(fs)
        fs.set_safe_mode(True)
        assert fs.save_namespace() == 7
        fs.set_safe_mode(False)
        acked(fs).mkdirs("/after", 0o700, USER)
        report = fs.report()
        expected = dump(fs.ns)
    assert (report["lastCheckpointTxid"], report["transactionsSinceLastCheckpoint"]) == (7, 2)
    reader = EditsReader(str(current(dirs[1], EDITS)))
    assert [txid for txid, _ in reader] == [8, 9]         # START of the new segment, mkdirs
    with open_fs(dirs) as fs:
        assert (fs.loaded.image_txid, fs.loaded.replayed, fs.loaded.last_txid) == (7, 2, 9)
        assert dump(fs.ns) == expected


def test_roll_then_reopen_replays_both_segments(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        acked(fs).mkdirs("/a", 0o755, USER)
        assert fs.roll_edits() == 3                         # mkdirs at 2, END_LOG_SEGMENT at 3
        acked(fs).mkdirs("/b", 0o755, USER)
        assert fs.report()["segment"] == EDITS_NEW
        expected = dump(fs.ns)
    with open_fs(dirs) as fs:
        assert (fs.loaded.segment, fs.loaded.last_txid) == (EDITS_NEW, 5)
        assert dump(fs.ns) == expected


def test_a_second_roll_before_the_checkpoint_is_a_no_op(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        acked(fs).mkdirs("/a", 0o755, USER)
        assert fs.roll_edits() == 3
        acked(fs).mkdirs("/b", 0o755, USER)
        assert fs.roll_edits() == 3                         # edits.new is kept, not restarted
        acked(fs).mkdirs("/c", 0o755, USER)
    with open_fs(dirs) as fs:
        assert sorted(fs.ns.tree.root.children) == ["a", "b", "c"]
        assert fs.roll_edits() == 3


# ----------------------------------------------------------------------------- redundant dirs

@pytest.fixture
def two_dirs(tmp_path):
    """Two formatted dirs holding a saved image and edits after it; returns (dirs, dump)."""
    dirs = formatted(tmp_path, 2)
    with open_fs(dirs) as fs:
        populate(fs)
        fs.set_safe_mode(True)
        fs.save_namespace()
        fs.set_safe_mode(False)
        acked(fs).mkdirs("/data/later", 0o755, USER)
        acked(fs).create("/data/later/f", USER)
        expected = dump(fs.ns)
    return dirs, expected


def same_files(dirs, *names) -> bool:
    return all(current(dirs[0], n).read_bytes() == current(dirs[1], n).read_bytes()
               for n in names)


def _delete(path: Path) -> None:
    path.unlink()


def _flip_middle(path: Path) -> None:
    flip_byte(path, path.stat().st_size // 2)


def _truncate_to(size):
    def damage(path: Path) -> None:
        with open(path, "r+b") as f:
            f.truncate(size(path))
    return damage


@pytest.mark.parametrize("damaged", [0, 1])
@pytest.mark.parametrize("name, damage", [
    (IMAGE, _delete), (IMAGE, _flip_middle), (IMAGE_MD5, _delete),
    (IMAGE, _truncate_to(lambda p: p.stat().st_size - 10)),
], ids=["image deleted", "image byte flipped", "sidecar deleted", "image truncated"])
def test_a_damaged_image_is_restored_from_the_other_dir(two_dirs, damaged, name, damage):
    dirs, expected = two_dirs
    damage(current(dirs[damaged], name))
    assert reopened_dump(dirs) == expected
    assert same_files(dirs, IMAGE, IMAGE_MD5, EDITS)


@pytest.mark.parametrize("damaged", [0, 1])
@pytest.mark.parametrize("damage", [
    _delete,
    _truncate_to(lambda p: HEADER_SIZE),
    _truncate_to(lambda p: p.stat().st_size - 3),
], ids=["edits deleted", "edits cut to the header", "edits cut mid-record"])
def test_lost_or_short_edits_are_restored_from_the_other_dir(two_dirs, damaged, damage):
    dirs, expected = two_dirs
    damage(current(dirs[damaged], EDITS))
    assert reopened_dump(dirs) == expected
    assert same_files(dirs, IMAGE, IMAGE_MD5, EDITS)


def test_an_unformatted_dir_is_restored_from_a_formatted_one(tmp_path):
    [a] = formatted(tmp_path, names=["a"])
    b = str(tmp_path / "b")
    with open_fs([a]) as fs:
        populate(fs)
        expected = dump(fs.ns)
    assert reopened_dump([a, b]) == expected
    assert NameDir(b).namespace_id() == 1234
    assert same_files([a, b], IMAGE, IMAGE_MD5, EDITS)
    assert reopened_dump([b]) == expected


@pytest.mark.parametrize("stale", [0, 1])
def test_a_dir_left_behind_before_a_save_does_not_hide_later_ops(tmp_path, stale):
    """A dir that missed a save (say it was dropped after an I/O error) keeps a long old
    segment; the ops acknowledged after the save are in the other dir's short new one."""
    dirs = formatted(tmp_path, 2)
    with open_fs(dirs) as fs:
        populate(fs)
        for i in range(20):
            acked(fs).mkdirs(f"/bulk/{i}", 0o755, USER)
    old = tmp_path / "old"
    shutil.copytree(Path(dirs[stale]) / "current", old)
    with open_fs(dirs) as fs:
        fs.set_safe_mode(True)
        fs.save_namespace()
        fs.set_safe_mode(False)
        acked(fs).mkdirs("/acknowledged", 0o755, USER)
        expected = dump(fs.ns)
    shutil.rmtree(Path(dirs[stale]) / "current")
    shutil.copytree(old, Path(dirs[stale]) / "current")
    assert reopened_dump(dirs) == expected
    assert same_files(dirs, IMAGE, IMAGE_MD5, EDITS)


def test_dirs_of_different_namespaces_are_refused(tmp_path):
    [a] = formatted(tmp_path, names=["a"])
    b = str(tmp_path / "b")
    format_dirs([NameDir(b)], namespace_id=777)
    with pytest.raises(errors.NameDirError, match="different namespaces"):
        open_fs([a, b])
    open_fs([a]).close()                        # the failed open released its locks


# ----------------------------------------------------------------------------- damage to edits

def test_a_torn_tail_is_truncated_and_reported(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        populate(fs)
        expected = dump(fs.ns)
    edits = current(dirs[0], EDITS)
    good = edits.stat().st_size
    torn = encode_record(8, MkdirOp("/torn", 99999, 0o755, "x", "y", 1))[:-3]
    with open(edits, "ab") as f:
        f.write(torn)
    with open_fs(dirs) as fs:
        [(path, tail)] = fs.loaded.torn_tails
        assert (path, tail.offset, tail.length) == (str(edits), good, len(torn))
        assert edits.stat().st_size == good and dump(fs.ns) == expected
        acked(fs).mkdirs("/next", 0o755, USER)                  # appends after the good records
    with open_fs(dirs) as fs:
        assert fs.loaded.torn_tails == [] and fs.loaded.last_txid == 8
        assert "next" in fs.ns.tree.root.children


def test_a_torn_tail_in_one_of_two_dirs_is_cut_in_both(tmp_path):
    dirs = formatted(tmp_path, 2)
    with open_fs(dirs) as fs:
        populate(fs)
        expected = dump(fs.ns)
    with open(current(dirs[1], EDITS), "ab") as f:
        f.write(b"\x10\x00\x00")
    with open_fs(dirs) as fs:
        assert len(fs.loaded.torn_tails) == 1 and dump(fs.ns) == expected
    assert same_files(dirs, EDITS)


def test_a_flipped_byte_in_the_middle_of_edits_stops_startup(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        populate(fs)
    edits = current(dirs[0], EDITS)
    starts = record_starts(edits.read_bytes())
    flip_byte(edits, starts[3] + RECORD_HEADER_SIZE + 2)
    for _ in range(2):                          # the failed open released the dir
        with pytest.raises(CorruptRecordError) as info:
            open_fs(dirs)
        assert (info.value.path, info.value.offset, info.value.txid) == (str(edits),
                                                                         starts[3], 4)


# ----------------------------------------------------------------------------- group commit

def test_group_commit_batches_concurrent_writers(tmp_path):
    dirs = formatted(tmp_path)
    threads, per_thread = 16, 200
    with open_fs(dirs) as fs:
        barrier = threading.Barrier(threads)
        failures = []

        def writer(t: int) -> None:
            barrier.wait()
            try:
                for i in range(per_thread):
                    acked(fs).mkdirs(f"/t{t}/d{i}", 0o755, USER)
            except Exception as exc:            # reported below, on the main thread
                failures.append(exc)

        workers = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        metrics = fs.journal.metrics
        assert failures == []
        total = threads * per_thread
        assert (metrics.txns, metrics.batched, fs.journal.synced_txid) == (total, total,
                                                                          total + 1)
        assert metrics.syncs < total, "group commit never batched two ops into one sync"
        assert fs.report()["syncs"] == metrics.syncs
    with open_fs(dirs) as fs:
        assert fs.ns.tree.dirs == 1 + threads * (per_thread + 1)


def test_every_returned_write_is_durable(tmp_path):
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        for i in range(5):
            acked(fs).mkdirs(f"/d{i}", 0o755, USER)
            assert fs.journal.synced_txid == fs.journal.txid == i + 2
        assert fs.journal.metrics.syncs == 5


def test_a_dir_failing_io_is_dropped_and_writes_continue(tmp_path):
    """One dir's edits writes fail (the journal.write:<dir> fault point raises EIO): the dir
    is reported failed and dropped, writes go on durably in the other, and a reopen loads
    everything from the healthy dir and resyncs the failed one."""
    from nnlite.durability import faults
    dirs = formatted(tmp_path, 2, names=["good", "bad"])
    fs = open_fs(dirs)
    try:
        acked(fs).mkdirs("/before", 0o755, "root")
        faults.configure("journal.write:bad=error")
        acked(fs).mkdirs("/during", 0o755, "root")
        acked(fs).mkdirs("/after", 0o755, "root")
        report = fs.report()
        states = {Path(d["path"]).name: d["healthy"] for d in report["nameDirs"]}
        assert states == {"good": True, "bad": False}
        assert "injected I/O error" in next(d["failure"] for d in report["nameDirs"]
                                            if not d["healthy"])
    finally:
        faults.configure("")
        fs.close()
    with FSNamesystem.open(dirs) as again:
        for path in ("/before", "/during", "/after"):
            assert again.ns.tree.lookup((path[1:],)) is not None
    assert current(dirs[0], EDITS).read_bytes() == current(dirs[1], EDITS).read_bytes()

