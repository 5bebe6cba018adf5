"""POSIX ACLs as HDFS keeps and enforces them: entries, the spec syntax, the four
transformations, how an ACL is stored on an inode, and default-ACL inheritance.

An entry is a tuple ``(scope, type, name, perm)``: scope ACCESS 0 / DEFAULT 1, type USER 0 /
GROUP 1 / MASK 2 / OTHER 3 (the ordinals of Hadoop's ``AclEntryScope`` and ``AclEntryType``),
``name`` "" for the unnamed entries, ``perm`` the rwx bits. Tuples sort as Hadoop's
``AclTransformation.ACL_ENTRY_COMPARATOR`` sorts entries (scope, type, unnamed first, name);
``key`` drops the permission.

Storage (Hadoop's ``AclStorage``): an inode's ``acl`` is None for a minimal ACL, else the
tuple of *feature* entries: the access entries between the owner and the mask (named users,
the unnamed group, named groups), then every default entry. The owner, mask (or, without a
mask, group) and other entries live in the permission bits, so chmod of the group bits
changes the mask. The logical ACL (``logical``) puts them back together; every change is
computed on it and stored with ``stored``. Equal feature tuples are shared between inodes
(Hadoop's ``ReferenceCountMap`` of unique features), so a default ACL inherited by a million
files costs one tuple.

Text form (``AclEntry.toStringStable``): ``[default:]type:name:perm``, as GETACLSTATUS
answers and the edits log and fsimage store entries.
"""

from __future__ import annotations

import itertools
import re

from nnlite.namenode import errors

ACCESS, DEFAULT = 0, 1
USER, GROUP, MASK, OTHER = 0, 1, 2, 3
TYPE_NAMES = ("user", "group", "mask", "other")
PERM_SYMBOLS = ("---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx")
MAX_ENTRIES = 32          # per scope (AclTransformation.MAX_ENTRIES)
# AclPermissionParam's domain (HdfsClientConfigKeys.DFS_WEBHDFS_ACL_PERMISSION_PATTERN_DEFAULT)
SPEC_PATTERN = ("^(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:([rwx-]{3})?"
                "(,(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:"
                "([rwx-]{3})?)*$")
_SPEC = re.compile(r"(default:)?(user|group|mask|other):[A-Za-z0-9._-]*:([rwx-]{3})?"
                   r"(,(default:)?(user|group|mask|other):[A-Za-z0-9._-]*:([rwx-]{3})?)*")
DISABLED = ("The ACL operation has been rejected.  Support for ACLs has been disabled by "
            "setting dfs.namenode.acls.enabled to false.")
_shared: dict[tuple, tuple] = {}


def key(entry: tuple) -> tuple:
    return entry[:3]


def to_text(entry: tuple) -> str:
    scope, kind, name, perm = entry
    head = "default:" if scope == DEFAULT else ""
    tail = PERM_SYMBOLS[perm] if perm is not None else ""
    return f"{head}{TYPE_NAMES[kind]}:{name}:{tail}"


def from_text(text: str) -> tuple:
    """An entry from ``to_text`` (the edits log and fsimage form)."""
    return parse_entry(text, True)


def spec_matches(spec: str) -> bool:
    """Whether WebHDFS's ``aclspec`` parameter accepts the value (AclPermissionParam)."""
    return bool(_SPEC.fullmatch(spec))


def parse_spec(spec: str, with_permission: bool) -> list[tuple]:
    """``AclEntry.parseAclSpec``: comma-separated entries, empty pieces skipped."""
    return [parse_entry(piece, with_permission) for piece in spec.split(",") if piece]


