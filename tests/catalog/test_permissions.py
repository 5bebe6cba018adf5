"""The catalog answers only what the caller could see or do through WebHDFS: every read and
change as the owner (alice), another user (bob) and a superuser (tester), on a private tree
(``/home/alice``, 700) and a shared one (``/shared``, 755 but owned by alice)."""

from __future__ import annotations

import pytest

from nnlite.catalog.client import CatalogClient
from nnlite.client import errors as client_errors
from nnlite.client.webhdfs import WebHdfsClient
from tests.catalog.remote import USER, running, share, write_checkpoint

PRIVATE, SHARED, JOB = "/home/alice/q", "/shared/q", "/home/alice/jobs/etl"
USERS = ("alice", "bob", USER)


@pytest.fixture
def namenode(start_namenode):
    with running(start_namenode, "nnlite.catalog.quiet=0", "nnlite.catalog.gc.tmp-ttl=0") as parts:
        nn, root, _ = parts
        for home, mode in (("/home/alice", 0o700), ("/shared", 0o755)):
            root.mkdirs(home)
            root.set_owner(home, "alice", None)
            root.set_permission(home, mode)
        with WebHdfsClient(nn.url, "alice") as alice, CatalogClient(nn.url, "alice") as cat:
            for base in (PRIVATE, SHARED):
                write_checkpoint(alice, base, 3)
                alice.create(f"{base}/offsets/.3.1f2e.tmp", b"left by a killed query")
            share(alice, "/shared")
            alice.set_permission(f"{SHARED}/commits/1", 0o600)
            write_checkpoint(alice, "/shared/q2", 2)
            share(alice, "/shared/q2")
            alice.set_permission("/shared/q2/state", 0o700)
            job = cat.begin(JOB)
            alice.create(f"{job['path']}/_SUCCESS", b"")
            cat.complete(JOB, job["id"])
        yield nn


def as_user(nn, user: str) -> CatalogClient:
    return CatalogClient(nn.url, user)


def listed(nn, user: str) -> dict:
    with as_user(nn, user) as catalog:
        return {row["path"]: row["health"] for row in catalog.ls("/")}


def test_ls_finds_only_what_the_caller_can_list(namenode):
    everything = {PRIVATE: "ok", SHARED: "ok", JOB: "ok", "/shared/q2": "ok"}
    assert listed(namenode, "alice") == everything
    assert listed(namenode, USER) == everything
    # bob cannot list /home/alice; he sees q2 in /shared's listing but not inside its state/
    assert listed(namenode, "bob") == {SHARED: "ok", "/shared/q2": "denied"}


@pytest.mark.parametrize("read", ["show", "validate", "latest"])
def test_reads_of_a_private_checkpoint(namenode, read):
    for user in ("alice", USER):
        with as_user(namenode, user) as catalog:
            getattr(catalog, read)(PRIVATE)
    with as_user(namenode, "bob") as bob, pytest.raises(client_errors.AccessControlError,
                                                        match="user=bob, access=EXECUTE"):
        getattr(bob, read)(PRIVATE)


@pytest.mark.parametrize("read", ["show", "validate", "latest"])
def test_a_log_file_others_may_not_read_is_not_shown(namenode, read):
    with as_user(namenode, "bob") as bob, pytest.raises(
            client_errors.AccessControlError,
            match=f'user=bob, access=READ, inode="{SHARED}/commits/1"'):
        getattr(bob, read)(SHARED)
    with as_user(namenode, "alice") as alice:
        getattr(alice, read)(SHARED)


def test_gc_dry_run_names_only_what_the_caller_may_remove(namenode):
    def planned(user):
        with as_user(namenode, user) as catalog:
            return sorted(p["path"] for p in catalog.gc("/", dry_run=True)["removed"])
    temps = [f"{PRIVATE}/offsets/.3.1f2e.tmp", f"{SHARED}/offsets/.3.1f2e.tmp"]
    assert planned("alice") == planned(USER) == temps
    assert planned("bob") == []       # one he cannot list, one he cannot delete


CHANGES = {
    "retain": lambda c, p: c.retain(p, 1),
    "rollback": lambda c, p: c.rollback(p, 1),
    "pin": lambda c, p: c.pin(p, 1),
    "unpin": lambda c, p: c.unpin(p, 1),
    "gc": lambda c, p: c.gc(p),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("path", [PRIVATE, SHARED])
def test_others_may_change_nothing(namenode, change, path):
    with as_user(namenode, "alice") as alice:
        before = alice.show(path)
    with as_user(namenode, "bob") as bob:
        if change == "gc":      # gc removes only what the caller may: nothing of alice's
            assert bob.gc(path if path == SHARED else "/shared")["removed"] == []
        else:
            with pytest.raises(client_errors.AccessControlError, match="user=bob"):
                CHANGES[change](bob, path)
    with as_user(namenode, "alice") as alice:
        assert alice.show(path) == before


@pytest.mark.parametrize("user", ["alice", USER])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_owner_and_a_superuser_may_change(namenode, user, change):
    with as_user(namenode, user) as catalog:
        CHANGES[change](catalog, PRIVATE)


def test_job_checkpoints_of_others(namenode):
    with as_user(namenode, "bob") as bob:
        for call in (lambda: bob.begin(JOB), lambda: bob.latest(JOB),
                     lambda: bob.show(JOB), lambda: bob.retain(JOB, 1),
                     lambda: bob.pin(JOB, 1), lambda: bob.complete(JOB, 1),
                     lambda: bob.abort(JOB, 1)):
            with pytest.raises(client_errors.AccessControlError, match="user=bob"):
                call()
    with as_user(namenode, USER) as root:
        assert root.latest(JOB)["latest"]["id"] == 1
        assert root.begin(JOB)["id"] == 2
