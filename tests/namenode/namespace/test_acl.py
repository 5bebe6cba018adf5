"""POSIX ACLs: acl.py's transformations, storage and inheritance (the cases of Hadoop's
TestAclTransformation and the rules of AclStorage). ACLs as the namespace applies them are
test_acl_ops.py's."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.namespace import acl


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
