"""``/.reserved`` paths, resolved as HDFS's FSDirectory.resolvePath resolves them: inode paths
(``/.reserved/.inodes/<fileId>[/...]``) name an inode wherever it is now, raw paths are the
plain ones (no encryption zone), ``/.reserved`` stats and lists as HDFS answers, and the name
``.reserved`` is refused at the root (FSDirectory.addLastINode). Errors are HDFS's classes
with HDFS's messages; a refused request leaves the tree as it was (``refused``)."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import attributes, delete, rename, reserved, snapshot_ops, xattrs
from nnlite.namenode.namespace.inode import ROOT_INODE_ID
from tests.namenode.helpers import (
    ALICE,
    SUPER,
    check_invariants,
    mkdir,
    new_ns,
    refused,
    touch,
    write_file,
)

RESERVED_NAME = ('File name ".reserved" is reserved and cannot be created. If this is during '
                 "upgrade change the name of the existing file or directory to another name "
                 "before upgrading to the new release.")
SUPERUSER_ONLY = "Access denied for user alice. Superuser privilege is required"


@pytest.fixture
def ns():
    """/data/sub/f (alice's, 100 bytes) under /data (alice:staff 755)."""
    ns = new_ns()
    mkdir(ns, "/data", owner="alice", group="staff")
    mkdir(ns, "/data/sub", owner="alice", group="staff")
    write_file(ns, "/data/sub/f", caller=ALICE)
    yield ns
    check_invariants(ns)


def file_id(ns, path: str) -> int:
    return ns.status(path, SUPER).id


# ------------------------------------------------------------------- /.reserved/.inodes

def test_an_inode_path_is_the_inode_wherever_it_is(ns):
    node = ns.status("/data/sub/f", SUPER)
    assert reserved.inode_path(node.id) == f"/.reserved/.inodes/{node.id}"
    assert ns.status(reserved.inode_path(node.id), ALICE) is node
    assert ns.resolve(reserved.inode_path(node.id), ALICE) == "/data/sub/f"
    rename.rename(ns, "/data/sub/f", "/data/g", False, SUPER)
    assert ns.status(reserved.inode_path(node.id), ALICE) is node
    assert ns.resolve(reserved.inode_path(node.id), ALICE) == "/data/g"


def test_an_inode_path_goes_on_below_a_directory(ns):
    directory = file_id(ns, "/data")
    assert ns.resolve(f"/.reserved/.inodes/{directory}/sub/f", ALICE) == "/data/sub/f"
    assert ns.status(f"/.reserved/.inodes/{directory}/sub/f", ALICE) is \
        ns.status("/data/sub/f", ALICE)
    names = [n.name for n in ns.listing(f"/.reserved/.inodes/{directory}", ALICE)[0]]
    assert names == ["sub"]


def test_the_root_by_id(ns):
    assert ns.resolve(f"/.reserved/.inodes/{ROOT_INODE_ID}", ALICE) == "/"
    assert ns.resolve(f"/.reserved/.inodes/{ROOT_INODE_ID}/data", ALICE) == "/data"
    assert ns.status(f"/.reserved/.inodes/{ROOT_INODE_ID}", ALICE) is ns.tree.root


def test_dot_dot_after_an_inode_is_its_parent(ns):
    """resolveDotInodesPath's one ``..`` (NFS): the parent's path, "/" under the root; what
    follows it is dropped, as HDFS drops it."""
    assert ns.resolve(f"/.reserved/.inodes/{file_id(ns, '/data/sub/f')}/..", ALICE) == \
        "/data/sub"
    assert ns.resolve(f"/.reserved/.inodes/{file_id(ns, '/data')}/../x", ALICE) == "/"
    assert ns.resolve(f"/.reserved/.inodes/{ROOT_INODE_ID}/..", ALICE) == "/"


@pytest.mark.parametrize("id_text", ["abc", "", "1.5", "0x10", "9223372036854775808", "١٢"])
def test_an_id_that_is_no_long_is_an_invalid_inode_path(ns, id_text):
    path = f"/.reserved/.inodes/{id_text}/x"
    error = refused(ns, errors.PathNotFoundError, ns.status, path, SUPER)
    assert str(error) == f"Invalid inode path: {path}"


def test_an_unknown_id_is_file_not_found(ns):
    error = refused(ns, errors.PathNotFoundError, ns.status, "/.reserved/.inodes/99999", SUPER)
    assert str(error) == "File for given inode path does not exist: /.reserved/.inodes/99999"
    error = refused(ns, errors.PathNotFoundError, delete.delete, ns, "/.reserved/.inodes/-5/a",
                    True, SUPER)
    assert str(error) == "File for given inode path does not exist: /.reserved/.inodes/-5/a"


def test_a_deleted_or_overwritten_inode_is_gone(ns):
    old = file_id(ns, "/data/sub/f")
    touch(ns, "/data/sub/f", overwrite=True)
    assert file_id(ns, "/data/sub/f") != old
    refused(ns, errors.PathNotFoundError, ns.status, reserved.inode_path(old), SUPER)
    new = file_id(ns, "/data/sub/f")
    delete.delete(ns, "/data", True, SUPER)
    refused(ns, errors.PathNotFoundError, ns.status, reserved.inode_path(new), SUPER)


def test_changes_through_an_inode_path_log_the_inode_path(ns):
    """The ops carry the resolved path (HDFS logs ``iip.getPath()``), so a replay needs no
    id map."""
    node = ns.status("/data/sub/f", SUPER)
    inode = reserved.inode_path(node.id)
    _, ops = attributes.set_permission(ns, inode, 0o600, ALICE)
    assert ops == [edits.SetPermissionsOp("/data/sub/f", 0o600)]
    _, ops = rename.rename(ns, inode, "/data/moved", False, ALICE)
    assert [op.src for op in ops] == ["/data/sub/f"]
    assert ns.status("/data/moved", SUPER) is node
    _, ops = delete.delete(ns, inode, False, ALICE)
    assert ops[0].path == "/data/moved"


def test_the_traverse_is_checked_on_the_inodes_own_path(ns):
    attributes.set_permission(ns, "/data/sub", 0o700, SUPER)
    attributes.set_owner(ns, "/data/sub", "hdfs", None, SUPER)
    error = refused(ns, errors.AccessControlError, ns.status,
                    reserved.inode_path(file_id(ns, "/data/sub/f")), ALICE)
    assert 'inode="/data/sub"' in str(error)


def test_inside_a_snapshot_under_an_inode_path(ns):
    """``<dir>/.snapshot/<s>`` after a directory's inode path reads the snapshot, as the
    resolved path does; a change there is refused as in any snapshot."""
    snapshot_ops.allow_snapshot(ns, "/data", SUPER)
    snapshot_ops.create_snapshot(ns, "/data", "s1", SUPER)
    delete.delete(ns, "/data/sub", True, SUPER)
    data = file_id(ns, "/data")
    in_snapshot = f"/.reserved/.inodes/{data}/.snapshot/s1/sub/f"
    assert ns.status(in_snapshot, ALICE).length == 100
    refused(ns, errors.SnapshotAccessControlError, delete.delete, ns, in_snapshot, False, SUPER)


def test_an_inode_a_snapshot_keeps_names_its_old_place(ns):
    """HDFS keeps a deleted inode that a snapshot holds in its INodeMap, parent link and
    all: its inode path is its old place under its old parent as that is now. Nothing is
    there: "File does not exist" of that path; a newer file there: that file (HDFS's
    answer, not a bug of this port); once the snapshot goes, the inode is gone."""
    snapshot_ops.allow_snapshot(ns, "/data", SUPER)
    snapshot_ops.create_snapshot(ns, "/data", "s1", SUPER)
    old = file_id(ns, "/data/sub/f")
    delete.delete(ns, "/data/sub/f", False, SUPER)
    assert ns.resolve(reserved.inode_path(old), SUPER) == "/data/sub/f"
    assert ns.resolve(reserved.inode_path(old) + "/..", SUPER) == "/data/sub"
    error = refused(ns, errors.PathNotFoundError, ns.status, reserved.inode_path(old), SUPER)
    assert str(error) == "File does not exist: /data/sub/f"
    rename.rename(ns, "/data/sub", "/data/moved", False, SUPER)
    assert ns.resolve(reserved.inode_path(old), SUPER) == "/data/moved/f"
    touch(ns, "/data/moved/f")
    assert ns.status(reserved.inode_path(old), SUPER) is ns.status("/data/moved/f", SUPER)
    snapshot_ops.delete_snapshot(ns, "/data", "s1", SUPER)
    error = refused(ns, errors.PathNotFoundError, ns.resolve, reserved.inode_path(old), SUPER)
    assert str(error).startswith("File for given inode path does not exist")


def test_inodes_kept_in_a_deleted_directory(ns):
    """A removed directory's kept subtree keeps its inodes' places; one made after the
    newest snapshot that saw the place is destroyed by the delete (cleanSubtree)."""
    snapshot_ops.allow_snapshot(ns, "/data", SUPER)
    snapshot_ops.create_snapshot(ns, "/data", "s1", SUPER)
    touch(ns, "/data/sub/new")
    kept, new = file_id(ns, "/data/sub/f"), file_id(ns, "/data/sub/new")
    delete.delete(ns, "/data/sub/f", False, SUPER)          # first from the directory, then it
    delete.delete(ns, "/data/sub", True, SUPER)
    assert ns.resolve(reserved.inode_path(kept), SUPER) == "/data/sub/f"
    refused(ns, errors.PathNotFoundError, ns.resolve, reserved.inode_path(new), SUPER)


def test_the_id_map_follows_new_inodes(ns):
    before = file_id(ns, "/data/sub/f")
    ns.status(reserved.inode_path(before), SUPER)        # the map exists from here on
    mkdir(ns, "/new/a/b")
    touch(ns, "/new/a/b/f")
    for path in ("/new", "/new/a", "/new/a/b", "/new/a/b/f"):
        assert ns.resolve(reserved.inode_path(file_id(ns, path)), SUPER) == path


# ------------------------------------------------------------------- /.reserved/raw

def test_a_raw_path_is_the_plain_path(ns):
    assert ns.status("/.reserved/raw/data/sub/f", SUPER) is ns.status("/data/sub/f", SUPER)
    assert ns.status("/.reserved/raw", SUPER) is ns.tree.root
    assert ns.status("/.reserved/raw/", SUPER) is ns.tree.root
    _, ops = ns.mkdirs("/.reserved/raw/data/new", 0o755, SUPER)
    assert ops[0].path == "/data/new"


def test_anyone_reads_through_raw_only_the_superuser_changes(ns):
    """FSDirectory.resolvePath: a raw path with a DirOp other than READ asks for the
    superuser (checkSuperuserPrivilege's message)."""
    assert ns.status("/.reserved/raw/data/sub/f", ALICE).length == 100
    assert [n.name for n in ns.listing("/.reserved/raw/data", ALICE)[0]] == ["sub"]
    for call, args in ((ns.mkdirs, ("/.reserved/raw/data/x", 0o755, ALICE)),
                       (ns.create, ("/.reserved/raw/data/x", ALICE)),
                       (delete.delete, (ns, "/.reserved/raw/data/sub/f", False, ALICE)),
                       (attributes.set_permission, (ns, "/.reserved/raw/data", 0o700, ALICE)),
                       (rename.rename, (ns, "/data/sub/f", "/.reserved/raw/data/g", False, ALICE))):
        error = refused(ns, errors.AccessControlError, call, *args)
        assert str(error) == SUPERUSER_ONLY


def test_raw_xattrs_through_raw_paths_only(ns):
    """XAttrPermissionFilter: ``raw.`` xattrs are set and seen through ``/.reserved/raw``
    (changes there are the superuser's), refused and hidden elsewhere."""
    flags = 3                                               # CREATE | REPLACE
    error = refused(ns, errors.AccessControlError, xattrs.set_xattr, ns, "/data/sub/f", "raw.k",
                    b"v", flags, SUPER)
    assert str(error) == "User doesn't have permission for xattr: raw.k"
    _, ops = xattrs.set_xattr(ns, "/.reserved/raw/data/sub/f", "raw.k", b"v", flags, SUPER)
    assert ops == [edits.SetXAttrOp("/data/sub/f", "raw.k", b"v", flags)]
    assert xattrs.get_xattrs(ns, "/data/sub/f", SUPER) == {}
    assert xattrs.get_xattrs(ns, "/.reserved/raw/data/sub/f", SUPER) == {"raw.k": b"v"}
    assert xattrs.get_xattrs(ns, "/.reserved/raw/data/sub/f", ALICE) == {"raw.k": b"v"}
    refused(ns, errors.AccessControlError, xattrs.remove_xattr, ns, "/data/sub/f", "raw.k", SUPER)
    refused(ns, errors.AccessControlError, xattrs.remove_xattr, ns, "/.reserved/raw/data/sub/f",
            "raw.k", ALICE)
    xattrs.remove_xattr(ns, "/.reserved/raw/data/sub/f", "raw.k", SUPER)
    assert xattrs.get_xattrs(ns, "/.reserved/raw/data/sub/f", SUPER) == {}


def test_raw_reserved_is_not_stripped(ns):
    """``/.reserved/raw/.reserved`` stays as it is (resolveComponents), so it names
    nothing."""
    assert ns.resolve("/.reserved/raw/.reserved", SUPER) == "/.reserved/raw/.reserved"
    refused(ns, errors.PathNotFoundError, ns.status, "/.reserved/raw/.reserved", SUPER)


# ------------------------------------------------------------------- /.reserved itself

def test_reserved_stats_as_hdfs_dot_reserved_status(ns):
    node = ns.status("/.reserved", ALICE, reserved_dir=True)
    assert node.is_dir and node.permission == 0o1770
    assert (node.owner, node.group, node.mtime, node.atime, node.id) == ("", "", 0, 0, -1)


def test_reserved_lists_inodes_and_raw(ns):
    """FSDirectory.createReservedStatuses: directories of mode 770, group the supergroup;
    anyone may list them (no inode, no permission)."""
    listed, remaining = ns.listing("/.reserved", ALICE)
    assert remaining == 0
    assert [(n.name, n.permission, n.owner, n.group) for n in listed] == [
        (".inodes", 0o770, "", "supergroup"), ("raw", 0o770, "", "supergroup")]


@pytest.mark.parametrize("path", ["/.reserved/.inodes", "/.reserved/other",
                                  "/.reserved/other/x"])
def test_other_reserved_names_do_not_exist(ns, path):
    error = refused(ns, errors.PathNotFoundError, ns.status, path, SUPER)
    assert str(error) == f"File does not exist: {path}"
    assert delete.delete(ns, path, True, SUPER) == (False, [])


def test_delete_and_ownership_of_reserved_itself_are_invalid_paths(ns):
    """isExactReservedName, checked first by FSDirDeleteOp.delete, FSDirAttrOp.setPermission
    and setOwner."""
    for call, args in ((delete.delete, (ns, "/.reserved", True, SUPER)),
                       (attributes.set_permission, (ns, "/.reserved", 0o777, SUPER)),
                       (attributes.set_owner, (ns, "/.reserved", "alice", None, SUPER))):
        error = refused(ns, errors.InvalidPathError, call, *args)
        assert str(error) == "Invalid path name /.reserved"


def test_reserved_is_no_inode_to_any_other_request(ns):
    """Only getFileInfo and getListing make up an answer for ``/.reserved``; every other
    request finds no inode there (FSDirStatAndListingOp.getContentSummaryInt: "File does not
    exist")."""
    for call, args in ((ns.content_summary, ("/.reserved", SUPER)),
                       (xattrs.get_xattrs, (ns, "/.reserved", SUPER)),
                       (ns.readable_file, ("/.reserved", SUPER)),
                       (attributes.set_times, (ns, "/.reserved", 1, 1, SUPER))):
        error = refused(ns, errors.PathNotFoundError, call, *args)
        assert str(error) == "File does not exist: /.reserved"


def test_a_name_that_only_starts_as_reserved_is_ordinary(ns):
    mkdir(ns, "/.reservedX/.inodes/5")
    assert ns.resolve("/.reservedX/.inodes/5", SUPER) == "/.reservedX/.inodes/5"
    assert ns.status("/.reservedX/.inodes/5", SUPER).name == "5"


# ------------------------------------------------------------------- the name .reserved

@pytest.mark.parametrize("path", ["/.reserved", "/.reserved/x/y"])
def test_mkdirs_of_reserved_at_the_root_is_refused(ns, path):
    error = refused(ns, errors.HadoopIllegalArgumentError, ns.mkdirs, path, 0o755, SUPER)
    assert str(error) == RESERVED_NAME


@pytest.mark.parametrize("path", ["/.reserved", "/.reserved/x"])
def test_create_as_or_under_reserved_is_an_invalid_path(ns, path):
    """FSNamesystem.startFileInt's check, before any other."""
    error = refused(ns, errors.InvalidPathError, ns.create, path, SUPER)
    assert str(error) == f"Invalid path name {path}"
    error = refused(ns, errors.InvalidPathError, ns.create, path, SUPER, replication=0)
    assert str(error) == f"Invalid path name {path}"        # before verifyReplication


def test_rename_to_reserved_at_the_root_is_refused(ns):
    error = refused(ns, errors.HadoopIllegalArgumentError, rename.rename, ns, "/data/sub",
                    "/.reserved", False, SUPER)
    assert str(error) == RESERVED_NAME
    refused(ns, errors.HadoopIllegalArgumentError, rename.rename_legacy, ns, "/data/sub",
            "/.reserved", SUPER)


def test_reserved_below_the_root_is_an_ordinary_name(ns):
    ns.mkdirs("/data/.reserved", 0o755, SUPER)
    touch(ns, "/data/.reserved/f")
    assert ns.status("/data/.reserved/f", SUPER).length == 0
