"""Offline recovery of damaged edits: ``nnlite namenode --recover [--force]`` (as Hadoop's
``namenode -recover``).

Normal startup never skips anything: a bad record in the middle of a log stops it
(``namenode/image/startup.py``). Recovery is the one explicit way to discard data. It runs in two
phases:

1. Read (changes nothing). Load the newest valid image, then replay ``edits`` and ``edits.new``
   from the dir startup would choose, frame by frame. Each *problem* is explained (file,
   offset, txid, what each answer would lose) and put to ``decide``, which answers:

   * CONTINUE: skip the damaged bytes or the record, resync at the next valid record and go on.
     After a bad frame, the scan moves forward byte by byte to the next offset where a frame
     (length + CRC) decodes to a txid at least the one expected there; a later txid is reported
     as lost txids.
   * STOP: keep everything before this point and discard the rest (later segments included).
   * QUIT: raise RecoveryQuit; nothing on disk has changed.

   Problems: a bad header, a bad frame (CRC, length, undecodable payload) with more data after
   it, a txid gap, a txid that repeats or goes backwards, an op that cannot be applied
   (ReplayError at startup). A torn tail (a bad frame with only zeros, or nothing, after it)
   is truncated without asking, exactly as startup does, and reported.
2. Write. Every file about to change (image, sidecars, edits, edits.new) in every dir is kept
   as ``<file>.broken`` (or ``.broken.N``, the first free N), by a hard link (a copy for
   ``fsimage.ckpt``, which is rewritten in place); then a new image of the recovered namespace
   is installed (``namenode/image/install.py``) and a fresh ``edits`` holding only
   START_LOG_SEGMENT at image txid + 1 is published; ``edits.new`` is removed. The store
   then starts cleanly. A crash during this phase leaves either the old files, or the new image
   beside old edits whose records it already holds (their bad bytes still stop a normal
   startup loudly; recovery can simply be run again).

``Prompter`` is the terminal side: ``--force`` answers CONTINUE to everything without asking;
"always continue" does so from that problem on.

This module picks the starting image and runs the phases; ``scan.py`` is phase 1,
``repair.py`` phase 2, ``dialog.py`` the problems, choices, outcome and the terminal prompter.
"""

from __future__ import annotations

import logging
from pathlib import Path

from nnlite.formats import edits
from nnlite.formats.errors import FormatError, ImageCorruptError
from nnlite.formats.fsimage.layout import ImageMeta
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.formats.fsimage.read import read_meta
from nnlite.namenode.errors import NameDirError
from nnlite.namenode.image import columns, startup
from nnlite.namenode.recovery.dialog import Decide, Outcome
from nnlite.namenode.recovery.repair import rewrite
from nnlite.namenode.recovery.scan import Replay
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import (
    CKPT,
    CKPT_MD5,
    EDITS,
    EDITS_NEW,
    IMAGE,
    IMAGE_MD5,
    NameDir,
)

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ images

def _best_image(dirs: list[NameDir], namespace_id: int) -> tuple[Path, str, ImageMeta]:
    """The newest verified image, as startup picks it, but without finishing any swap."""
    found = []
    for d in dirs:
        for name, sidecars in ((IMAGE, (IMAGE_MD5, CKPT_MD5)), (CKPT, (CKPT_MD5,))):
            path = d.file(name)
            if not path.exists():
                continue
            try:
                md5 = file_md5(str(path))
                if not any(d.file(s).exists() and parse_md5_sidecar(
                        d.file(s).read_text(), path=str(d.file(s))) == md5 for s in sidecars):
                    raise ImageCorruptError(f"digest {md5} matches no sidecar", path=str(path))
                meta = read_meta(str(path))
            except (FormatError, OSError) as exc:
                log.warning("recovery ignores %s: %s", path, exc)
                continue
            if meta.namespace_id == namespace_id:
                found.append((meta.last_txid, name == IMAGE, path, md5, meta))
    if not found:
        raise NameDirError("No valid fsimage in any name directory: recovery replays edits "
                           "onto an image; `nnlite namenode --import-checkpoint` can rebuild "
                           "one from the secondary's last checkpoint")
    best = max(found, key=lambda c: c[:2])
    return best[2], best[3], best[4]


# ------------------------------------------------------------------------------ entry

def recover(paths: list[str], decide: Decide, *,
            max_record: int = edits.DEFAULT_MAX_RECORD, shared_journal: bool = False) -> Outcome:
    """Recover the name dirs at ``paths`` (locked for the duration); see the module docs.
    ``shared_journal``: the namenode belongs to an HA set, so the fresh edits hold no record
    at all (every txid after the image comes from the shared journal, even the segment's
    first: a START_LOG_SEGMENT written here would claim a txid the journal gave to an op)."""
    dirs = [NameDir(p) for p in paths]
    with namedir.locked(dirs):
        return _recover(dirs, decide, max_record, shared_journal)


def _recover(dirs: list[NameDir], decide: Decide, max_record: int,
             shared_journal: bool = False) -> Outcome:
    formatted = [d for d in dirs if d.is_formatted()]
    if not formatted:
        raise NameDirError("No formatted name directory among " +
                           ", ".join(str(d.root) for d in dirs))
    out = Outcome(dirs=[str(d.root) for d in dirs])
    out.namespace_id = startup.namespace_id_of(formatted)    # the checks startup makes
    image_path, md5, meta = _best_image(formatted, out.namespace_id)
    tree, _ = columns.load(str(image_path), md5)
    out.image_txid = meta.last_txid
    source = startup.edits_source(formatted)                 # the dir startup replays
    segments = [source.file(n) for n in (EDITS, EDITS_NEW) if source.file(n).exists()]
    replay = Replay(tree, meta.last_txid, decide, max_record, out)
    replay.segments(segments)
    out.last_txid = replay.done
    rewrite(dirs, source, tree, out, empty_segment=shared_journal)
    log.info("recovery done: new image at txid %d in %s", out.last_txid, ", ".join(out.dirs))
    return out
