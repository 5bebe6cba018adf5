"""``/.reserved``: the paths HDFS resolves before it looks a path up (FSDirectory.resolvePath).

* ``/.reserved/.inodes/<id>[/<rest>]`` names the inode whose id is ``<id>`` (the ``fileId``
  of HdfsFileStatus and of GETFILESTATUS), wherever it is now: it resolves to that inode's
  path, then ``<rest>`` (``resolveDotInodesPath``). ``/.reserved/.inodes/<id>/..`` is its
  parent (HDFS's one ``..``, for NFS). This is what ``DistributedFileSystem.getPathHandle``
  builds (``DFSUtilClient.makePathFromFileId``) for a handle that may follow a rename.
* ``/.reserved/raw[/<rest>]`` is ``/<rest>``: the raw bytes of a file in an encryption zone;
  with no encryption zone, as here, the same inode. A caller who is not a superuser may read
  through it; any other operation asks for the superuser (FSDirectory.resolvePath's switch on
  the DirOp, ``checkSuperuserPrivilege``). ``raw.`` xattrs are seen and set through it only
  (XAttrPermissionFilter, ``is_raw``).
* ``/.reserved`` itself stats as ``DOT_RESERVED_STATUS`` (a directory, mode 1770, no owner)
  and lists ``.inodes`` and ``raw`` (``FSDirectory.createReservedStatuses``: directories of
  mode 770, group the supergroup); every other name under it, ``/.reserved/.inodes`` included,
  does not exist, and no inode may take the name ``.reserved`` at the root
  (``FSDirectory.addLastINode``).

Nothing here changes the tree; ``resolve`` only reads it (``Tree.inode``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nnlite.namenode import errors
from nnlite.namenode.namespace.inode import ROOT_INODE_ID, INode, INodeDirectory
from nnlite.namenode.namespace.permission import Caller

if TYPE_CHECKING:
    from nnlite.namenode.namespace.tree import Tree

DOT_RESERVED = ".reserved"                   # HdfsConstants.DOT_RESERVED_STRING
DOT_INODES = ".inodes"                       # HdfsConstants.DOT_INODES_STRING
RAW = "raw"
PREFIX = "/" + DOT_RESERVED                  # FSDirectory.DOT_RESERVED_PATH_PREFIX
INODES_PREFIX = f"{PREFIX}/{DOT_INODES}/"
RESERVED_ID = -1                             # HdfsFileStatus.Builder's fileId
RESERVED_MODE = 0o1770                       # DOT_RESERVED_STATUS
CHILD_MODE = 0o770                           # createReservedStatuses
_LONG = (-(1 << 63), (1 << 63) - 1)


def inode_path(inode_id: int) -> str:
    """``DFSUtilClient.makePathFromFileId``: the path naming an inode by its id."""
    return f"{INODES_PREFIX}{inode_id}"


def is_reserved(path: object) -> bool:
    """``/.reserved`` or a path under it (the only paths ``resolve`` rewrites)."""
    return type(path) is str and path.startswith(PREFIX) and (
        len(path) == len(PREFIX) or path[len(PREFIX)] == "/")


def is_raw(path: object) -> bool:
    """``/.reserved/raw`` or a path under it (FSDirectory.isReservedRawName): the paths
    through which ``raw.`` xattrs are seen and set (XAttrPermissionFilter)."""
    return type(path) is str and path.startswith(PREFIX) and \
        path[len(PREFIX):len(PREFIX) + 5] in (f"/{RAW}", f"/{RAW}/")


def resolve(tree: Tree, path: str, caller: Caller, write: bool) -> str:
    """``path`` as FSDirectory.resolvePath rewrites it (``is_reserved`` paths only): an
    inode path becomes the inode's path, a raw path loses its prefix; any other path, and a
    ``/.reserved`` path that names nothing, is returned as it is. ``write``: the operation is
    not a read (the DirOp is not READ), which a raw path allows the superuser only.

    Raises FileNotFoundException for an inode path whose id is no number ("Invalid inode
    path: ...") or names no inode in the tree ("File for given inode path does not exist:
    ..."), with the path as HDFS writes it (``DFSUtil.byteArray2PathString``)."""
    parts = path[1:].rstrip("/").split("/")
    if parts[0] != DOT_RESERVED:          # "/.reservedX/...": an ordinary name
        return path
    if len(parts) < 3 and not (len(parts) == 2 and parts[1] == RAW):
        return path
    if parts[1] == DOT_INODES:
        return _resolve_inode(tree, parts, path)
    if parts[1] != RAW:
        return path
    if write and not caller.superuser:
        raise errors.AccessControlError(
            f"Access denied for user {caller.user}. Superuser privilege is required",
            path=path)
    if len(parts) == 3 and parts[2] == DOT_RESERVED:
        return path                           # /.reserved/raw/.reserved: not stripped
    return "/" + "/".join(parts[2:])


def _resolve_inode(tree: Tree, parts: list[str], path: str) -> str:
    """FSDirectory.resolveDotInodesPath: ``parts`` is ``.reserved``, ``.inodes``, the id,
    and what follows."""
    shown = "/" + "/".join(parts)
    inode_id = _parse_long(parts[2])
    if inode_id is None:
        raise errors.PathNotFoundError(f"Invalid inode path: {shown}", path=path)
    if inode_id == ROOT_INODE_ID and len(parts) == 3:
        return "/"
    found = _locate(tree, inode_id)
    if found is None:
        raise errors.PathNotFoundError(
            f"File for given inode path does not exist: {shown}", path=path)
    base, parent = found
    if len(parts) > 3 and parts[3] == "..":
        return parent
    rest = parts[3:]
    return base.rstrip("/") + "/" + "/".join(rest) if rest else base


def _locate(tree: Tree, inode_id: int) -> tuple[str, str] | None:
    """The path HDFS's INodeMap gives the inode ``inode_id`` (``INode.getPathComponents``,
    by its parent links), and its parent's path ("/" for the root's children and the
    root): an inode of the tree, or one a snapshot keeps after it left the tree
    (``_kept``); None when HDFS has no such inode."""
    node = tree.inode(inode_id)
    if node is not None:
        parent = node.parent
        return node.path(), "/" if parent is None or parent.parent is None else parent.path()
    return _kept(tree, inode_id)


def _kept(tree: Tree, inode_id: int) -> tuple[str, str] | None:
    """An inode removed from the tree that a snapshot keeps: HDFS leaves it in its INodeMap
    with its parent link (FSDirDeleteOp.unprotectedDelete cleans, not destroys, what the
    latest snapshot holds; INodeDirectory.removeChild keeps the link), so its inode path
    names its old place under its old parent as that parent is now -- which may hold a
    newer inode of that name, or nothing. An inode made after the newest snapshot that saw
    its place was destroyed, and is not found. The registry's diffs list what each
    directory removed (``snapshot.Diff.deleted``), subtrees whole."""
    registry = tree.snapshots
    for diffs in list(registry.diffs.values()):
        for diff in diffs:
            if not diff.deleted:
                continue
            newest = registry.by_id[diff.snap].max_inode_id if diff.snap in \
                registry.by_id else 0
            for child in diff.deleted.values():
                below = _below(child, inode_id, newest)
                if below is None:
                    continue
                where = _locate(tree, diff.node.id) if diff.node.id != inode_id else None
                if where is None:
                    return None
                top = where[0].rstrip("/") + "/" + "/".join(below)
                return top, top.rpartition("/")[0] or "/"
    return None


def _below(node: INode, inode_id: int, newest: int) -> list[str] | None:
    """The names from ``node`` down to the inode ``inode_id`` in its subtree (``node``'s
    own first), passing only inodes with ids up to ``newest``; None when it is not there."""
    stack: list[tuple[INode, list[str]]] = [(node, [node.name])]
    while stack:
        current, names = stack.pop()
        if current.id > newest:
            continue
        if current.id == inode_id:
            return names
        if current.is_dir:
            stack.extend((c, names + [c.name]) for c in current.children.values())
    return None


def _parse_long(text: str) -> int | None:
    """``Long.parseLong``: an optional sign and ASCII digits, within a Java long."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if _LONG[0] <= value <= _LONG[1] else None


def check_name(parts: tuple, path: str) -> None:
    """FSDirectory.addLastINode: no inode may be created at the root under the name
    ``.reserved`` (a mkdir, a create or a rename to it, or a directory made on the way)."""
    if parts and parts[0] == DOT_RESERVED:
        raise errors.HadoopIllegalArgumentError(
            f'File name "{DOT_RESERVED}" is reserved and cannot be created. If this is during '
            f"upgrade change the name of the existing file or directory to another name "
            f"before upgrading to the new release.", path=path)


def check_not_exact(path: str) -> None:
    """FSDirDeleteOp.delete, FSDirAttrOp.setPermission and setOwner refuse ``/.reserved``
    itself first (``isExactReservedName``: the path as given): InvalidPathException."""
    if path == PREFIX:
        raise errors.InvalidPathError(f"Invalid path name {path}", path=path)


def check_create(path: str) -> None:
    """FSNamesystem.startFileInt: a file may not be created as ``/.reserved`` nor under it
    except through ``raw`` or ``.inodes`` (InvalidPathException)."""
    if is_reserved(path) and not (path.startswith(f"{PREFIX}/{RAW}")
                                  or path.startswith(f"{PREFIX}/{DOT_INODES}")):
        raise errors.InvalidPathError(f"Invalid path name {path}", path=path)


class ReservedDirectory(INodeDirectory):
    """``/.reserved`` as HDFS answers for it: FSDirectory.DOT_RESERVED_STATUS to a stat (a
    directory of mode 1770, no owner or group, time 0, fileId -1), and the two statuses of
    ``createReservedStatuses`` to a listing (``.inodes`` and ``raw``: directories of mode
    770, group the supergroup, dated by the namespace's cTime, 0 here). None of the three is
    an inode: nothing is checked against their modes, and no operation but these two reads
    reaches them. Its ``children`` are none, as the status's childrenNum says (0); a listing
    takes ``entries``."""

    __slots__ = ("listed",)

    def __init__(self, supergroup: str) -> None:
        super().__init__(RESERVED_ID, None, DOT_RESERVED, RESERVED_MODE, "", "", 0)
        self.listed: dict[str, INode] = {
            name: INodeDirectory(RESERVED_ID, None, name, CHILD_MODE, "", supergroup, 0)
            for name in (DOT_INODES, RAW)}


def is_reserved_directory(node: INode) -> bool:
    return isinstance(node, ReservedDirectory)


def entries(node: INodeDirectory) -> dict[str, INode]:
    """What a listing of the directory ``node`` shows: its children, or ``/.reserved``'s
    two entries."""
    return node.listed if isinstance(node, ReservedDirectory) else node.children
