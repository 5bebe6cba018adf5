"""startup.replay (image/startup.py): an edits file of what the live path logged, read back,
rebuilds the same tree (the property test of tests/namenode/namespace/test_tree.py, through
the file), skips what the image already holds, and names the txid of an op that does not fit
or a gap."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnlite.formats import edits
from nnlite.formats.errors import TxidGapError
from nnlite.namenode import errors
from nnlite.namenode.image import startup
from tests.namenode.helpers import apply_ops, dump
from tests.namenode.random_requests import PROPERTY, REQUESTS, fresh, play, write_edits


@settings(PROPERTY, max_examples=100)
@given(st.lists(REQUESTS, min_size=15, max_size=60))
def test_replaying_an_edits_file_rebuilds_the_same_tree(requests):
    live, ops = play(requests)
    replica = fresh()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "edits"), ops)
        reader, count = startup.replay(replica.tree, path, 0, 1)
    assert (count, reader.last_txid, reader.torn_tail) == (len(ops), len(ops), None)
    assert dump(replica) == dump(live)


# ----------------------------------------------------------------------------- replay errors

def test_replay_skips_records_the_image_already_holds():
    ops = [edits.MkdirOp("/a", 16386, 0o755, "u", "g", 5),
           edits.MkdirOp("/b", 16387, 0o755, "u", "g", 6)]
    replica = fresh()
    apply_ops(replica, ops[0])
    with tempfile.TemporaryDirectory() as tmp:
        _, count = startup.replay(replica.tree, write_edits(os.path.join(tmp, "e"), ops), 1, 2)
    assert count == 1 and replica.tree.get("/b").id == 16387


def test_replay_of_an_op_that_does_not_fit_is_a_replay_error():
    ops = [edits.MkdirOp("/a", 16386, 0o755, "u", "g", 5), edits.DeleteOp("/missing", 6)]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "e"), ops)
        with pytest.raises(errors.ReplayError) as info:
            startup.replay(fresh().tree, path, 0, 1)
    assert "txid 2" in str(info.value) and isinstance(info.value.__cause__,
                                                      errors.PathNotFoundError)


def test_replay_of_edits_that_start_too_late_is_a_gap():
    with tempfile.TemporaryDirectory() as tmp:
        path = write_edits(os.path.join(tmp, "e"), [edits.StartLogSegmentOp()], first_txid=5)
        with pytest.raises(TxidGapError):
            startup.replay(fresh().tree, path, 0, 1)
