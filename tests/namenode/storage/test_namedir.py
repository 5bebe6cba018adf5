"""Name directories (namenode/storage/namedir.py): one process owns a dir at a time, VERSION
reads back what was written and refuses what this build cannot use, format never clobbers by
accident, and a copy into a dir is whole or not there."""

from __future__ import annotations

import os

import pytest

from nnlite.namenode.errors import NameDirError
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import VERSION, NameDir


def formatted(root, namespace_id: int = 42) -> NameDir:
    d = NameDir(root)
    namedir.prepare_for_format(d, force=False)
    d.write_version(namespace_id, 1_700_000_000_000)
    return d


def test_version_reads_back_what_was_written(tmp_path):
    d = formatted(tmp_path / "name", 12345)
    fields = d.read_version()
    assert d.is_formatted() and d.namespace_id() == 12345
    assert (fields["cTime"], fields["storageType"]) == ("1700000000000", "NAME_NODE")


@pytest.mark.parametrize("text, error", [
    ("namespaceID=1\nlayoutVersion=1\ncTime=0\n", "lacks storageType"),
    ("namespaceID=1\nlayoutVersion=1\ncTime=0\nstorageType=NAME_NODE\nno equals sign\n",
     "Malformed line"),
    ("namespaceID=1\nlayoutVersion=99\ncTime=0\nstorageType=NAME_NODE\n",
     "has layout version 99, this build uses 1"),
], ids=["missing key", "malformed", "other layout"])
def test_a_version_this_build_cannot_use_is_refused_naming_the_file(tmp_path, text, error):
    d = formatted(tmp_path / "name")
    d.file(VERSION).write_text(text)
    with pytest.raises(NameDirError, match=error) as raised:
        d.read_version()
    assert str(d.file(VERSION)) in str(raised.value)


def test_one_owner_at_a_time_named_by_its_pid(tmp_path):
    first, second = NameDir(tmp_path / "name"), NameDir(tmp_path / "name")
    first.lock()
    with pytest.raises(NameDirError, match=f"in use by another process \\(pid {os.getpid()}\\)"):
        second.lock()
    first.unlock()
    second.lock()
    second.unlock()


def test_locking_a_set_takes_every_dir_or_none(tmp_path):
    held = NameDir(tmp_path / "b")
    held.lock()
    a, b = NameDir(tmp_path / "a"), NameDir(tmp_path / "b")
    with pytest.raises(NameDirError):
        namedir.lock_all([a, b])
    again = NameDir(tmp_path / "a")
    again.lock()                        # a was let go when b could not be taken
    again.unlock()
    held.unlock()


def test_a_start_on_unformatted_dirs_is_refused_and_creates_nothing(tmp_path):
    with pytest.raises(NameDirError, match="run `nnlite format`"):
        namedir.lock_formatted([NameDir(tmp_path / "typo")])
    assert not (tmp_path / "typo").exists()


def test_format_never_clobbers_unless_forced(tmp_path):
    d = formatted(tmp_path / "name")
    d.file("edits").write_bytes(b"records")
    with pytest.raises(NameDirError, match="already formatted; pass --force"):
        namedir.prepare_for_format(d, force=False)
    namedir.prepare_for_format(d, force=True)
    assert list(d.current.iterdir()) == []


def test_a_failed_copy_leaves_the_target_as_it_was(tmp_path):
    target = tmp_path / "fsimage"
    target.write_bytes(b"old")
    with pytest.raises(FileNotFoundError):
        namedir.copy_file(tmp_path / "missing", target)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["fsimage"]
    (tmp_path / "new").write_bytes(b"new image")
    namedir.copy_file(tmp_path / "new", target)
    assert target.read_bytes() == b"new image"
