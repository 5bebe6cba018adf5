"""Extended attribute requests, as Hadoop's ``FSDirXAttrOp`` with ``XAttrPermissionFilter``:
which names a caller may see and change, in which namespace (user, trusted, system, security,
raw).

Each function takes the ``Namespace`` it acts on; a change returns ``(result, ops)``
(``namespace.py``)."""

from __future__ import annotations

from nnlite.formats import edits
from nnlite.formats.mode import STICKY
from nnlite.namenode import errors
from nnlite.namenode.namespace import paths, reserved
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE

XATTR_NAMESPACES = ("user", "trusted", "system", "security", "raw")


def get_xattrs(ns: Namespace, path: str, caller: Caller, names: list[str] | None = None, *,
           names_only: bool = False) -> dict[str, bytes]:
    """GETXATTRS needs READ on the inode; LISTXATTRS (``names_only``) only the traverse.
    ``raw.`` xattrs show through a raw path only."""
    raw = reserved.is_raw(path)
    node = ns.status(path, caller)
    if not names_only:
        access.check(caller, node, access.READ, path)
    attrs = {k: v for k, v in (node.xattrs or {}).items()
             if _xattr_visible(caller, k, raw)}
    if not names:
        return attrs
    wanted = [_xattr_name(n) for n in names]
    if any(n not in attrs for n in wanted):
        raise errors.XAttrError(
            "At least one of the attributes provided was not found.", path=path)
    return {n: attrs[n] for n in wanted}


def set_xattr(ns: Namespace, path: str, name: str, value: bytes | None, flag: int,
              caller: Caller) -> Applied[bool]:
    raw = reserved.is_raw(path)
    path = ns.resolve(path, caller, write=True)
    name = _xattr_name(name)
    value = b"" if value is None else value
    if not flag & (XATTR_CREATE | XATTR_REPLACE):
        raise errors.IllegalArgumentError("XAttr flag must be CREATE and/or REPLACE",
                                          path=path)
    node = ns.target(path, caller)
    _check_xattr_access(caller, node, name, path, raw)
    return True, ns.apply(edits.SetXAttrOp(paths.normalize(path), name, value, flag))


def remove_xattr(ns: Namespace, path: str, name: str, caller: Caller) -> Applied[bool]:
    raw = reserved.is_raw(path)
    path = ns.resolve(path, caller, write=True)
    name = _xattr_name(name)
    node = ns.target(path, caller)
    _check_xattr_access(caller, node, name, path, raw)
    return True, ns.apply(edits.RemoveXAttrOp(paths.normalize(path), name))


def _check_xattr_access(caller: Caller, node: INode, name: str, path: str,
                        raw: bool = False) -> None:
    """XAttrPermissionFilter.checkPermissionForApi and checkXAttrChangeAccess: ``raw``,
    the request came through ``/.reserved/raw`` (whose changes are the superuser's)."""
    namespace = name.split(".", 1)[0]
    if namespace == "user" and node.is_dir and node.permission & STICKY:
        access.check_owner(caller, node, path)     # as Hadoop's checkXAttrChangeAccess
    elif namespace == "user":
        access.check(caller, node, access.WRITE, path)
    elif namespace == "trusted":
        access.check_superuser(caller, f"set trusted xattrs on {path}")
    elif namespace == "raw" and raw:
        access.check(caller, node, access.WRITE, path)
    else:
        raise errors.AccessControlError(
            f"User doesn't have permission for xattr: {name}", path=path)


def _xattr_name(name: str) -> str:
    prefix, dot, rest = (name or "").partition(".")
    if not dot or not rest or prefix.lower() not in XATTR_NAMESPACES:
        raise errors.IllegalArgumentError(
            f"An XAttr name must be prefixed with user/trusted/security/system/raw, "
            f"followed by a '.': {name!r}")
    return prefix.lower() + "." + rest


def _xattr_visible(caller: Caller, name: str, raw: bool = False) -> bool:
    """XAttrPermissionFilter.filterXAttrsForApi: user xattrs, trusted ones for the
    superuser, raw ones through a raw path (``raw``); system and security xattrs (a storage
    policy) are never returned."""
    return name.startswith("user.") or (caller.superuser and name.startswith("trusted.")) or (
        raw and name.startswith("raw."))

