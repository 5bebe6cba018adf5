"""lease_recovery.py: at startup, the writes a stop cut off are closed with the blocks they
have, through the journal (an hdfs:// write's last block at the length the store keeps of
its replica); files other clients hold open are left alone."""

from __future__ import annotations

import functools
import os

import pytest

from nnlite.namenode.blocks import checksum, rwr
from nnlite.namenode.blocks.lease_recovery import recover_uploads
from nnlite.namenode.blocks.streams import GENSTAMP
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.storage.namedir import NameDir
from tests.namenode.helpers import SUPER, dump, mutate, write_file


def test_startup_recovery_closes_files_whose_uploads_were_cut_off(tmp_path):
    name = str(tmp_path / "name")
    format_dirs([NameDir(name)])
    with FSNamesystem.open([name]) as fs:
        mutate(fs, lambda ns: (True, write_file(ns, "/appended", sizes=(100,))))
        before = fs.ns.tree.get("/appended").blocks
        mutate(fs, lambda ns: ns.append("/appended", SUPER, "webhdfs-append-4", "h"))
        mutate(fs, lambda ns: ns.create("/created", SUPER, client_name="webhdfs-create-3"))
        mutate(fs, lambda ns: ns.create("/foreign", SUPER, client_name="DFSClient_1"))
    with FSNamesystem.open([name]) as fs:
        done = recover_uploads(fs)
        assert sorted(done) == [("/appended", "closed with the blocks it has"),
                                ("/created", "closed with the blocks it has")]
        expected = dump(fs.ns)
    with FSNamesystem.open([name]) as fs:               # the recovery was logged
        assert dump(fs.ns) == expected
        created = fs.ns.tree.get("/created")
        assert (created.length, created.client_name) == (0, None)
        node = fs.ns.tree.get("/appended")
        assert (node.blocks, node.client_name) == (before, None)
        assert fs.ns.tree.get("/foreign").client_name == "DFSClient_1"


def published(store, data: bytes) -> int:
    """A block of ``data`` published in ``store`` (as the datanode finalizes one)."""
    writer = store.writer(block_size=1 << 20)
    writer.write(data)
    block_id = writer.seal().blocks[0][0]
    writer.close()
    return block_id


def rbw(store, data: bytes) -> int:
    """A replica of ``data`` a restart left in rbw/, its CRCs beside it."""
    block_id = store.allocate()
    store.rbw_path(block_id).write_bytes(data)
    store.rbw_path(block_id, meta=True).write_bytes(checksum.meta_header() +
                                                    checksum.chunk_crcs(data))
    return block_id


@pytest.mark.parametrize("last,recorded,length", [
    ("rbw", 0, 700), ("rbw", 500, 700), ("published", 0, 700), ("missing", 0, None),
    ("missing", 500, 500)])
def test_an_hdfs_write_keeps_its_blocks_and_the_replica_being_written(tmp_path, store, last,
                                                                      recorded, length):
    """A write over hdfs:// recorded its blocks (UpdateBlocksOp at addBlock: the last one at
    0 bytes, or at the length an fsync reported); at startup the published ones are kept at
    their recorded lengths, the last at the length the store keeps it at: an rbw/ replica's
    valid length (rwr.finalize), a finalized one's size; one the store has nothing of is
    dropped when nothing of it was recorded (HDFS removes a last block no datanode holds),
    else kept as recorded (a missing block, not a file shortened in silence)."""
    name = str(tmp_path / "name")
    format_dirs([NameDir(name)])
    first = published(store, b"a" * 1000)
    second = {"rbw": lambda: rbw(store, b"b" * 700),
              "published": lambda: published(store, b"b" * 700),
              "missing": store.allocate}[last]()
    with FSNamesystem.open([name]) as fs:
        mutate(fs, lambda ns: ns.create("/rpc", SUPER, client_name="webhdfs-create-5"))
        node = fs.ns.tree.get("/rpc")
        blocks = ((first, 1000, GENSTAMP), (second, recorded, GENSTAMP))
        mutate(fs, lambda ns: ns.upload_blocks(node, "webhdfs-create-5", blocks))
    with FSNamesystem.open([name]) as fs:
        assert recover_uploads(fs, functools.partial(rwr.finalize, store), store.has) == [
            ("/rpc", "closed with the blocks it has")]
    with FSNamesystem.open([name]) as fs:               # the recovery was logged
        node = fs.ns.tree.get("/rpc")
        kept = [(first, 1000, GENSTAMP)] + ([] if length is None else
                                            [(second, length, GENSTAMP)])
        assert (list(node.blocks), node.length, node.client_name) == \
            (kept, sum(b[1] for b in kept), None)
    assert os.listdir(store.rbw) == []
    if last != "missing":
        assert store.data_path(second).read_bytes() == b"b" * 700
