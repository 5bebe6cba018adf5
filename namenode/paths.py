"""Path validation: every path that enters the namespace passes ``split`` first.

A valid path is absolute, has no empty component (a single trailing slash is tolerated and
dropped, as Hadoop's ``Path`` does), no ``.`` or ``..``, no ``:`` (HDFS rejects it in names),
no NUL, no component over ``MAX_COMPONENT_BYTES`` in UTF-8 and at most ``MAX_PATH_CHARS``
characters in all.
"""

from __future__ import annotations

from namenode.errors import InvalidPathError

MAX_PATH_CHARS = 8000
MAX_COMPONENT_BYTES = 255


def split(path: str) -> tuple[str, ...]:
    """Return the components of a valid absolute path ("/" has none)."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidPathError(f"Invalid path name {path!r}: not an absolute path", path=path)
    if len(path) > MAX_PATH_CHARS:
        raise InvalidPathError(f"Invalid path name: longer than {MAX_PATH_CHARS} characters",
                               path=path[:100] + "...")
    if path == "/":
        return ()
    body = path[1:-1] if path.endswith("/") else path[1:]
    parts = tuple(body.split("/"))
    for part in parts:
        if not part or part == "." or part == ".." or ":" in part or "\0" in part:
            raise InvalidPathError(
                f"Invalid path name {path!r}: component {part!r} is not allowed "
                "(empty, '.', '..', or containing ':' or NUL)", path=path)
        if len(part) > MAX_COMPONENT_BYTES // 4 and len(part.encode("utf-8", "surrogatepass")) \
                > MAX_COMPONENT_BYTES:
            raise InvalidPathError(
                f"Invalid path name {path!r}: component longer than {MAX_COMPONENT_BYTES} bytes",
                path=path)
    return parts


def join(parts) -> str:
    return "/" + "/".join(parts)


def normalize(path: str) -> str:
    return join(split(path))


def is_ancestor(ancestor: tuple, path: tuple) -> bool:
    """True when ``ancestor`` is ``path`` or one of its ancestors (by components)."""
    return len(ancestor) <= len(path) and path[:len(ancestor)] == ancestor
