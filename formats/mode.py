"""The mode word: an inode's permission bits as every layer carries them, and their text form.

The edits log (``permission`` of MkdirOp, AddFileOp, SetPermissionsOp), the fsimage (the
``permission`` column) and WebHDFS (``permission``, in octal) all hold the same int, laid out
as POSIX and Hadoop's ``FsPermission`` lay it out::

    0o1000   STICKY: in a directory, only the owner of an entry or of the directory may
             delete or rename the entry
    0o0700   user  r w x (0o400, 0o200, 0o100)
    0o0070   group r w x
    0o0007   other r w x

Text form (``mode_string``, as ``FsPermission.toString``): nine letters, ``r``, ``w``, ``x``
or ``-`` for the user, group and other bits in that order, no type letter; the sticky bit
shows in the last letter as ``t`` (other may execute) or ``T`` (it may not).

Both the client (``chmod``'s modes, ``ls``, ``getfacl``) and the namenode (the sticky-bit
rule, the permission-denied message) import it from here; the symbolic ``chmod`` grammar is a
shell command's syntax and stays in ``client/modes.py``.
"""

from __future__ import annotations

STICKY = 0o1000


def mode_string(bits: int) -> str:
    """``rwxr-xr-t`` for ``0o1755`` (see the module docstring)."""
    out = []
    for shift in (6, 3, 0):
        part = (bits >> shift) & 7
        out += ["r" if part & 4 else "-", "w" if part & 2 else "-", "x" if part & 1 else "-"]
    if bits & STICKY:
        out[-1] = "t" if out[-1] == "x" else "T"
    return "".join(out)
