"""Every request method of Namespace (mkdirs, create, concat, truncate, the uploads, the
reads): its result, the ops it returns, and each typed error it raises. A request that raises,
or answers False, must leave the tree exactly as it was (``refused`` / ``answers_false``
compare a full dump before and after). The op families' requests have their own modules
(test_attributes.py, test_delete.py, test_rename.py, test_xattrs.py, ...)."""

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import attributes, delete, rename, xattrs
from nnlite.namenode.namespace.inode import ROOT_INODE_ID
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE
from tests.namenode.helpers import (
    ALICE,
    BOB,
    CLIENT,
    CLOCK_MS,
    HOME,
    SUPER,
    dump,
    later,
    mkdir,
    new_ns,
    refused,
    touch,
    write_file,
)

BOTH = XATTR_CREATE | XATTR_REPLACE


# ----------------------------------------------------------------------------- mkdirs

def test_mkdirs_creates_missing_parents_in_one_op():
    ns = new_ns()
    assert ns.mkdirs("/a/b/c", 0o500, SUPER) == (
        True, [edits.MkdirOp("/a/b/c", ROOT_INODE_ID + 1, 0o500, "hdfs", "supergroup", CLOCK_MS)])
    a, b, c = ns.tree.get("/a"), ns.tree.get("/a/b"), ns.tree.get("/a/b/c")
    assert [a.id, b.id, c.id] == [ROOT_INODE_ID + 1, ROOT_INODE_ID + 2, ROOT_INODE_ID + 3]
    assert [a.permission, b.permission, c.permission] == [0o700, 0o700, 0o500]
    assert ns.tree.dirs == 4 and ns.tree.last_inode_id == c.id


def test_mkdirs_sets_the_parent_mtime_and_inherits_its_group(ns):
    later(ns)
    assert ns.mkdirs(HOME + "/x", 0o755, ALICE)[0] is True
    node = ns.tree.get(HOME + "/x")
    assert (node.owner, node.group, node.mtime, node.atime) == ("alice", "staff", 2000, 0)
    assert ns.tree.get(HOME).mtime == 2000


def _mkdirs_tree():
    """/home/alice (755), /private (bob 700) with /private/in, /shared (1777) holding a
    file, /ro (alice 555): one tree for both of mkdirs' ways of finding a parent."""
    ns = new_ns()
    mkdir(ns, HOME, owner="alice", group="staff")
    mkdir(ns, "/private/in", 0o700, owner="bob", group="staff")
    mkdir(ns, "/shared", 0o1777, owner="bob", group="staff")
    touch(ns, "/shared/file")
    mkdir(ns, "/ro", 0o555, owner="alice", group="staff")
    return ns


@pytest.mark.parametrize("caller", [SUPER, ALICE, BOB], ids=lambda c: c.user)
@pytest.mark.parametrize("path", [
    HOME + "/new", HOME, "/private/in/new", "/private/in", "/private/new", "/shared/new",
    "/shared/file", "/shared/file/below", "/ro/new", "/ro", "/top", "/a/b/c", HOME + "/x/y"])
