"""The HDFS permission model: the checks of permission.py on their own, then as the request
methods of Namespace apply them (traverse, owner/group/other, sticky bit, superuser)."""

import pytest

from nnlite.namenode import errors
from nnlite.namenode.fsnamesystem import Identity
from nnlite.namenode.namespace import attributes, delete, permission, rename, xattrs
from nnlite.namenode.namespace.inode import INodeDirectory, INodeFile
from nnlite.namenode.namespace.permission import Caller
from tests.namenode.helpers import (
    ALICE,
    BOB,
    EVE,
    SUPER,
    answers_false,
    mkdir,
    new_ns,
    refused,
    touch,
    write_file,
)


def directory(perm: int, owner: str = "alice", group: str = "staff") -> INodeDirectory:
    return INodeDirectory(1, None, "d", perm, owner, group, 0)


def file(perm: int) -> INodeFile:
    return INodeFile(2, None, "f", perm, "alice", "staff", 0, 0, 1, 1)


# ----------------------------------------------------------------------------- permission.py

@pytest.mark.parametrize("node, text", [
    (directory(0o755), "drwxr-xr-x"),
    (directory(0o1777), "drwxrwxrwt"),
    (directory(0o1776), "drwxrwxrwT"),
    (file(0o640), "-rw-r-----"),
    (file(0), "----------"),
])
def test_mode_string(node, text):
    assert permission.mode_string(node) == text


@pytest.mark.parametrize("caller, perm, access, expected", [
    (ALICE, 0o700, permission.ALL, True),            # owner bits
    (ALICE, 0o077, permission.READ, False),          # owner class matches first, even if empty
    (BOB, 0o070, permission.ALL, True),              # group bits
    (BOB, 0o707, permission.READ, False),            # the group class matches before other
    (EVE, 0o007, permission.ALL, True),              # other bits
    (EVE, 0o770, permission.EXECUTE, False),
    (ALICE, 0o500, permission.READ | permission.WRITE, False),  # every asked bit is needed
    (SUPER, 0o000, permission.ALL, True),            # the superuser passes everything
])
def test_allowed_picks_the_first_matching_class(caller, perm, access, expected):
    assert permission.allowed(caller, directory(perm), access) is expected


def test_denial_message_names_user_access_and_inode():
    with pytest.raises(errors.AccessControlError) as info:
        permission.check(EVE, directory(0o750), permission.WRITE, "/d")
    assert str(info.value) == ('Permission denied: user=eve, access=WRITE, '
                               'inode="/d":alice:staff:drwxr-x---')


def test_sticky_bit_lets_only_the_owners_through():
    parent, child = directory(0o1777, owner="bob"), file(0o666)
    for caller in (ALICE, BOB, SUPER):       # owner of the entry, of the directory, superuser
        permission.check_sticky(caller, parent, child)
    with pytest.raises(errors.AccessControlError):
        permission.check_sticky(EVE, parent, child)
    permission.check_sticky(EVE, directory(0o777, owner="bob"), child)   # no sticky bit: no check


def test_supergroup_members_are_superusers():
    identity = Identity(superuser="hdfs", groups={"ops": frozenset({"supergroup"}),
                                                  "dev": frozenset({"staff"})})
    assert identity.caller("hdfs").superuser and identity.caller("ops").superuser
    assert not identity.caller("dev").superuser
    assert identity.caller("dev").groups == frozenset({"staff"})
    assert Identity(permissions_enabled=False).caller("anyone").superuser


def test_parse_mapping():
    assert Identity.parse_mapping(" a = g1, g2 ;b=;; c=g3") == {
        "a": frozenset({"g1", "g2"}), "b": frozenset(), "c": frozenset({"g3"})}


# ----------------------------------------------------------------------------- traverse

@pytest.fixture
def ns():
    """/private (alice 700) holding d/f and an empty e; /shared (bob 1777); /open (777)
    holding bob's file bobs."""
    ns = new_ns()
    mkdir(ns, "/private", 0o700, owner="alice", group="staff")
    touch(ns, "/private/d/f")
    ns.mkdirs("/private/e", 0o755, SUPER)
    mkdir(ns, "/shared", 0o1777, owner="bob", group="staff")
    mkdir(ns, "/open", 0o777)
    touch(ns, "/open/bobs", BOB)
    return ns


