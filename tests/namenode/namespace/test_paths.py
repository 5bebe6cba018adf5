"""Path validation: a table of valid and invalid paths, plus join/normalize/is_ancestor."""

import pytest

from nnlite.namenode.errors import InvalidPathError
from nnlite.namenode.namespace import paths

LONG_NAME = "n" * paths.MAX_COMPONENT_BYTES

VALID = [
    ("root", "/", ()),
    ("one component", "/a", ("a",)),
    ("nested", "/a/b/c", ("a", "b", "c")),
    ("trailing slash dropped", "/a/b/", ("a", "b")),
    ("dots inside a name", "/a.b/..c/d..", ("a.b", "..c", "d..")),
    ("spaces and unicode", "/with space/数据", ("with space", "数据")),
    ("component of exactly the byte limit", "/" + LONG_NAME, (LONG_NAME,)),
    ("multi-byte component at the limit", "/" + "é" * 127, ("é" * 127,)),
    ("path of exactly the char limit", "/" + "/".join(["x" * 99] * 80),
     tuple(["x" * 99] * 80)),
]

INVALID = [
    ("empty string", ""),
    ("relative", "a/b"),
    ("relative dot", "./a"),
    ("not a str", b"/a"),
    ("None", None),
    ("double slash", "/a//b"),
    ("leading double slash", "//a"),
    ("two trailing slashes", "/a//"),
    ("only slashes", "//"),
    ("dot", "/a/./b"),
    ("dot at the end", "/a/."),
    ("dotdot", "/a/../b"),
    ("dotdot at the end", "/a/.."),
    ("colon", "/a:b"),
    ("colon alone", "/a/:"),
    ("NUL", "/a\0b"),
    ("component one byte too long", "/" + "n" * (paths.MAX_COMPONENT_BYTES + 1)),
    ("multi-byte component over the limit", "/" + "é" * 128),
    ("4-byte characters over the limit", "/" + "😀" * 64),
    ("lone surrogate", "/a/\udcff"),
    ("lone surrogate in a long component", "/" + "x" * 100 + "\ud800"),
    ("path one char too long", "/" + "/".join(["x" * 99] * 80) + "y"),
]


@pytest.mark.parametrize("path, parts", [v[1:] for v in VALID], ids=[v[0] for v in VALID])
def test_valid_paths_split_into_components(path, parts):
    assert paths.split(path) == parts


@pytest.mark.parametrize("path", [v[1] for v in INVALID], ids=[v[0] for v in INVALID])
def test_invalid_paths_raise_invalid_path_error(path):
    with pytest.raises(InvalidPathError) as info:
        paths.split(path)
    assert info.value.exception_name == "InvalidPathException"


def test_the_char_limit_table_entries_sit_on_the_limit():
    assert len(VALID[-1][1]) == paths.MAX_PATH_CHARS
    assert len(INVALID[-1][1]) == paths.MAX_PATH_CHARS + 1


def test_error_names_the_path():
    with pytest.raises(InvalidPathError) as info:
        paths.split("/a/../b")
    assert info.value.path == "/a/../b"
    assert "'..'" in str(info.value)


@pytest.mark.parametrize("path, normal", [("/", "/"), ("/a/", "/a"), ("/a/b", "/a/b")])
def test_normalize(path, normal):
    assert paths.normalize(path) == normal
    assert paths.join(paths.split(path)) == normal


@pytest.mark.parametrize("ancestor, path, expected", [
    ((), ("a",), True),
    (("a",), ("a",), True),
    (("a",), ("a", "b"), True),
    (("a", "b"), ("a",), False),
    (("a",), ("ab",), False),
    (("a",), ("b", "a"), False),
])
def test_is_ancestor_compares_components_not_strings(ancestor, path, expected):
    assert paths.is_ancestor(ancestor, path) is expected
