"""Tree appliers that change a file's contents: close, blocks, concat, truncate, append.

``ContentAppliers`` is mixed into ``tree.Tree`` and uses its lookups (``get_file``), quota
accounting (``check_quota``, ``add_usage``) and ``_detach``; its only state is the tree's
``last_block_id``. Like every applier, each method checks everything before it changes
anything.
"""

from __future__ import annotations

from namenode import errors
from namenode.inode import INodeFile


class ContentAppliers:
    # Each takes its op's record payload: (op code, txid, fields in declaration order).

    def _close_file(self, record: tuple) -> None:
        _op, _txid, path, inode_id, length, mtime, atime, blocks, checksum = record
        node = self._under_construction(path, inode_id)
        self._resize(node, length)
        node.blocks = tuple(tuple(b) for b in blocks)
        node.checksum = checksum or None
        node.mtime, node.atime = mtime, atime
        node.client_name = node.client_machine = None
        self._note_blocks(node.blocks)

    def _add_block(self, record: tuple) -> None:
        _op, _txid, path, inode_id, block = record
        node = self._under_construction(path, inode_id)
        blocks = node.blocks + (tuple(block),)
        self._resize(node, sum(b[1] for b in blocks))
        node.blocks = blocks
        self._note_blocks((block,))

    def _update_blocks(self, record: tuple) -> None:
        _op, _txid, path, inode_id, blocks = record
        node = self._under_construction(path, inode_id)
        blocks = tuple(tuple(b) for b in blocks)
        self._resize(node, sum(b[1] for b in blocks))
        node.blocks = blocks
        self._note_blocks(blocks)

    def _concat(self, record: tuple) -> None:
        _op, _txid, target, srcs, mtime = record
        path = target
        target = self._complete_file(path)
        srcs = [self._complete_file(s) for s in srcs]
        _check_concat_sources(target, srcs, path)
        length = target.length + sum(s.length for s in srcs)
        ss_delta = sum(s.length * (target.replication - s.replication) for s in srcs)
        self.check_quota(target.parent, 0, ss_delta)
        blocks = target.blocks + tuple(b for s in srcs for b in s.blocks)
        for src in srcs:
            self._detach(src)
        # No second quota check: the net change was checked above, and a check of the target's
        # growth alone could fail after the sources were detached.
        self.add_usage(target.parent, 0, (length - target.length) * target.replication)
        target.length = length
        target.parent.mtime = mtime
        target.blocks = blocks
        target.checksum = None
        target.mtime = mtime

    def _truncate(self, record: tuple) -> None:
        _op, _txid, path, new_length, mtime = record
        node = self._complete_file(path)
        if new_length < 0:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a negative file size: {new_length}.", path=path)
        if new_length > node.length:
            raise errors.IllegalArgumentError(
                f"Cannot truncate to a larger file size. Current size: {node.length}, "
                f"truncate size: {new_length}.", path=path)
        kept, total = [], 0
        for block_id, num_bytes, genstamp in node.blocks:
            if total >= new_length:
                break
            take = min(num_bytes, new_length - total)
            kept.append((block_id, take, genstamp))
            total += take
        self._resize(node, new_length)
        node.blocks = tuple(kept)
        node.checksum = None
        node.mtime = mtime

    def _append(self, record: tuple) -> None:
        _op, _txid, path, inode_id, client_name, client_machine = record
        node = self._complete_file(path)
        if node.id != inode_id:
            raise errors.PathNotFoundError(
                f"File {path} has inode id {node.id}, the operation names {inode_id}",
                path=path)
        if not client_name:
            raise errors.IllegalArgumentError("append needs a client name", path=path)
        node.client_name = client_name
        node.client_machine = client_machine or None

    def _under_construction(self, path: str, inode_id: int) -> INodeFile:
        node = self.get_file(path, inode_id)
        if node.client_name is None:
            raise errors.LeaseError(f"File is not under construction: {path}", path=path)
        return node

    def _complete_file(self, path: str) -> INodeFile:
        node = self.get_file(path)
        if node.client_name is not None:
            raise errors.LeaseError(
                f"{path} is under construction by {node.client_name}", path=path)
        return node

    def _resize(self, node: INodeFile, length: int) -> None:
        ss_delta = (length - node.length) * node.replication
        self.check_quota(node.parent, 0, ss_delta)
        node.length = length
        self.add_usage(node.parent, 0, ss_delta)

    def _note_blocks(self, blocks) -> None:
        for block in blocks:
            if block[0] > self.last_block_id:
                self.last_block_id = block[0]


def _check_concat_sources(target: INodeFile, srcs: list, path: str) -> None:
    """As Hadoop's FSDirConcatOp: distinct files other than the target, in its directory."""
    if not srcs or any(s is target for s in srcs) or len({id(s) for s in srcs}) != len(srcs):
        raise errors.IllegalArgumentError(
            "concat: the sources must be distinct files other than the target", path=path)
    for src in srcs:
        if src.parent is not target.parent:
            raise errors.IllegalArgumentError(
                f"concat: source file {src.path()} is not in the same directory as the "
                f"target {path}", path=path)