def test_mkdirs_answers_alike_by_the_directory_index_and_by_resolving(caller, path):
    """A parent the tree's directory index knows is found there, its ancestors by parent
    links; otherwise the path is split and resolved. Both ways must answer, refuse (same
    error, same message) and change the tree alike, for every caller."""
    outcomes = []
    for indexed in (True, False):
        ns = _mkdirs_tree()
        if not indexed:
            ns.tree._forget()        # only the root stays known: every deeper parent is resolved
        try:
            outcome = ns.mkdirs(path, 0o750, caller)
        except errors.NamenodeError as exc:
            outcome = (type(exc), str(exc))
        outcomes.append((outcome, dump(ns)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("path", ["/", HOME, HOME + "/"])
def test_mkdirs_of_an_existing_directory_changes_nothing(ns, path):
    before = ns.tree.last_inode_id
    assert ns.mkdirs(path, 0o700, ALICE) == (True, [])
    assert ns.tree.last_inode_id == before


def test_mkdirs_over_a_file_is_refused(ns):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.FileAlreadyExistsError, ns.mkdirs, HOME + "/f", 0o755, ALICE)
    refused(ns, errors.ParentNotDirectoryError, ns.mkdirs, HOME + "/f/x", 0o755, ALICE)
    refused(ns, errors.ParentNotDirectoryError, ns.mkdirs, HOME + "/f/x/y", 0o755, ALICE)


@pytest.mark.parametrize("path", ["relative", "/a/../b", "/a//b", "/a:b"])
def test_mkdirs_of_an_invalid_path_is_refused(ns, path):
    refused(ns, errors.InvalidPathError, ns.mkdirs, path, 0o755, SUPER)


def test_inode_ids_are_never_reused(ns):
    ns.mkdirs("/gone", 0o755, SUPER)
    gone = ns.tree.get("/gone").id
    delete.delete(ns, "/gone", False, SUPER)
    ns.mkdirs("/new", 0o755, SUPER)
    assert ns.tree.get("/new").id == gone + 1


# ----------------------------------------------------------------------------- create

def test_create_makes_a_complete_empty_file(ns):
    later(ns)
    ok, ops = ns.create(HOME + "/f/", ALICE, permission=0o640, replication=3)
    node = ns.tree.get(HOME + "/f")
    assert ok is True
    assert ops == [edits.AddFileOp(HOME + "/f", node.id, 3, 128 << 20, 0, 0o640, "alice", "staff",
                               2000, 2000, False, "", "")]
    assert (node.length, node.blocks, node.client_name, node.under_construction) == \
        (0, (), None, False)
    assert ns.tree.get(HOME).mtime == 2000 and ns.tree.files == 1


def test_create_with_a_client_name_is_under_construction(ns):
    ns.create(HOME + "/f", ALICE, client_name=CLIENT, client_machine="10.0.0.1")
    node = ns.tree.get(HOME + "/f")
    assert node.under_construction
    assert (node.client_name, node.client_machine) == (CLIENT, "10.0.0.1")


def test_create_refuses_an_existing_file_without_overwrite(ns):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.FileAlreadyExistsError, ns.create, HOME + "/f", ALICE)


def test_create_with_overwrite_replaces_the_file(ns):
    write_file(ns, HOME + "/f", sizes=(10, 20), caller=ALICE)
    xattrs.set_xattr(ns, HOME + "/f", "user.k", b"v", XATTR_CREATE, ALICE)
    old = ns.tree.get(HOME + "/f")
    ok, ops = ns.create(HOME + "/f", ALICE, overwrite=True)
    new = ns.tree.get(HOME + "/f")
    assert ok and ops[0].overwrite and new is not old and new.id == ns.tree.last_inode_id
    assert (new.length, new.blocks, new.xattrs, ns.tree.files) == (0, (), None, 1)


def test_create_over_a_file_under_construction_is_a_lease_conflict(ns):
    ns.create(HOME + "/f", ALICE, client_name=CLIENT)
    refused(ns, errors.LeaseError, ns.create, HOME + "/f", ALICE, overwrite=True)
    refused(ns, errors.FileAlreadyExistsError, ns.create, HOME + "/f", ALICE)


@pytest.mark.parametrize("overwrite", [False, True])
def test_create_over_a_directory_is_refused(ns, overwrite):
    ns.mkdirs(HOME + "/d", 0o755, ALICE)
    refused(ns, errors.FileAlreadyExistsError, ns.create, HOME + "/d", ALICE,
            overwrite=overwrite)
    refused(ns, errors.FileAlreadyExistsError, ns.create, "/", SUPER, overwrite=overwrite)


def test_create_without_create_parent_needs_the_parent(ns):
    refused(ns, errors.PathNotFoundError, ns.create, HOME + "/x/f", ALICE,
            create_parent=False)


