"""FsShell: the ``hdfs dfs`` commands as operations on a ``WebHdfsClient``.

The namenode's WebHDFS ops are lower level than the shell's commands; what Hadoop's FsShell
checks on the client side is checked here, with the same outcomes:

* A relative path is under the user's home, ``/user/<user>``; ``.`` and ``..`` resolve and
  repeated slashes collapse. Output names absolute paths.
* ``mkdir`` without ``-p`` refuses an existing path and a missing parent (MKDIRS itself always
  creates parents); ``rm`` refuses a directory without ``-r`` and, with ``-f``, ignores a
  missing path; ``mv`` into an existing directory keeps the source's name, refuses an existing
  target and a missing target parent, and names the failure where RENAME would only answer
  false; ``touchz`` refuses a directory and a non-empty file.
* ``chmod``, ``chown``, ``getfattr``, ``getfacl``, ``setfacl`` with ``-R``, and ``setrep``
  always, walk the subtree (parent first, children sorted by name), as Hadoop's recursion
  does.
* ``createSnapshot``, ``deleteSnapshot`` and ``renameSnapshot`` refuse a path that is not a
  directory before asking the namenode; ``snapshotDiff`` takes ``.`` for the current tree and
  ``.snapshot/NAME`` for NAME, as ``hdfs snapshotDiff`` does.
* Arguments (a mode, OWNER[:GROUP], a replication, -n/-d/-x, an ACL spec and its flags) are
  checked before anything is sent: a bad one is ``BadArgumentError``.

Reads are generators, so the command prints as it goes; the first error stops the command.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator

from nnlite.client import errors
from nnlite.client.acls import AclChange
from nnlite.client.display import STAT_DEFAULT, Entry, Listed, is_dir
from nnlite.client.modes import parse_mode, permission_bits
from nnlite.client.webhdfs import WebHdfsClient, absolute

_OWNER = re.compile(r"\s*([-_./@a-zA-Z0-9]+)?(?::([-_./@a-zA-Z0-9]*))?\s*")
XATTR_ENCODINGS = ("text", "hex", "base64")


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def join(parent: str, name: str) -> str:
    return parent.rstrip("/") + "/" + name if name else parent


def split_stat_args(args: Iterable[str]) -> tuple[str, list[str]]:
    """``-stat [FORMAT] PATH...``: the first argument is the format if it holds a ``%``."""
    args = list(args)
    fmt = args.pop(0) if args and "%" in args[0] else STAT_DEFAULT
    if not args:
        raise errors.BadArgumentError("stat: give at least one PATH (after the FORMAT)")
    return fmt, args


def parse_owner(spec: str) -> tuple[str | None, str | None]:
    """``OWNER``, ``OWNER:GROUP``, ``:GROUP`` (ChownParser's characters)."""
    match = _OWNER.fullmatch(spec)
    if not match or not (match.group(1) or match.group(2)):
        raise errors.BadArgumentError(f"chown: {spec!r} is not OWNER[:GROUP] (letters, digits and "
                                 "- _ . / @)")
    return match.group(1) or None, match.group(2) or None


def snapshot_name(text: str) -> str:
    """SnapshotDiff.getSnapshotName: ``.`` is the current tree (""), ``.snapshot/NAME`` and
    ``/.snapshot/NAME`` are NAME."""
    if text == ".":
        return ""
    for prefix in (".snapshot/", "/.snapshot/"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


# ContentSummary fields and the part of each that only snapshots keep
SNAPSHOT_PARTS = (("length", "snapshotLength"), ("spaceConsumed", "snapshotSpaceConsumed"),
                  ("fileCount", "snapshotFileCount"),
                  ("directoryCount", "snapshotDirectoryCount"))

class FsShell:
    def __init__(self, client: WebHdfsClient):
        self.client = client

    # ------------------------------------------------------------------ paths

    def resolve(self, path: str) -> str:
        """Absolute, normalised; relative to ``/user/<user>``."""
        if not path:
            raise errors.BadArgumentError("an empty path")
        path = absolute(path, self.client.user)
        out: list[str] = []
        for part in path.split("/"):
            if part == "..":
                if out:
                    out.pop()
            elif part and part != ".":
                out.append(part)
        return "/" + "/".join(out)

    def _maybe_status(self, path: str) -> dict | None:
        try:
            return self.client.status(path)
        except errors.PathNotFoundError:
            return None

    def _status(self, path: str) -> dict:
        try:
            return self.client.status(path)
        except errors.PathNotFoundError as exc:
            raise errors.PathNotFoundError(f"`{path}': No such file or directory", path=path,
                                      status=exc.status) from exc

    def _children(self, path: str) -> list[tuple[str, dict]]:
        entries = [(join(path, st["pathSuffix"]), st) for st in self.client.list(path)]
        return sorted(entries, key=lambda e: e[0])

    def _walk(self, path: str, status: dict, recursive: bool) -> Iterator[tuple[str, dict]]:
        """``(path, status)`` first, then (with ``recursive``) its subtree, parents first."""
        yield path, status
        if recursive and is_dir(status):
            for child, st in self._children(path):
                yield from self._walk(child, st, True)

    def _require_parent(self, path: str) -> None:
        parent = parent_of(path)
        st = self._maybe_status(parent)
        if st is None:
            raise errors.PathNotFoundError(f"`{path}': No such file or directory (the parent "
                                      f"{parent} does not exist)", path=path)
        if not is_dir(st):
            raise errors.ParentNotDirectoryError(f"`{parent}': Is not a directory", path=parent)

    # ------------------------------------------------------------------ reads

    def ls(self, paths: Iterable[str], *, directory: bool = False,
           recursive: bool = False) -> Iterator[Listed | Entry]:
        for arg in paths or (".",):
            path = self.resolve(arg)
            st = self._status(path)
            if is_dir(st) and not directory:
                yield from self._ls_dir(path, recursive)
            else:
                yield Listed((st,), False)
                yield Entry(path, st)

    def _ls_dir(self, path: str, recursive: bool) -> Iterator[Listed | Entry]:
        children = self._children(path)
        yield Listed(tuple(st for _, st in children), not recursive and bool(children))
        for child, st in children:
            yield Entry(child, st)
            if recursive and is_dir(st):
                yield from self._ls_dir(child, True)

    def stat(self, paths: Iterable[str]) -> Iterator[Entry]:
        for arg in paths:
            path = self.resolve(arg)
            yield Entry(path, self._status(path))

    def du(self, paths: Iterable[str], *, summary: bool = False,
           exclude_snapshots: bool = False) -> Iterator[tuple[str, dict]]:
        """(path, ContentSummary) per argument (``summary``) or per child of a directory."""
        for arg in paths or (".",):
            path = self.resolve(arg)
            st = self._status(path)
            targets = ([child for child, _ in self._children(path)]
                       if is_dir(st) and not summary else [path])
            for target in targets:
                yield target, self._summary(target, exclude_snapshots)

    def count(self, paths: Iterable[str], *,
              exclude_snapshots: bool = False) -> Iterator[tuple[str, dict]]:
        for arg in paths:
            path = self.resolve(arg)
            self._status(path)
            yield path, self._summary(path, exclude_snapshots)

    def _summary(self, path: str, exclude_snapshots: bool) -> dict:
        """GETCONTENTSUMMARY; with ``exclude_snapshots`` less what only snapshots keep, as
        FsShell's ``-du -x`` and ``-count -x`` subtract the snapshot* fields."""
        summary = self.client.content_summary(path)
        if exclude_snapshots:
            for total, kept in SNAPSHOT_PARTS:
                summary[total] -= summary.get(kept, 0)
        return summary

    def getfattr(self, paths: Iterable[str], *, name: str | None = None, dump: bool = False,
                 encoding: str = "text", recursive: bool = False
                 ) -> Iterator[tuple[str, list[dict]]]:
        if bool(name) == bool(dump):
            raise errors.BadArgumentError("getfattr: give exactly one of -n NAME and -d")
        if encoding.lower() not in XATTR_ENCODINGS:
            choices = ", ".join(XATTR_ENCODINGS)
            raise errors.BadArgumentError(f"getfattr: -e must be one of {choices}")
        for arg in paths:
            path = self.resolve(arg)
            for p, _ in self._walk(path, self._status(path), recursive):
                yield p, self.client.xattrs(p, [name] if name else [], encoding.upper())

    def getfacl(self, paths: Iterable[str], *,
                recursive: bool = False) -> Iterator[tuple[str, dict]]:
        """(path, AclStatus) for each path, with ``recursive`` its subtree too."""
        for arg in paths:
            path = self.resolve(arg)
            for p, _ in self._walk(path, self._status(path), recursive):
                yield p, self.client.acl_status(p)

    # ------------------------------------------------------------------ mutations

    def mkdir(self, paths: Iterable[str], *, parents: bool = False) -> None:
        for arg in paths:
            path = self.resolve(arg)
            if not parents:
                if self._maybe_status(path) is not None:
                    raise errors.FileAlreadyExistsError(f"`{path}': File exists", path=path)
                self._require_parent(path)
            self.client.mkdirs(path)

    def rm(self, paths: Iterable[str], *, recursive: bool = False,
           force: bool = False) -> Iterator[str]:
        """Deletes each path; yields the ones deleted."""
        for arg in paths:
            path = self.resolve(arg)
            st = self._maybe_status(path)
            if st is None:
                if force:
                    continue
                raise errors.PathNotFoundError(f"`{path}': No such file or directory", path=path)
            if is_dir(st) and not recursive:
                raise errors.PathIsDirectoryError(f"`{path}': Is a directory (rm -r deletes a "
                                             "directory and everything in it)", path=path)
            if path == "/":
                raise errors.RemoteIOError("the root directory cannot be deleted", path=path)
            if not self.client.delete(path, recursive):
                raise errors.RemoteIOError(f"`{path}': not deleted (the namenode answered false)",
                                      path=path)
            yield path

    def mv(self, sources: list[str], dest: str) -> None:
        dst = self.resolve(dest)
        dst_st = self._maybe_status(dst)
        into = dst_st is not None and is_dir(dst_st)
        if len(sources) > 1 and not into:
            raise errors.PathIsNotDirectoryError(f"`{dst}': Is not a directory (moving several "
                                            "sources needs an existing directory)", path=dst)
        for arg in sources:
            src = self.resolve(arg)
            self._status(src)
            self._move(src, join(dst, src.rsplit("/", 1)[-1]) if into else dst)

    def _move(self, src: str, target: str) -> None:
        if target == src:
            return
        if target.startswith(src.rstrip("/") + "/"):
            raise errors.BadArgumentError(f"mv: cannot move `{src}' to `{target}': a subdirectory "
                                     "of itself")
        if self._maybe_status(target) is not None:
            raise errors.FileAlreadyExistsError(f"`{target}': File exists", path=target)
        self._require_parent(target)
        if not self.client.rename(src, target):
            raise errors.RemoteIOError(f"mv: `{src}' to `{target}': the namenode refused the "
                                  "rename (answered false)", path=src)

    def chmod(self, mode: str, paths: Iterable[str], *, recursive: bool = False) -> None:
        change = parse_mode(mode)
        for arg in paths:
            path = self.resolve(arg)
            for p, st in self._walk(path, self._status(path), recursive):
                self.client.set_permission(p, change.apply(permission_bits(st), is_dir(st)))

    def chown(self, spec: str, paths: Iterable[str], *, recursive: bool = False) -> None:
        owner, group = parse_owner(spec)
        for arg in paths:
            path = self.resolve(arg)
            for p, _ in self._walk(path, self._status(path), recursive):
                self.client.set_owner(p, owner, group)

    def setrep(self, replication: int, paths: Iterable[str]) -> Iterator[str]:
        """Sets the replication of every file at or under each path; yields each file set."""
        if replication < 1:
            raise errors.BadArgumentError(f"setrep: replication must be at least 1, not "
                                     f"{replication}")
        for arg in paths:
            path = self.resolve(arg)
            for p, st in self._walk(path, self._status(path), True):
                if is_dir(st):
                    continue
                if not self.client.set_replication(p, replication):
                    raise errors.RemoteIOError(f"Could not set replication for: {p}", path=p)
                yield p

    def touchz(self, paths: Iterable[str]) -> None:
        for arg in paths:
            path = self.resolve(arg)
            st = self._maybe_status(path)
            if st is not None and is_dir(st):
                raise errors.PathIsDirectoryError(f"`{path}': Is a directory", path=path)
            if st is not None and int(st.get("length", 0)):
                raise errors.FileAlreadyExistsError(f"`{path}': Not a zero-length file", path=path)
            if st is None:
                self._require_parent(path)
            self._create_empty(path, overwrite=st is not None)

    def _create_empty(self, path: str, *, overwrite: bool) -> None:
        try:
            self.client.create(path, b"", overwrite=overwrite)
        except errors.UnknownOperationError as exc:
            raise errors.UnknownOperationError(
                f"touchz needs file creation (WebHDFS CREATE), which the namenode at "
                f"{self.client.url} does not support yet", path=path, status=exc.status,
                java_class=exc.java_class) from exc

    def setfattr(self, paths: Iterable[str], *, name: str | None = None,
                 value: str | None = None, remove: str | None = None) -> None:
        if bool(name) == bool(remove):
            raise errors.BadArgumentError("setfattr: give exactly one of -n NAME and -x NAME")
        if remove and value is not None:
            raise errors.BadArgumentError("setfattr: -v VALUE goes with -n NAME, not with -x")
        for arg in paths:
            path = self.resolve(arg)
            if name:
                self.client.set_xattr(path, name, value)
            elif remove:            # exactly one of them was given (checked above)
                self.client.remove_xattr(path, remove)

    def setfacl(self, change: AclChange, paths: Iterable[str], *,
                recursive: bool = False) -> None:
        """``change`` at each path (with ``recursive`` its subtree, a file taking only the
        access entries; a path left nothing to send is not called)."""
        for arg in paths:
            path = self.resolve(arg)
            for p, st in self._walk(path, self._status(path), recursive):
                spec = change.spec(directory=is_dir(st), recursive=recursive)
                if spec != "":
                    self.client.change_acl(p, change.op, spec)

    # ------------------------------------------------------------------ snapshots

    def _directory(self, arg: str) -> str:
        """The resolved path of an existing directory, as FsShell's snapshot commands check."""
        path = self.resolve(arg)
        if not is_dir(self._status(path)):
            raise errors.PathIsNotDirectoryError(f"`{path}': Is not a directory", path=path)
        return path

    def create_snapshot(self, directory: str, name: str | None = None) -> str:
        """The new snapshot's path (``<dir>/.snapshot/<name>``)."""
        return self.client.create_snapshot(self._directory(directory), name or None)

    def delete_snapshot(self, directory: str, name: str) -> None:
        self.client.delete_snapshot(self._directory(directory), name)

    def rename_snapshot(self, directory: str, old: str, new: str) -> None:
        self.client.rename_snapshot(self._directory(directory), old, new)

    def allow_snapshot(self, directory: str, allow: bool = True) -> str:
        """``dfsadmin -allowSnapshot`` (``allow``) or ``-disallowSnapshot``; the path."""
        path = self.resolve(directory)
        (self.client.allow_snapshot if allow else self.client.disallow_snapshot)(path)
        return path

    def snapshot_diff(self, directory: str, older: str, newer: str) -> dict:
        """``hdfs snapshotDiff DIR FROM TO``: the SnapshotDiffReport."""
        return self.client.snapshot_diff_report(self.resolve(directory), snapshot_name(older),
                                                snapshot_name(newer))

    # ------------------------------------------------------------------ file contents

    def put(self, sources: list[str], dest: str, *, force: bool = False) -> None:
        """``-put [-f] LOCAL... DST``: files and directories (recursively) into the namespace,
        each file streamed from disk. DST is the target itself, or the existing directory the
        sources go into (required for several sources). An existing target needs ``force``."""
        dst = self.resolve(dest)
        dst_st = self._maybe_status(dst)
        into = dst_st is not None and is_dir(dst_st)
        if len(sources) > 1 and not into:
            if dst_st is None:
                raise errors.PathNotFoundError(f"`{dst}': No such file or directory", path=dst)
            raise errors.PathIsNotDirectoryError(f"`{dst}': Is not a directory", path=dst)
        for local in sources:
            if not os.path.lexists(local):
                raise errors.PathNotFoundError(f"`{local}': No such file or directory", path=local)
            name = os.path.basename(os.path.normpath(local))
            target = join(dst, name) if into else dst
            target_st = self._maybe_status(target) if into else dst_st
            if not into:
                self._require_parent(target)
            self._put_one(local, target, target_st, force)

    def _put_one(self, local: str, target: str, target_st: dict | None, force: bool) -> None:
        if os.path.isdir(local):
            if target_st is not None and not is_dir(target_st):
                raise errors.PathIsNotDirectoryError(f"`{target}': Is not a directory (the source "
                                                f"{local} is one)", path=target)
            if target_st is None:
                self.client.mkdirs(target)
            for name in sorted(os.listdir(local)):
                child = join(target, name)
                self._put_one(os.path.join(local, name), child, self._maybe_status(child)
                              if target_st is not None else None, force)
            return
        if target_st is not None:
            if is_dir(target_st):
                raise errors.PathIsDirectoryError(f"`{target}': Is a directory", path=target)
            if not force:
                raise errors.FileAlreadyExistsError(f"`{target}': File exists", path=target)
        try:   # only the open is a local error; the with below closes the handle
            handle = open(local, "rb")  # noqa: SIM115
        except OSError as exc:
            raise _local_error(local, exc) from exc
        with handle:
            self.client.create(target, handle, overwrite=force)

    def get(self, source: str, dest: str, *, force: bool = False) -> None:
        """``-get [-f] SRC LOCALDST``: a file (streamed into a temporary file beside the
        target, renamed at the end) or a directory, recursively. LOCALDST is the target, or
        an existing directory the source goes into."""
        src = self.resolve(source)
        st = self._status(src)
        target = dest
        if os.path.isdir(dest):
            target = os.path.join(dest, src.rsplit("/", 1)[-1] or "root")
        self._get_one(src, st, target, force)

    def _get_one(self, src: str, st: dict, target: str, force: bool) -> None:
        if is_dir(st):
            if os.path.lexists(target) and not os.path.isdir(target):
                raise errors.PathIsNotDirectoryError(f"`{target}': Is not a directory", path=target)
            try:
                os.makedirs(target, exist_ok=True)
            except OSError as exc:
                raise _local_error(target, exc) from exc
            for child, child_st in self._children(src):
                self._get_one(child, child_st, os.path.join(target, child.rsplit("/", 1)[-1]),
                              force)
            return
        if os.path.isdir(target):
            raise errors.PathIsDirectoryError(f"`{target}': Is a directory", path=target)
        if os.path.lexists(target) and not force:
            raise errors.FileAlreadyExistsError(f"`{target}': File exists", path=target)
        temp = target + "._COPYING_"
        try:
            with open(temp, "wb") as out:
                for chunk in self.client.read(src):
                    out.write(chunk)
            os.replace(temp, target)
        except OSError as exc:
            _unlink(temp)
            raise _local_error(target, exc) from exc
        except BaseException:
            _unlink(temp)
            raise

    def cat(self, paths: Iterable[str]) -> Iterator[bytes]:
        """The contents of each file, in chunks; a directory is an error."""
        for arg in paths:
            path = self.resolve(arg)
            st = self._status(path)
            if is_dir(st):
                raise errors.PathIsDirectoryError(f"`{path}': Is a directory", path=path)
            yield from self.client.read(path)

    def append_to_file(self, sources: list[str], dest: str, stdin=None) -> None:
        """``-appendToFile LOCAL... DST``: each source appended in turn (``-`` is ``stdin``,
        a binary stream); DST is created if missing."""
        dst = self.resolve(dest)
        st = self._maybe_status(dst)
        if st is not None and is_dir(st):
            raise errors.PathIsDirectoryError(f"`{dst}': Is a directory", path=dst)
        for local in sources:
            if local != "-" and not os.path.isfile(local):
                raise errors.PathNotFoundError(f"`{local}': No such file or directory"
                                          if not os.path.lexists(local) else
                                          f"`{local}': Is not a file", path=local)
        if st is None:
            self._require_parent(dst)
        exists = st is not None
        for local in sources:
            if local == "-":
                body = stdin
                self._append_or_create(dst, body, exists)
            else:
                try:   # only the open is a local error; the with below closes the handle
                    handle = open(local, "rb")  # noqa: SIM115
                except OSError as exc:
                    raise _local_error(local, exc) from exc
                with handle:
                    self._append_or_create(dst, handle, exists)
            exists = True

    def _append_or_create(self, dst: str, body, exists: bool) -> None:
        if exists:
            self.client.append(dst, body)
        else:
            self.client.create(dst, body, overwrite=False)


def _local_error(path: str, exc: OSError) -> errors.ClientError:
    """A local file problem, in the shell's classes and words."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError):
        return errors.PathNotFoundError(f"`{path}': No such file or directory", path=path)
    if isinstance(exc, PermissionError):
        return errors.AccessControlError(f"`{path}': Permission denied (local)", path=path)
    if isinstance(exc, IsADirectoryError):
        return errors.PathIsDirectoryError(f"`{path}': Is a directory", path=path)
    return errors.RemoteIOError(f"`{path}': {reason}", path=path)


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
