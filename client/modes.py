"""``chmod``'s modes, as Hadoop's ChmodParser reads them, and a FileStatus's permission.

A mode is octal (``755``, ``0644``, ``1777``: an optional sticky/zero digit and one to three
octal digits) or symbolic: comma-separated clauses ``[ugoa]*[+-=][rwxXt]*`` (``u+x``,
``go-w``, ``a=rX,u+w``, ``+t``). No ``who`` means all. ``X`` is execute only for a directory
or where some execute bit is already set; ``t`` is the sticky bit (for ``o``, ``a`` or no
``who``). ``parse_mode`` checks the text before anything is sent, so a bad mode is a
``BadArgumentError`` even for a path that does not exist. The bits themselves (``STICKY``)
and their ``rwx`` text are the mode word of ``formats/mode.py``, shared with the namenode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nnlite.client.errors import BadArgumentError
from nnlite.formats.mode import STICKY

_OCTAL = re.compile(r"[01]?[0-7]{1,3}")
_CLAUSE = re.compile(r"([ugoa]*)([-+=])([rwxXt]*)")
_WHO = {"u": 0o700, "g": 0o070, "o": 0o007, "a": 0o777}
_PERM = {"r": 0o444, "w": 0o222, "x": 0o111}


@dataclass(frozen=True, slots=True)
class Clause:
    who: str
    op: str
    perms: str

    def apply(self, mode: int, is_dir: bool) -> int:
        mask = 0
        for w in self.who or "a":
            mask |= _WHO[w]
        bits = 0
        for p in self.perms:
            if p in _PERM:
                bits |= _PERM[p]
            elif p == "X" and (is_dir or mode & 0o111):
                bits |= 0o111
        bits &= mask
        sticky = STICKY if "t" in self.perms else 0
        touches_sticky = not self.who or "o" in self.who or "a" in self.who
        if self.op == "+":
            return mode | bits | (sticky if touches_sticky else 0)
        if self.op == "-":
            return mode & ~bits & ~(sticky if touches_sticky else 0)
        mode = (mode & ~mask) | bits
        return (mode & ~STICKY) | sticky if touches_sticky else mode


@dataclass(frozen=True, slots=True)
class ModeChange:
    """What ``chmod MODE`` does to an inode: an absolute mode or symbolic clauses."""
    text: str
    absolute: int | None = None
    clauses: tuple[Clause, ...] = ()

    def apply(self, current: int, is_dir: bool) -> int:
        if self.absolute is not None:
            return self.absolute
        mode = current
        for clause in self.clauses:
            mode = clause.apply(mode, is_dir)
        return mode & 0o1777

    @property
    def needs_current(self) -> bool:
        return self.absolute is None


def parse_mode(text: str) -> ModeChange:
    text = text.strip()
    if _OCTAL.fullmatch(text):
        return ModeChange(text, absolute=int(text, 8))
    clauses = []
    for part in text.split(","):
        match = _CLAUSE.fullmatch(part.strip())
        if not match:
            raise BadArgumentError(
                f"chmod: invalid mode {text!r}: give octal (755, 1777) or symbolic "
                "clauses [ugoa]*[+-=][rwxXt]* separated by commas (u+x, go-w, a=rX)")
        clauses.append(Clause(*match.groups()))
    return ModeChange(text, clauses=tuple(clauses))


def permission_bits(status: dict) -> int:
    """A FileStatus's ``permission`` (an octal string) as an int."""
    try:
        return int(str(status.get("permission", "0")), 8)
    except ValueError:
        return 0
