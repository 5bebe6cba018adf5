"""attributes.py: permission, owner, times, replication and quotas (FSDirAttrOp), their
results, ops and refusals; a refused request leaves the tree as it was."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import attributes
from tests.namenode.helpers import (
    ALICE,
    BOB,
    HOME,
    SUPER,
    answers_false,
    refused,
    touch,
    write_file,
)

# ----------------------------------------------------------------------------- attributes

def test_set_permission_by_the_owner(ns):
    touch(ns, HOME + "/f", ALICE)
    assert attributes.set_permission(ns, HOME + "/f/", 0o1600, ALICE) == (
        True, [edits.SetPermissionsOp(HOME + "/f", 0o1600)])
    assert ns.tree.get(HOME + "/f").permission == 0o1600


def test_set_permission_by_others(ns):
    touch(ns, HOME + "/f", ALICE, perm=0o666)
    refused(ns, errors.AccessControlError, attributes.set_permission, ns, HOME + "/f", 0o600, BOB)
    assert attributes.set_permission(ns, HOME + "/f", 0o600, SUPER)[0] is True
    refused(ns, errors.PathNotFoundError, attributes.set_permission, ns, HOME + "/nope", 0o600,
            ALICE)


@pytest.mark.parametrize("permission", [-1, 0o10000, 1 << 40])
def test_set_permission_refuses_a_permission_out_of_range(ns, permission):
    refused(ns, errors.IllegalArgumentError, attributes.set_permission, ns, HOME, permission, ALICE)


def test_set_owner_by_the_superuser(ns):
    assert attributes.set_owner(ns, HOME, "bob", "anything", SUPER) == (
        True, [edits.SetOwnerOp(HOME, "bob", "anything")])
    attributes.set_owner(ns, HOME, None, "other", SUPER)
    node = ns.tree.get(HOME)
    assert (node.owner, node.group) == ("bob", "other")


def test_set_owner_needs_a_user_or_a_group(ns):
    refused(ns, errors.IllegalArgumentError, attributes.set_owner, ns, HOME, None, "", SUPER)
    refused(ns, errors.IllegalArgumentError, attributes.set_owner, ns, HOME, "", None, SUPER)


def test_only_the_superuser_changes_an_owner(ns):
    refused(ns, errors.AccessControlError, attributes.set_owner, ns, HOME, "bob", None, ALICE)
    assert attributes.set_owner(ns, HOME, "alice", None, ALICE)[0] is True   # unchanged: allowed


def test_the_owner_may_change_the_group_to_one_of_its_groups(ns):
    touch(ns, HOME + "/f", ALICE)
    attributes.set_owner(ns, HOME + "/f", None, "other", SUPER)
    assert attributes.set_owner(ns, HOME + "/f", None, "staff", ALICE)[0] is True
    refused(ns, errors.AccessControlError, attributes.set_owner, ns, HOME + "/f", None, "guests",
            ALICE)
    refused(ns, errors.AccessControlError, attributes.set_owner, ns, HOME + "/f", None, "staff",
            BOB)


def test_set_times(ns):
    touch(ns, HOME + "/f", ALICE)
    assert attributes.set_times(ns, HOME + "/f", 5, -1, ALICE) == (
        True, [edits.SetTimesOp(HOME + "/f", 5, -1)])
    attributes.set_times(ns, HOME + "/f", -1, 7, ALICE)
    node = ns.tree.get(HOME + "/f")
    assert (node.mtime, node.atime) == (5, 7)


def test_set_times_needs_write_access(ns):
    touch(ns, HOME + "/f", ALICE, perm=0o644)
    refused(ns, errors.AccessControlError, attributes.set_times, ns, HOME + "/f", 5, 5, BOB)
    refused(ns, errors.PathNotFoundError, attributes.set_times, ns, HOME + "/nope", 5, 5, ALICE)


@pytest.mark.parametrize("time", [1 << 63, -(1 << 63) - 1])
def test_set_times_refuses_a_time_that_is_not_a_long(ns, time):
    refused(ns, errors.IllegalArgumentError, attributes.set_times, ns, HOME, time, -1, ALICE)
    refused(ns, errors.IllegalArgumentError, attributes.set_times, ns, HOME, -1, time, ALICE)


def test_set_replication(ns):
    write_file(ns, HOME + "/f", sizes=(100,), caller=ALICE)
    assert attributes.set_replication(ns, HOME + "/f", 3, ALICE) == (
        True, [edits.SetReplicationOp(HOME + "/f", 3)])
    assert ns.tree.get(HOME + "/f").replication == 3


def test_set_replication_of_a_directory_answers_false(ns):
    answers_false(ns, attributes.set_replication, ns, HOME, 3, ALICE)


@pytest.mark.parametrize("replication", [0, 513])
def test_set_replication_out_of_range(ns, replication):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.NamenodeError, attributes.set_replication, ns, HOME + "/f", replication,
            ALICE)


def test_set_replication_needs_write_access(ns):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.AccessControlError, attributes.set_replication, ns, HOME + "/f", 2, BOB)
    refused(ns, errors.PathNotFoundError, attributes.set_replication, ns, HOME + "/nope", 2, ALICE)


# ----------------------------------------------------------------------------- quotas

def test_set_quota_sets_changes_and_removes(ns):
    assert attributes.set_quota(ns, HOME, 10, 1000, SUPER) == (
        True, [edits.SetQuotaOp(HOME, 10, 1000)])
    q = ns.tree.get(HOME).quota
    assert (q.ns_quota, q.ss_quota, q.ns_used, q.ss_used) == (10, 1000, 1, 0)
    assert attributes.set_quota(ns, HOME, None, 500, SUPER)[1] == [edits.SetQuotaOp(HOME, 10, 500)]
    assert attributes.set_quota(ns, HOME, -1, None, SUPER)[1] == [edits.SetQuotaOp(HOME, -1, 500)]
    attributes.set_quota(ns, HOME, None, -1, SUPER)
    assert ns.tree.get(HOME).quota is None


def test_set_quota_counts_what_is_already_there(ns):
    write_file(ns, HOME + "/d/f", sizes=(100,), replication=2, caller=ALICE)
    attributes.set_quota(ns, HOME, 100, None, SUPER)
    q = ns.tree.get(HOME).quota
    assert (q.ns_used, q.ss_used) == (3, 200)


def test_set_quota_needs_the_superuser(ns):
    refused(ns, errors.AccessControlError, attributes.set_quota, ns, HOME, 10, None, ALICE)


@pytest.mark.parametrize("ns_quota, ss_quota", [(-2, None), (None, -5), (1 << 63, None)])
def test_set_quota_refuses_illegal_values(ns, ns_quota, ss_quota):
    refused(ns, errors.IllegalArgumentError, attributes.set_quota, ns, HOME, ns_quota, ss_quota,
            SUPER)


def test_set_quota_on_a_file_or_a_missing_path(ns):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.PathIsNotDirectoryError, attributes.set_quota, ns, HOME + "/f", 5, None,
            SUPER)
    refused(ns, errors.PathNotFoundError, attributes.set_quota, ns, HOME + "/nope", 5, None, SUPER)
