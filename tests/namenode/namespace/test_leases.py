"""leases.py, the lease table: one writer per path until its lease is silent too long, the
hard limit, leases that follow their files through renames and deletes, and the upload kind
a client name carries."""

from __future__ import annotations

import pytest

from nnlite.namenode import errors
from nnlite.namenode.namespace import delete, leases, rename
from tests.namenode.helpers import SUPER, mkdir, new_ns, touch


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_lease_refuses_a_second_writer_until_it_is_silent_too_long():
    clock = Clock()
    manager = leases.LeaseManager(soft_limit=60, hard_limit=600, clock=clock)
    revoked = []
    first = manager.acquire("/f", leases.CREATE, "10.0.0.1", revoked.append)
    assert first.holder == "webhdfs-create-1" and leases.upload_kind(first.holder) == "create"
    with pytest.raises(errors.LeaseError) as info:
        manager.acquire("/f", leases.APPEND, "10.0.0.2")
    assert "currently owned by webhdfs-create-1 on 10.0.0.1" in str(info.value)
    assert info.value.JAVA_CLASS.endswith("AlreadyBeingCreatedException")
    clock.now += 59
    manager.renew(first)
    clock.now += 59
    with pytest.raises(errors.LeaseError):
        manager.check_free("/f", "create")
    clock.now += 2
    second = manager.acquire("/f", leases.APPEND, "10.0.0.2")
    assert revoked and f"{second.holder} took over" in revoked[0]
    with pytest.raises(errors.LeaseExpiredError):
        first.check()
    manager.release(first)                          # a late release keeps the new holder
    assert manager.holder("/f") is second


def test_recording_leases_are_not_revoked_and_the_hard_limit_applies():
    clock = Clock()
    manager = leases.LeaseManager(soft_limit=1, hard_limit=10, clock=clock)
    busy = manager.acquire("/a", leases.CREATE)
    busy.recording = True
    idle = manager.acquire("/b", leases.CREATE)
    clock.now += 11
    with pytest.raises(errors.LeaseError):
        manager.acquire("/a", leases.CREATE)
    assert manager.expire() == 1 and idle.revoked and not busy.revoked
    assert manager.holder("/b") is None


def test_a_new_writer_is_admitted_through_one_door():
    """admit_writer, used by WebHDFS's CREATE/APPEND and RPC's create/append: a holder
    silent past the soft limit is revoked before the namespace's checks (recoverLeaseInternal);
    a holder that makes progress is named, also when the check failed for the file being
    under construction; a check's other error passes through."""
    clock = Clock()
    manager = leases.LeaseManager(soft_limit=60, hard_limit=600, clock=clock)
    revoked = []
    first = manager.acquire("/f", leases.CREATE, "10.0.0.1", revoked.append)
    checked = []

    def under_construction():
        checked.append(manager.holder("/f"))
        raise errors.LeaseError("/f is being written", path="/f")
    with pytest.raises(errors.LeaseError) as info:
        manager.admit_writer("/f", "append to", "10.0.0.2", under_construction)
    assert "Failed to append to /f for a new writer on 10.0.0.2" in str(info.value)
    assert "owned by webhdfs-create-1" in str(info.value)
    assert checked == [first] and not revoked

    def missing():
        raise errors.PathNotFoundError("/g does not exist", path="/g")
    with pytest.raises(errors.PathNotFoundError):
        manager.admit_writer("/g", "append to", "10.0.0.2", missing)

    clock.now += 61
    manager.admit_writer("/f", "create", "10.0.0.2", lambda: checked.append("ok"))
    assert checked[-1] == "ok" and "a new writer took over" in revoked[0]
    assert manager.holder("/f") is None and first.revoked


def test_a_lease_follows_its_file_through_the_ops_that_move_or_remove_it():
    """changeLease for renames (of the file or a directory above it), removeLeases for
    deletes and renames over; a path that only shares a prefix keeps its lease."""
    ns = new_ns()
    for d in ("/a/d", "/b", "/ab"):
        mkdir(ns, d)
    for f in ("/a/d/f", "/a/g", "/ab/f", "/b/old"):
        touch(ns, f)
    manager = leases.LeaseManager()
    held = {f: manager.acquire(f, leases.CREATE) for f in ("/a/d/f", "/a/g", "/ab/f", "/b/old")}
    manager.follow(rename.rename(ns, "/a/d", "/b/d", False, SUPER)[1])
    assert held["/a/d/f"].path == "/b/d/f" and manager.holder("/b/d/f") is held["/a/d/f"]
    assert manager.holder("/a/d/f") is None
    manager.follow(rename.rename_legacy(ns, "/a", "/b", SUPER)[1])          # into /b: /b/a
    assert manager.holder("/b/a/g") is held["/a/g"] and held["/a/g"].path == "/b/a/g"
    manager.follow(rename.rename(ns, "/b/a/g", "/b/old", True, SUPER)[1])   # over an open file
    assert manager.holder("/b/old") is held["/a/g"]
    manager.follow(delete.delete(ns, "/b", True, SUPER)[1])
    assert set(manager.leases) == {"/ab/f"} and manager.holder("/ab/f") is held["/ab/f"]
    manager.release(held["/a/g"])                                   # a late release: no harm
    assert set(manager.leases) == {"/ab/f"}


@pytest.mark.parametrize("name,kind", [("webhdfs-create-3", "create"),
                                       ("webhdfs-append-12", "append"),
                                       ("webhdfs-truncate-1", "truncate"),
                                       ("webhdfs-create-", None), ("DFSClient_1", None),
                                       ("webhdfs-rename-1", None), (None, None)])
def test_upload_kinds_are_read_from_client_names(name, kind):
    assert leases.upload_kind(name) == kind