def test_create_with_create_parent_logs_a_mkdir_first(ns):
    first = ns.tree.last_inode_id + 1
    ok, ops = ns.create(HOME + "/x/y/f", ALICE, permission=0o600)
    assert ops[0] == edits.MkdirOp(HOME + "/x/y", first, 0o700, "alice", "staff", CLOCK_MS)
    assert type(ops[1]) is edits.AddFileOp and ops[1].inode_id == first + 2
    assert ns.tree.get(HOME + "/x/y").id == first + 1
    assert ns.tree.get(HOME + "/x/y/f").id == first + 2


@pytest.mark.parametrize("path", [HOME + "/f/g", HOME + "/f/x/g"])
def test_create_under_a_file_is_refused(ns, path):
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.ParentNotDirectoryError, ns.create, path, ALICE)


@pytest.mark.parametrize("replication", [0, -1, 513])
def test_create_refuses_a_replication_out_of_range(ns, replication):
    # An IOException in Hadoop (BlockManager.verifyReplication): 403 over WebHDFS.
    refused(ns, errors.NamenodeError, ns.create, HOME + "/f", ALICE,
            replication=replication)


@pytest.mark.parametrize("block_size", [0, -1, 1 << 63])
def test_create_refuses_a_block_size_out_of_range(ns, block_size):
    refused(ns, errors.IllegalArgumentError, ns.create, HOME + "/f", ALICE,
            block_size=block_size)


def test_create_accepts_the_maximum_replication(ns):
    assert ns.create(HOME + "/f", ALICE, replication=512)[0] is True


@pytest.mark.parametrize("permission", [-1, 0o10000])
def test_create_and_mkdirs_refuse_a_permission_out_of_range(ns, permission):
    refused(ns, errors.IllegalArgumentError, ns.create, HOME + "/f", ALICE,
            permission=permission)
    refused(ns, errors.IllegalArgumentError, ns.mkdirs, HOME + "/d", permission, ALICE)


@pytest.mark.parametrize("call", [
    lambda ns: attributes.set_owner(ns, HOME, None, "bad\udcff", SUPER),
    lambda ns: xattrs.set_xattr(ns, HOME, "user.bad\udcff", b"", BOTH, SUPER),
    lambda ns: ns.mkdirs(HOME + "/x", 0o755, Caller("bad\udcff", superuser=True)),
], ids=["group", "xattr name", "owner"])
def test_a_request_whose_op_cannot_be_logged_is_refused(ns, call):
    refused(ns, errors.IllegalArgumentError, call, ns)


# ----------------------------------------------------------------------------- quotas

def test_namespace_quota_limits_mkdirs_and_create(ns):
    attributes.set_quota(ns, HOME, 3, None, SUPER)            # the directory itself counts
    ns.mkdirs(HOME + "/a", 0o755, ALICE)
    refused(ns, errors.NSQuotaExceededError, ns.mkdirs, HOME + "/b/c", 0o755, ALICE)
    refused(ns, errors.NSQuotaExceededError, ns.create, HOME + "/b/f", ALICE)
    touch(ns, HOME + "/a/f", ALICE)
    refused(ns, errors.NSQuotaExceededError, ns.create, HOME + "/g", ALICE)
    refused(ns, errors.NSQuotaExceededError, ns.mkdirs, HOME + "/a/d", 0o755, ALICE)


def test_namespace_quota_of_an_ancestor_applies(ns):
    attributes.set_quota(ns, "/home", 3, None, SUPER)         # /home and /home/alice: one left
    touch(ns, HOME + "/f", ALICE)
    refused(ns, errors.NSQuotaExceededError, ns.mkdirs, HOME + "/d", 0o755, ALICE)


def test_overwriting_a_file_needs_no_namespace_quota(ns):
    touch(ns, HOME + "/f", ALICE)
    attributes.set_quota(ns, HOME, 2, None, SUPER)
    assert ns.create(HOME + "/f", ALICE, overwrite=True)[0] is True


