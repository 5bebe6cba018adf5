"""ACLs as the namespace applies them (acl_ops.py, FSDirAclOp): who may change one, how
FSPermissionChecker enforces it, what new children inherit, what is logged, and the
dfs.namenode.acls.enabled switch. FsShell and Hadoop's client check the same over webhdfs://
and hdfs:// in tests/namenode/test_java_acl.py."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.namespace import acl, acl_ops, attributes
from tests.namenode.helpers import ALICE, BOB, EVE, SUPER, new_ns, refused, write_file


def spec(text: str) -> list[tuple]:
    return acl.parse_spec(text, True)


def texts(entries) -> list[str]:
    return [acl.to_text(e) for e in entries]


def shared(ns) -> None:
    ns.mkdirs("/d", 0o750, SUPER)
    attributes.set_owner(ns, "/d", "alice", "staff", SUPER)


def test_only_the_owner_or_a_superuser_changes_an_acl():
    ns = new_ns()
    shared(ns)
    refused(ns, errors.AccessControlError, acl_ops.change_acl, ns, "/d", "modify",
            spec("user:eve:r-x"), BOB)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:r-x"), ALICE)
    acl_ops.change_acl(ns, "/d", "remove_all", [], SUPER)
    assert ns.tree.get("/d").acl is None


def test_a_named_user_entry_opens_what_other_would_not():
    ns = new_ns()
    shared(ns)
    refused(ns, errors.AccessControlError, ns.listing, "/d", EVE)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:r-x"), ALICE)
    assert ns.listing("/d", EVE) == ([], 0)


def test_the_mask_limits_named_entries_and_chmod_sets_the_mask():
    ns = new_ns()
    shared(ns)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:r-x"), ALICE)
    attributes.set_permission(ns, "/d", 0o700, ALICE)              # group bits: the mask
    with pytest.raises(errors.AccessControlError) as info:
        ns.listing("/d", EVE)
    assert str(info.value) == ('Permission denied: user=eve, access=READ_EXECUTE, '
                               'inode="/d":alice:staff:drwx------')
    assert texts(acl.logical(ns.tree.get("/d").permission, ns.tree.get("/d").acl))[2:4] == [
        "group::r-x", "mask::---"]


def test_a_matching_group_entry_that_denies_does_not_fall_back_to_other():
    ns = new_ns()
    shared(ns)
    attributes.set_permission(ns, "/d", 0o705, ALICE)               # other may list
    acl_ops.change_acl(ns, "/d", "modify", spec("group::---,user:carol:---"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", BOB)   # bob is in staff
    assert ns.listing("/d", EVE) == ([], 0)                      # eve matches nothing
    acl_ops.change_acl(ns, "/d", "modify", spec("group:guests:---"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", EVE)   # now eve's group matches


def test_the_owner_is_judged_by_the_owner_bits_alone():
    ns = new_ns()
    shared(ns)
    attributes.set_permission(ns, "/d", 0o070, ALICE)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:alice:rwx,group:staff:rwx"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", ALICE)


def test_new_children_inherit_the_default_acl_with_the_unmasked_mode():
    ns = new_ns()
    shared(ns)
    acl_ops.change_acl(ns, "/d", "modify", spec("default:user:eve:rwx,default:other::---"), ALICE)
    ns.mkdirs("/d/sub", 0o755, ALICE, 0o777)           # a client's 777 under umask 022
    sub = ns.tree.get("/d/sub")
    assert sub.permission == 0o770 and texts(sub.acl)[:2] == ["user:eve:rwx", "group::r-x"]
    ns.mkdirs("/d/old", 0o755, ALICE)                  # no unmasked mode: the masked one
    assert ns.tree.get("/d/old").permission == 0o750
    ns.mkdirs("/d/a/b/c", 0o755, ALICE, 0o777)         # ancestors: masked mode plus u+wx
    assert [ns.tree.get(p).permission for p in ("/d/a", "/d/a/b", "/d/a/b/c")] == \
        [0o750, 0o750, 0o770]
    ns.create("/d/sub/f", ALICE, permission=0o644, unmasked=0o666)
    assert ns.tree.get("/d/sub/f").permission == 0o660
    assert texts(ns.tree.get("/d/sub/f").acl) == ["user:eve:rwx", "group::r-x"]
    ns.create("/plain", SUPER, permission=0o644, unmasked=0o666)   # no default ACL above
    assert ns.tree.get("/plain").permission == 0o644


def test_an_inherited_acl_is_enforced():
    ns = new_ns()
    shared(ns)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:--x,default:user:eve:r--"), ALICE)
    write_file(ns, "/d/f", sizes=(1,), caller=ALICE)    # mode 644: the mask is r-x & r--
    assert ns.tree.get("/d/f").permission == 0o640
    assert ns.readable_file("/d/f", EVE).name == "f"               # user:eve:r--
    assert ns.readable_file("/d/f", BOB).name == "f"               # group::r-x & mask r--
    refused(ns, errors.AccessControlError, ns.writable_file, "/d/f", BOB, "append to")


def test_removing_the_acl_gives_the_group_entry_back_to_the_group_bits():
    ns = new_ns()
    shared(ns)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:rwx"), ALICE)
    assert ns.tree.get("/d").permission == 0o770
    acl_ops.change_acl(ns, "/d", "remove_all", [], ALICE)
    assert (ns.tree.get("/d").permission, ns.tree.get("/d").acl) == (0o750, None)


def test_setacl_with_an_empty_spec_removes_the_acl():
    ns = new_ns()
    shared(ns)
    acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:rwx"), ALICE)
    _, ops = acl_ops.change_acl(ns, "/d", "set", [], ALICE)
    assert ops[0].entries == () and ns.tree.get("/d").acl is None


def test_the_whole_acl_is_logged():
    ns = new_ns()
    shared(ns)
    _, ops = acl_ops.change_acl(ns, "/d", "modify", spec("user:eve:r-x"), ALICE)
    assert ops[0].entries == ("user::rwx", "user:eve:r-x", "group::r-x", "mask::r-x",
                              "other::---")


def test_acls_disabled_refuse_every_acl_operation():
    ns = new_ns()
    shared(ns)
    ns.acls_enabled = False
    for call in (lambda: acl_ops.acl_status(ns, "/d", SUPER),
                 lambda: acl_ops.change_acl(ns, "/d", "remove_all", [], SUPER)):
        with pytest.raises(errors.AclError, match="dfs.namenode.acls.enabled to false"):
            call()
