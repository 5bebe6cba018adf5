"""xattrs.py: getting, setting and removing xattrs (FSDirXAttrOp, XAttrPermissionFilter):
names, flags, limits and who sees and changes which."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import attributes, xattrs
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE
from tests.namenode.helpers import (
    ALICE,
    BOB,
    HOME,
    SUPER,
    new_ns,
    refused,
)

BOTH = XATTR_CREATE | XATTR_REPLACE


# ----------------------------------------------------------------------------- xattrs

def test_set_and_get_xattrs(ns):
    assert xattrs.set_xattr(ns, HOME, "USER.k", b"v", XATTR_CREATE, ALICE) == (
        True, [edits.SetXAttrOp(HOME, "user.k", b"v", XATTR_CREATE)])
    xattrs.set_xattr(ns, HOME, "user.k", b"w", XATTR_REPLACE, ALICE)
    xattrs.set_xattr(ns, HOME, "user.j", b"", BOTH, ALICE)
    assert xattrs.get_xattrs(ns, HOME, ALICE) == {"user.k": b"w", "user.j": b""}
    assert xattrs.get_xattrs(ns, HOME, ALICE, ["user.k"]) == {"user.k": b"w"}


def test_xattr_flags(ns):
    xattrs.set_xattr(ns, HOME, "user.k", b"v", XATTR_CREATE, ALICE)
    refused(ns, errors.XAttrError, xattrs.set_xattr, ns, HOME, "user.k", b"x", XATTR_CREATE, ALICE)
    refused(ns, errors.XAttrError, xattrs.set_xattr, ns, HOME, "user.n", b"x", XATTR_REPLACE, ALICE)
    refused(ns, errors.IllegalArgumentError, xattrs.set_xattr, ns, HOME, "user.k", b"x", 0, ALICE)


@pytest.mark.parametrize("name", ["k", "user", "user.", ".k", "bogus.k", ""])
def test_xattr_names_need_a_known_prefix(ns, name):
    refused(ns, errors.IllegalArgumentError, xattrs.set_xattr, ns, HOME, name, b"v", BOTH, ALICE)
    refused(ns, errors.IllegalArgumentError, xattrs.remove_xattr, ns, HOME, name, ALICE)


def test_xattr_count_limit():
    ns = new_ns(max_xattrs=2)
    xattrs.set_xattr(ns, "/", "user.a", b"", BOTH, SUPER)
    xattrs.set_xattr(ns, "/", "trusted.b", b"", BOTH, SUPER)
    refused(ns, errors.XAttrError, xattrs.set_xattr, ns, "/", "user.c", b"", BOTH, SUPER)
    assert xattrs.set_xattr(ns, "/", "user.a", b"replaced", BOTH, SUPER)[0] is True


def test_xattr_size_limit_counts_the_name_without_its_prefix():
    ns = new_ns(max_xattr_size=10)
    assert xattrs.set_xattr(ns, "/", "user.kk", b"12345678", BOTH, SUPER)[0] is True
    refused(ns, errors.IllegalArgumentError, xattrs.set_xattr, ns, "/", "user.kk", b"123456789",
            BOTH, SUPER)


def test_an_xattr_without_a_value_is_empty(ns):
    assert xattrs.set_xattr(ns, HOME, "user.k", None, BOTH, ALICE)[1][0].value == b""
    assert xattrs.get_xattrs(ns, HOME, ALICE) == {"user.k": b""}


def test_trusted_xattrs_need_the_superuser_and_are_hidden_from_others(ns):
    refused(ns, errors.AccessControlError, xattrs.set_xattr, ns, HOME, "trusted.t", b"v", BOTH,
            ALICE)
    xattrs.set_xattr(ns, HOME, "trusted.t", b"v", BOTH, SUPER)
    xattrs.set_xattr(ns, HOME, "user.u", b"v", BOTH, ALICE)
    assert xattrs.get_xattrs(ns, HOME, ALICE) == {"user.u": b"v"}
    assert xattrs.get_xattrs(ns, HOME, SUPER) == {"user.u": b"v", "trusted.t": b"v"}
    refused(ns, errors.XAttrError, xattrs.get_xattrs, ns, HOME, ALICE, ["trusted.t"])
    refused(ns, errors.AccessControlError, xattrs.remove_xattr, ns, HOME, "trusted.t", ALICE)


@pytest.mark.parametrize("name", ["system.x", "security.x", "raw.x"])
def test_other_xattr_namespaces_are_refused(ns, name):
    refused(ns, errors.AccessControlError, xattrs.set_xattr, ns, HOME, name, b"v", BOTH, ALICE)


def test_user_xattrs_need_write_to_change_and_read_to_get(ns):
    xattrs.set_xattr(ns, HOME, "user.k", b"v", BOTH, ALICE)
    attributes.set_permission(ns, HOME, 0o711, ALICE)
    refused(ns, errors.AccessControlError, xattrs.set_xattr, ns, HOME, "user.k", b"x", BOTH, BOB)
    refused(ns, errors.AccessControlError, xattrs.get_xattrs, ns, HOME, BOB)
    refused(ns, errors.AccessControlError, xattrs.remove_xattr, ns, HOME, "user.k", BOB)


def test_get_xattrs_with_a_missing_name(ns):
    xattrs.set_xattr(ns, HOME, "user.k", b"v", BOTH, ALICE)
    refused(ns, errors.XAttrError, xattrs.get_xattrs, ns, HOME, ALICE, ["user.k", "user.missing"])
    assert xattrs.get_xattrs(ns, HOME, ALICE, []) == {"user.k": b"v"}


def test_remove_xattr(ns):
    xattrs.set_xattr(ns, HOME, "user.k", b"v", BOTH, ALICE)
    xattrs.set_xattr(ns, HOME, "user.j", b"v", BOTH, ALICE)
    assert xattrs.remove_xattr(ns, HOME, "user.k", ALICE) == (
        True, [edits.RemoveXAttrOp(HOME, "user.k")])
    refused(ns, errors.XAttrError, xattrs.remove_xattr, ns, HOME, "user.k", ALICE)
    xattrs.remove_xattr(ns, HOME, "user.j", ALICE)
    assert ns.tree.get(HOME).xattrs is None
    refused(ns, errors.XAttrError, xattrs.remove_xattr, ns, HOME, "user.j", ALICE)
