"""``nnlite namenode --import-checkpoint DIR``: rebuilding an empty name dir from a checkpoint
dir laid out as the secondary keeps it (built here with namenode.image.columns.save)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite import cli
from nnlite.commands.support import EXIT_CORRUPT, EXIT_STORAGE
from nnlite.formats import edits
from nnlite.formats.fsimage.md5 import md5_sidecar_text
from nnlite.namenode.fsnamesystem import FSNamesystem, format_dirs
from nnlite.namenode.image import columns, importer
from nnlite.namenode.storage.namedir import NameDir
from tests.namenode.helpers import dump, mkdir, new_ns, write_file

NAMESPACE_ID = 31337
TXID = 50


def checkpoint_namespace():
    ns = new_ns()
    mkdir(ns, "/data/a", owner="alice", group="staff")
    mkdir(ns, "/spark/ckpt/offsets")
    write_file(ns, "/data/a/part-0", sizes=(100, 200), replication=3)
    write_file(ns, "/spark/ckpt/offsets/0", sizes=(10,))
    return ns


def make_checkpoint(root: Path, *, layout: str = "secondary", ns=None) -> Path:
    """A checkpoint dir: ``current/`` + VERSION (the secondary's) or flat (fetch-image's)."""
    base = root / "current" if layout == "secondary" else root
    base.mkdir(parents=True)
    tree = (ns or checkpoint_namespace()).tree
    info = columns.save(tree, str(base / "fsimage"), NAMESPACE_ID, TXID)
    (base / "fsimage.md5").write_text(md5_sidecar_text(info.md5_hex))
    if layout == "secondary":
        NameDir(root).write_version(NAMESPACE_ID, 0)
    return root


def check_imported(name_dir: Path, expected_ns) -> None:
    version = NameDir(name_dir).read_version()
    assert int(version["namespaceID"]) == NAMESPACE_ID
    records, reader = edits.read_all(str(name_dir / "current" / "edits"))
    assert reader.first_txid == TXID + 1
    assert records == [(TXID + 1, edits.StartLogSegmentOp())]
    with FSNamesystem.open([str(name_dir)]) as fs:
        assert fs.namespace_id == NAMESPACE_ID
        assert fs.journal.txid == TXID + 1
        assert dump(fs.ns) == dump(expected_ns)


def import_cli(name_dir: Path, checkpoint: Path):
    """Only for refusals: an import that succeeds goes on to serve (and would not return)."""
    return CliRunner().invoke(cli.main, ["namenode", "--name-dir", str(name_dir),
                                         "--import-checkpoint", str(checkpoint)])


def test_import_then_serve(tmp_path, start_namenode):
    checkpoint = make_checkpoint(tmp_path / "ckpt")
    name_dir = tmp_path / "name"
    server = start_namenode("--import-checkpoint", str(checkpoint), name_dirs=[str(name_dir)],
                            format=False, users=None)
    url = server.webhdfs("/data/a") + "?op=LISTSTATUS&user.name=alice"
    with urllib.request.urlopen(url, timeout=10) as resp:
        listing = json.load(resp)["FileStatuses"]["FileStatus"]
    assert [(s["pathSuffix"], s["length"], s["replication"]) for s in listing] == \
        [("part-0", 300, 3)]
    assert server.stop() == 0
    assert "Imported" in server.log.read_text()
    check_imported(name_dir, checkpoint_namespace())


def test_import_from_a_fetched_image_layout(tmp_path):
    ns = checkpoint_namespace()
    checkpoint = make_checkpoint(tmp_path / "fetched", layout="flat", ns=ns)
    got = importer.import_checkpoint(checkpoint, [str(tmp_path / "a"), str(tmp_path / "b")])
    assert (got.meta.namespace_id, got.meta.last_txid) == (NAMESPACE_ID, TXID)
    for d in ("a", "b"):
        check_imported(tmp_path / d, ns)
        assert not (tmp_path / d / importer.STAGING).exists()


def test_an_interrupted_import_is_redone(tmp_path):
    checkpoint = make_checkpoint(tmp_path / "ckpt")
    staging = tmp_path / "name" / importer.STAGING
    staging.mkdir(parents=True)
    (staging / "fsimage").write_bytes(b"half an image")
    (tmp_path / "name" / "current").mkdir()                 # empty: still importable
    importer.import_checkpoint(checkpoint, [str(tmp_path / "name")])
    check_imported(tmp_path / "name", checkpoint_namespace())


# ------------------------------------------------------------------------------ refusals

def test_refused_on_a_name_dir_that_holds_an_image(tmp_path):
    checkpoint = make_checkpoint(tmp_path / "ckpt")
    name_dir = tmp_path / "name"
    format_dirs([NameDir(name_dir)])
    before = sorted(p.name for p in (name_dir / "current").iterdir())
    result = import_cli(name_dir, checkpoint)
    assert result.exit_code == EXIT_STORAGE, result.output
    assert "already holds an image" in result.output
    assert sorted(p.name for p in (name_dir / "current").iterdir()) == before


@pytest.mark.parametrize("damage, code, message", [
    (lambda c: (c / "current" / "fsimage.md5").write_text(md5_sidecar_text("0" * 32)),
     EXIT_CORRUPT, "MD5 mismatch"),
    (lambda c: (c / "current" / "fsimage.md5").unlink(), EXIT_STORAGE, "cannot be verified"),
    (lambda c: NameDir(c).write_version(NAMESPACE_ID + 1, 0), EXIT_STORAGE,
     f"names namespace {NAMESPACE_ID + 1}"),
    (lambda c: (c / "current" / "fsimage").unlink(), EXIT_STORAGE, "No checkpoint in"),
], ids=["digest mismatch", "no sidecar", "other namespace", "no image"])
def test_refused_checkpoints_change_nothing(tmp_path, damage, code, message):
    checkpoint = make_checkpoint(tmp_path / "ckpt")
    damage(checkpoint)
    result = import_cli(tmp_path / "name", checkpoint)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert not (tmp_path / "name" / "current").exists()
