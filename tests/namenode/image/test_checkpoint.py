"""SIGKILL the NAMENODE at each point of its side of a checkpoint (tests/secondary kills the
secondary at its own points).

Each test starts a namenode whose ``NNLITE_FAULTS`` kills it at one point, writes acknowledged
ops, lets a checkpointer drive a checkpoint into that point, and checks what the kill left in
``current/`` (so the crash really happened where it is named). Then the namenode restarts
without the fault: every acknowledged op is there, ``current/`` is a consistent set, the next
checkpoint by the same checkpointer (as the daemon would, the namenode back on its address)
succeeds, and a clean restart after it loads the same namespace from the new image.
"""

from __future__ import annotations

import pytest
import requests

from nnlite.durability.faults import ENV
from nnlite.formats import edits
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.storage.namedir import CKPT, CKPT_MD5, EDITS_NEW, IMAGE, NameDir
from nnlite.secondary.client import TransferClient
from nnlite.secondary.errors import TRANSFER_FAILURES
from tests.namenode.namedirs import consistent, snapshot
from tests.secondary.conftest import listing, mkdirs, new_checkpointer, secret_of
from tests.secondary.test_checkpointer import checkpoint_txid, namenode_image
from tests.servers import NamenodeProcess

pytestmark = pytest.mark.crash

ACKED = ("/a", "/a/b", "/c")       # txids 2-4 after the START_LOG_SEGMENT of a fresh format
ROLLED_END = 5                     # the END_LOG_SEGMENT the roll adds: the checkpoint's txid


def files(root) -> set[str]:
    return {p.name for p in NameDir(root).current.iterdir()}


def image_txid(root) -> int:
    return read_meta(str(NameDir(root).file(IMAGE))).last_txid


# What the kill must have left, per point: (files present, files absent, fsimage's txid), and
# whether the checkpoint is still pending after the restart. The upload not yet swapped, in its
# own file, is discarded (the upload is redone); after the image rename, startup finishes the
# swap itself.
LEFT_BY_THE_KILL = {
    "checkpoint.after-ckpt-written": ({f"{CKPT}_{ROLLED_END:019d}", EDITS_NEW}, {CKPT, CKPT_MD5},
                                      0, True),
    "checkpoint.between-renames": ({EDITS_NEW}, {CKPT, CKPT_MD5}, ROLLED_END, False),
    "checkpoint.after-swap": (set(), {CKPT, CKPT_MD5, EDITS_NEW}, ROLLED_END, False),
}


class Restarts:
    """The namenode of one test across its restarts (started by the test's ``start_namenode``,
    which stops them); the checkpointer follows it."""

    def __init__(self, start_namenode, name_dirs: list[str], fault: str):
        self.start_namenode = start_namenode
        self.name_dirs = name_dirs
        self.server = start_namenode(name_dirs=name_dirs, env={ENV: fault})

    def restart(self) -> NamenodeProcess:
        self.server.stop()
        self.server = self.start_namenode(name_dirs=self.name_dirs)
        return self.server

    def follow(self, cp) -> None:
        cp.client = TransferClient(self.server.url, secret_of(self.server), timeout=10)


def check_next_checkpoint(nodes: Restarts, cp) -> None:
    """After the crash: one more op, then checkpoints until the namenode's image holds it (a
    checkpoint still pending is finished first), then a clean restart on that image."""
    nn = nodes.server
    mkdirs(nn, "/after")
    nodes.follow(cp)
    for _ in range(2):
        done = cp.do_checkpoint()
        status = cp.client.status()
        assert (status.pending, status.last_checkpoint_txid) == (False, done.last_txid)
    assert done.last_txid == status.txid - 1       # all but the new segment's START record
    tree, meta = namenode_image(nn)
    assert meta.last_txid == done.last_txid
    assert sorted(tree.root.children) == ["a", "after", "c"]

    nn = nodes.restart()
    for name in nn.name_dirs:
        state = consistent(name)
        assert (state.image_txid, state.edits_new) == (done.last_txid, None)
    assert checkpoint_txid(nn) == done.last_txid
    assert listing(nn, "/") == ["a", "after", "c"] and listing(nn, "/a") == ["b"]


