"""The checkpoint directory: laid out as a name directory, so that ``nnlite namenode
--import-checkpoint`` can rebuild a lost name directory from the last checkpoint::

    <checkpoint-dir>/in_use.lock            flock held by the secondary that uses it
    <checkpoint-dir>/current/VERSION        namespaceID (the namenode's), layoutVersion, cTime
    <checkpoint-dir>/current/fsimage        the last checkpoint's image (or the namenode's
                                            image, when it had to be downloaded)
    <checkpoint-dir>/current/fsimage.md5    "<hex> *fsimage"
    <checkpoint-dir>/current/edits          the last edits downloaded from the namenode
    <checkpoint-dir>/current/fsimage.ckpt   a new image (downloaded or merged) before its swap
    <checkpoint-dir>/current/*.download     a download in progress (removed at start)

A new image arrives through imagestore's sequence (``fsimage.ckpt``, its ``.md5``, rename,
sidecar), the namenode's own, so a crash at any instant leaves ``current/`` loadable by the
namenode's loader: an image whose digest matches its sidecar, plus edits that either continue
it or end at or before its txid (replay skips those).
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from nnlite.formats.errors import FormatError, ImageCorruptError
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar, verify_md5
from nnlite.formats.fsimage.read import read_meta
from nnlite.formats.fsimage.write import ImageInfo
from nnlite.namenode.errors import NameDirError
from nnlite.namenode.image import install
from nnlite.namenode.storage.namedir import CKPT, CKPT_MD5, EDITS, IMAGE, IMAGE_MD5, NameDir
from nnlite.secondary.client import TMP_SUFFIX
from nnlite.secondary.errors import CheckpointDirError, ImageVerifyError

log = logging.getLogger(__name__)

CTIME = 0      # the namenode's status does not report its cTime (see the lead's notes)


@dataclass(frozen=True, slots=True)
class ImageRef:
    """An image on disk whose digest was checked: what it is, not where it is."""
    md5: str
    txid: int
    size: int


class CheckpointDir:
    """Lock, VERSION, recovery and image installation for one checkpoint directory."""

    def __init__(self, root: str | Path):
        self.name_dir = NameDir(root)
        self.root = self.name_dir.root

    @property
    def image_path(self) -> Path:
        return self.name_dir.file(IMAGE)

    @property
    def ckpt_path(self) -> Path:
        return self.name_dir.file(CKPT)

    @property
    def edits_path(self) -> Path:
        return self.name_dir.file(EDITS)

    def open(self) -> None:
        """Take the directory (one secondary per directory) and finish what a crash left."""
        try:
            self.name_dir.lock()
        except NameDirError as exc:
            raise CheckpointDirError(f"checkpoint directory {self.root} is in use: {exc}") \
                from exc
        try:
            self.name_dir.current.mkdir(parents=True, exist_ok=True)
            self.recover()
        except OSError as exc:
            self.close()
            raise CheckpointDirError(f"cannot prepare checkpoint directory {self.root}: "
                                     f"{exc}") from exc

    def close(self) -> None:
        self.name_dir.unlock()

    def recover(self) -> None:
        """Remove partial downloads; finish a verified image's swap, discard a partial one."""
        for tmp in self.name_dir.current.glob("*" + TMP_SUFFIX):
            log.warning("removing a partial download %s", tmp)
            tmp.unlink()
        d = self.name_dir
        if d.file(CKPT_MD5).exists() and (d.file(CKPT).exists() or d.file(IMAGE).exists()):
            try:
                if _sidecar(d.file(CKPT_MD5)) == file_md5(str(_ckpt_or_image(d))):
                    log.warning("finishing an interrupted image swap in %s", d.current)
                    install.finish_swap(d, edits_new_to_edits=False)
                    return
            except FormatError as exc:
                log.warning("unreadable %s: %s", d.file(CKPT_MD5), exc)
        install.discard_ckpt(d)

    # ------------------------------------------------------------------ identity

    def namespace_id(self) -> int | None:
        if not self.name_dir.is_formatted():
            return None
        try:
            return self.name_dir.namespace_id()
        except NameDirError as exc:
            raise CheckpointDirError(f"checkpoint directory {self.root}: {exc}") from exc

    def adopt(self, namespace_id: int) -> None:
        """Bind a fresh directory to the namenode's namespace; refuse another namespace's."""
        mine = self.namespace_id()
        if mine is None:
            self.name_dir.write_version(namespace_id, CTIME)
            log.info("checkpoint directory %s now holds namespace %d", self.root, namespace_id)
        elif mine != namespace_id:
            raise CheckpointDirError(
                f"checkpoint directory {self.root} holds namespace {mine}, the namenode serves "
                f"namespace {namespace_id}; use another directory (or empty this one)")

    # ------------------------------------------------------------------ images

    def image_ref(self) -> ImageRef | None:
        """The image in ``current/`` if its digest matches its sidecar; else None (logged)."""
        path = self.image_path
        if not path.exists():
            return None
        try:
            md5 = _sidecar(self.name_dir.file(IMAGE_MD5))
            verify_md5(str(path), md5)
            meta = read_meta(str(path))
        except (FormatError, OSError) as exc:
            log.warning("not using the local image %s: %s", path, exc)
            return None
        return ImageRef(md5, meta.last_txid, path.stat().st_size)

    def install_ckpt(self, ref: ImageRef) -> ImageRef:
        """``fsimage.ckpt`` (fsynced, checked as ``ref``) becomes ``fsimage`` durably."""
        install.mark_verified(self.name_dir, ref.md5)
        install.finish_swap(self.name_dir, edits_new_to_edits=False)
        return ref

    def discard_ckpt(self) -> None:
        install.discard_ckpt(self.name_dir)


def _sidecar(path: Path) -> str:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ImageCorruptError(f"cannot read the sidecar: {exc.strerror}",
                                  path=str(path)) from exc
    return parse_md5_sidecar(text, path=str(path))


def _ckpt_or_image(d: NameDir) -> Path:
    return d.file(CKPT) if d.file(CKPT).exists() else d.file(IMAGE)


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def verify_image(path: Path, info: ImageInfo, namespace_id: int, txid: int) -> ImageRef:
    """Read the written image back: size, MD5, footer txid and namespace."""
    size, md5 = os.stat(path).st_size, file_md5(str(path))
    if (size, md5) != (info.size, info.md5_hex):
        raise ImageVerifyError(f"{path} reads back as {size} bytes MD5 {md5}; {info.size} "
                               f"bytes MD5 {info.md5_hex} were written", phase="save",
                               txid=txid)
    try:
        meta = read_meta(str(path))
    except FormatError as exc:
        raise ImageVerifyError(f"{path} does not read back: {exc}", phase="save",
                               txid=txid) from exc
    if (meta.namespace_id, meta.last_txid) != (namespace_id, txid):
        raise ImageVerifyError(f"{path} reads back as namespace {meta.namespace_id} txid "
                               f"{meta.last_txid}; expected {namespace_id} txid {txid}",
                               phase="save", txid=txid)
    return ImageRef(md5, txid, size)