def parse_entry(text: str, with_permission: bool) -> tuple:
    """``AclEntry.parseAclEntry``; the pieces are split as Java's ``String.split(":")``
    splits (trailing empty pieces dropped), so ``user:bob:`` names bob without a permission."""
    pieces = text.split(":")
    while pieces and not pieces[-1]:
        pieces.pop()
    if not pieces:
        raise errors.HadoopIllegalArgumentError(f"Invalid <aclSpec> : {text}")
    index, scope = 0, ACCESS
    if pieces[0] == "default":
        index, scope = 1, DEFAULT
    if len(pieces) <= index:
        raise errors.HadoopIllegalArgumentError(f"Invalid <aclSpec> : {text}")
    kind_name = pieces[index].upper()
    if kind_name not in ("USER", "GROUP", "MASK", "OTHER"):
        raise errors.HadoopIllegalArgumentError(f"Invalid type of acl in <aclSpec> :{text}")
    kind = TYPE_NAMES.index(kind_name.lower())
    index += 1
    name = ""
    if len(pieces) > index:
        name = pieces[index]
        index += 1
    perm = None
    if with_permission:
        if len(pieces) <= index:
            raise errors.HadoopIllegalArgumentError(f"Invalid <aclSpec> : {text}")
        if pieces[index] not in PERM_SYMBOLS:
            raise errors.HadoopIllegalArgumentError(
                f"Invalid permission in <aclSpec> : {text}")
        perm = PERM_SYMBOLS.index(pieces[index])
        index += 1
    if len(pieces) > index:
        raise errors.HadoopIllegalArgumentError(f"Invalid <aclSpec> : {text}")
    return (scope, kind, name, perm)


# ------------------------------------------------------------------ the logical ACL


def minimal(permission: int) -> list[tuple]:
    """``AclUtil.getMinimalAcl``: owner, group and other from the permission bits."""
    return [(ACCESS, USER, "", permission >> 6 & 7), (ACCESS, GROUP, "", permission >> 3 & 7),
            (ACCESS, OTHER, "", permission & 7)]


def logical(permission: int, feature: tuple | None) -> list[tuple]:
    """``AclStorage.readINodeLogicalAcl``: the whole ACL of an inode."""
    if not feature:
        return minimal(permission)
    access = [e for e in feature if e[0] == ACCESS]
    defaults = [e for e in feature if e[0] == DEFAULT]
    if access:
        acl = [(ACCESS, USER, "", permission >> 6 & 7), *access,
               (ACCESS, MASK, "", permission >> 3 & 7), (ACCESS, OTHER, "", permission & 7)]
    else:
        acl = minimal(permission)
    return acl + defaults


def stored(acl: list[tuple], permission: int, is_dir: bool, path: str) -> tuple:
    """``AclStorage.updateINodeAcl``: (permission, feature) holding a valid sorted ``acl``.
    The sticky bit stays; only directories may have a default ACL."""
    sticky = permission & 0o1000
    if len(acl) == 3:
        return sticky | acl[0][3] << 6 | acl[1][3] << 3 | acl[2][3], None
    access = [e for e in acl if e[0] == ACCESS]
    defaults = [e for e in acl if e[0] == DEFAULT]
    if defaults and not is_dir:
        raise errors.AclError(
            f"Invalid ACL: only directories may have a default ACL. Path: {path}", path=path)
    # owner, mask (the group entry of a minimal access ACL), other: the last two sort last
    return (sticky | access[0][3] << 6 | access[-2][3] << 3 | access[-1][3],
            share((access[1:-2] if len(access) > 3 else []) + defaults))


def share(feature: list[tuple]) -> tuple | None:
    """One tuple per distinct feature, as HDFS keeps unique AclFeatures."""
    if not feature:
        return None
    entries = tuple(feature)
    return _shared.setdefault(entries, entries)


def has_default(feature: tuple | None) -> bool:
    """Whether a directory's feature holds a default ACL (default entries sort last)."""
    return bool(feature and feature[-1][0] == DEFAULT)


def without(permission: int, feature: tuple | None) -> int:
    """The permission once the ACL is removed (FSDirAclOp.unprotectedRemoveAcl): the group
    bits come back from the feature's unnamed group entry when it has an access part."""
    if feature and feature[0][0] == ACCESS:
        group = next(e[3] for e in feature if e[:3] == (ACCESS, GROUP, ""))
        return permission & ~0o70 | group << 3
    return permission


