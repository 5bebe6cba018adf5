"""Name directories: layout, ownership lock, VERSION, and the files each one holds.

Layout of one name directory (there may be several, redundant copies)::

    <dir>/in_use.lock            flock held while a process owns the directory; holds its pid
    <dir>/current/VERSION        key=value lines: namespaceID, layoutVersion, cTime, storageType
    <dir>/current/fsimage        Parquet image (formats.fsimage); last txid in its metadata
    <dir>/current/fsimage.md5    "<hex> *fsimage"
    <dir>/current/edits          the edits log since the image (formats.edits)
    <dir>/current/edits.new      exists only between a roll and the end of a checkpoint
    <dir>/current/fsimage.ckpt   a new image being verified or swapped in (+ fsimage.ckpt.md5)

Every directory receives every write; a directory whose I/O fails is marked unhealthy and
dropped (with a logged error) while at least one healthy directory remains.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nnlite.durability import durable
from nnlite.namenode.errors import NameDirError

log = logging.getLogger(__name__)

CURRENT = "current"
LOCK = "in_use.lock"
VERSION = "VERSION"
IMAGE = "fsimage"
IMAGE_MD5 = "fsimage.md5"
EDITS = "edits"
EDITS_NEW = "edits.new"
CKPT = "fsimage.ckpt"
CKPT_MD5 = "fsimage.ckpt.md5"
STORAGE_LAYOUT_VERSION = 1
STORAGE_TYPE = "NAME_NODE"


class NameDir:
    """One name directory: paths, the ownership lock, VERSION, health."""

    def __init__(self, root: str | Path):
        self.root = Path(root).absolute()
        self.current = self.root / CURRENT
        self.healthy = True
        self.failure: str | None = None
        self._lock_fd: int | None = None

    def __repr__(self) -> str:
        return f"NameDir({str(self.root)!r})"

    def file(self, name: str) -> Path:
        return self.current / name

    def is_formatted(self) -> bool:
        return (self.current / VERSION).is_file()

    def lock(self) -> None:
        """Take the directory for this process; a second process gets NameDirError."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise NameDirError(
                    f"Name directory {self.root} is in use by another process (pid {holder}); "
                    "stop that process first", path=str(self.root)) from exc
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def read_version(self) -> dict[str, str]:
        path = self.current / VERSION
        try:
            text = path.read_text()
        except OSError as exc:
            raise NameDirError(f"Cannot read {path}: {exc.strerror}", path=str(path)) from exc
        fields = {}
        for line in text.splitlines():
            if line.strip() and not line.startswith("#"):
                key, sep, value = line.partition("=")
                if not sep:
                    raise NameDirError(f"Malformed line in {path}: {line!r}", path=str(path))
                fields[key.strip()] = value.strip()
        for key in ("namespaceID", "layoutVersion", "cTime", "storageType"):
            if key not in fields:
                raise NameDirError(f"{path} lacks {key}", path=str(path))
        if int(fields["layoutVersion"]) != STORAGE_LAYOUT_VERSION:
            raise NameDirError(f"{path} has layout version {fields['layoutVersion']}, this "
                               f"build uses {STORAGE_LAYOUT_VERSION}", path=str(path))
        return fields

    def namespace_id(self) -> int:
        return int(self.read_version()["namespaceID"])

    def write_version(self, namespace_id: int, ctime: int) -> None:
        text = (f"#{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime(ctime / 1000))}\n"
                f"namespaceID={namespace_id}\nlayoutVersion={STORAGE_LAYOUT_VERSION}\n"
                f"cTime={ctime}\nstorageType={STORAGE_TYPE}\n")
        durable.write_atomic(self.current / VERSION, text.encode())

    def restore_from(self, healthy: NameDir, segment: str) -> None:
        """Bring this failed dir back from ``healthy`` (Hadoop's name.dir.restore): VERSION,
        the image and ``segment`` (a closed edits segment), each copied atomically; raises
        OSError and stays failed if any cannot be written. The caller starts the next
        segment in it."""
        self.current.mkdir(parents=True, exist_ok=True)
        for stale in (EDITS_NEW, CKPT, CKPT_MD5):
            durable.remove_durably(self.file(stale))
        for name in (VERSION, IMAGE, IMAGE_MD5, segment):
            copy_file(healthy.file(name), self.file(name))
        durable.sync_dir(self.current)
        log.warning("name directory %s restored from %s", self.root, healthy.root)
        self.healthy = True
        self.failure = None

    def fail(self, reason: str) -> None:
        if self.healthy:
            log.error("name directory %s failed and is dropped: %s", self.root, reason)
        self.healthy = False
        self.failure = reason


def lock_all(dirs: list[NameDir]) -> None:
    """Lock every dir, or none: on a failure the ones already taken are released."""
    taken = []
    try:
        for d in dirs:
            d.lock()
            taken.append(d)
    except BaseException:
        unlock_all(taken)
        raise


def lock_formatted(dirs: list[NameDir]) -> None:
    """Lock the dirs of a store about to start. At least one must be formatted; checked before
    anything is created, so a start on a wrong path leaves nothing behind. (A missing dir beside
    a formatted one is created: startup copies the store into it.)"""
    if not any(d.is_formatted() for d in dirs):
        raise NameDirError("No formatted name directory among " +
                           ", ".join(str(d.root) for d in dirs) + "; run `nnlite format`",
                           path=str(dirs[0].root))
    lock_all(dirs)


def unlock_all(dirs: list[NameDir]) -> None:
    for d in dirs:
        d.unlock()


@contextmanager
def locked(dirs: list[NameDir]) -> Iterator[list[NameDir]]:
    """Hold every dir's lock for the duration of a ``with`` block."""
    lock_all(dirs)
    try:
        yield dirs
    finally:
        unlock_all(dirs)


def new_namespace_id() -> int:
    return secrets.randbelow(2**31 - 2) + 1


def prepare_for_format(d: NameDir, force: bool) -> None:
    """Refuse to clobber a formatted directory unless forced; then empty ``current/``."""
    if d.is_formatted() and not force:
        raise NameDirError(
            f"Name directory {d.root} is already formatted; pass --force to erase it",
            path=str(d.root))
    if d.current.exists():
        shutil.rmtree(d.current)
    d.current.mkdir(parents=True)
    durable.sync_dir(d.root)


def copy_file(src: Path, dst: Path) -> None:
    """Copy ``src`` over ``dst`` atomically and durably (used to resync a lagging dir). On
    failure (a full disk) nothing is left behind: ``dst`` is untouched, the copy removed."""
    tmp = dst.with_name(dst.name + ".tmp")
    try:
        shutil.copyfile(src, tmp)
        durable.publish(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
