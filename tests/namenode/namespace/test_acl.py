"""POSIX ACLs: acl.py's transformations, storage and inheritance (the cases of Hadoop's
TestAclTransformation and the rules of AclStorage), then ACLs as the namespace applies them:
who may change one, how FSPermissionChecker enforces it, what new children inherit, and the
dfs.namenode.acls.enabled switch. FsShell and Hadoop's client check the same over webhdfs://
and hdfs:// in tests/namenode/test_java_acl.py."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.namespace import acl
from tests.namenode.helpers import ALICE, BOB, EVE, SUPER, new_ns, refused, write_file


def spec(text: str, with_permission: bool = True) -> list[tuple]:
    return acl.parse_spec(text, with_permission)


def texts(entries) -> list[str]:
    return [acl.to_text(e) for e in entries]


# ------------------------------------------------------------------ the spec syntax

@pytest.mark.parametrize("text, parsed", [
    ("user::rwx", (acl.ACCESS, acl.USER, "", 7)),
    ("user:bruce:r-x", (acl.ACCESS, acl.USER, "bruce", 5)),
    ("default:group:sales:rw-", (acl.DEFAULT, acl.GROUP, "sales", 6)),
    ("mask::---", (acl.ACCESS, acl.MASK, "", 0)),
    ("OTHER::r--", (acl.ACCESS, acl.OTHER, "", 4)),          # the type is case-blind
])
def test_entries_parse_as_acl_entry_parses_them(text, parsed):
    assert acl.parse_entry(text, True) == parsed
    assert acl.to_text(parsed) == text.lower()


@pytest.mark.parametrize("text, with_permission, message", [
    ("user:bruce", True, "Invalid <aclSpec> : user:bruce"),
    ("people:bruce:rwx", True, "Invalid type of acl in <aclSpec> :people:bruce:rwx"),
    ("user:bruce:rwz", True, "Invalid permission in <aclSpec> : user:bruce:rwz"),
    ("user:bruce:rwx", False, "Invalid <aclSpec> : user:bruce:rwx"),
    ("default", True, "Invalid <aclSpec> : default"),
])
def test_malformed_entries_are_hadoop_illegal_arguments(text, with_permission, message):
    with pytest.raises(errors.HadoopIllegalArgumentError) as info:
        acl.parse_entry(text, with_permission)
    assert str(info.value) == message


def test_removal_specs_name_entries_without_permissions():
    # "user:bruce:" is how Hadoop's client sends an entry without a permission
    assert spec("user:bruce:,default:group:sales:", False) == [
        (acl.ACCESS, acl.USER, "bruce", None), (acl.DEFAULT, acl.GROUP, "sales", None)]


@pytest.mark.parametrize("value, ok", [
    ("user::rwx,user:bruce:r-x,group::r--,other::---", True),
    ("user:foouser:", True),
    ("default:mask::rwx", True),
    ("user:foouser", False),            # AclPermissionParam wants the second colon
    ("user:bob smith:rwx", False),
    ("user::rwx;other::---", False),
])
def test_the_webhdfs_parameter_domain(value, ok):
    assert acl.spec_matches(value) is ok


# ------------------------------------------------------------------ transformations

EXTENDED = spec("user::rwx,user:bruce:rwx,user:diana:rw-,group::rw-,group:sales:rw-,"
                "group:execs:rw-,mask::rwx,other::---")


def test_remove_entries_recomputes_the_mask():
    assert texts(acl.remove_entries(EXTENDED, spec("user:diana:,group:sales:", False))) == [
        "user::rwx", "user:bruce:rwx", "group::rw-", "group:execs:rw-", "mask::rwx",
        "other::---"]
    narrowed = acl.remove_entries(EXTENDED, spec("user:bruce:", False))
    assert texts(narrowed)[-2] == "mask::rw-"             # the union of the group class


def test_remove_entries_refuses_to_drop_a_needed_mask():
    with pytest.raises(errors.AclError, match="mask is required and cannot be deleted"):
        acl.remove_entries(EXTENDED, spec("mask::", False))
    minimal = acl.remove_entries(EXTENDED, spec(
        "user:bruce:,user:diana:,group:sales:,group:execs:,mask::", False))
    assert texts(minimal) == ["user::rwx", "group::rw-", "other::---"]


def test_merge_adds_a_named_entry_and_its_mask():
    assert texts(acl.merge(acl.minimal(0o754), spec("user:bruce:rwx"))) == [
        "user::rwx", "user:bruce:rwx", "group::r-x", "mask::rwx", "other::r--"]


def test_merge_of_a_default_entry_copies_the_base_entries_into_the_default_acl():
    assert texts(acl.merge(acl.minimal(0o754), spec("default:user:bruce:rwx"))) == [
        "user::rwx", "group::r-x", "other::r--", "default:user::rwx",
        "default:user:bruce:rwx", "default:group::r-x", "default:mask::rwx",
        "default:other::r--"]


def test_merge_keeps_a_given_mask_and_recomputes_an_untouched_one():
    existing = spec("user::rwx,user:bruce:r--,group::r-x,mask::r-x,other::---")
    assert texts(acl.merge(existing, spec("user:diana:r--")))[-2] == "mask::r-x"
    assert texts(acl.merge(existing, spec("user:diana:rwx")))[-2] == "mask::rwx"
    assert texts(acl.merge(existing, spec("mask::---")))[-2] == "mask::---"
    replaced = acl.merge(existing, spec("user:bruce:rw-"))
    assert "user:bruce:rw-" in texts(replaced)


def test_replace_sets_each_scope_it_names_and_computes_the_mask():
    default = spec("default:user::rwx,default:group::r-x,default:other::---")
    existing = acl.minimal(0o750) + default
    assert texts(acl.replace(existing, spec("user::rw-,user:bruce:rw-,group::r-x,other::---"))) \
        == ["user::rw-", "user:bruce:rw-", "group::r-x", "mask::rwx", "other::---",
            "default:user::rwx", "default:group::r-x", "default:other::---"]


def test_remove_default_keeps_the_access_acl():
    existing = acl.merge(acl.minimal(0o750), spec("user:bruce:r-x,default:user:bruce:rwx"))
    assert texts(acl.remove_default(existing)) == [
        "user::rwx", "user:bruce:r-x", "group::r-x", "mask::r-x", "other::---"]


@pytest.mark.parametrize("bad, message", [
    ("user::rwx,user::r--,group::r-x,other::---",
     "multiple entries with same scope, type and name"),
    ("user::rwx,group::r-x,other:bob:---", "this entry type must not have a name: other:bob:---"),
    ("user::rwx,group::r-x", "the user, group and other entries are required"),
    ("user::rwx,group::r-x,other::---,default:user:bob:rwx,default:mask::rwx",
     None),                                            # defaults are copied in: valid
])
def test_invalid_acls_are_acl_exceptions(bad, message):
    if message is None:
        acl.replace(acl.minimal(0o755), spec(bad))
        return
    with pytest.raises(errors.AclError, match=message):
        acl.replace(acl.minimal(0o755), spec(bad))


def test_at_most_32_entries_per_scope():
    many = ",".join(f"user:u{i}:r--" for i in range(28))
    acl.merge(acl.minimal(0o755), spec(many))          # 28 named + owner, group, mask, other
    with pytest.raises(errors.AclError, match="ACL has 33 access entries, which exceeds"):
        acl.merge(acl.minimal(0o755), spec(many + ",user:u28:r--"))


# ------------------------------------------------------------------ storage

def test_an_extended_acl_keeps_its_mask_in_the_group_bits():
    new = acl.merge(acl.minimal(0o1750), spec("user:bruce:rwx"))
    permission, feature = acl.stored(new, 0o1750, True, "/d")
    assert permission == 0o1770                        # mask rwx, sticky kept
    assert texts(feature) == ["user:bruce:rwx", "group::r-x"]
    assert acl.logical(permission, feature) == new


def test_a_minimal_acl_is_only_permission_bits():
    assert acl.stored(acl.minimal(0o640), 0o1777, False, "/f") == (0o1640, None)


def test_only_directories_take_a_default_acl():
    new = acl.merge(acl.minimal(0o644), spec("default:user:bruce:rwx"))
    with pytest.raises(errors.AclError, match="only directories may have a default ACL. "
                                              "Path: /f"):
        acl.stored(new, 0o644, False, "/f")


def test_equal_features_are_one_object():
    a = acl.stored(acl.merge(acl.minimal(0o750), spec("user:x:r--")), 0o750, True, "/a")[1]
    b = acl.stored(acl.merge(acl.minimal(0o755), spec("user:x:r--")), 0o755, True, "/b")[1]
    assert a is b


def test_inheritance_filters_the_default_acl_by_the_mode():
    parent = acl.stored(acl.merge(acl.minimal(0o755), spec(
        "default:user:eve:rwx,default:other::---")), 0o755, True, "/d")[1]
    permission, feature = acl.inherited(parent, 0o777, True)
    assert permission == 0o770
    assert texts(feature) == ["user:eve:rwx", "group::r-x", "default:user::rwx",
                              "default:user:eve:rwx", "default:group::r-x",
                              "default:mask::rwx", "default:other::---"]
    permission, feature = acl.inherited(parent, 0o644, False)
    assert permission == 0o640 and texts(feature) == ["user:eve:rwx", "group::r-x"]
    assert acl.inherited(None, 0o755, True) is None


def test_a_minimal_default_acl_filters_the_group_entry():
    parent = acl.stored(acl.merge(acl.minimal(0o755), spec(
        "default:user::rwx,default:group::rwx,default:other::rwx")), 0o755, True, "/d")[1]
    assert acl.inherited(parent, 0o640, False) == (0o640, None)


# ------------------------------------------------------------------ the namespace

def shared(ns) -> None:
    ns.mkdirs("/d", 0o750, SUPER)
    ns.set_owner("/d", "alice", "staff", SUPER)


def test_only_the_owner_or_a_superuser_changes_an_acl():
    ns = new_ns()
    shared(ns)
    refused(ns, errors.AccessControlError, ns.change_acl, "/d", "modify", spec("user:eve:r-x"), BOB)
    ns.change_acl("/d", "modify", spec("user:eve:r-x"), ALICE)
    ns.change_acl("/d", "remove_all", [], SUPER)
    assert ns.tree.get("/d").acl is None


def test_a_named_user_entry_opens_what_other_would_not():
    ns = new_ns()
    shared(ns)
    refused(ns, errors.AccessControlError, ns.listing, "/d", EVE)
    ns.change_acl("/d", "modify", spec("user:eve:r-x"), ALICE)
    assert ns.listing("/d", EVE) == ([], 0)


def test_the_mask_limits_named_entries_and_chmod_sets_the_mask():
    ns = new_ns()
    shared(ns)
    ns.change_acl("/d", "modify", spec("user:eve:r-x"), ALICE)
    ns.set_permission("/d", 0o700, ALICE)              # group bits: the mask
    with pytest.raises(errors.AccessControlError) as info:
        ns.listing("/d", EVE)
    assert str(info.value) == ('Permission denied: user=eve, access=READ_EXECUTE, '
                               'inode="/d":alice:staff:drwx------')
    assert texts(acl.logical(ns.tree.get("/d").permission, ns.tree.get("/d").acl))[2:4] == [
        "group::r-x", "mask::---"]


def test_a_matching_group_entry_that_denies_does_not_fall_back_to_other():
    ns = new_ns()
    shared(ns)
    ns.set_permission("/d", 0o705, ALICE)               # other may list
    ns.change_acl("/d", "modify", spec("group::---,user:carol:---"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", BOB)   # bob is in staff
    assert ns.listing("/d", EVE) == ([], 0)                      # eve matches nothing
    ns.change_acl("/d", "modify", spec("group:guests:---"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", EVE)   # now eve's group matches


def test_the_owner_is_judged_by_the_owner_bits_alone():
    ns = new_ns()
    shared(ns)
    ns.set_permission("/d", 0o070, ALICE)
    ns.change_acl("/d", "modify", spec("user:alice:rwx,group:staff:rwx"), ALICE)
    refused(ns, errors.AccessControlError, ns.listing, "/d", ALICE)


def test_new_children_inherit_the_default_acl_with_the_unmasked_mode():
    ns = new_ns()
    shared(ns)
    ns.change_acl("/d", "modify", spec("default:user:eve:rwx,default:other::---"), ALICE)
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
    ns.change_acl("/d", "modify", spec("user:eve:--x,default:user:eve:r--"), ALICE)
    write_file(ns, "/d/f", sizes=(1,), caller=ALICE)    # mode 644: the mask is r-x & r--
    assert ns.tree.get("/d/f").permission == 0o640
    assert ns.readable_file("/d/f", EVE).name == "f"               # user:eve:r--
    assert ns.readable_file("/d/f", BOB).name == "f"               # group::r-x & mask r--
    refused(ns, errors.AccessControlError, ns.writable_file, "/d/f", BOB, "append to")


def test_removing_the_acl_gives_the_group_entry_back_to_the_group_bits():
    ns = new_ns()
    shared(ns)
    ns.change_acl("/d", "modify", spec("user:eve:rwx"), ALICE)
    assert ns.tree.get("/d").permission == 0o770
    ns.change_acl("/d", "remove_all", [], ALICE)
    assert (ns.tree.get("/d").permission, ns.tree.get("/d").acl) == (0o750, None)


def test_setacl_with_an_empty_spec_removes_the_acl():
    ns = new_ns()
    shared(ns)
    ns.change_acl("/d", "modify", spec("user:eve:rwx"), ALICE)
    _, ops = ns.change_acl("/d", "set", [], ALICE)
    assert ops[0].entries == () and ns.tree.get("/d").acl is None


def test_the_whole_acl_is_logged():
    ns = new_ns()
    shared(ns)
    _, ops = ns.change_acl("/d", "modify", spec("user:eve:r-x"), ALICE)
    assert ops[0].entries == ("user::rwx", "user:eve:r-x", "group::r-x", "mask::r-x",
                              "other::---")


def test_acls_disabled_refuse_every_acl_operation():
    ns = new_ns()
    shared(ns)
    ns.acls_enabled = False
    for call in (lambda: ns.acl_status("/d", SUPER),
                 lambda: ns.change_acl("/d", "remove_all", [], SUPER)):
        with pytest.raises(errors.AclError, match="dfs.namenode.acls.enabled to false"):
            call()
