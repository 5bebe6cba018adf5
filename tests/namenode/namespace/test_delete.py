"""delete.py: DELETE and DELETE_MANY (FSDirDeleteOp), their results, ops and refusals; a
refused request leaves the tree as it was."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import delete
from tests.namenode.helpers import (
    ALICE,
    BOB,
    HOME,
    SUPER,
    answers_false,
    later,
    mkdir,
    new_ns,
    refused,
    touch,
)

# ----------------------------------------------------------------------------- delete

def test_delete_a_file(ns):
    touch(ns, HOME + "/f", ALICE)
    later(ns)
    assert delete.delete(ns, HOME + "/f", False, ALICE) == (
        True, [edits.DeleteOp(HOME + "/f", 2000)])
    assert ns.tree.lookup(("home", "alice", "f")) is None
    assert ns.tree.files == 0 and ns.tree.get(HOME).mtime == 2000


def test_delete_of_a_non_empty_directory_needs_recursive(ns):
    touch(ns, HOME + "/d/f", ALICE)
    refused(ns, errors.PathIsNotEmptyDirectoryError, delete.delete, ns, HOME + "/d", False, ALICE)
    assert delete.delete(ns, HOME + "/d", True, ALICE)[0] is True
    assert (ns.tree.files, ns.tree.dirs) == (0, 4)


def test_delete_of_an_empty_directory_needs_no_recursive(ns):
    ns.mkdirs(HOME + "/d", 0o755, ALICE)
    assert delete.delete(ns, HOME + "/d", False, ALICE)[0] is True


@pytest.mark.parametrize("path", [HOME + "/missing", "/missing/deeper"])
@pytest.mark.parametrize("recursive", [False, True])
def test_delete_of_a_missing_path_answers_false(ns, path, recursive):
    answers_false(ns, delete.delete, ns, path, recursive, SUPER)


def test_delete_of_the_root_answers_false_or_refuses_when_not_recursive(ns):
    # As Hadoop: a recursive delete of "/" answers false; without -r, a non-empty root is
    # PathIsNotEmptyDirectoryException.
    answers_false(ns, delete.delete, ns, "/", True, SUPER)
    refused(ns, errors.PathIsNotEmptyDirectoryError, delete.delete, ns, "/", False, SUPER)


def test_delete_under_a_file_is_refused(ns):
    """A delete does not create its path: FSDirectory.resolvePath makes the traverse's
    ParentNotDirectoryException an AccessControlException."""
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.AccessControlError, delete.delete, ns, HOME + "/f/x", False, ALICE)


# ----------------------------------------------------------------------------- delete_many

def test_delete_many_is_one_op_and_drops_paths_under_other_listed_paths(ns):
    for name in ("a/1", "a/2", "b/1", "c/1"):
        touch(ns, f"{HOME}/{name}", ALICE)
    later(ns)
    count, ops = delete.delete_many(
        ns, [HOME + "/b", HOME + "/a/1", HOME + "/b/1", HOME + "/a/1"], ALICE)
    assert (count, ops) == (2, [edits.DeleteManyOp((HOME + "/a/1", HOME + "/b"), 2000)])
    assert sorted(ns.tree.get(HOME).children) == ["a",
                  "c"] and list(ns.tree.get(HOME + "/a").children) == ["2"]
    assert ns.tree.files == 2 and ns.tree.get(HOME).mtime == ns.tree.get(HOME + "/a").mtime == 2000


def test_delete_many_with_one_missing_path_deletes_nothing(ns):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.PathNotFoundError, delete.delete_many, ns, [HOME + "/f", HOME + "/nope"],
            ALICE)


def test_delete_many_needs_write_permission_on_every_parent(ns):
    touch(ns, HOME + "/f", ALICE)
    touch(ns, "/shared/g", BOB)
    refused(ns, errors.AccessControlError, delete.delete_many, ns, [HOME + "/f"], BOB)
    refused(ns, errors.AccessControlError, delete.delete_many, ns, ["/shared/g", HOME + "/f"], BOB)
    refused(ns, errors.IllegalArgumentError, delete.delete_many, ns, ["/"], SUPER)


def test_delete_many_of_nothing_logs_nothing(ns):
    assert delete.delete_many(ns, [], ALICE) == (0, [])


@pytest.mark.parametrize("listed", [("/a", "/a/b"), ("/a", "/a"), ("/", "/a")])
def test_a_delete_many_op_with_nested_or_repeated_paths_is_refused_whole(listed):
    ns = new_ns()
    mkdir(ns, "/a/b")
    before = (ns.tree.files, ns.tree.dirs)
    with pytest.raises(errors.IllegalArgumentError):
        ns.tree.apply(edits.DeleteManyOp(listed, 5))
    assert (ns.tree.files, ns.tree.dirs) == before and ns.tree.lookup(("a", "b")) is not None
