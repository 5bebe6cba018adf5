"""``nnlite namenode --recover``: each test damages a log one way (tests/formats/corrupt.py),
checks that normal startup refuses it, runs recovery through the CLI, then reopens the store.

Every log is START_LOG_SEGMENT at txid 1 then one MKDIR per txid (``/d0`` at txid 2, ...),
so the namespace after recovery says exactly which records were kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite import cli
from nnlite.commands.support import EXIT_FAILED
from nnlite.formats.edits import (
    RECORD_HEADER_SIZE,
    DeleteOp,
    EndLogSegmentOp,
    MkdirOp,
    StartLogSegmentOp,
    read_all,
)
from nnlite.formats.errors import CorruptRecordError, FormatError, TxidGapError
from nnlite.formats.fsimage.md5 import md5_sidecar_text
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import ReplayError
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.image import columns
from nnlite.namenode.namespace.inode import ROOT_INODE_ID
from nnlite.namenode.namespace.namespace import Namespace
from nnlite.namenode.storage.namedir import NameDir
from tests.formats import corrupt
from tests.namenode.helpers import acked

NAMESPACE_ID = 5150
PROMPT = "[c]ontinue"


def mkdir(i: int) -> MkdirOp:
    return MkdirOp(f"/d{i}", ROOT_INODE_ID + 1 + i, 0o755, "hdfs", "supergroup", 1000)


def mkdirs(n: int, first: int = 0) -> list:
    return [mkdir(i) for i in range(first, first + n)]


def new_store(root: Path, edits: bytes, edits_new: bytes | None = None) -> Path:
    """A formatted name dir (image at txid 0) whose edits are replaced by ``edits``."""
    format_dirs([NameDir(root)], namespace_id=NAMESPACE_ID)
    corrupt.write(root / "current" / "edits", edits)
    if edits_new is not None:
        corrupt.write(root / "current" / "edits.new", edits_new)
    return root


def log_of(ops, first_txid: int = 1, **kw) -> corrupt.Log:
    return corrupt.build(ops, first_txid=first_txid, **kw)


def flip_payload(log: corrupt.Log, index: int) -> bytes:
    payload = log.field(index, "payload")
    return corrupt.xor_byte(log.data, payload[len(payload) // 2], 0x5A)


def recover(*dirs: Path, force: bool = False, answers: str | None = None):
    args = ["namenode", "--recover", *(["--force"] if force else [])]
    for d in dirs:
        args += ["--name-dir", str(d)]
    return CliRunner().invoke(cli.main, args, input=answers)


def names(*dirs: Path) -> set[str]:
    with FSNamesystem.open([str(d) for d in dirs]) as fs:
        return set(fs.ns.tree.root.children)


def expect(*indexes) -> set[str]:
    return {f"d{i}" for i in indexes}


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "current").iterdir())}


def refuses_startup(root: Path, error: type) -> None:
    with pytest.raises(error):
        FSNamesystem.open([str(root)])


def check_fresh(root: Path, txid: int) -> None:
    """The recovered dir: an image at ``txid`` and an edits holding only txid + 1."""
    assert read_meta(root / "current" / "fsimage").last_txid == txid
    records, reader = read_all(str(root / "current" / "edits"))
    assert reader.first_txid == txid + 1
    assert records == [(txid + 1, StartLogSegmentOp())]
    assert not (root / "current" / "edits.new").exists()


# ------------------------------------------------------------------------------ corruption

def test_flipped_byte_force_keeps_everything_but_the_bad_record(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(10)])
    damaged = flip_payload(log, 4)                        # txid 5: /d3
    root = new_store(tmp_path / "name", damaged)
    refuses_startup(root, CorruptRecordError)

    result = recover(root, force=True)

    assert result.exit_code == 0, result.output
    assert f"corrupt record in {root / 'current' / 'edits'} at offset {log.start(4)}, " \
           "txid 5" in result.output
    assert "continue loses:   txid 5" in result.output
    assert PROMPT not in result.output                     # --force never asks
    assert (root / "current" / "edits.broken").read_bytes() == damaged
    assert (root / "current" / "fsimage.broken").exists()
    check_fresh(root, 11)
    assert names(root) == expect(0, 1, 2, 4, 5, 6, 7, 8, 9)
    with FSNamesystem.open([str(root)]) as fs:            # the store starts and writes again
        acked(fs).mkdirs("/after", 0o755, fs.identity.superuser)
    assert names(root) == expect(0, 1, 2, 4, 5, 6, 7, 8, 9) | {"after"}


DAMAGES = {
    "crc field": lambda log: corrupt.xor_byte(log.data, log.field(3, "crc")[0], 0xFF),
    "length too large": lambda log: corrupt.put_u32(log.data, log.start(3), 1 << 30),
    "length off by one": lambda log: corrupt.put_u32(
        log.data, log.start(3), log.spans[3][1] - log.start(3) - RECORD_HEADER_SIZE + 1),
    "zeroed record": lambda log: log.data[:log.start(3)] + bytes(
        log.spans[3][1] - log.start(3)) + log.data[log.spans[3][1]:],
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_damaged_frame_is_skipped_and_replay_resyncs(tmp_path, damage):
    log = log_of([StartLogSegmentOp(), *mkdirs(6)])
    root = new_store(tmp_path / "name", damage(log))       # record 3 = txid 4 = /d2
    refuses_startup(root, FormatError)
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "corrupt record" in result.output
    assert names(root) == expect(0, 1, 3, 4, 5)
    check_fresh(root, 7)


def test_garbage_between_records_loses_nothing(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(4)])
    cut = log.start(3)
    root = new_store(tmp_path / "name", log.data[:cut] + b"\x07garbage!" + log.data[cut:])
    refuses_startup(root, FormatError)
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "continue loses:   nothing" in result.output
    assert names(root) == expect(0, 1, 2, 3)


def test_bad_header_is_read_past(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(3)])
    root = new_store(tmp_path / "name", corrupt.xor_byte(log.data, 2, 0x01))
    refuses_startup(root, FormatError)
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "bad header" in result.output
    assert names(root) == expect(0, 1, 2)


# ------------------------------------------------------------------------------ answers

def test_stop_here_keeps_only_what_came_before(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(10)])
    root = new_store(tmp_path / "name", flip_payload(log, 4))
    result = recover(root, answers="s\n")
    assert result.exit_code == 0, result.output
    assert result.output.count(PROMPT) == 1
    assert "stop here loses:  every op from txid 5 on" in result.output
    assert names(root) == expect(0, 1, 2)
    check_fresh(root, 4)


def test_quit_changes_nothing(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(10)])
    root = new_store(tmp_path / "name", flip_payload(log, 4))
    before = snapshot(root)
    result = recover(root, answers="q\n")
    assert result.exit_code == EXIT_FAILED
    assert "RecoveryQuit" in result.output and "nothing was changed" in result.output
    assert snapshot(root) == before
    refuses_startup(root, CorruptRecordError)


def test_always_continue_answers_every_later_problem(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(8)])
    damaged = corrupt.xor_byte(flip_payload(log, 2), log.field(6, "payload")[3], 0x33)
    root = new_store(tmp_path / "name", damaged)
    result = recover(root, answers="a\n")
    assert result.exit_code == 0, result.output
    assert result.output.count(PROMPT) == 1
    assert result.output.count("corrupt record in") == 2
    assert "-> continue (always continue)" in result.output
    assert names(root) == expect(0, 2, 3, 4, 6, 7)


# ------------------------------------------------------------------------------ txids, ops

def test_txid_gap(tmp_path):
    ops = [StartLogSegmentOp(), *mkdirs(6)]
    log = log_of(ops, txids=[1, 2, 3, 4, 7, 8, 9])
    root = new_store(tmp_path / "name", log.data)
    refuses_startup(root, TxidGapError)
    result = recover(root, answers="c\n")
    assert result.exit_code == 0, result.output
    assert f"txid gap in {root / 'current' / 'edits'} at offset {log.start(4)}, txid 7" \
        in result.output
    assert "continue loses:   txids 5..6 (2 ops)" in result.output
    assert names(root) == expect(0, 1, 2, 3, 4, 5)
    check_fresh(root, 9)


def test_repeated_txid_is_skipped(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(4), mkdir(9)], txids=[1, 2, 3, 4, 5, 3])
    root = new_store(tmp_path / "name", log.data)
    refuses_startup(root, TxidGapError)
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "txid out of order" in result.output
    assert names(root) == expect(0, 1, 2, 3)


@pytest.mark.parametrize("answer, kept", [("c", expect(0, 1)), ("s", expect(0))])
def test_unappliable_op(tmp_path, answer, kept):
    ops = [StartLogSegmentOp(), mkdir(0), DeleteOp("/missing", 1000), mkdir(1)]
    root = new_store(tmp_path / "name", log_of(ops).data)
    refuses_startup(root, ReplayError)
    result = recover(root, answers=answer + "\n")
    assert result.exit_code == 0, result.output
    assert "unappliable op" in result.output and "txid 3" in result.output
    assert "File does not exist: /missing" in result.output
    assert names(root) == kept


# ------------------------------------------------------------------------------ segments, dirs

def test_edits_new_is_replayed_and_its_torn_tail_dropped(tmp_path):
    edits = log_of([StartLogSegmentOp(), *mkdirs(3), EndLogSegmentOp()])      # 1..5
    new = log_of([StartLogSegmentOp(), *mkdirs(4, first=3)], first_txid=6)       # 6..10
    damaged_new = flip_payload(new, 2) + new.data[new.start(1):new.start(1) + 5]   # + torn tail
    root = new_store(tmp_path / "name", edits.data, damaged_new)
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "corrupt record in " + str(root / "current" / "edits.new") in result.output
    assert "torn tail in" in result.output
    assert (root / "current" / "edits.new.broken").read_bytes() == damaged_new
    assert names(root) == expect(0, 1, 2, 3, 5, 6)
    check_fresh(root, 10)


def test_stop_in_edits_drops_edits_new_too(tmp_path):
    edits = log_of([StartLogSegmentOp(), *mkdirs(3), EndLogSegmentOp()])
    new = log_of([StartLogSegmentOp(), *mkdirs(2, first=3)], first_txid=6)
    root = new_store(tmp_path / "name", flip_payload(edits, 2), new.data)
    result = recover(root, answers="s\n")
    assert result.exit_code == 0, result.output
    assert "and all of edits.new" in result.output
    assert names(root) == expect(0)
    check_fresh(root, 2)


def test_every_name_dir_is_rewritten_and_backups_are_numbered(tmp_path):
    log = log_of([StartLogSegmentOp(), *mkdirs(5)])
    damaged = flip_payload(log, 2)
    a, b = tmp_path / "a", tmp_path / "b"
    format_dirs([NameDir(a), NameDir(b)], namespace_id=NAMESPACE_ID)
    for d in (a, b):
        corrupt.write(d / "current" / "edits", damaged)
        (d / "current" / "edits.broken").write_bytes(b"an older copy")
    result = recover(a, b, force=True)
    assert result.exit_code == 0, result.output
    for d in (a, b):
        assert (d / "current" / "edits.broken").read_bytes() == b"an older copy"
        assert (d / "current" / "edits.broken.1").read_bytes() == damaged
        check_fresh(d, 6)
    assert snapshot(a)["fsimage"] == snapshot(b)["fsimage"]
    assert names(a, b) == expect(0, 2, 3, 4)


def test_a_clean_log_loses_nothing(tmp_path):
    root = new_store(tmp_path / "name", log_of([StartLogSegmentOp(), *mkdirs(3)]).data)
    result = recover(root)
    assert result.exit_code == 0, result.output
    assert "no problem found" in result.output
    assert names(root) == expect(0, 1, 2)
    check_fresh(root, 4)


def test_force_without_recover_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli.main, ["namenode", "--force", "--name-dir",
                                           str(tmp_path / "n")])
    assert result.exit_code == 2


def test_an_interrupted_swap_is_recovered_from_its_verified_ckpt(tmp_path):
    edits = log_of([StartLogSegmentOp(), *mkdirs(2), EndLogSegmentOp()])      # 1..4
    new = log_of([StartLogSegmentOp(), *mkdirs(3, first=2)], first_txid=5)       # 5..8
    root = new_store(tmp_path / "name", edits.data, flip_payload(new, 2))          # txid 7
    ns = Namespace(clock=lambda: 1000)
    for op in mkdirs(2):
        ns.tree.apply(op)
    current = root / "current"
    info = columns.save(ns.tree, str(current / "fsimage.ckpt"), NAMESPACE_ID, 4)
    (current / "fsimage.ckpt.md5").write_text(md5_sidecar_text(info.md5_hex))
    ckpt = (current / "fsimage.ckpt").read_bytes()
    result = recover(root, force=True)
    assert result.exit_code == 0, result.output
    assert "image txid 4 +" in result.output                  # started from the ckpt
    assert (current / "fsimage.ckpt.broken").read_bytes() == ckpt
    assert not (current / "fsimage.ckpt").exists()
    assert names(root) == expect(0, 1, 2, 4)
    check_fresh(root, 8)
