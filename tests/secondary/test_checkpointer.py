"""The checkpointer: the trigger policy as a table on an injected clock, then whole checkpoints
against a real namenode process (the image downloaded once, the namespace kept in memory,
resumed uploads, merge failures and max-retries), and what a restarted namenode loads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from nnlite.client.errors import NamenodeUnreachableError
from nnlite.durability import faults
from nnlite.namenode.image import columns
from nnlite.namenode.storage.namedir import NameDir
from nnlite.secondary.checkpointer import Checkpointer, TriggerPolicy
from nnlite.secondary.client import NamenodeStatus, ServedFile
from nnlite.secondary.errors import (
    TRANSFER_FAILURES,
    CheckpointDirError,
    MergeError,
)
from tests.namenode.helpers import dump
from tests.secondary.conftest import listing, mkdirs, new_checkpointer
from tests.servers import ROOT, NamenodeProcess

IMAGE = ServedFile(size=100, md5="0" * 32, first_txid=0, last_txid=0)
HOUR = 3600.0


def status(txid: int, last_ckpt_txid: int = 0, last_ckpt_time: float = 0.0,
           pending: bool = False) -> NamenodeStatus:
    return NamenodeStatus(7, txid, last_ckpt_txid, last_ckpt_time, pending, IMAGE, None)


# ------------------------------------------------------------------------------ policy

POLICY = TriggerPolicy(txns=100, period=HOUR)


@pytest.mark.parametrize("st, now, expected", [
    pytest.param(status(50, 0, 1000.0), 1000.0 + 10, None, id="few-txns-recent"),
    pytest.param(status(99, 0, 1000.0), 1000.0 + HOUR - 1, None, id="just-below-both"),
    pytest.param(status(100, 0, 1000.0), 1000.0, "txns", id="txns-reached"),
    pytest.param(status(250, 150, 1000.0), 1000.0, "txns", id="txns-since-last-checkpoint"),
    pytest.param(status(249, 150, 1000.0), 1000.0, None, id="txns-since-last-just-below"),
    pytest.param(status(2, 0, 1000.0), 1000.0 + HOUR, "period", id="period-reached"),
    pytest.param(status(2, 0, 1000.0), 1000.0 + 5 * HOUR, "period", id="period-long-past"),
    pytest.param(status(2, 0, 1000.0, pending=True), 1000.0, "pending", id="pending-resumed"),
    pytest.param(status(500, 0, 0.0, pending=True), HOUR, "pending", id="pending-first"),
])
def test_trigger_policy(st, now, expected):
    assert POLICY.reason(st, now) == expected


class StubClient:
    """Answers status() with a fixed status; a roll is recorded and fails (no namenode)."""
    url = "http://stub"

    def __init__(self, st: NamenodeStatus):
        self.st = st
        self.rolls = 0

    def status(self) -> NamenodeStatus:
        return self.st

    def roll(self):
        self.rolls += 1
        raise NamenodeUnreachableError("stub namenode", url=self.url)


@pytest.mark.parametrize("now, rolls", [(1000.0 + 60, 0), (1000.0 + HOUR, 1)],
                         ids=["before-the-period", "at-the-period"])
def test_check_follows_the_policy_on_the_injected_clock(tmp_path, now, rolls):
    client = StubClient(status(5, 0, 1000.0))
    with Checkpointer(client, tmp_path / "ckpt", policy=POLICY, clock=lambda: now) as cp:
        assert cp.check() is None                 # a failed checkpoint is not raised
        assert client.rolls == rolls
        assert cp.counters.failures == rolls
        assert (cp.last_failure is not None) == bool(rolls)


def test_do_checkpoint_needs_an_open_directory(tmp_path):
    cp = Checkpointer(StubClient(status(5)), tmp_path / "ckpt", policy=POLICY)
    with pytest.raises(CheckpointDirError, match="not open"):
        cp.do_checkpoint()


def test_one_secondary_per_checkpoint_directory(tmp_path):
    with (Checkpointer(StubClient(status(5)), tmp_path / "ckpt", policy=POLICY),
          pytest.raises(CheckpointDirError, match="in use")):
        Checkpointer(StubClient(status(5)), tmp_path / "ckpt", policy=POLICY).open()


# ------------------------------------------------------------------------------ end to end

def namenode_image(server: NamenodeProcess):
    ns, meta = columns.load(str(NameDir(server.name_dirs[0]).file("fsimage")), None)
    return ns, meta


def test_two_checkpoints_then_a_restart(nn, checkpointer, start_namenode):
    mkdirs(nn, "/a", "/a/b", "/c")
    first = checkpointer.do_checkpoint()
    assert first.image_downloaded and (first.first_txid, first.last_txid) == (1, 5)
    assert first.ops == 5 and checkpointer.client.status().last_checkpoint_txid == 5

    mkdirs(nn, "/a/d", "/e")
    second = checkpointer.do_checkpoint()
    assert not second.image_downloaded and second.phases["load"] == 0.0
    assert (second.first_txid, second.last_txid, second.ops) == (6, 9, 4)
    assert checkpointer.counters.images_downloaded == 1
    st = checkpointer.client.status()
    assert (st.last_checkpoint_txid, st.pending) == (9, False)

    ns, meta = namenode_image(nn)
    assert meta.last_txid == 9 and dump(ns) == dump(checkpointer.tree)
    assert sorted(ns.root.children) == ["a", "c", "e"]

    nn.stop()
    restarted = start_namenode(name_dirs=nn.name_dirs)
    assert listing(restarted, "/") == ["a", "c", "e"]
    assert listing(restarted, "/a") == ["b", "d"]
    assert checkpoint_txid(restarted) == 9


def test_the_checkpoint_dir_loads_as_a_name_dir(nn, tmp_path, start_namenode):
    mkdirs(nn, "/kept", "/kept/deep")
    with new_checkpointer(nn, tmp_path / "ckpt") as cp:
        done = cp.do_checkpoint()
    nn.stop()
    ckpt = NameDir(tmp_path / "ckpt")
    assert ckpt.namespace_id() == NameDir(nn.name_dirs[0]).namespace_id()
    from_ckpt = start_namenode(name_dirs=[str(tmp_path / "ckpt")])
    assert listing(from_ckpt, "/kept") == ["deep"]
    assert checkpoint_txid(from_ckpt) == done.last_txid


def checkpoint_txid(server: NamenodeProcess) -> int:
    bean = requests.get(server.url + "/jmx").json()["beans"][0]
    return bean["LastWrittenTransactionId"] - bean["TransactionsSinceLastCheckpoint"]


def test_a_restarted_secondary_uses_its_local_image(nn, tmp_path):
    mkdirs(nn, "/a")
    with new_checkpointer(nn, tmp_path / "ckpt") as cp:
        cp.do_checkpoint()
    mkdirs(nn, "/b")
    with new_checkpointer(nn, tmp_path / "ckpt") as cp:
        again = cp.do_checkpoint()
        assert not again.image_downloaded and again.phases["load"] > 0
        assert cp.counters.images_downloaded == 0


def test_failed_upload_is_resumed_by_uploading_again(nn, checkpointer):
    mkdirs(nn, "/a")
    faults.configure("secondary.during-upload=error")
    with pytest.raises(TRANSFER_FAILURES):
        checkpointer.do_checkpoint()
    st = checkpointer.client.status()
    assert st.pending and st.last_checkpoint_txid == 0
    assert checkpointer.last_failure.phase == "upload"

    faults.configure("")
    resumed = checkpointer.do_checkpoint()
    assert (resumed.ops, resumed.phases["download"], resumed.phases["save"]) == (0, 0.0, 0.0)
    assert checkpointer.client.status().last_checkpoint_txid == resumed.last_txid == 3
    assert checkpointer.counters.failures_in_row == 0


def test_namenode_down_is_a_transfer_error_and_changes_nothing(nn, checkpointer):
    mkdirs(nn, "/a")
    checkpointer.do_checkpoint()
    nn.stop()
    with pytest.raises(NamenodeUnreachableError):
        checkpointer.do_checkpoint()
    assert checkpointer.check() is None
    assert checkpointer.namespace_txid == 3 and checkpointer.last_failure.phase == "status"


def test_merge_failures_reload_then_download_after_max_retries(nn, tmp_path):
    with new_checkpointer(nn, tmp_path / "ckpt", max_retries=2) as cp:
        mkdirs(nn, "/a")
        cp.do_checkpoint()

        # One merge failure: the half-merged namespace is dropped, reloaded from the local
        # image (the namenode's, uploaded by this secondary), nothing downloaded.
        mkdirs(nn, "/b")
        faults.configure("secondary.during-merge=error")
        with pytest.raises(MergeError):
            cp.do_checkpoint()
        assert cp.namespace_txid is None and cp.counters.merge_failures_in_row == 1
        faults.configure("")
        reloaded = cp.do_checkpoint()
        assert not reloaded.image_downloaded and reloaded.phases["load"] > 0

        # max-retries in a row: the local image is distrusted too; the next one downloads.
        mkdirs(nn, "/c")
        faults.configure("secondary.during-merge=error")
        for _ in range(2):
            with pytest.raises(MergeError):
                cp.do_checkpoint()
        faults.configure("")
        fresh = cp.do_checkpoint()
        assert fresh.image_downloaded and cp.counters.images_downloaded == 2
        ns, _ = namenode_image(nn)
        assert sorted(ns.root.children) == ["a", "b", "c"]


def test_checkpoint_dir_of_another_namespace_is_refused(nn, tmp_path):
    NameDir(tmp_path / "ckpt").current.mkdir(parents=True)
    NameDir(tmp_path / "ckpt").write_version(123, 0)
    with (new_checkpointer(nn, tmp_path / "ckpt") as cp,
          pytest.raises(CheckpointDirError, match="namespace 123")):
        cp.do_checkpoint()


# ------------------------------------------------------------------------------ crashes

CRASH_POINTS = ["secondary.after-roll", "secondary.during-download",
                "secondary.after-download", "secondary.during-merge",
                "secondary.during-upload"]


@pytest.fixture(scope="module")
def crash_nn(module_namenode):
    """The module's namenode, checkpointed by each crashed secondary and its rerun."""
    return module_namenode


@pytest.mark.crash
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_secondary_killed_at_a_fault_point_then_rerun(crash_nn, tmp_path, point):
    """SIGKILL the secondary at ``point``; a rerun on the same checkpoint dir finishes the
    checkpoint (no partial download left behind, the namenode's upload slot free again)."""
    mkdirs(crash_nn, f"/{point}")
    cmd = [sys.executable, "-m", "nnlite.cli", "secondary", "--namenode", crash_nn.url,
           "--checkpoint-dir", str(tmp_path / "ckpt"), "--secret-file",
           str(NameDir(crash_nn.name_dirs[0]).root / "checkpoint.token"), "--checkpoint-now"]
    killed = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=30,
                            env={**os.environ, "NNLITE_FAULTS": f"{point}=kill"})
    assert killed.returncode == -9, killed.stderr.decode()
    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=30)
    assert rerun.returncode == 0, rerun.stderr.decode()
    assert not list((tmp_path / "ckpt" / "current").glob("*.download"))
    ns, meta = namenode_image(crash_nn)
    assert point in ns.root.children
    assert listing(crash_nn, "/") == sorted(ns.root.children)
