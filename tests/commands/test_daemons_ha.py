"""``nnlite secondary --namenode ns1`` (commands/daemons.py) on a real HA set: each checkpoint
is taken from the active namenode, the one after a SIGKILL of it from the new active, and the
edits count is the active's. ``dfsadmin fetch-image`` fetches the active's image."""

from __future__ import annotations

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from tests.commands.helpers import nnlite, ok
from tests.namenode.ha.haset import HASet

pytestmark = pytest.mark.crash

SECRET = "ha-checkpoint-secret"


@pytest.fixture
def shared_secret_set(tmp_path, etcd_cluster):
    """The haset fixture's HA set, with one checkpoint secret for both namenodes."""
    ha = HASet(tmp_path, etcd_cluster, settings={"nnlite.checkpoint.secret": SECRET})
    try:
        yield ha
    finally:
        ha.close()


def mkdir(ha: HASet, path: str) -> None:
    ok(nnlite(None, "dfs", "mkdir", "-p", path, "--namenode", "ns1", "--conf", str(ha.conf)))


def secondary(ha: HASet, tmp_path, *args: str) -> list[str]:
    return ok(nnlite(None, "secondary", "--namenode", "ns1", "--conf", str(ha.conf),
                     "--checkpoint-dir", str(tmp_path / "ckpt"), *args))


def checkpoint_txid(ha: HASet, i: int) -> int:
    with WebHdfsClient(ha.url(i), "tester") as client:
        return int(client.report()["lastCheckpointTxid"])


def test_the_secondary_checkpoints_the_active_and_follows_it(shared_secret_set, tmp_path):
    ha = shared_secret_set
    active = ha.start_all()
    for i in range(5):
        mkdir(ha, f"/c/{i}")
    before = int(secondary(ha, tmp_path, "--geteditsize")[0])
    assert before >= 5
    (line,) = secondary(ha, tmp_path, "--checkpoint-now")
    assert line.startswith("Checkpoint done: image txid ")
    assert int(secondary(ha, tmp_path, "--geteditsize")[0]) < before
    ha.kill(active)
    other = ha.active(excluding=active)
    for i in range(3):
        mkdir(ha, f"/d/{i}")
    (line,) = secondary(ha, tmp_path, "--checkpoint-now")
    txid = int(line.split("image txid ")[1].split(",")[0])
    assert checkpoint_txid(ha, other) == txid


def test_fetch_image_fetches_the_active_ones(shared_secret_set, tmp_path):
    ha = shared_secret_set
    active = ha.start_all()
    ok(nnlite(None, "dfsadmin", "fetch-image", str(tmp_path / "out"), "--namenode", "ns1",
              "--conf", str(ha.conf)))
    assert (tmp_path / "out" / "fsimage").stat().st_size > 0
    ha.kill(active)
    ha.active(excluding=active)
    (line,) = ok(nnlite(None, "dfsadmin", "fetch-image", str(tmp_path / "again"),
                        "--conf", str(ha.conf)))
    assert line.startswith("Fetched the last checkpoint's image")
