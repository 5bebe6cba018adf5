"""ACL requests, as Hadoop's ``FSDirAclOp``: the ACL status of an inode and the five changes
(SETACL, MODIFYACLENTRIES, REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL). The ACL model
itself (entries, AclTransformation, AclStorage) is ``acl.py``'s.

Each function takes the ``Namespace`` it acts on; a change returns ``(result, ops)``
(``namespace.py``)."""

from __future__ import annotations

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import acl, paths
from nnlite.namenode.namespace.inode import INode
from nnlite.namenode.namespace.namespace import Applied, Namespace
from nnlite.namenode.namespace.permission import Caller


def acl_status(ns: Namespace, path: str, caller: Caller) -> INode:
    """FSDirAclOp.getAclStatus: the traverse only; the inode whose owner, group,
    permission and ACL feature the answer shows."""
    _check_acls_enabled(ns)
    return ns.status(path, caller)


def change_acl(ns: Namespace, path: str, change: str, spec: list[tuple],
               caller: Caller) -> Applied[bool]:
    """SETACL ("set"), MODIFYACLENTRIES ("modify"), REMOVEACLENTRIES ("remove"),
    REMOVEDEFAULTACL ("remove_default") and REMOVEACL ("remove_all"), as FSDirAclOp runs
    them: the owner (or a superuser) only; the new ACL computed on the logical one by
    AclTransformation, checked as AclStorage stores it, and logged whole. SETACL with an
    empty spec removes the ACL, as HDFS logs a removal."""
    path = ns.resolve(path, caller, write=True)
    _check_acls_enabled(ns)
    node = ns.owned(path, caller)
    entries: tuple[str, ...]
    if change == "remove_all" or change == "set" and not spec:
        entries = ()
    else:
        existing = acl.logical(node.permission, node.acl)
        if change == "set":
            new = acl.replace(existing, spec)
        elif change == "modify":
            new = acl.merge(existing, spec)
        elif change == "remove":
            new = acl.remove_entries(existing, spec)
        else:
            new = acl.remove_default(existing)
        acl.stored(new, node.permission, node.is_dir, node.path())  # its AclException, now
        entries = tuple(acl.to_text(e) for e in new)
    return True, ns.apply(edits.SetAclOp(paths.normalize(path), entries))


def _check_acls_enabled(ns: Namespace) -> None:
    if not ns.acls_enabled:
        raise errors.AclError(acl.DISABLED)