def test_space_quota_limits_blocks(ns):
    attributes.set_quota(ns, HOME, None, 250, SUPER)
    write_file(ns, HOME + "/f", sizes=(100,), replication=2, caller=ALICE)
    ns.create(HOME + "/g", ALICE, client_name=CLIENT)
    g = ns.tree.get(HOME + "/g")
    for op in (edits.AddBlockOp(g.path(), g.id, (99, 60, 1)),
               edits.UpdateBlocksOp(g.path(), g.id, ((99, 60, 1),)),
               edits.CloseFileOp(g.path(), g.id, 60, 1, 1, ((99, 60, 1),), b"")):
        refused(ns, errors.DSQuotaExceededError, ns.tree.apply, op)
    refused(ns, errors.DSQuotaExceededError, attributes.set_replication, ns, HOME + "/f", 3, ALICE)
    assert attributes.set_replication(ns, HOME + "/f", 1, ALICE)[0] is True


def test_quotas_limit_a_rename_into_the_directory(ns):
    mkdir(ns, "/q", 0o777)
    attributes.set_quota(ns, "/q", 2, None, SUPER)
    ns.mkdirs("/big/sub", 0o755, SUPER)
    refused(ns, errors.NSQuotaExceededError, rename.rename, ns, "/big", "/q/big", False, SUPER)
    assert rename.rename_legacy(ns, "/big/sub", "/q", SUPER)[0] is True
    write_file(ns, "/f", sizes=(100,))
    attributes.set_quota(ns, "/q", -1, 50, SUPER)
    refused(ns, errors.DSQuotaExceededError, rename.rename, ns, "/f", "/q/f", False, SUPER)
    refused(ns, errors.DSQuotaExceededError, rename.rename_legacy, ns, "/f", "/q/sub", SUPER)


def test_a_rename_inside_a_quota_directory_is_not_counted_twice(ns):
    touch(ns, HOME + "/a/f", ALICE)
    attributes.set_quota(ns, HOME, 3, None, SUPER)
    assert rename.rename(ns, HOME + "/a/f", HOME + "/g", False, ALICE)[0] is True
    assert ns.tree.get(HOME).quota.ns_used == 3


def test_quota_usage_and_content_summary(ns):
    write_file(ns, HOME + "/d/f", sizes=(100, 50), replication=3, caller=ALICE)
    touch(ns, HOME + "/e", ALICE)
    summary = {"length": 150, "fileCount": 2, "directoryCount": 2, "spaceConsumed": 450,
               "quota": -1, "spaceQuota": -1, "snapshotFileCount": 0,
               "snapshotDirectoryCount": 0, "snapshotLength": 0, "snapshotSpaceConsumed": 0}
    assert ns.content_summary(HOME, ALICE) == summary
    assert ns.quota_usage(HOME, ALICE) == {"fileAndDirectoryCount": 4, "spaceConsumed": 450,
                                           "quota": -1, "spaceQuota": -1}
    attributes.set_quota(ns, HOME, 10, 1000, SUPER)
    assert ns.content_summary(HOME, ALICE) == {**summary, "quota": 10, "spaceQuota": 1000}
    assert ns.quota_usage(HOME, ALICE) == {"fileAndDirectoryCount": 4, "spaceConsumed": 450,
                                           "quota": 10, "spaceQuota": 1000}
    assert ns.quota_usage(HOME + "/e", ALICE)["fileAndDirectoryCount"] == 1


# ----------------------------------------------------------------------------- concat, truncate

@pytest.fixture
def parts(ns):
    """/home/alice/{t, s1, s2}: complete files of 1, 2 and 2 blocks."""
    write_file(ns, HOME + "/t", sizes=(10,), caller=ALICE)
    write_file(ns, HOME + "/s1", sizes=(20, 30), caller=ALICE)
    write_file(ns, HOME + "/s2", sizes=(40,), caller=ALICE)
    return ns


def test_concat_appends_the_blocks_and_deletes_the_sources(parts):
    blocks = [parts.tree.get(HOME + p).blocks for p in ("/t", "/s1", "/s2")]
    later(parts)
    assert parts.concat(HOME + "/t", [HOME + "/s1", HOME + "/s2"], ALICE) == (
        True, [edits.ConcatOp(HOME + "/t", (HOME + "/s1", HOME + "/s2"), 2000)])
    target = parts.tree.get(HOME + "/t")
    assert target.blocks == blocks[0] + blocks[1] + blocks[2]
    assert (target.length, target.mtime, target.checksum, parts.tree.files) == (100, 2000, None, 1)


