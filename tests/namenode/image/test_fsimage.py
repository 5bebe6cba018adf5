"""fsimage.py: the namesystem's image side, in process -- the status a checkpointer polls, the
rolled edits it downloads, the checks an announced upload passes before any byte is stored,
an install that moves the checkpoint on, and a standby's save. The same over HTTP, with real
processes killed at each step of the swap, is test_checkpoint.py's."""

from __future__ import annotations

import pytest

from nnlite.namenode.image import columns
from nnlite.namenode.image.checkpoint import CheckpointError
from tests.namenode.helpers import USER, acked, formatted, open_fs


@pytest.fixture
def fs(tmp_path):
    """A namesystem with three ops logged after its formatted image (txid 0)."""
    with open_fs(formatted(tmp_path)) as fs:
        for path in ("/a", "/b", "/c"):
            acked(fs).mkdirs(path, 0o755, USER)
        yield fs


def test_idle_then_pending_status(fs):
    idle = fs.image.status()
    assert (idle["pending"], idle["edits"], idle["lastCheckpointTxid"]) == (False, None, 0)
    end = fs.roll_edits()
    pending = fs.image.status()
    assert pending["pending"] and pending["edits"]["last_txid"] == end
    assert fs.image.rolled_edits().last_txid == end
    assert fs.image.pending and pending["image"] == idle["image"]


def test_no_rolled_edits_before_a_roll(fs):
    with pytest.raises(CheckpointError) as info:
        fs.image.rolled_edits()
    assert info.value.status == 409


@pytest.mark.parametrize("txid, namespace_id, status", [
    (3, 99, 403),           # another namespace's image
    (0, 1234, 410),         # the image already holds txid 0
    (9, 1234, 409),         # past this namenode's edits
])
def test_an_announced_upload_is_refused_before_any_byte(fs, txid, namespace_id, status):
    fs.roll_edits()
    with pytest.raises(CheckpointError) as info:
        fs.image.begin_upload(txid, "0" * 32, 10, namespace_id)
    assert info.value.status == status
    assert fs.image.pending


def test_an_installed_upload_moves_the_checkpoint_on(fs, tmp_path):
    end = fs.roll_edits()
    path = tmp_path / "uploaded"
    info = columns.save(fs.ns.tree, str(path), fs.namespace_id, end)
    upload = fs.image.begin_upload(end, info.md5_hex, info.size, fs.namespace_id)
    upload.write(path.read_bytes())
    fs.image.install(upload)
    status = fs.image.status()
    assert (status["pending"], status["lastCheckpointTxid"]) == (False, end)
    assert (status["image"]["last_txid"], fs.last_checkpoint_txid) == (end, end)
    assert fs.image.metrics.checkpoints == 1


def test_a_standby_save_keeps_an_image_that_holds_the_txid(fs):
    saved = fs.checkpoint_standby()
    assert saved.last_txid == fs.last_checkpoint_txid == fs.last_written_txid
    assert fs.checkpoint_standby() == saved            # nothing new: the image stays
