"""The transfer client against a real namenode process: status and roll, verified downloads
(a body damaged in transit or cut short is a typed error and publishes nothing), uploads
refused before their body, and the failures of an unreachable or unauthorised namenode."""

from __future__ import annotations

import pytest

from nnlite.client.errors import NamenodeUnreachableError
from nnlite.durability import faults
from nnlite.formats.fsimage.md5 import file_md5
from nnlite.secondary.client import TransferClient
from nnlite.secondary.errors import (
    DigestMismatchError,
    RefusedError,
    SettingError,
    ShortTransferError,
    TransferError,
)
from tests.secondary.conftest import mkdirs, secret_of
from tests.secondary.proxy import DamagingProxy


def leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def out(tmp_path):
    """Where downloads go (tmp_path also holds the namenode's name dir)."""
    path = tmp_path / "out"
    path.mkdir()
    return path


def test_status_and_roll(nn, client):
    mkdirs(nn, "/a", "/a/b")
    before = client.status()
    assert (before.pending, before.edits, before.last_checkpoint_txid) == (False, None, 0)
    assert before.uncheckpointed == before.txid == 3
    rolled = client.roll()
    assert rolled.pending and rolled.namespace_id == before.namespace_id
    assert (rolled.edits.first_txid, rolled.edits.last_txid) == (1, 4)   # + END_LOG_SEGMENT
    assert client.roll().edits == rolled.edits                             # resumed, not rolled


def test_download_image_is_verified_and_published(shared_nn, out):
    dest = out / "fsimage"
    client = TransferClient(shared_nn.url, secret_of(shared_nn))
    got = client.download_image(dest)
    status = client.status()
    assert (got.size, got.md5, got.last_txid) == (status.image.size, status.image.md5, 0)
    assert file_md5(str(dest)) == got.md5
    assert leftovers(out) == ["fsimage"]


def test_download_edits_names_the_rolled_txids(nn, client, out):
    mkdirs(nn, "/a")
    edits = client.roll().edits
    got = client.download_edits(out / "edits")
    assert (got.first_txid, got.last_txid, got.md5, got.size) == (
        edits.first_txid, edits.last_txid, edits.md5, edits.size)


def test_download_edits_without_a_pending_checkpoint_is_refused(client, out):
    with pytest.raises(RefusedError) as err:
        client.download_edits(out / "edits")
    assert err.value.status == 409 and "roll the edits first" in str(err.value)
    assert leftovers(out) == []


@pytest.mark.parametrize("damage, error", [
    pytest.param({"flip_at": 100}, DigestMismatchError, id="byte-flipped-in-transit"),
    pytest.param({"cut_after": 1000}, ShortTransferError, id="cut-after-1000-bytes"),
    pytest.param({"cut_after": 0}, ShortTransferError, id="cut-before-the-body"),
])
def test_damaged_download_is_a_typed_error_and_publishes_nothing(shared_nn, out, damage,
                                                                error):
    dest = out / "fsimage"
    dest.write_bytes(b"the previous image")
    proxy = DamagingProxy(shared_nn.port, **damage)
    try:
        with pytest.raises(error):
            TransferClient(proxy.url, secret_of(shared_nn), timeout=10).download_image(dest)
    finally:
        proxy.close()
    assert dest.read_bytes() == b"the previous image"
    assert leftovers(out) == ["fsimage"]


def test_fault_during_download_leaves_nothing(shared_nn, out):
    faults.configure("secondary.during-download=error")
    with pytest.raises(TransferError, match="injected I/O error"):
        TransferClient(shared_nn.url, secret_of(shared_nn)).download_image(out / "fsimage")
    assert leftovers(out) == []


def test_wrong_secret_is_refused(shared_nn, out):
    with pytest.raises(RefusedError) as err:
        TransferClient(shared_nn.url, "not-the-secret").download_image(out / "fsimage")
    assert err.value.status == 403
    assert leftovers(out) == []


def test_unreachable_namenode(out):
    with pytest.raises(NamenodeUnreachableError, match="127.0.0.1:9"):
        TransferClient("http://127.0.0.1:9", "s", timeout=2).status()


def test_bad_url_is_a_setting_error():
    with pytest.raises(SettingError):
        TransferClient("ftp://namenode:21", "s")


def test_upload_refused_before_the_body(nn, client, out):
    """A refusal answers the head (Expect: 100-continue): a clean 409, not a broken pipe."""
    image = out / "fsimage"
    client.download_image(image)
    status = client.status()
    with pytest.raises(RefusedError) as err:
        client.upload_image(image, txid=5, namespace_id=status.namespace_id,
                            md5=status.image.md5)
    assert err.value.status == 409 and "roll the edits first" in str(err.value)
    rolled = client.roll()
    with pytest.raises(RefusedError) as err:
        client.upload_image(image, txid=rolled.edits.last_txid,
                            namespace_id=status.namespace_id + 1, md5=status.image.md5)
    assert err.value.status == 403


def test_upload_of_a_wrong_image_is_refused_after_its_body(nn, client, out):
    image = out / "fsimage"
    client.download_image(image)           # the txid 0 image, offered for the rolled txid
    rolled = client.roll()
    with pytest.raises(RefusedError) as err:
        client.upload_image(image, txid=rolled.edits.last_txid,
                            namespace_id=rolled.namespace_id, md5=rolled.image.md5)
    assert err.value.status == 400 and "txid 0" in str(err.value)
    assert client.status().last_checkpoint_txid == 0
