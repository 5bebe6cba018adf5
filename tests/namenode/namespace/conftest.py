"""The namespace most request tests start from: ``ns``, with /home/alice (alice:staff 755) and
/shared (bob:staff 1777, sticky). A test module with a fixture of its own named ``ns`` uses
that one instead."""

import pytest

from tests.namenode.helpers import HOME, check_invariants, mkdir, new_ns


@pytest.fixture
def ns():
    """/home/alice (alice:staff 755) and /shared (bob:staff 1777, sticky)."""
    ns = new_ns()
    mkdir(ns, HOME, owner="alice", group="staff")
    mkdir(ns, "/shared", 0o1777, owner="bob", group="staff")
    yield ns
    check_invariants(ns)
