"""Attribute requests, as Hadoop's ``FSDirAttrOp``: permission, owner, times, replication,
quotas and storage policies of one inode.

Each function takes the ``Namespace`` it acts on and the caller, checks what HDFS checks,
applies the op it builds (``Namespace.apply``) and returns ``(result, ops)``, as every request
of the namespace does (``namespace.py``)."""

from __future__ import annotations

from nnlite.formats import edits
from nnlite.formats.fsimage.layout import NO_QUOTA
from nnlite.namenode import errors
from nnlite.namenode.namespace import paths, reserved
from nnlite.namenode.namespace import permission as access
from nnlite.namenode.namespace import storage_policy as policies
from nnlite.namenode.namespace.checks import check_long, check_permission, check_replication
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE


def set_permission(ns: Namespace, path: str, permission: int, caller: Caller) -> Applied[bool]:
    reserved.check_not_exact(path)
    path = ns.resolve(path, caller, write=True)
    check_permission(permission, path)
    ns.owned(path, caller)
    return True, ns.apply(edits.SetPermissionsOp(paths.normalize(path), permission))


def set_owner(ns: Namespace, path: str, owner: str | None, group: str | None,
              caller: Caller) -> Applied[bool]:
    reserved.check_not_exact(path)
    path = ns.resolve(path, caller, write=True)
    if not owner and not group:
        raise errors.IllegalArgumentError("Both user and group are empty", path=path)
    node = ns.owned(path, caller)
    if owner and owner != node.owner:
        access.check_superuser(caller, f"change the owner of {path}")
    if group and not caller.superuser and group not in caller.groups:
        raise errors.AccessControlError(f"User {caller.user} does not belong to {group}",
                                        path=path)
    op = edits.SetOwnerOp(paths.normalize(path), owner or None, group or None)
    return True, ns.apply(op)


def set_times(ns: Namespace, path: str, mtime: int, atime: int, caller: Caller) -> Applied[bool]:
    path = ns.resolve(path, caller, write=True)
    check_long(mtime, "mtime", path)
    check_long(atime, "atime", path)
    node = ns.target(path, caller)
    access.check(caller, node, access.WRITE, path)
    return True, ns.apply(edits.SetTimesOp(paths.normalize(path), mtime, atime))


def set_replication(ns: Namespace, path: str, replication: int, caller: Caller) -> Applied[bool]:
    path = ns.resolve(path, caller, write=True)
    node = ns.target(path, caller)
    if node.is_dir:
        return False, []
    check_replication(replication, path)
    access.check(caller, node, access.WRITE, path)
    return True, ns.apply(edits.SetReplicationOp(paths.normalize(path), replication))


def set_quota(ns: Namespace, path: str, ns_quota: int | None, ss_quota: int | None,
              caller: Caller) -> Applied[bool]:
    """``None`` leaves a quota as it is; -1 removes it; other values must be positive."""
    path = ns.resolve(path, caller, write=True)
    node = ns.target(path, caller)
    access.check_superuser(caller, f"set the quota of {path}")
    current = node.quota if node.is_dir else None
    ns_limit = _quota_value(ns_quota, current.ns_quota if current else NO_QUOTA, path)
    ss_limit = _quota_value(ss_quota, current.ss_quota if current else NO_QUOTA, path)
    return True, ns.apply(edits.SetQuotaOp(paths.normalize(path), ns_limit, ss_limit))


def set_storage_policy(ns: Namespace, path: str, name: str, caller: Caller) -> Applied[bool]:
    """FSDirAttrOp.setStoragePolicy: WRITE on the inode; an unknown name is refused."""
    path = ns.resolve(path, caller, write=True)
    policy = policies.by_name(name)
    if policy is None:
        raise errors.HadoopIllegalArgumentError(
            f"Cannot find a block policy with the name {name}", path=path)
    node = ns.target(path, caller)
    access.check(caller, node, access.WRITE, path)
    op = edits.SetXAttrOp(paths.normalize(path), policies.XATTR, bytes([policy.id]),
                          XATTR_CREATE | XATTR_REPLACE)
    return True, ns.apply(op)


def unset_storage_policy(ns: Namespace, path: str, caller: Caller) -> Applied[bool]:
    """FSDirAttrOp.unsetStoragePolicy: the inode's own policy goes (nothing to do when it
    has none); WRITE on it."""
    path = ns.resolve(path, caller, write=True)
    node = ns.target(path, caller)
    access.check(caller, node, access.WRITE, path)
    if policies.XATTR not in (node.xattrs or {}):
        return True, []
    return True, ns.apply(edits.RemoveXAttrOp(paths.normalize(path),
                                                   policies.XATTR))


def storage_policy(ns: Namespace, path: str, caller: Caller) -> policies.Policy:
    """FSDirAttrOp.getStoragePolicy: READ on the inode; the policy in effect on it."""
    node = ns.status(path, caller)
    access.check(caller, node, access.READ, path)
    return policies.effective(node)


def _quota_value(value: int | None, current: int, path: str) -> int:
    if value is None:
        return current
    if value < NO_QUOTA:
        raise errors.IllegalArgumentError(
            f"Illegal value for quota of {path}: {value} (use -1 to remove a quota)", path=path)
    check_long(value, "quota", path)
    return value

