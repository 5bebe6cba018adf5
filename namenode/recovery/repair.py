"""Phase 2 of recovery, the only one that writes: keep a copy of every file about to change,
install an image of the recovered namespace, and restart every dir's log just after it.

Invariants: no file is replaced before its ``.broken`` copy (``<file>.broken``, or
``.broken.N`` with the first free N) exists and its directory is synced; the copy is a hard
link except for ``fsimage.ckpt``, which ``install.stage`` rewrites in place, so it gets a real
copy. The image is installed (``install.install``) before any ``edits`` is replaced, so a crash
leaves either the old files or the new image beside old edits whose records it already holds.
A fresh ``edits`` holds only START_LOG_SEGMENT at image txid + 1, ``edits.new`` is removed,
and a dir that was not formatted gets the source dir's VERSION last.
"""

from __future__ import annotations

import os
from pathlib import Path

from nnlite.durability import durable
from nnlite.namenode.image import columns, install
from nnlite.namenode.journal.journal import restart_edits
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.recovery.dialog import Outcome
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

BROKEN_SUFFIX = ".broken"
CHANGED_FILES = (IMAGE, IMAGE_MD5, CKPT, CKPT_MD5, EDITS, EDITS_NEW)


def broken_name(path: Path) -> Path:
    """``<file>.broken``, or ``<file>.broken.N`` with the first N not taken."""
    candidate = path.with_name(path.name + BROKEN_SUFFIX)
    n = 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{BROKEN_SUFFIX}.{n}")
    return candidate


def keep_copy(path: Path) -> Path:
    """Keep the current content of ``path`` beside it. A hard link where the name is only
    ever replaced by a rename afterwards; a real copy for ``fsimage.ckpt``, which
    ``install.stage`` writes in place (through a link it would overwrite the copy too)."""
    target = broken_name(path)
    if path.name == CKPT:
        copy_file(path, target)
        return target
    try:
        os.link(path, target)
    except OSError:
        copy_file(path, target)
    durable.sync_dir(path.parent)
    return target


def rewrite(dirs: list[NameDir], source: NameDir, tree: Tree, out: Outcome, *,
            empty_segment: bool = False) -> None:
    """Phase 2 (see the module docstring); ``empty_segment``: the fresh edits hold no record
    (an HA namenode's, ``recover.recover``)."""
    for d in dirs:
        d.current.mkdir(parents=True, exist_ok=True)
        out.backups += [keep_copy(d.file(n)) for n in CHANGED_FILES if d.file(n).exists()]
    install.install(dirs, lambda p: columns.save(tree, p, out.namespace_id, out.last_txid))
    for d in dirs:
        restart_edits(d, out.last_txid + 1, empty=empty_segment)
        if not d.is_formatted():
            copy_file(source.file("VERSION"), d.file("VERSION"))
