"""lease_recovery.py: at startup, the uploads a stop cut off are closed with the blocks they
have, through the journal; files other clients hold open are left alone."""

from __future__ import annotations

from nnlite.namenode.blocks.lease_recovery import recover_uploads
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