@pytest.mark.parametrize("call", [
    lambda ns: ns.status("/private/d", BOB),
    lambda ns: ns.status("/private/missing", BOB),
    lambda ns: ns.listing("/private/d", BOB),
    lambda ns: ns.content_summary("/private/d", BOB),
    lambda ns: ns.quota_usage("/private/d", BOB),
    lambda ns: xattrs.get_xattrs(ns, "/private/d", BOB),
    lambda ns: ns.mkdirs("/private/d", 0o755, BOB),
    lambda ns: ns.mkdirs("/private/d/x", 0o755, BOB),
    lambda ns: ns.create("/private/d/g", BOB),
    lambda ns: delete.delete(ns, "/private/d/f", False, BOB),
    lambda ns: delete.delete(ns, "/private/d", False, BOB),
    lambda ns: delete.delete(ns, "/private/missing", False, BOB),
    lambda ns: rename.rename_legacy(ns, "/private/d/f", "/open/f", BOB),
    lambda ns: rename.rename(ns, "/private/d/f", "/open/f", False, BOB),
    lambda ns: rename.rename(ns, "/open/bobs", "/private/d/o", False, BOB),
    lambda ns: attributes.set_times(ns, "/private/d/f", 1, 1, BOB),
    lambda ns: attributes.set_replication(ns, "/private/d/f", 2, BOB),
    lambda ns: ns.truncate("/private/d/f", 0, BOB),
], ids=["status", "status of a missing path", "listing", "content_summary", "quota_usage",
        "xattrs", "mkdirs existing", "mkdirs", "create", "delete file",
        "delete non-empty dir", "delete missing", "rename_legacy", "rename src", "rename dst",
        "set_times", "set_replication", "truncate"])
def test_every_request_needs_execute_on_the_directories_it_passes(ns, call):
    error = refused(ns, errors.AccessControlError, call, ns)
    assert "access=EXECUTE" in str(error) and 'inode="/private"' in str(error)


def test_the_superuser_needs_no_execute(ns):
    attributes.set_permission(ns, "/private", 0o000, SUPER)
    assert ns.status("/private/d/f", SUPER).name == "f"
    assert delete.delete(ns, "/private/d", True, SUPER)[0] is True


# ----------------------------------------------------------------------------- write access

def test_creating_needs_write_on_the_parent(ns):
    refused(ns, errors.AccessControlError, ns.mkdirs, "/x", 0o755, ALICE)
    refused(ns, errors.AccessControlError, ns.create, "/x", ALICE)
    assert ns.mkdirs("/open/x", 0o755, EVE)[0] is True


def test_deleting_needs_write_on_the_parent(ns):
    touch(ns, "/open/d/f", EVE)
    attributes.set_permission(ns, "/open/d", 0o755, EVE)
    refused(ns, errors.AccessControlError, delete.delete, ns, "/open/d/f", False, ALICE)
    assert delete.delete(ns, "/open/d/f", False, EVE)[0] is True


def test_recursive_delete_needs_all_on_every_non_empty_directory(ns):
    ns.mkdirs("/open/t", 0o777, ALICE)
    touch(ns, "/open/t/bobs/f", BOB)
    attributes.set_permission(ns, "/open/t/bobs", 0o755, BOB)
    ns.mkdirs("/open/t/empty", 0o000, BOB)
    refused(ns, errors.AccessControlError, delete.delete, ns, "/open/t", True, ALICE)
    delete.delete(ns, "/open/t/bobs", True, BOB)
    assert delete.delete(ns, "/open/t", True, ALICE)[0] is True     # the empty 000 dir is ignored


@pytest.mark.parametrize("read", ["content_summary", "quota_usage"])
def test_summaries_need_read_execute_on_the_whole_subtree(ns, read):
    ns.mkdirs("/open/t/closed", 0o700, ALICE)
    assert getattr(ns, read)("/open/t", ALICE)
    refused(ns, errors.AccessControlError, getattr(ns, read), "/open/t", BOB)


def test_renaming_needs_write_on_both_parents(ns):
    touch(ns, "/open/f", ALICE)
    ns.mkdirs("/open/ro", 0o755, BOB)
    refused(ns, errors.AccessControlError, rename.rename, ns, "/open/f", "/open/ro/f", False, ALICE)
    refused(ns, errors.AccessControlError, rename.rename_legacy, ns, "/open/f", "/open/ro", ALICE)
    refused(ns, errors.AccessControlError, rename.rename, ns, "/private/d/f", "/open/g", False,
            ALICE)
    assert rename.rename(ns, "/open/f", "/open/g", False, EVE)[0] is True


# ----------------------------------------------------------------------------- sticky bit

def test_sticky_bit_on_delete(ns):
    touch(ns, "/shared/alices", ALICE, perm=0o666)
    touch(ns, "/shared/other", ALICE, perm=0o666)
    refused(ns, errors.AccessControlError, delete.delete, ns, "/shared/alices", False, EVE)
    assert delete.delete(ns, "/shared/alices", False, BOB)[0] is True      # owns the directory
    assert delete.delete(ns, "/shared/other", False, ALICE)[0] is True     # owns the entry


