"""In-memory inodes: slotted objects, no per-inode dict, so a million of them stay small.

Invariants:
* ``parent`` is the containing directory (None only for the root) and
  ``parent.children[name] is self``; the dict key and ``name`` are the same str object.
* A directory's ``quota`` is None, or a Quota whose ``ns_used``/``ss_used`` equal the inode
  count (the directory included) and the space (length x replication) of its subtree.
* ``blocks`` is a tuple of ``(block_id, num_bytes, genstamp)``; ``checksum`` is bytes or None.
* A file with ``client_name`` is under construction, leased to that client.
* ``acl`` is None or the inode's ACL feature entries (``acl.py`` says which); with one, the
  group bits of ``permission`` are the ACL's mask.
* ``INode`` is a file or a directory, nothing else: ``is_dir`` tells which, to the type
  checker too (a ``Literal`` in each class narrows the union).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Literal

from nnlite.formats.edits import Block
from nnlite.namenode import errors

ROOT_INODE_ID = 16385


class Quota:
    __slots__ = ("ns_quota", "ss_quota", "ns_used", "ss_used")

    def __init__(self, ns_quota: int, ss_quota: int, ns_used: int = 0,
                 ss_used: int = 0) -> None:
        self.ns_quota = ns_quota
        self.ss_quota = ss_quota
        self.ns_used = ns_used
        self.ss_used = ss_used


class INodeBase:
    """What files and directories share: their attributes and their place in the tree."""
    __slots__ = ("id", "parent", "name", "permission", "owner", "group", "mtime", "atime",
                 "xattrs", "acl")
    is_dir: ClassVar[bool] = False
    id: int
    parent: INodeDirectory | None
    name: str
    permission: int
    owner: str
    group: str
    mtime: int
    atime: int
    xattrs: dict[str, bytes] | None
    acl: tuple | None

    def path(self) -> str:
        parts = []
        node: INodeBase = self
        while node.parent is not None:
            parts.append(node.name)
            node = node.parent
        return "/" + "/".join(reversed(parts))

    def ancestors(self) -> Iterator[INodeDirectory]:
        """This inode's parent, its parent, ... up to the root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class INodeDirectory(INodeBase):
    __slots__ = ("children", "quota")
    is_dir: ClassVar[Literal[True]] = True

    def __init__(self, inode_id: int, parent: INodeDirectory | None, name: str, permission: int,
                 owner: str, group: str, mtime: int, atime: int | None = None) -> None:
        # Assigned inline rather than through super(): image loading builds a million of these.
        self.id = inode_id
        self.parent = parent
        self.name = name
        self.permission = permission
        self.owner = owner
        self.group = group
        self.mtime = mtime
        self.atime = 0 if atime is None else atime   # HDFS keeps no access time on directories
        self.xattrs = None
        self.acl = None
        self.children: dict[str, INode] = {}
        self.quota: Quota | None = None


class INodeFile(INodeBase):
    __slots__ = ("replication", "block_size", "length", "blocks", "checksum", "client_name",
                 "client_machine")
    is_dir: ClassVar[Literal[False]] = False
    replication: int
    block_size: int
    length: int
    blocks: tuple[Block, ...]
    checksum: bytes | None
    client_name: str | None
    client_machine: str | None

    def __init__(self, inode_id: int, parent: INodeDirectory | None, name: str, permission: int,
                 owner: str, group: str, mtime: int, atime: int, replication: int,
                 block_size: int, length: int = 0, blocks: tuple[Block, ...] = (),
                 checksum: bytes | None = None, client_name: str | None = None,
                 client_machine: str | None = None) -> None:
        self.id = inode_id
        self.parent = parent
        self.name = name
        self.permission = permission
        self.owner = owner
        self.group = group
        self.mtime = mtime
        self.atime = atime
        self.xattrs = None
        self.acl = None
        self.replication = replication
        self.block_size = block_size
        self.length = length
        self.blocks = blocks
        self.checksum = checksum
        self.client_name = client_name
        self.client_machine = client_machine

    @property
    def under_construction(self) -> bool:
        return self.client_name is not None


# A file or a directory (annotations say INode; the base class only shares their attributes).
INode = INodeDirectory | INodeFile

_new = object.__new__


def new_file(inode_id: int, parent: INodeDirectory, name: str, permission: int, owner: str,
             group: str, mtime: int, atime: int, replication: int, block_size: int,
             length: int, client_name: str | None, client_machine: str | None) -> INodeFile:
    """``INodeFile(...)`` with no blocks, no checksum, no xattrs, for the replay's hot path:
    calling a function is cheaper than calling a class (whose ``__init__`` runs in a frame of
    its own), and a replay creates a file per ADD_FILE record. Keep it in step with
    ``INodeFile.__init__``."""
    node = _new(INodeFile)
    node.id = inode_id
    node.parent = parent
    node.name = name
    node.permission = permission
    node.owner = owner
    node.group = group
    node.mtime = mtime
    node.atime = atime
    node.xattrs = None
    node.acl = None
    node.replication = replication
    node.block_size = block_size
    node.length = length
    node.blocks = ()
    node.checksum = None
    node.client_name = client_name
    node.client_machine = client_machine
    return node


def parent_of(node: INode) -> INodeDirectory:
    """The directory holding ``node``, an inode of the tree other than the root: what an op
    that removes, moves or concatenates inodes acts on (each refuses the root first)."""
    parent = node.parent
    if parent is None:
        raise errors.IllegalArgumentError(f"{node.path()} is the root: it has no parent",
                                          path=node.path())
    return parent


def space(node: INode) -> int:
    """Space a file consumes against a quota: its length times its replication."""
    return node.length * node.replication if not node.is_dir else 0


def usage(node: INode) -> tuple[int, int]:
    """(inodes, space) of a subtree, the node included, counted by walking it."""
    if not node.is_dir:
        return 1, space(node)
    count, total = 1, 0
    stack = [node]
    while stack:
        for child in stack.pop().children.values():
            count += 1
            if child.is_dir:
                stack.append(child)
            else:
                total += child.length * child.replication
    return count, total


def walk(node: INode) -> Iterator[INode]:
    """Every inode of a subtree, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current.is_dir:
            stack.extend(current.children.values())
