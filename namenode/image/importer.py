"""Getting an image from elsewhere: the secondary's last checkpoint into an empty name dir
(``nnlite namenode --import-checkpoint DIR``), and a running namenode's image into a local dir
(``nnlite dfsadmin fetch-image DIR``).

Import source (``find_checkpoint``): ``DIR/current/fsimage`` with ``fsimage.md5`` beside it, as
the secondary keeps its checkpoint dir, or ``DIR/fsimage`` + ``DIR/fsimage.md5`` as
fetch-image writes them. A ``VERSION`` beside the image, if present, must name the same
``namespaceID`` as the image's metadata; the namespace id is always the image's.

Import (``import_checkpoint``), per name dir, all or nothing:

1. Refused (NameDirError, nothing changed) unless ``<name-dir>/current/`` is missing or empty:
   an existing image or edits may hold ops the checkpoint lacks, so the operator moves them
   aside first. The image must match its sidecar and load as a tree (image.load).
2. ``<name-dir>/current.import/`` is built: the image and its sidecar (copied, fsynced, the
   copy's digest checked), ``edits`` starting at image txid + 1 with START_LOG_SEGMENT (or, for
   a standby bootstrapped into an HA set, with no record: the shared journal gives that txid),
   and ``VERSION`` with the image's namespace id.
3. ``current.import -> current`` (one rename, the name dir fsynced). A crash before it leaves
   ``current/`` untouched and a staging dir that the next import removes.

The ``namenode`` command then starts serving from the rebuilt dirs (it is not a one-shot).

Fetch: the CLI downloads ``GET /checkpoint/image`` with the secondary's transfer client (the
one download path: streamed to a temp file while hashed, length and X-MD5-Digest checked,
fsynced, published as ``DIR/fsimage``); ``seal_fetched`` then checks the footer's txid against
X-Image-Txid and writes ``DIR/fsimage.md5`` atomically. Image first: a crash between the two
leaves a stale sidecar, which import refuses loudly.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from nnlite.durability import durable
from nnlite.formats.errors import ImageCorruptError
from nnlite.formats.fsimage.layout import MD5_SUFFIX, ImageMeta
from nnlite.formats.fsimage.md5 import md5_sidecar_text, parse_md5_sidecar, verify_md5
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NameDirError
from nnlite.namenode.image.columns import load
from nnlite.namenode.journal.journal import restart_edits
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import CURRENT, IMAGE, IMAGE_MD5, VERSION, NameDir, copy_file

log = logging.getLogger(__name__)

STAGING = "current.import"


@dataclass(frozen=True)
class CheckpointImage:
    image: Path
    md5: str
    meta: ImageMeta


# ------------------------------------------------------------------------------ import

def find_checkpoint(checkpoint_dir: str | Path) -> CheckpointImage:
    """The verified image of a checkpoint dir (see the module docstring for the layouts)."""
    root = Path(checkpoint_dir)
    base = next((b for b in (root / CURRENT, root) if (b / IMAGE).is_file()), None)
    if base is None:
        raise NameDirError(f"No checkpoint in {root}: neither {root / CURRENT / IMAGE} nor "
                           f"{root / IMAGE} exists", path=str(root))
    sidecar = base / IMAGE_MD5
    if not sidecar.is_file():
        raise NameDirError(f"{base / IMAGE} has no {IMAGE_MD5} beside it, so it cannot be "
                           "verified", path=str(sidecar))
    md5 = parse_md5_sidecar(sidecar.read_text(), path=str(sidecar))
    verify_md5(base / IMAGE, md5)
    meta = read_meta(base / IMAGE)
    _check_version(base / VERSION, meta.namespace_id)
    return CheckpointImage(base / IMAGE, md5, meta)


def _check_version(path: Path, namespace_id: int) -> None:
    if not path.is_file():
        return
    fields = dict(line.split("=", 1) for line in path.read_text().splitlines()
                  if "=" in line and not line.startswith("#"))
    named = fields.get("namespaceID", "").strip()
    if named and int(named) != namespace_id:
        raise NameDirError(f"{path} names namespace {named} but the image beside it belongs "
                           f"to namespace {namespace_id}", path=str(path))


def import_checkpoint(checkpoint_dir: str | Path, paths: list[str], *,
                      empty_edits: bool = False) -> CheckpointImage:
    """Rebuild the empty name dirs at ``paths`` from a checkpoint; returns what was imported.
    ``empty_edits``: their ``edits`` holds no record at all, not even START_LOG_SEGMENT (an HA
    namenode whose every later txid comes from the shared journal: ``--bootstrap-standby``)."""
    source = find_checkpoint(checkpoint_dir)
    dirs = [NameDir(p) for p in paths]
    with namedir.locked(dirs):
        for d in dirs:
            check_empty(d)
        load(str(source.image), None)          # digest checked above; proves it loads
        for d in dirs:
            _build(d, source, empty_edits)
    log.info("imported checkpoint %s (namespace %d, txid %d, %d inodes) into %s",
             source.image, source.meta.namespace_id, source.meta.last_txid,
             source.meta.inode_count, ", ".join(paths))
    return source


def check_empty(d: NameDir) -> None:
    if d.current.is_dir() and any(d.current.iterdir()):
        held = sorted(p.name for p in d.current.iterdir())
        what = "an image" if IMAGE in held else "files"
        raise NameDirError(
            f"Name directory {d.root} already holds {what} ({', '.join(held)} in current/); "
            "an import (--import-checkpoint, --bootstrap-standby) only fills an empty name "
            "directory. Move it aside first (keep it: its edits may hold ops newer than the "
            "image).", path=str(d.root))


def _build(d: NameDir, source: CheckpointImage, empty_edits: bool) -> None:
    staged = NameDir(d.root)
    staged.current = d.root / STAGING
    if staged.current.exists():
        log.warning("removing %s left by an interrupted import", staged.current)
        shutil.rmtree(staged.current)
    staged.current.mkdir(parents=True)
    copy_file(source.image, staged.file(IMAGE))
    verify_md5(staged.file(IMAGE), source.md5)
    durable.write_atomic(staged.file(IMAGE_MD5), md5_sidecar_text(source.md5).encode())
    restart_edits(staged, source.meta.last_txid + 1, empty=empty_edits)
    staged.write_version(source.meta.namespace_id, int(time.time() * 1000))
    durable.sync_dir(staged.current)
    os.replace(staged.current, d.current)          # replaces a missing or empty current/
    durable.sync_dir(d.root)


# ------------------------------------------------------------------------------ fetch

def seal_fetched(path: str | Path, md5: str, txid: int) -> ImageMeta:
    """Finish a fetched image: ``path`` was downloaded and published after its length and MD5
    were checked (secondary.client); its footer must name ``txid`` (X-Image-Txid). Then the
    sidecar is written atomically beside it."""
    path = Path(path)
    meta = read_meta(path)
    if meta.last_txid != txid:
        raise ImageCorruptError(f"the image holds txid {meta.last_txid}, the namenode "
                                  f"announced txid {txid}", path=str(path))
    durable.write_atomic(path.with_name(path.name + MD5_SUFFIX),
                         md5_sidecar_text(md5).encode())
    return meta