@pytest.mark.parametrize("srcs, error", [
    ([], errors.IllegalArgumentError),                     # FSDirConcatOp.validatePath
    ([HOME + "/t"], errors.HadoopIllegalArgumentError),    # verifySrcFiles, as the rest
    ([HOME + "/s1", HOME + "/s1"], errors.HadoopIllegalArgumentError),
], ids=["no sources", "target as source", "duplicate source"])
def test_concat_refuses_bad_source_lists(parts, srcs, error):
    refused(parts, error, parts.concat, HOME + "/t", srcs, ALICE)


def test_concat_refuses_sources_in_another_directory(parts):
    write_file(parts, HOME + "/d/s3", sizes=(5,), caller=ALICE)
    refused(parts, errors.IllegalArgumentError, parts.concat, HOME + "/t", [HOME + "/d/s3"],
            ALICE)


def test_concat_refuses_missing_paths_and_directories(parts):
    refused(parts, errors.PathNotFoundError, parts.concat, HOME + "/t", [HOME + "/x"], ALICE)
    refused(parts, errors.PathNotFoundError, parts.concat, HOME + "/x", [HOME + "/s1"], ALICE)
    parts.mkdirs(HOME + "/d", 0o755, ALICE)
    refused(parts, errors.PathNotFoundError, parts.concat, HOME + "/t", [HOME + "/d"], ALICE)


def test_concat_refuses_files_under_construction(parts):
    parts.create(HOME + "/uc", ALICE, client_name=CLIENT)
    refused(parts, errors.HadoopIllegalArgumentError, parts.concat, HOME + "/uc",
            [HOME + "/s1"], ALICE)
    refused(parts, errors.HadoopIllegalArgumentError, parts.concat, HOME + "/t", [HOME + "/uc"],
            ALICE)


def test_concat_refuses_empty_sources_and_larger_block_sizes(parts):
    parts.create(HOME + "/empty", ALICE)
    refused(parts, errors.HadoopIllegalArgumentError, parts.concat, HOME + "/t",
            [HOME + "/empty"], ALICE)
    write_file(parts, HOME + "/big", sizes=(5,), caller=ALICE)
    parts.tree.get(HOME + "/big").block_size = parts.tree.get(HOME + "/t").block_size * 2
    with pytest.raises(errors.HadoopIllegalArgumentError, match="preferred block size"):
        parts.concat(HOME + "/t", [HOME + "/big"], ALICE)


def test_concat_permissions(parts):
    attributes.set_permission(parts, HOME, 0o777, ALICE)
    for name, perm in (("/t", 0o644), ("/s1", 0o600), ("/s2", 0o640)):
        attributes.set_permission(parts, HOME + name, perm, ALICE)
    refused(parts, errors.AccessControlError, parts.concat, HOME + "/t", [HOME + "/s2"], BOB)
    attributes.set_permission(parts, HOME + "/t", 0o666, ALICE)
    refused(parts, errors.AccessControlError, parts.concat, HOME + "/t", [HOME + "/s1"], BOB)
    assert parts.concat(HOME + "/t", [HOME + "/s2"], BOB)[0] is True   # READ on a source


def test_concat_that_lowers_usage_in_an_over_quota_directory_applies_whole(ns):
    write_file(ns, HOME + "/t", sizes=(100,), replication=1, caller=ALICE)
    write_file(ns, HOME + "/s", sizes=(100,), replication=3, caller=ALICE)
    attributes.set_quota(ns, HOME, None, 150, SUPER)          # already exceeded: 400 bytes used
    assert ns.concat(HOME + "/t", [HOME + "/s"], ALICE)[0] is True
    assert ns.tree.get(HOME).quota.ss_used == 200 and ns.tree.get(HOME + "/t").length == 200


