"""fsimage.py: the namesystem's image side, in process -- the status a checkpointer polls, the
rolled edits it downloads, the checks an announced upload passes before any byte is stored,
an install that moves the checkpoint on, and a standby's save. The same over HTTP, with real
processes killed at each step of the swap, is test_checkpoint.py's."""

from __future__ import annotations

import pytest

from nnlite.namenode.image import columns, startup
from nnlite.namenode.image.checkpoint import CheckpointError
from nnlite.namenode.storage.namedir import NameDir
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


def test_an_upload_still_streaming_leaves_a_local_save_alone(tmp_path):
    """An active that became a standby while a checkpoint upload to it still streams saves
    its own image (``install.py``, through ``fsimage.ckpt``); then the rest of the upload
    arrives and it is abandoned. The upload writes and removes only a file of its own
    (``install.upload_file``), so the name dir loads the image saved. When both wrote
    ``fsimage.ckpt``, the upload's later bytes landed in the installed image, which then
    matched no sidecar and no start could load it (seed 11 of ha/test_faults.py)."""
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        for path in ("/a", "/b", "/c"):
            acked(fs).mkdirs(path, 0o755, USER)
        end = fs.roll_edits()
        image = tmp_path / "uploaded"
        info = columns.save(fs.ns.tree, str(image), fs.namespace_id, end)
        data = image.read_bytes()
        upload = fs.image.begin_upload(end, info.md5_hex, info.size, fs.namespace_id)
        upload.write(data[:len(data) // 2])
        acked(fs).mkdirs("/d", 0o755, USER)
        saved = fs.checkpoint_standby()
        upload.write(data[len(data) // 2:])
        fs.image.abort_upload(upload, "this namenode is a standby now")
    loaded = startup.load([NameDir(d) for d in dirs])
    assert loaded.image_txid == saved.last_txid > end
    assert sorted(loaded.tree.root.children) == ["a", "b", "c", "d"]


def test_an_upload_a_local_save_overtook_is_refused_at_the_swap(tmp_path):
    """The same, with the upload whole: checked when announced, it is older than the image
    saved meanwhile by the time it is swapped, so it is refused (the save ended the pending
    checkpoint: 409; had a roll come since, 410 for the older txid), its file removed, and
    the newer image stays."""
    dirs = formatted(tmp_path)
    with open_fs(dirs) as fs:
        acked(fs).mkdirs("/a", 0o755, USER)
        end = fs.roll_edits()
        image = tmp_path / "uploaded"
        info = columns.save(fs.ns.tree, str(image), fs.namespace_id, end)
        upload = fs.image.begin_upload(end, info.md5_hex, info.size, fs.namespace_id)
        upload.write(image.read_bytes())
        acked(fs).mkdirs("/b", 0o755, USER)
        saved = fs.checkpoint_standby()
        with pytest.raises(CheckpointError) as refused:
            fs.image.install(upload)
        assert refused.value.status in (409, 410)
        assert fs.last_checkpoint_txid == saved.last_txid
    loaded = startup.load([NameDir(d) for d in dirs])
    assert loaded.image_txid == saved.last_txid
    assert sorted(loaded.tree.root.children) == ["a", "b"]
    assert not list(NameDir(dirs[0]).current.glob("fsimage.ckpt*"))
