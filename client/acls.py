"""ACL entries as Hadoop's FsShell reads and shows them: ``setfacl``'s ACL spec and change,
``getfacl``'s whole ACL with the permissions the mask leaves.

* An entry is ``[default:]TYPE:[NAME]:[PERM]``: TYPE ``user``, ``group``, ``mask`` or
  ``other`` (any case), PERM three of ``r``/``w``/``x`` or ``-`` in that order; ``setfacl -x``
  names entries without PERM. A spec is entries separated by commas, empty pieces skipped
  (AclEntry.parseAclSpec). A bad one is ``BadArgumentError`` before anything is sent, in
  Hadoop's words; the spec sent is the entries written back in Hadoop's form (lower case).
* ``setfacl`` takes exactly one of ``-b`` (REMOVEACL), ``-k`` (REMOVEDEFAULTACL), ``-m``
  (MODIFYACLENTRIES), ``-x`` (REMOVEACLENTRIES), ``--set`` (SETACL). With ``-R`` a file gets
  only the access entries (only a directory has a default ACL), and none at all is no call.
* ``getfacl`` shows the ACL that the permission bits and GETACLSTATUS's entries make together
  (AclUtil.getAclFromPermAndEntries): ``user::`` from the owner bits, the named and ``group::``
  entries, ``mask::`` from the group bits (``group::`` itself when there are no access
  entries), ``other::``, then the default entries. In each scope that is more than the three
  base entries, the mask is the second-to-last entry; it limits named entries and ``group::``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nnlite.client.errors import BadArgumentError

ACCESS, DEFAULT = "access", "default"
TYPES = ("user", "group", "mask", "other")
_PERM = re.compile(r"[r-][w-][x-]")


@dataclass(frozen=True, slots=True)
class AclEntry:
    scope: str
    type: str
    name: str = ""
    perm: str | None = None

    def __str__(self) -> str:
        """AclEntry.toStringStable: ``default:user:alice:r-x``, ``mask::rwx``."""
        head = "default:" if self.scope == DEFAULT else ""
        return f"{head}{self.type}:{self.name}:{self.perm or ''}"

    @property
    def masked(self) -> bool:
        """Whether the mask limits it: a named entry or ``group::``."""
        return bool(self.name) or self.type == "group"


def parse_entry(text: str, with_permission: bool = True) -> AclEntry:
    """AclEntry.parseAclEntry; the pieces split as Java's ``split(":")`` does (trailing empty
    pieces dropped, so ``user:bob:`` is bob without a permission)."""
    pieces = text.split(":")
    while pieces and not pieces[-1]:
        pieces.pop()
    scope = ACCESS
    if pieces and pieces[0] == "default":
        scope, pieces = DEFAULT, pieces[1:]
    if not pieces:
        raise BadArgumentError(f"Invalid <aclSpec> : {text}")
    kind = pieces[0].lower()
    if kind not in TYPES:
        raise BadArgumentError(f"Invalid type of acl in <aclSpec> :{text}")
    name, rest, perm = (pieces[1] if len(pieces) > 1 else ""), pieces[2:], None
    if with_permission:
        if not rest:
            raise BadArgumentError(f"Invalid <aclSpec> : {text}")
        if not _PERM.fullmatch(rest[0]):
            raise BadArgumentError(f"Invalid permission in <aclSpec> : {text}")
        perm, rest = rest[0], rest[1:]
    if rest:
        raise BadArgumentError(f"Invalid <aclSpec> : {text}")
    return AclEntry(scope, kind, name, perm)


def parse_spec(spec: str, with_permission: bool = True) -> tuple[AclEntry, ...]:
    return tuple(parse_entry(piece, with_permission) for piece in spec.split(",") if piece)


def to_spec(entries) -> str:
    return ",".join(str(e) for e in entries)


# ------------------------------------------------------------------------------- setfacl

@dataclass(frozen=True, slots=True)
class AclChange:
    """One ``setfacl``: the WebHDFS op and, for -m, -x and --set, its entries."""
    op: str
    entries: tuple[AclEntry, ...] = ()

    def spec(self, *, directory: bool, recursive: bool) -> str | None:
        """The aclspec for one path ("" when there is nothing to send it, None for an op
        without one): under ``-R`` a file gets only the access entries."""
        if self.op in ("REMOVEACL", "REMOVEDEFAULTACL"):
            return None
        entries = self.entries
        if recursive and not directory:
            entries = tuple(e for e in entries if e.scope == ACCESS)
        return to_spec(entries)


def setfacl_change(*, remove_all: bool = False, remove_default: bool = False,
                   modify: str | None = None, remove: str | None = None,
                   replace: str | None = None) -> AclChange:
    """``-b``, ``-k``, ``-m SPEC``, ``-x SPEC`` or ``--set SPEC``, checked as
    SetfaclCommand.processOptions checks them."""
    given = [op for op, on in (("REMOVEACL", remove_all), ("REMOVEDEFAULTACL", remove_default),
                               ("MODIFYACLENTRIES", modify is not None),
                               ("REMOVEACLENTRIES", remove is not None),
                               ("SETACL", replace is not None)) if on]
    if len(given) > 1:
        raise BadArgumentError("setfacl: Specified flags contains both remove and modify flags")
    if not given:
        raise BadArgumentError("setfacl: Expected one of -b, -k, -m, -x or --set options")
    spec = next((s for s in (modify, remove, replace) if s is not None), None)
    if spec is None:
        return AclChange(given[0])
    try:
        entries = parse_spec(spec, with_permission=remove is None)
    except BadArgumentError as exc:
        raise BadArgumentError(f"setfacl: {exc}") from exc
    if not entries:
        raise BadArgumentError("setfacl: Missing <acl_spec> entry")
    return AclChange(given[0], entries)


# ------------------------------------------------------------------------------- getfacl

def symbol(bits: int) -> str:
    """FsAction.SYMBOL of three permission bits."""
    return ("r" if bits & 4 else "-") + ("w" if bits & 2 else "-") + ("x" if bits & 1 else "-")


def limited(perm: str, mask: str) -> str:
    """FsAction.and: what ``mask`` leaves of ``perm``."""
    return "".join(p if m != "-" else "-" for p, m in zip(perm, mask, strict=True))


def scopes(permission: int, entries) -> tuple[list[AclEntry], list[AclEntry]]:
    """The access and the default entries of the whole ACL (getAclFromPermAndEntries)."""
    access = [e for e in entries if e.scope == ACCESS]
    default = [e for e in entries if e.scope == DEFAULT]
    base = [AclEntry(ACCESS, "user", "", symbol(permission >> 6)), *access,
            AclEntry(ACCESS, "mask" if access else "group", "", symbol(permission >> 3)),
            AclEntry(ACCESS, "other", "", symbol(permission))]
    return base, default


def effective(entries: list[AclEntry]) -> list[tuple[AclEntry, str | None]]:
    """Each entry of one scope with what its mask leaves of it, where that is less."""
    if len(entries) <= 3:
        return [(e, None) for e in entries]
    mask = entries[-2].perm or "---"
    out = []
    for entry in entries:
        left = limited(entry.perm or "---", mask) if entry.masked else entry.perm
        out.append((entry, left if left != entry.perm else None))
    return out
