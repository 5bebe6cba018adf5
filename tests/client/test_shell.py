"""shell.py: FsShell's path resolution under the user's home, and its argument parsing."""

from __future__ import annotations

import pytest

from nnlite.client import errors
from nnlite.client.shell import FsShell, parse_owner, split_stat_args


class _User:
    user = "carol"


@pytest.mark.parametrize("path, absolute", [
    ("/a/b", "/a/b"), ("/a//b/", "/a/b"), ("/", "/"), ("x", "/user/carol/x"),
    (".", "/user/carol"), ("../dave/y", "/user/dave/y"), ("/a/./b/../c", "/a/c"),
    ("/..", "/"),
])
def test_resolve(path, absolute):
    assert FsShell(_User()).resolve(path) == absolute


def test_parse_owner_and_stat_args():
    assert parse_owner("alice") == ("alice", None)
    assert parse_owner("alice:staff") == ("alice", "staff")
    assert parse_owner(":staff") == (None, "staff")
    assert parse_owner("alice:") == ("alice", None)
    for bad in ("", ":", "a b", "a:b:c", "a;b"):
        with pytest.raises(errors.BadArgumentError):
            parse_owner(bad)
    assert split_stat_args(["/a"]) == ("%y", ["/a"])
    assert split_stat_args(["%n", "/a", "/b"]) == ("%n", ["/a", "/b"])
    with pytest.raises(errors.BadArgumentError):
        split_stat_args(["%n"])
