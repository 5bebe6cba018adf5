"""Installing a new image into name dirs, so that a crash at any instant leaves a loadable dir.

The sequence, per dir (each step durable before the next):

1. ``fsimage.ckpt`` is written (or copied) and fsynced.
2. ``fsimage.ckpt.md5`` is published: from here on the ckpt counts as verified (``startup.py``).
3. ``fsimage.ckpt -> fsimage`` (rename, directory fsynced).
4. ``fsimage.md5`` is published with the new digest; ``fsimage.ckpt.md5`` is removed.
5. Only for a checkpoint: ``edits.new -> edits``.

A crash before 2 leaves a partial ckpt that startup discards; between 2 and 5 startup sees a
verified image (as ckpt, or as fsimage matching ckpt.md5) and finishes the remaining steps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from nnlite.durability import durable, faults
from nnlite.formats.fsimage.md5 import md5_sidecar_text, parse_md5_sidecar
from nnlite.formats.fsimage.write import ImageInfo
from nnlite.namenode.storage.namedir import (
    CKPT,
    CKPT_MD5,
    EDITS,
    EDITS_NEW,
    IMAGE,
    IMAGE_MD5,
    NameDir,
    copy_file,
)

log = logging.getLogger(__name__)


def stage(dirs: list[NameDir], write: Callable[[str], ImageInfo]) -> ImageInfo:
    """Steps 1-2 in every dir: write the image once, copy it to the other dirs."""
    first = dirs[0]
    info = write(str(first.file(CKPT)))
    durable.sync_file(first.file(CKPT))
    for d in dirs[1:]:
        copy_file(first.file(CKPT), d.file(CKPT))
    for d in dirs:
        mark_verified(d, info.md5_hex)
    return info


def mark_verified(d: NameDir, md5_hex: str) -> None:
    durable.write_atomic(d.file(CKPT_MD5), md5_sidecar_text(md5_hex).encode())


def finish_swap(d: NameDir, *, edits_new_to_edits: bool) -> None:
    """Steps 3-5 for one dir whose ckpt is verified; safe to repeat after a crash."""
    md5 = parse_md5_sidecar(d.file(CKPT_MD5).read_text(), path=str(d.file(CKPT_MD5)))
    if d.file(CKPT).exists():
        durable.rename_durably(d.file(CKPT), d.file(IMAGE))
    durable.write_atomic(d.file(IMAGE_MD5), md5_sidecar_text(md5).encode())
    durable.remove_durably(d.file(CKPT_MD5))
    faults.hit("checkpoint.between-renames")
    if edits_new_to_edits and d.file(EDITS_NEW).exists():
        durable.rename_durably(d.file(EDITS_NEW), d.file(EDITS))


def install(dirs: list[NameDir], write: Callable[[str], ImageInfo], *,
            edits_new_to_edits: bool = False) -> ImageInfo:
    info = stage(dirs, write)
    for d in dirs:
        finish_swap(d, edits_new_to_edits=edits_new_to_edits)
    return info


def upload_file(d: NameDir, txid: int) -> Path:
    """Where an uploaded image for ``txid`` is stored until its swap: a name of its own
    (Hadoop's ``NNStorage.getCheckpointImageFile``, ``fsimage.ckpt_<txid>``), so an upload
    still streaming never writes the ``fsimage.ckpt`` a local save is installing."""
    return d.current / f"{CKPT}_{txid:019d}"


def discard_ckpt(d: NameDir) -> None:
    """Remove a ckpt that startup did not load: partial (no sidecar), or not newer than the
    image that was loaded; and uploads a crash left unswapped."""
    for name in (CKPT, CKPT_MD5):
        if d.file(name).exists():
            log.warning("discarding %s", d.file(name))
            durable.remove_durably(d.file(name))
    for upload in d.current.glob(f"{CKPT}_*"):
        log.warning("discarding %s", upload)
        durable.remove_durably(upload)
