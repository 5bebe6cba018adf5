"""rename.py: rename (false where HDFS answers false) and rename2 (FSDirRenameOp), their
results, ops and refusals; a refused request leaves the tree as it was."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import rename
from tests.namenode.helpers import (
    ALICE,
    CLOCK_MS,
    HOME,
    answers_false,
    later,
    refused,
    touch,
)

# ----------------------------------------------------------------------------- rename_legacy

@pytest.fixture
def movable(ns):
    """Adds /home/alice/{src/f, dst/, file}."""
    touch(ns, HOME + "/src/f", ALICE)
    ns.mkdirs(HOME + "/dst", 0o755, ALICE)
    touch(ns, HOME + "/file", ALICE)
    return ns


def test_rename_legacy_moves_to_a_new_name(movable):
    node = movable.tree.get(HOME + "/src/f")
    later(movable)
    assert rename.rename_legacy(movable, HOME + "/src/f", HOME + "/dst/g", ALICE) == (
        True, [edits.RenameOldOp(HOME + "/src/f", HOME + "/dst/g", 2000)])
    assert movable.tree.get(HOME + "/dst/g") is node and node.name == "g"
    assert movable.tree.get(HOME + "/src").mtime == movable.tree.get(HOME + "/dst").mtime == 2000


def test_rename_legacy_into_an_existing_directory(movable):
    ok, ops = rename.rename_legacy(movable, HOME + "/src", HOME + "/dst", ALICE)
    assert ops == [edits.RenameOldOp(HOME + "/src", HOME + "/dst/src", CLOCK_MS)]
    assert movable.tree.get(HOME + "/dst/src/f").name == "f"


@pytest.mark.parametrize("src, dst", [
    (HOME + "/file", HOME + "/file"),      # a file onto itself
    (HOME + "/file", HOME),                # into the directory it is already in
])
def test_rename_legacy_onto_itself_is_true_without_an_op(movable, src, dst):
    before = movable.tree.last_inode_id
    assert rename.rename_legacy(movable, src, dst, ALICE) == (True, [])
    assert movable.tree.last_inode_id == before


@pytest.mark.parametrize("src, dst", [
    (HOME + "/missing", HOME + "/x"),        # source missing
    ("/", "/x"),                             # source is the root
    (HOME + "/src", HOME + "/src"),          # a directory "into itself"
    (HOME + "/src", HOME + "/src/sub"),      # destination under the source
    (HOME + "/src/f", HOME + "/nodir/g"),    # destination parent missing
    (HOME + "/src/f", HOME + "/file"),       # destination is an existing file
    (HOME + "/file", HOME + "/file/g"),      # destination parent is a file
    (HOME + "/src/f", HOME + "/file/x/g"),   # a file further up the destination
])
def test_rename_legacy_answers_false(movable, src, dst):
    answers_false(movable, rename.rename_legacy, movable, src, dst, ALICE)


def test_rename_legacy_into_a_directory_holding_that_name_answers_false(movable):
    touch(movable, HOME + "/dst/f", ALICE)
    answers_false(movable, rename.rename_legacy, movable, HOME + "/src/f", HOME + "/dst", ALICE)


# ----------------------------------------------------------------------------- rename (rename2)

def test_rename_moves_to_exactly_the_destination(movable):
    assert rename.rename(movable, HOME + "/src", HOME + "/dst/new", False, ALICE) == (
        True, [edits.RenameOp(HOME + "/src", HOME + "/dst/new", CLOCK_MS, False)])
    assert movable.tree.get(HOME + "/dst/new/f").name == "f"


def test_rename_overwrites_a_file(movable):
    node = movable.tree.get(HOME + "/src/f")
    assert rename.rename(movable, HOME + "/src/f", HOME + "/file", True, ALICE)[0] is True
    assert movable.tree.get(HOME + "/file") is node and movable.tree.files == 1


def test_rename_overwrites_an_empty_directory(movable):
    node = movable.tree.get(HOME + "/src")
    assert rename.rename(movable, HOME + "/src", HOME + "/dst", True, ALICE)[0] is True
    assert movable.tree.get(HOME + "/dst") is node and movable.tree.dirs == 5


@pytest.mark.parametrize("src, dst, overwrite, error", [
    ("/", HOME + "/x", False, errors.NamenodeError),
    (HOME + "/src", "/", True, errors.NamenodeError),
    (HOME + "/missing", HOME + "/x", False, errors.PathNotFoundError),
    (HOME + "/src", HOME + "/src", True, errors.FileAlreadyExistsError),
    (HOME + "/src", HOME + "/src/x", False, errors.NamenodeError),
    (HOME + "/src/f", HOME + "/file", False, errors.FileAlreadyExistsError),
    (HOME + "/src", HOME + "/dst", False, errors.FileAlreadyExistsError),
    (HOME + "/src/f", HOME + "/dst", True, errors.NamenodeError),        # file over dir
    (HOME + "/dst", HOME + "/file", True, errors.NamenodeError),         # dir over file
    (HOME + "/dst", HOME + "/src", True, errors.NamenodeError),          # non-empty dir
    (HOME + "/file", HOME + "/nodir/x", False, errors.PathNotFoundError),
    (HOME + "/src/f", HOME + "/file/x", False, errors.ParentNotDirectoryError),
    (HOME + "/src/f", HOME + "/file/x/y", False, errors.ParentNotDirectoryError),
], ids=["src root", "dst root", "missing src", "same", "under source", "file exists",
        "dir exists", "file over dir", "dir over file", "non-empty dir", "missing dst parent",
        "dst parent is a file", "file further up the dst"])
def test_rename_refusals(movable, src, dst, overwrite, error):
    refused(movable, error, rename.rename, movable, src, dst, overwrite, ALICE)