def test_concat_that_raises_usage_over_the_space_quota_is_refused(ns):
    write_file(ns, HOME + "/t", sizes=(100,), replication=3, caller=ALICE)
    write_file(ns, HOME + "/s", sizes=(100,), replication=1, caller=ALICE)
    attributes.set_quota(ns, HOME, None, 450, SUPER)
    refused(ns, errors.DSQuotaExceededError, ns.concat, HOME + "/t", [HOME + "/s"], ALICE)


def test_truncate_cuts_blocks(ns):
    write_file(ns, HOME + "/f", sizes=(100, 100, 100), caller=ALICE)
    ids = [b[0] for b in ns.tree.get(HOME + "/f").blocks]
    assert ns.truncate(HOME + "/f", 150, ALICE) == (
        True, [edits.TruncateOp(HOME + "/f", 150, CLOCK_MS)])
    node = ns.tree.get(HOME + "/f")
    assert node.blocks == ((ids[0], 100, 1001), (ids[1], 50, 1001))
    assert (node.length, node.checksum) == (150, None)
    ns.truncate(HOME + "/f", 0, ALICE)
    assert (node.length, node.blocks) == (0, ())


@pytest.mark.parametrize("length", [101, -1])
def test_truncate_out_of_range(ns, length):
    write_file(ns, HOME + "/f", sizes=(100,), caller=ALICE)
    refused(ns, errors.IllegalArgumentError, ns.truncate, HOME + "/f", length, ALICE)


def test_truncate_refusals(ns):
    write_file(ns, HOME + "/f", sizes=(100,), caller=ALICE)
    ns.create(HOME + "/uc", ALICE, client_name=CLIENT)
    refused(ns, errors.LeaseError, ns.truncate, HOME + "/uc", 0, ALICE)
    refused(ns, errors.PathNotFoundError, ns.truncate, HOME, 0, ALICE)
    refused(ns, errors.PathNotFoundError, ns.truncate, HOME + "/nope", 0, ALICE)
    refused(ns, errors.AccessControlError, ns.truncate, HOME + "/f", 0, BOB)


# ----------------------------------------------------------------------------- uploads

def test_create_complete_logs_one_batch_and_checks_overwrite():
    ns = new_ns()
    blocks = ((1, 10, 1001),)
    _, ops = ns.create_complete("/a/b/f", SUPER, blocks=blocks, length=10, checksum=b"c" * 28,
                                client_name="webhdfs-create-1", replication=1)
    assert [type(op) for op in ops] == [edits.MkdirOp, edits.AddFileOp, edits.CloseFileOp]
    assert ops[1].client_name == "webhdfs-create-1"
    node = ns.tree.get("/a/b/f")
    assert (node.blocks, node.length, node.checksum, node.client_name) == \
        (blocks, 10, b"c" * 28, None)
    refused(ns, errors.FileAlreadyExistsError, ns.create_complete, "/a/b/f", SUPER,
            blocks=blocks, length=10, checksum=b"", client_name="webhdfs-create-2")


def test_an_upload_whose_close_exceeds_the_record_limit_changes_nothing():
    """The CloseFileOp of an upload is checked against the namespace's own record limit
    before the batch's first op applies (a smaller nnlite.edits.max-record, many blocks)."""
    ns = new_ns()
    ns.max_record = 4096
    mkdir(ns, "/d")
    many = tuple((i, 10, 1001) for i in range(1, 600))
    error = refused(ns, errors.IllegalArgumentError, ns.create_complete, "/d/f", SUPER,
                    blocks=many, length=10 * len(many), checksum=b"",
                    client_name="webhdfs-create-1")
    assert "4096-byte limit" in str(error)
    write_file(ns, "/d/g", sizes=(100,))
    node = ns.tree.get("/d/g")
    refused(ns, errors.IllegalArgumentError, ns.append_complete, "/d/g", SUPER,
            inode_id=node.id, expected_blocks=node.blocks, blocks=node.blocks + many,
            length=100 + 10 * len(many), checksum=b"", client_name="webhdfs-append-1")


