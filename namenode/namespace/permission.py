"""The HDFS permission model: owner/group/other bits, the superuser, the sticky bit.

As in Hadoop's FSPermissionChecker: a superuser (the namenode's own user, or any member of
the supergroup) passes every check; everyone else needs EXECUTE on every directory they
traverse, and the access an operation names on the inode it names. The class that applies is
the first that matches: owner, then group, then other. In a directory with the sticky bit,
only the owner of the directory or of the entry may delete or rename that entry. An inode
with an access ACL is checked by its entries instead of the group and other classes
(``acl.permits``, FSPermissionChecker.hasAclPermission).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nnlite.formats import mode
from nnlite.formats.mode import STICKY
from nnlite.namenode.errors import AccessControlError
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.inode import INode

READ, WRITE, EXECUTE = 4, 2, 1
ALL = READ | WRITE | EXECUTE
ACCESS_NAMES = {0: "NONE", 1: "EXECUTE", 2: "WRITE", 3: "WRITE_EXECUTE", 4: "READ",
                5: "READ_EXECUTE", 6: "READ_WRITE", 7: "ALL"}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: a user name, the groups it belongs to, whether it is a superuser."""
    user: str
    groups: frozenset[str] = frozenset()
    superuser: bool = False

    @property
    def primary_group(self) -> str:
        return min(self.groups) if self.groups else "supergroup"


def mode_string(node: INode) -> str:
    """``drwxr-xr-t`` style, as HDFS prints inodes in permission errors: the type letter, then
    the bits as ``FsPermission.toString`` writes them."""
    return ("d" if node.is_dir else "-") + mode.mode_string(node.permission)


def _denied(caller: Caller, access: int, node: INode, path: str | None) -> AccessControlError:
    where = path if path is not None else node.path()
    return AccessControlError(
        f"Permission denied: user={caller.user}, access={ACCESS_NAMES[access]}, "
        f'inode="{where}":{node.owner}:{node.group}:{mode_string(node)}', path=where)


def allowed(caller: Caller, node: INode, access: int) -> bool:
    if caller.superuser:
        return True
    feature = node.acl
    if feature is not None and feature[0][0] == acl.ACCESS:
        return acl.permits(feature, node.permission, node.owner, node.group, caller.user,
                           caller.groups, access)
    if caller.user == node.owner:
        bits = node.permission >> 6
    elif node.group in caller.groups:
        bits = node.permission >> 3
    else:
        bits = node.permission
    return bits & access == access


def check(caller: Caller, node: INode, access: int, path: str | None = None) -> None:
    if not caller.superuser and not allowed(caller, node, access):
        raise _denied(caller, access, node, path)


def check_traverse(caller: Caller, dirs: Iterable[INode], path: str | None = None) -> None:
    """EXECUTE on each directory passed through (the root and every ancestor)."""
    if caller.superuser:
        return
    for node in dirs:
        if not allowed(caller, node, EXECUTE):
            raise _denied(caller, EXECUTE, node, node.path())


def check_owner(caller: Caller, node: INode, path: str | None = None) -> None:
    if not caller.superuser and caller.user != node.owner:
        where = path if path is not None else node.path()
        raise AccessControlError(
            f"Permission denied. user={caller.user} is not the owner of inode={where}",
            path=where)


def check_superuser(caller: Caller, what: str) -> None:
    if not caller.superuser:
        raise AccessControlError(
            f"Access denied for user {caller.user}. Superuser privilege is required to {what}")


def check_sticky(caller: Caller, parent: INode, child: INode, path: str | None = None) -> None:
    if caller.superuser or not parent.permission & STICKY:
        return
    if caller.user in (parent.owner, child.owner):
        return
    where = path if path is not None else child.path()
    raise AccessControlError(
        f"Permission denied by sticky bit: user={caller.user}, path=\"{where}\":"
        f"{child.owner}:{child.group}:{mode_string(child)}, parent=\"{parent.path()}\":"
        f"{parent.owner}:{parent.group}:{mode_string(parent)}", path=where)


def check_subtree(caller: Caller, node: INode, access: int, skip_empty: bool = False,
                  path: str | None = None) -> None:
    """``access`` on every directory of a subtree (recursive delete needs ALL on each, and,
    as in Hadoop's ``checkSubAccess`` with ``ignoreEmptyDir``, not on empty ones). ``path``:
    where ``node`` was reached, to name a denied directory by (a directory seen through a
    snapshot has no path of its own)."""
    if caller.superuser or not node.is_dir:
        return
    stack = [(node, path)]
    while stack:
        current, where = stack.pop()
        children = current.children
        if children or not skip_empty:
            check(caller, current, access, where)
        stack.extend((c, None if where is None else f"{where.rstrip('/')}/{name}")
                     for name, c in children.items() if c.is_dir)
