"""Path validation: every path that enters the namespace passes ``split`` first.

A valid path is absolute, has no empty component (a single trailing slash is tolerated and
dropped, as Hadoop's ``Path`` does), no ``.`` or ``..``, no ``:`` (HDFS rejects it in names),
no NUL, no lone surrogate (it has no UTF-8 form), no component over ``MAX_COMPONENT_BYTES`` in
UTF-8 and at most ``MAX_PATH_CHARS`` characters in all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nnlite.namenode.errors import InvalidPathError

MAX_PATH_CHARS = 8000
MAX_COMPONENT_BYTES = 255


# An empty component, a "." or ".." component, ':' or NUL anywhere. Substring tests run
# first because they cost far less than the regex, which only "/." (a dot file) needs.
_BAD = re.compile(r"//|/\.\.?(?:/|$)|[:\x00]")


def split(path: str) -> tuple[str, ...]:
    """Return the components of a valid absolute path ("/" has none)."""
    if type(path) is not str or path[:1] != "/":
        raise InvalidPathError(f"Invalid path name {path!r}: not an absolute path", path=path)
    size = len(path)
    if size == 1:
        return ()
    if size > MAX_PATH_CHARS:
        raise InvalidPathError(f"Invalid path name: longer than {MAX_PATH_CHARS} characters",
                               path=path[:100] + "...")
    if ("//" in path or ":" in path or "\0" in path) or ("/." in path and _BAD.search(path)):
        _explain(path)
    if not path.isascii():
        _check_utf8(path)
    parts = tuple((path[1:-1] if path[-1] == "/" else path[1:]).split("/"))
    if size > MAX_COMPONENT_BYTES // 4:
        _check_lengths(path, parts)
    return parts


def _explain(path: str) -> None:
    body = path[1:-1] if path.endswith("/") and not path.endswith("//") else path[1:]
    for part in body.split("/"):
        if not part or part in (".", "..") or ":" in part or "\0" in part:
            raise InvalidPathError(
                f"Invalid path name {path!r}: component {part!r} is not allowed "
                "(empty, '.', '..', or containing ':' or NUL)", path=path)
    raise InvalidPathError(f"Invalid path name {path!r}", path=path)


def _check_utf8(path: str) -> None:
    """A lone surrogate (say from an undecodable command-line byte) has no UTF-8 form: it
    could be applied to the tree but neither logged nor saved."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidPathError(f"Invalid path name {path!r}: not valid UTF-8",
                               path=path.encode("utf-8", "replace").decode()) from exc


def _check_lengths(path: str, parts: tuple) -> None:
    for part in parts:
        if len(part) > MAX_COMPONENT_BYTES // 4 and \
                len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
            raise InvalidPathError(
                f"Invalid path name {path!r}: component longer than {MAX_COMPONENT_BYTES} bytes",
                path=path)


def join(parts: Iterable[str]) -> str:
    return "/" + "/".join(parts)


def normalize(path: str) -> str:
    return join(split(path))


def is_ancestor(ancestor: tuple, path: tuple) -> bool:
    """True when ``ancestor`` is ``path`` or one of its ancestors (by components)."""
    return len(ancestor) <= len(path) and path[:len(ancestor)] == ancestor
