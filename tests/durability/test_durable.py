"""The durability policy (durability/durable.py): a published file is the old one or the new
one, never a mix and never a temp name left behind; a slow sync is logged."""

from __future__ import annotations

import logging
import os

from nnlite.durability import durable


def test_write_atomic_publishes_the_bytes_and_leaves_no_temp_name(tmp_path):
    target = tmp_path / "VERSION"
    durable.write_atomic(target, b"first")
    durable.write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert os.listdir(tmp_path) == ["VERSION"]


def test_until_the_publish_a_reader_sees_the_old_file(tmp_path):
    """A process that dies between writing the temp file and the rename leaves the old file
    whole beside a temp name that nothing reads."""
    final, tmp = tmp_path / "fsimage", tmp_path / "fsimage.tmp"
    final.write_bytes(b"old image")
    tmp.write_bytes(b"new ima")                             # cut short: never published
    assert final.read_bytes() == b"old image"
    tmp.write_bytes(b"new image")
    durable.publish(tmp, final)
    assert final.read_bytes() == b"new image" and not tmp.exists()


def test_rename_and_remove_are_durable_and_remove_is_idempotent(tmp_path):
    (tmp_path / "edits.new").write_bytes(b"ops")
    durable.rename_durably(tmp_path / "edits.new", tmp_path / "edits")
    assert (tmp_path / "edits").read_bytes() == b"ops"
    durable.remove_durably(tmp_path / "edits")
    durable.remove_durably(tmp_path / "edits")              # already gone: nothing to do
    assert os.listdir(tmp_path) == []


def test_sync_fd_times_the_sync_and_logs_a_slow_one(tmp_path, monkeypatch, caplog):
    with open(tmp_path / "edits", "wb") as f:
        f.write(b"record")
        f.flush()
        assert durable.sync_fd(f.fileno(), "edits") >= 0
        assert "slow sync" not in caplog.text
        monkeypatch.setattr(durable, "SLOW_SYNC_SECONDS", -1.0)   # every sync is slow now
        with caplog.at_level(logging.WARNING, logger=durable.__name__):
            durable.sync_fd(f.fileno(), "edits")
    assert "slow sync of edits" in caplog.text