@pytest.mark.parametrize("point", sorted(LEFT_BY_THE_KILL))
def test_namenode_killed_in_the_swap(tmp_path, start_namenode, point):
    name = str(tmp_path / "name")
    nodes = Restarts(start_namenode, [name], f"{point}=kill")
    mkdirs(nodes.server, *ACKED)
    with new_checkpointer(nodes.server, tmp_path / "ckpt") as cp:
        with pytest.raises(TRANSFER_FAILURES):
            cp.do_checkpoint()
        assert nodes.server.proc.wait(10) == -9
        present, absent, txid, pending = LEFT_BY_THE_KILL[point]
        assert present <= files(name) and not absent & files(name), files(name)
        assert image_txid(name) == txid

        nn = nodes.restart()
        state = consistent(name)
        assert state.image_txid == txid       # a verified image is never thrown away
        assert (state.edits_new is not None) == pending
        nodes.follow(cp)
        assert cp.client.status().pending == pending
        assert listing(nn, "/") == ["a", "c"] and listing(nn, "/a") == ["b"]
        check_next_checkpoint(nodes, cp)


def test_namenode_killed_by_a_torn_write_while_a_checkpoint_is_pending(tmp_path,
                                                                         start_namenode):
    """The roll done, the first write to ``edits.new`` is torn and the namenode dies: the torn
    record (never acknowledged) is truncated at restart, the pending checkpoint resumes."""
    name = str(tmp_path / "name")
    writes = len(ACKED) + 1                  # each mkdir is one sync, the roll another
    nodes = Restarts(start_namenode, [name], f"journal.partial-write=kill@{writes + 1}")
    nn = nodes.server
    mkdirs(nn, *ACKED)
    with new_checkpointer(nn, tmp_path / "ckpt") as cp:
        assert cp.client.roll().edits.last_txid == ROLLED_END
        assert requests.get(nn.url + "/jmx").json()["beans"][0]["Syncs"] == writes
        with pytest.raises(requests.ConnectionError):
            mkdirs(nn, "/lost")
        assert nn.proc.wait(10) == -9
        reader = edits.EditsReader(str(NameDir(name).file(EDITS_NEW)))
        assert [op for _, op in reader] == [edits.StartLogSegmentOp()]
        assert reader.torn_tail is not None

        nn = nodes.restart()
        state = consistent(name)
        assert state.edits_new == (ROLLED_END + 1, ROLLED_END + 1)   # still pending
        assert listing(nn, "/") == ["a", "c"]
        check_next_checkpoint(nodes, cp)


def test_two_name_dirs_killed_between_the_first_dir_swap_and_the_second(tmp_path,
                                                                           start_namenode):
    """With two name dirs the kill at the first dir's ``between-renames`` leaves them apart:
    the first holds the new image beside ``edits.new``, the second the old image and the
    verified ckpt. Startup finishes the first dir's swap and resyncs the second from it."""
    first, second = str(tmp_path / "name1"), str(tmp_path / "name2")
    nodes = Restarts(start_namenode, [first, second], "checkpoint.between-renames=kill")
    mkdirs(nodes.server, *ACKED)
    with new_checkpointer(nodes.server, tmp_path / "ckpt") as cp:
        with pytest.raises(TRANSFER_FAILURES):
            cp.do_checkpoint()
        assert nodes.server.proc.wait(10) == -9
        assert (image_txid(first), image_txid(second)) == (ROLLED_END, 0)
        assert {CKPT, CKPT_MD5, EDITS_NEW} <= files(second)

        nn = nodes.restart()
        states = [consistent(name) for name in (first, second)]
        assert states[0] == states[1] and states[0].image_txid == ROLLED_END
        assert snapshot(first)["current/fsimage"] == snapshot(second)["current/fsimage"]
        assert listing(nn, "/") == ["a", "c"] and listing(nn, "/a") == ["b"]
        check_next_checkpoint(nodes, cp)
