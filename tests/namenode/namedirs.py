"""What a name dir holds, for the whole-checkpoint tests with real processes (the swap killed
at each point of the namenode's side, tests/namenode/image/test_checkpoint.py; refused
uploads, tests/namenode/http/test_transfer.py; end to end under load,
tests/secondary/test_end_to_end.py):

* ``consistent(name_dir)``: the files of ``current/`` form a set startup can load without
  guessing, and which txids they hold;
* ``snapshot(name_dir)``: every file under the name dir with its bytes' digest, to assert that
  a refusal changed nothing on disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from nnlite.formats import edits as E
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.storage.namedir import (
    CKPT,
    CKPT_MD5,
    EDITS,
    EDITS_NEW,
    IMAGE,
    IMAGE_MD5,
    LOCK,
    VERSION,
    NameDir,
)


@dataclass(frozen=True)
class DirState:
    image_txid: int
    edits: tuple[int, int]              # (first, last) txid of ``edits``
    edits_new: tuple[int, int] | None   # of ``edits.new`` when it exists


def segment(path: Path) -> tuple[int, int]:
    reader = E.EditsReader(str(path))
    for _ in reader:
        pass
    assert reader.torn_tail is None, (path, reader.torn_tail)
    return reader.first_txid, reader.last_txid


def consistent(root: str | Path) -> DirState:
    """Assert what a cleanly started namenode leaves in ``current/``: VERSION, an image whose
    digest matches its sidecar, no ckpt, edits that continue the image without a gap (and
    ``edits.new`` continuing ``edits`` if a checkpoint is pending)."""
    d = NameDir(root)
    names = {p.name for p in d.current.iterdir()}
    assert {VERSION, IMAGE, IMAGE_MD5, EDITS} <= names, names
    assert not names & {CKPT, CKPT_MD5}, names
    assert names <= {VERSION, IMAGE, IMAGE_MD5, EDITS, EDITS_NEW}, names
    md5 = parse_md5_sidecar(d.file(IMAGE_MD5).read_text())
    assert file_md5(str(d.file(IMAGE))) == md5
    image_txid = read_meta(str(d.file(IMAGE))).last_txid
    edits = segment(d.file(EDITS))
    new = segment(d.file(EDITS_NEW)) if EDITS_NEW in names else None
    if new is None:
        assert edits[0] <= image_txid + 1 <= edits[1] + 1, (image_txid, edits)
    else:
        assert new[0] == edits[1] + 1, (edits, new)
        assert edits[0] <= image_txid + 1 <= new[1] + 1, (image_txid, edits, new)
    return DirState(image_txid, edits, new)


def snapshot(root: str | Path) -> dict[str, str]:
    """relative path -> SHA-256 of every file under the name dir (the lock file aside)."""
    base = Path(root)
    return {str(p.relative_to(base)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(base.rglob("*")) if p.is_file() and p.name != LOCK}
