"""The namespace's requests for the WebHDFS data path (``namenode/http/data.py``).

An upload is recorded as one batch of ops at its end: ``Namespace.check_create`` and the
``*_file`` checks here run before the bytes arrive, the ``*_complete`` methods at the end
(``namenode/leases.py`` explains the client names and the recovery of torn batches).
``DataPathRequests`` is mixed into ``Namespace`` and uses its requests (``status``,
``check_create``, ``create``, ``append``, ``truncate``) and ``_applied``, and the tree's
lookups and quota checks. No I/O happens here.
"""

from __future__ import annotations

from formats import edits as E
from namenode import errors, paths
from namenode import permission as P
from namenode.checks import check_loggable
from namenode.inode import INodeFile
from namenode.permission import Caller


class DataPathRequests:
    def readable_file(self, path: str, caller: Caller) -> INodeFile:
        """The file at ``path`` if ``caller`` may read it (OPEN, checksum, block locations)."""
        node = self.status(path, caller)
        if node.is_dir:
            raise errors.PathNotFoundError(f"Path is not a file: {path}", path=path)
        P.check(caller, node, P.READ, path)
        return node

    def writable_file(self, path: str, caller: Caller, action: str) -> INodeFile:
        """The complete file at ``path`` if ``caller`` may write it (APPEND, TRUNCATE)."""
        node = self.status(path, caller)
        if node.is_dir:
            raise errors.PathNotFoundError(f"Failed to {action} {path}: it is a directory",
                                           path=path)
        P.check(caller, node, P.WRITE, path)
        if node.client_name is not None:
            raise errors.LeaseError(
                f"Failed to {action} {path}: it is being written by {node.client_name}",
                path=path)
        return node

    def create_complete(self, path: str, caller: Caller, *, blocks: tuple, length: int,
                        checksum: bytes, client_name: str, client_machine: str = "",
                        **create_kw):
        """A whole CREATE upload: [MkdirOp], AddFileOp under construction by
        ``client_name``, CloseFileOp with the blocks, length and checksum."""
        self.check_create(path, caller, overwrite=create_kw.get("overwrite", False),
                          create_parent=create_kw.get("create_parent", True))
        parts = paths.split(path)
        self._check_growth(parts, length * create_kw.get("replication", 1))
        norm, now = paths.join(parts), self.clock()
        check_loggable(E.CloseFileOp(norm, self.last_inode_id + len(parts) + 1, length, now,
                                     now, tuple(blocks), checksum), self.max_record)
        _, ops = self.create(path, caller, client_name=client_name,
                             client_machine=client_machine, **create_kw)
        node = self.get_file(norm)
        close = E.CloseFileOp(norm, node.id, length, now, now, tuple(blocks), checksum)
        return True, ops + self._applied(close)

    def append_complete(self, path: str, caller: Caller, *, inode_id: int,
                        expected_blocks: tuple, blocks: tuple, length: int, checksum: bytes,
                        client_name: str, client_machine: str = ""):
        """A whole APPEND upload: AppendOp, CloseFileOp with the new blocks and length. The
        file must still be the one (``inode_id``, ``expected_blocks``) the upload started on."""
        node = self._unchanged(path, caller, inode_id, expected_blocks, "append to")
        self.check_quota(node.parent, 0, (length - node.length) * node.replication)
        close = E.CloseFileOp(paths.normalize(path), node.id, length, self.clock(),
                              node.atime, tuple(blocks), checksum)
        check_loggable(close, self.max_record)
        _, ops = self.append(path, caller, client_name, client_machine)
        return True, ops + self._applied(close)

    def truncate_blocks(self, path: str, caller: Caller, new_length: int, *, inode_id: int,
                        expected_blocks: tuple, last_block: tuple | None, checksum: bytes,
                        client_name: str, client_machine: str = ""):
        """TRUNCATE with copy-on-write: a TruncateOp; when the cut falls inside a block, also
        AppendOp and CloseFileOp putting ``last_block`` (a new block holding the kept prefix)
        in place of the cut block. Truncating to the current length changes nothing."""
        node = self._unchanged(path, caller, inode_id, expected_blocks, "truncate")
        if new_length == node.length:
            return True, []
        if last_block is None:
            return self.truncate(path, new_length, caller)
        whole, take = _cut(node.blocks, new_length)
        if last_block[1] != take:
            raise errors.IllegalArgumentError(
                f"truncate of {path}: the copied block holds {last_block[1]} bytes, the cut "
                f"keeps {take}", path=path)
        close = E.CloseFileOp(paths.normalize(path), node.id, new_length, self.clock(),
                              node.atime, whole + (tuple(last_block),), checksum)
        check_loggable(close, self.max_record)
        _, ops = self.truncate(path, new_length, caller)
        _, more = self.append(path, caller, client_name, client_machine)
        return True, ops + more + self._applied(close)

    def recover_upload(self, path: str, inode_id: int, delete: bool):
        """Startup lease recovery of a torn upload batch: delete the file, or close it with
        the blocks it has."""
        node = self.get_file(path, inode_id)
        if node.client_name is None:
            return True, []
        if delete:
            return True, self._applied(E.DeleteOp(paths.normalize(path), self.clock()))
        close = E.CloseFileOp(paths.normalize(path), node.id, node.length, node.mtime,
                              node.atime, node.blocks, node.checksum)
        return True, self._applied(close)

    def _unchanged(self, path, caller, inode_id, expected_blocks, action) -> INodeFile:
        node = self.writable_file(path, caller, action)
        if node.id != inode_id or node.blocks != tuple(expected_blocks):
            raise errors.NamenodeError(
                f"Failed to {action} {path}: the file was replaced, truncated or "
                "concatenated while the data was being written; retry", path=path)
        return node

    def _check_growth(self, parts: tuple, ss_delta: int) -> None:
        """The space-quota check of an upload's CloseFileOp, made before anything applies
        (an overwritten file's space is given back first)."""
        nodes = self.resolve(parts)
        if len(nodes) == len(parts) + 1:
            ss_delta -= nodes[-1].length * nodes[-1].replication
            nodes = nodes[:-1]
        self.check_quota(nodes[-1], 0, ss_delta)


def _cut(blocks: tuple, new_length: int) -> tuple[tuple, int]:
    """The blocks a truncate to ``new_length`` keeps whole, and how many bytes of the next
    block it keeps (0 < new_length < the file's length)."""
    total = 0
    for i, block in enumerate(blocks):
        if total + block[1] >= new_length:
            return blocks[:i], new_length - total
        total += block[1]
    return blocks, 0