def _concat_source(ns, caller):
    write_file(ns, "/shared/target", caller=caller)       # the caller's own, beside it
    return ns.concat("/shared/target", ["/shared/alices"], caller)


def _rename_over(ns, caller):
    touch(ns, "/open/mine", caller)
    return rename.rename(ns, "/open/mine", "/shared/alices", True, caller)


# Each op on alice's file /shared/alices (0666) in bob's sticky /shared (1777), as alice (the
# entry's owner), bob (the directory's owner), eve and the superuser. The sticky bit applies
# where the NameNode asks FSPermissionChecker for a parent access of WRITE: delete
# (FSDirDeleteOp), the source of a rename (FSDirRenameOp.renameTo), a concat source
# (FSDirConcatOp.verifySrcFiles, "for delete"). It does not where the NameNode asks only WRITE
# on the path or its ancestor: the destination a rename overwrites (FSDirRenameOp: ancestor
# access), a file create overwrites (FSDirWriteFileOp.startFile), truncate
# (FSDirTruncateOp). Allowed by: alice, bob, eve, superuser.
STICKY_TABLE = {
    "delete": (lambda ns, c: delete.delete(ns, "/shared/alices", False, c), (1, 1, 0, 1)),
    "rename source": (lambda ns, c: rename.rename(ns, "/shared/alices", "/shared/x", False, c),
                      (1, 1, 0, 1)),
    "legacy rename source": (lambda ns, c: rename.rename_legacy(ns, "/shared/alices", "/open", c),
                             (1, 1, 0, 1)),
    "concat source": (_concat_source, (1, 1, 0, 1)),
    "rename over": (_rename_over, (1, 1, 1, 1)),
    "create overwrite": (lambda ns, c: ns.create("/shared/alices", c, overwrite=True),
                         (1, 1, 1, 1)),
    "truncate": (lambda ns, c: ns.truncate("/shared/alices", 0, c), (1, 1, 1, 1)),
}


@pytest.mark.parametrize("op", STICKY_TABLE)
@pytest.mark.parametrize("who", ["alice", "bob", "eve", "superuser"])
def test_sticky_bit_table(ns, op, who):
    call, allowed = STICKY_TABLE[op]
    caller = {"alice": ALICE, "bob": BOB, "eve": EVE, "superuser": SUPER}[who]
    write_file(ns, "/shared/alices", caller=ALICE)
    attributes.set_permission(ns, "/shared/alices", 0o666, SUPER)
    if allowed[["alice", "bob", "eve", "superuser"].index(who)]:
        assert call(ns, caller)[0] is True
    else:
        with pytest.raises(errors.AccessControlError, match="Permission denied by sticky bit"):
            call(ns, caller)


def test_missing_source_under_a_readable_parent_answers_false(ns):
    answers_false(ns, rename.rename_legacy, ns, "/open/missing", "/open/x", EVE)
    answers_false(ns, delete.delete, ns, "/open/missing", True, EVE)


def test_user_xattrs_of_a_sticky_directory_are_its_owners_alone(ns):
    refused(ns, errors.AccessControlError, xattrs.set_xattr, ns, "/shared", "user.k", b"", 3, ALICE)
    assert xattrs.set_xattr(ns, "/shared", "user.k", b"", 3, BOB)[0] is True
    refused(ns, errors.AccessControlError, xattrs.remove_xattr, ns, "/shared", "user.k", ALICE)
    assert xattrs.remove_xattr(ns, "/shared", "user.k", SUPER)[0] is True


# ----------------------------------------------------------------------------- superuser

def test_superuser_bypasses_every_check(ns):
    touch(ns, "/shared/alices", ALICE, perm=0o000)
    attributes.set_permission(ns, "/shared", 0o1000, BOB)
    assert attributes.set_times(ns, "/shared/alices", 5, 5, SUPER)[0] is True
    assert rename.rename(ns, "/shared/alices", "/private/a", False, SUPER)[0] is True
    assert attributes.set_owner(ns, "/private/a", "eve", "guests", SUPER)[0] is True
    assert delete.delete(ns, "/private", True, SUPER)[0] is True


def test_a_supergroup_member_is_a_superuser(ns):
    admin = Identity(superuser="hdfs", groups={"ops": frozenset({"supergroup"})}).caller("ops")
    assert admin.superuser
    assert delete.delete(ns, "/private", True, admin)[0] is True
    plain = Caller("ops", frozenset({"supergroup"}))       # the group alone grants nothing here
    refused(ns, errors.AccessControlError, delete.delete, ns, "/shared", True, plain)
