"""The read path's hand-built FileStatus JSON is byte for byte what the encoder makes of
``file_status`` (Hadoop's JsonUtil shape), for every kind of inode and every odd string."""

from __future__ import annotations

import json

import pytest

from nnlite.namenode.http.webhdfs_json import (
    dumps,
    file_status,
    file_status_json,
    file_statuses_json,
)
from nnlite.namenode.namespace.inode import INodeDirectory, INodeFile

NAMES = ["", "part-00000", "a b", 'quo"te', "back\\slash", "tab\there", "nl\nx", "ümlaut",
         "日本", "emoji-\U0001f600", "\x7f\x01"]


def directory(name="d", owner="bench", group="supergroup", permission=0o755, children=0,
              mtime=1795477393426, atime=None):
    node = INodeDirectory(16400, None, name, permission, owner, group, mtime, atime)
    for i in range(children):
        node.children[f"c{i}"] = INodeDirectory(16401 + i, node, f"c{i}", 0o755, owner, group, 1)
    return node


def file(name="f", owner="bench", group="supergroup", permission=0o644, length=12345,
         replication=3, block_size=128 << 20, atime=1795477393000):
    return INodeFile(16500, None, name, permission, owner, group, 1795477393426, atime,
                     replication, block_size, length)


CASES = [
    directory(), directory(children=3), directory(permission=0o1777),
    directory(permission=0o7777), directory(atime=5), file(), file(length=0, replication=1),
    file(permission=0o1644), file(atime=0), file(length=(1 << 62), block_size=1),
    *[directory(owner=n, group=n) for n in NAMES], *[file(owner=n, group=n) for n in NAMES],
]


@pytest.mark.parametrize("node", CASES, ids=lambda n: f"{type(n).__name__}-{n.owner!r}")
@pytest.mark.parametrize("suffix", ["", "x", *NAMES])
def test_file_status_json_is_the_encoders_bytes(node, suffix):
    assert file_status_json(node, suffix).encode() == dumps(file_status(node, suffix))


def test_a_time_that_is_not_an_int_takes_the_encoders_path():
    node = file()
    node.mtime = 1.5
    assert file_status_json(node, "").encode() == dumps(file_status(node, ""))


@pytest.mark.parametrize("count", [0, 1, 3])
def test_listing_wrapper(count):
    nodes = [file(name=f"p{i}") for i in range(count)]
    wrapped = file_statuses_json([file_status_json(n, n.name) for n in nodes])
    expected = {"FileStatuses": {"FileStatus": [file_status(n, n.name) for n in nodes]}}
    assert wrapped.encode() == dumps(expected)
    assert json.loads(wrapped) == expected