def inherited(parent_feature: tuple | None, mode: int,
              is_dir: bool) -> tuple[int, tuple | None] | None:
    """``AclStorage.copyINodeDefaultAcl``: a new child's (permission, feature) from its
    parent's default ACL, the child's mode filtering owner, mask (or, for a minimal default
    ACL, group) and other. None when the parent has no default ACL."""
    defaults = [e for e in parent_feature or () if e[0] == DEFAULT]
    if not defaults:
        return None
    is_minimal = len(defaults) == 3
    access = []
    for _, kind, name, perm in defaults:
        if kind == USER and not name:
            perm &= mode >> 6 & 7
        elif kind == GROUP and is_minimal or kind == MASK:
            perm &= mode >> 3 & 7
        elif kind == OTHER:
            perm &= mode & 7
        access.append((ACCESS, kind, name, perm))
    return stored(access + (defaults if is_dir else []), mode, is_dir, "")


# ------------------------------------------------------------------ transformations


class _Draft:
    """An ACL being built by a transformation: entries apart from the masks, the mask per
    scope, the scopes the spec touched and those whose mask it named (the state
    AclTransformation's methods carry into calculateMasks)."""

    def __init__(self) -> None:
        self.built: list[tuple] = []
        self.masks: dict[int, tuple] = {}
        self.mask_dirty: set[int] = set()
        self.scope_dirty: set[int] = set()

    def keep(self, entry: tuple) -> None:
        """An entry of the existing ACL that stays."""
        if entry[1] == MASK:
            self.masks[entry[0]] = entry
        else:
            self.built.append(entry)

    def give(self, entry: tuple) -> None:
        """An entry of the spec."""
        self.scope_dirty.add(entry[0])
        if entry[1] == MASK:
            self.mask_dirty.add(entry[0])
        self.keep(entry)

    def finish(self) -> list[tuple]:
        _copy_defaults(self.built)
        _masks(self.built, self.masks, self.mask_dirty, self.scope_dirty)
        return _valid(self.built)


def merge(existing: list[tuple], spec: list[tuple]) -> list[tuple]:
    """``AclTransformation.mergeAclEntries`` (MODIFYACLENTRIES)."""
    spec = _validated(spec)
    by_key = {key(e): e for e in spec}
    draft, found = _Draft(), set()
    for entry in existing:
        new = by_key.get(key(entry))
        if new is not None:
            found.add(key(new))
            draft.give(new)
        else:
            draft.keep(entry)
    for new in spec:
        if key(new) not in found:
            draft.give(new)
    return draft.finish()


def remove_entries(existing: list[tuple], spec: list[tuple]) -> list[tuple]:
    """``AclTransformation.filterAclEntriesByAclSpec`` (REMOVEACLENTRIES)."""
    keys = {key(e) for e in _validated(spec)}
    draft = _Draft()
    for entry in existing:
        if key(entry) in keys:
            draft.scope_dirty.add(entry[0])
            if entry[1] == MASK:
                draft.mask_dirty.add(entry[0])
        else:
            draft.keep(entry)
    return draft.finish()


def remove_default(existing: list[tuple]) -> list[tuple]:
    """``AclTransformation.filterDefaultAclEntries`` (REMOVEDEFAULTACL)."""
    return _valid([e for e in existing if e[0] == ACCESS])


def replace(existing: list[tuple], spec: list[tuple]) -> list[tuple]:
    """``AclTransformation.replaceAclEntries`` (SETACL): each scope the spec names is
    replaced whole; the other keeps its entries."""
    draft = _Draft()
    for entry in _validated(spec):
        draft.give(entry)
    for entry in existing:
        if entry[0] not in draft.scope_dirty:
            draft.keep(entry)
    return draft.finish()


def _validated(spec: list[tuple]) -> list[tuple]:
    """``AclTransformation.ValidatedAclSpec``: sorted, no duplicate keys, bounded."""
    if len(spec) > MAX_ENTRIES * 2:
        raise errors.AclError(f"Invalid ACL: ACL spec has {len(spec)} entries, which exceeds "
                              f"maximum of {MAX_ENTRIES * 2}.")
    spec = sorted(spec, key=key)
    _no_duplicates(spec)
    return spec