def test_append_complete_refuses_a_file_changed_meanwhile():
    ns = new_ns()
    mkdir(ns, "/d")
    write_file(ns, "/d/f", sizes=(100,))
    node = ns.tree.get("/d/f")
    old = node.blocks
    refused(ns, errors.NamenodeError, ns.append_complete, "/d/f", SUPER, inode_id=node.id,
            expected_blocks=((9, 9, 9),), blocks=old, length=100, checksum=b"",
            client_name="webhdfs-append-1")
    _, ops = ns.append_complete("/d/f", SUPER, inode_id=node.id, expected_blocks=old,
                                blocks=old + ((50, 20, 1001),), length=120, checksum=b"",
                                client_name="webhdfs-append-1")
    assert [type(op) for op in ops] == [edits.AppendOp, edits.CloseFileOp]
    assert (ns.tree.get("/d/f").length, ns.tree.get("/d/f").client_name) == (120, None)


def test_truncate_blocks_swaps_in_the_copied_block():
    ns = new_ns()
    mkdir(ns, "/d")
    write_file(ns, "/d/f", sizes=(100, 100))
    node = ns.tree.get("/d/f")
    old = node.blocks
    _, ops = ns.truncate_blocks("/d/f", SUPER, 150, inode_id=node.id, expected_blocks=old,
                                last_block=(77, 50, 1001), checksum=b"k",
                                client_name="webhdfs-truncate-1")
    assert [type(op) for op in ops] == [edits.TruncateOp, edits.AppendOp, edits.CloseFileOp]
    assert ns.tree.get("/d/f").blocks == (old[0], (77, 50, 1001))
    assert ns.truncate_blocks("/d/f", SUPER, 150, inode_id=node.id,
                              expected_blocks=ns.tree.get("/d/f").blocks, last_block=None,
                              checksum=b"", client_name="x") == (True, [])


# ----------------------------------------------------------------------------- reads

def names(nodes) -> list[str]:
    return [n.name for n in nodes]


def test_listing_pages_in_name_order(ns):
    for name in ("c", "a", "d", "b"):
        touch(ns, f"{HOME}/{name}", ALICE)
    assert names(ns.listing(HOME, ALICE)[0]) == ["a", "b", "c", "d"]
    page, remaining = ns.listing(HOME, ALICE, limit=2)
    assert (names(page), remaining) == (["a", "b"], 2)
    page, remaining = ns.listing(HOME, ALICE, start_after="b", limit=1)
    assert (names(page), remaining) == (["c"], 1)
    assert ns.listing(HOME, ALICE, start_after="bb") == ([ns.tree.get(HOME + "/c"),
                                                          ns.tree.get(HOME + "/d")], 0)
    assert ns.listing(HOME, ALICE, start_after="d") == ([], 0)


def test_listing_a_file_lists_the_file(ns):
    touch(ns, HOME + "/f", ALICE)
    assert ns.listing(HOME + "/f", ALICE, start_after="zzz") == ([ns.tree.get(HOME + "/f")], 0)


def test_listing_refusals(ns):
    refused(ns, errors.PathNotFoundError, ns.listing, HOME + "/nope", ALICE)
    attributes.set_permission(ns, HOME, 0o711, ALICE)
    refused(ns, errors.AccessControlError, ns.listing, HOME, BOB)


def test_status(ns):
    assert ns.status(HOME + "/", BOB) is ns.tree.get(HOME)
    refused(ns, errors.PathNotFoundError, ns.status, HOME + "/nope", BOB)
    refused(ns, errors.InvalidPathError, ns.status, "nope", BOB)


@pytest.mark.parametrize("target", [HOME + "/t", "/t"])
def test_concat_with_the_root_among_the_sources_is_refused_not_crashed(parts, target):
    """The root has no parent to check permissions on: a non-superuser's CONCAT naming it
    among the sources used to crash (AttributeError, a 500) instead of being refused."""
    write_file(parts, "/t", sizes=(10,), caller=SUPER)
    with pytest.raises(errors.NamenodeError):
        parts.concat(target, ["/", HOME + "/s1"], ALICE)
