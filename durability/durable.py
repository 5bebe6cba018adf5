"""Durability policy, in one place: how bytes become durable and how files are published.

* ``sync_fd``: fdatasync one descriptor, timed; a slow sync is logged.
* ``sync_dir``: fsync a directory, so a rename or a new name in it survives power loss.
* ``publish``: temp name -> fsync -> ``os.replace`` -> fsync the directory. A reader sees the
  old file or the new one, never a mix, whatever instant the process dies at.
* ``write_atomic``: publish a small file from bytes.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

SLOW_SYNC_SECONDS = 1.0


def sync_fd(fd: int, what: str = "") -> float:
    """fdatasync ``fd``; return the seconds it took."""
    start = time.perf_counter()
    os.fdatasync(fd)
    took = time.perf_counter() - start
    if took > SLOW_SYNC_SECONDS:
        log.warning("slow sync of %s: %.3f s", what or f"fd {fd}", took)
    return took


def sync_file(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(tmp: str | Path, final: str | Path, *, synced: bool = False) -> None:
    """Make ``tmp`` appear as ``final`` atomically and durably (``synced``: tmp is fsynced)."""
    if not synced:
        sync_file(tmp)
    os.replace(tmp, final)
    sync_dir(Path(final).parent)


def write_atomic(path: str | Path, data: bytes) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    publish(tmp, path, synced=True)


def rename_durably(src: str | Path, dst: str | Path) -> None:
    """Rename within one directory and fsync that directory."""
    os.replace(src, dst)
    sync_dir(Path(dst).parent)


def remove_durably(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    sync_dir(Path(path).parent)