def _no_duplicates(entries: list[tuple]) -> None:
    for before, after in itertools.pairwise(entries):
        if key(before) == key(after):
            raise errors.AclError("Invalid ACL: multiple entries with same scope, type and name.")


def _copy_defaults(built: list[tuple]) -> None:
    """``copyDefaultsIfNeeded``: a default ACL missing its owner, group or other entry takes
    the access entry's permission."""
    keys = {key(e): e for e in built}
    if not any(e[0] == DEFAULT for e in built):
        return
    for kind in (USER, GROUP, OTHER):
        if (DEFAULT, kind, "") not in keys and (ACCESS, kind, "") in keys:
            built.append((DEFAULT, kind, "", keys[(ACCESS, kind, "")][3]))


def _masks(built: list[tuple], masks: dict[int, tuple], mask_dirty: set[int],
           scope_dirty: set[int]) -> None:
    """``calculateMasks``: keep a mask the caller gave or a scope left untouched; else
    recompute it as the union of the group class when one is needed or was there."""
    scopes: set[int] = set()
    union: dict[int, int] = {}
    needed: set[int] = set()
    for scope, kind, name, perm in built:
        scopes.add(scope)
        if kind == GROUP or name:
            union[scope] = union.get(scope, 0) | perm
        if name:
            needed.add(scope)
    for scope in sorted(scopes):
        if scope not in masks and scope in needed and scope in mask_dirty:
            raise errors.AclError("Invalid ACL: mask is required and cannot be deleted.")
        if scope in masks and (scope not in scope_dirty or scope in mask_dirty):
            built.append(masks[scope])
        elif scope in needed or scope in masks:
            built.append((scope, MASK, "", union.get(scope, 0)))


def _valid(built: list[tuple]) -> list[tuple]:
    """``buildAndValidateAcl``: sorted, unique, no named mask or other, at most MAX_ENTRIES
    per scope, owner/group/other present (in the default ACL too when there is one)."""
    built = sorted(built, key=key)
    _no_duplicates(built)
    for entry in built:
        if entry[2] and entry[1] in (MASK, OTHER):
            raise errors.AclError(
                f"Invalid ACL: this entry type must not have a name: {to_text(entry)}.")
    access = [e for e in built if e[0] == ACCESS]
    defaults = [e for e in built if e[0] == DEFAULT]
    for scope, entries in (("access", access), ("default", defaults)):
        if len(entries) > MAX_ENTRIES:
            raise errors.AclError(f"Invalid ACL: ACL has {len(entries)} {scope} entries, "
                                  f"which exceeds maximum of {MAX_ENTRIES}.")
    keys = {key(e) for e in built}
    for kind in (USER, GROUP, OTHER):
        if (ACCESS, kind, "") not in keys:
            raise errors.AclError("Invalid ACL: the user, group and other entries are required.")
        if defaults and (DEFAULT, kind, "") not in keys:
            raise errors.AclError(
                "Invalid default ACL: the user, group and other entries are required.")
    return built


# ------------------------------------------------------------------ enforcement


def permits(feature: tuple, permission: int, owner: str, group: str, user: str,
            groups: frozenset[str], wanted: int) -> bool:
    """``FSPermissionChecker.hasAclPermission``: the owner by the owner bits; else the named
    user entry, else any matching group entry (unnamed or named), each masked by the group
    bits; the other bits only when nothing matched. ``feature`` starts with an access entry."""
    if user == owner:
        return permission >> 6 & wanted == wanted
    mask = permission >> 3 & 7
    matched = False
    for scope, kind, name, perm in feature:
        if scope == DEFAULT:
            break
        if kind == USER:
            if name == user:
                return perm & mask & wanted == wanted
        elif kind == GROUP and (name or group) in groups:
            if perm & mask & wanted == wanted:
                return True
            matched = True
    return not matched and permission & wanted == wanted
