"""The catalog on paths inside a snapshot (``<dir>/.snapshot/<name>/...``), through the real
HTTP service: reads answer under exactly the rules WebHDFS applies to the same paths (the
traverse of the snapshottable directory as it is now, every inode below as the snapshot holds
it), and changes are refused as HDFS refuses any change in a snapshot.

``/acl/a`` is snapshottable and readable only through its ACL: carol is named in it, dave is
not. After snapshot ``s1`` a bad rollback takes the live checkpoint back to batch 0 and closes
it to carol, so only the snapshot still holds batches 1 and 2 where she may read them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client import errors as client_errors
from nnlite.client.webhdfs import WebHdfsClient
from tests.catalog.remote import USER, running, share, write_checkpoint
from tests.servers import ROOT

LIVE, Q2 = "/acl/a/ckpt", "/acl/a/q2"
SNAP, SNAP_Q2 = "/acl/a/.snapshot/s1/ckpt", "/acl/a/.snapshot/s1/q2"
CAROL_ACL = "user:carol:r-x,group::---,other::---,mask::r-x"
ACL = ",".join([f"user::rwx,{CAROL_ACL}"] + [f"default:{e}" for e in
                                            f"user::rwx,{CAROL_ACL}".split(",")])


@pytest.fixture(scope="module")
def namenode(start_module_namenode):
    with running(start_module_namenode, "nnlite.catalog.quiet=0") as (nn, root, cat):
        root.mkdirs("/acl/a")
        root.set_permission("/acl", 0o755)
        root._call("PUT", "/acl/a", "SETACL", aclspec=ACL)
        for base in (LIVE, Q2):
            write_checkpoint(root, base, 3)
            share(root, base, mode="750")            # the mask lets carol's r-x through
        root.set_permission(f"{Q2}/commits/1", 0o600)
        root.allow_snapshot("/acl/a")
        root.create_snapshot("/acl/a", "s1")
        cat.rollback(LIVE, 0)                        # the bad rollback ...
        root.set_permission(LIVE, 0o700)             # ... and the live copy closed to carol
        yield nn


def as_user(nn, user: str):
    return CatalogClient(nn.url, user), WebHdfsClient(nn.url, user)


READS = {
    "show": lambda c, p: c.show(p)["lastBatch"],
    "validate": lambda c, p: tuple(map(c.validate(p).get, ("restorable", "lastBatch"))),
    "latest": lambda c, p: c.latest(p)["latest"],
}


@pytest.mark.parametrize("read", sorted(READS))
def test_a_reader_in_the_acl_reads_the_checkpoint_as_the_snapshot_holds_it(namenode, read):
    catalog, hdfs = as_user(namenode, "carol")
    with catalog, hdfs:
        assert READS[read](catalog, SNAP) == {"show": 2, "validate": (True, 2),
                                              "latest": 2}[read]
        assert [s["pathSuffix"] for s in hdfs.list(f"{SNAP}/commits")] == ["0", "1", "2"]
        # the live checkpoint is closed to her now, to WebHDFS and to the catalog alike
        for call in (lambda: READS[read](catalog, LIVE), lambda: hdfs.list(LIVE)):
            with pytest.raises(client_errors.AccessControlError,
                               match=f'user=carol, access=READ_EXECUTE, inode="{LIVE}"'):
                call()


def test_ls_inside_a_snapshot_lists_its_checkpoints_by_their_snapshot_paths(namenode):
    catalog, _ = as_user(namenode, "carol")
    with catalog:
        rows = catalog.ls("/acl/a/.snapshot/s1")
    assert [(r["path"], r["kind"], r["lastBatch"], r["health"]) for r in rows] == [
        (SNAP, "streaming", 2, "ok"), (SNAP_Q2, "streaming", 2, "ok")]


@pytest.mark.parametrize("read", sorted(READS) + ["ls"])
def test_a_user_outside_the_acl_is_refused_as_webhdfs_refuses_him(namenode, read):
    catalog, hdfs = as_user(namenode, "dave")
    denied = 'user=dave, access=EXECUTE, inode="/acl/a"'
    with catalog, hdfs:
        with pytest.raises(client_errors.AccessControlError, match=denied):
            hdfs.list(SNAP)
        with pytest.raises(client_errors.AccessControlError, match=denied):
            catalog.ls(SNAP) if read == "ls" else READS[read](catalog, SNAP)


@pytest.mark.parametrize("read", sorted(READS))
def test_a_log_file_the_snapshot_keeps_closed_is_named_by_its_snapshot_path(namenode, read):
    catalog, hdfs = as_user(namenode, "carol")
    denied = f'user=carol, access=READ, inode="{SNAP_Q2}/commits/1"'
    with catalog, hdfs:
        with pytest.raises(client_errors.AccessControlError, match=denied):
            b"".join(hdfs.read(f"{SNAP_Q2}/commits/1"))
        with pytest.raises(client_errors.AccessControlError, match=denied):
            READS[read](catalog, SNAP_Q2)


CHANGES = {
    "retain": lambda c: c.retain(SNAP, 1),
    "rollback": lambda c: c.rollback(SNAP, 1),
    "pin": lambda c: c.pin(SNAP, 1),
    "unpin": lambda c: c.unpin(SNAP, 1),
    "gc": lambda c: c.gc(SNAP),
    "gc of the snapshot": lambda c: c.gc("/acl/a/.snapshot/s1"),
    "begin": lambda c: c.begin(SNAP),
    "complete": lambda c: c.complete(SNAP, 1),
    "abort": lambda c: c.abort(SNAP, 1),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changes_in_a_snapshot_are_refused_as_read_only_even_for_a_superuser(namenode,
                                                                             change):
    catalog, _ = as_user(namenode, USER)
    with catalog:
        with pytest.raises(client_errors.RemoteError,
                           match="Modification on a read-only snapshot is disallowed") as info:
            CHANGES[change](catalog)
        assert info.value.exception == "SnapshotAccessControlException"
        if change != "gc of the snapshot":
            assert f"is in snapshot s1 of /acl/a; outside the snapshot it is {LIVE}" in str(
                info.value)
        assert catalog.show(SNAP)["lastBatch"] == 2


def test_the_cli_shows_a_checkpoint_in_a_snapshot(namenode):
    done = subprocess.run([sys.executable, "-m", "nnlite.cli", "catalog", "show", SNAP,
                           "--namenode", namenode.url, "--user", "carol"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{SNAP}: Structured Streaming checkpoint")
