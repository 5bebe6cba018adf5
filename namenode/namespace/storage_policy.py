"""HDFS's block storage policies, as a NameNode with the default suite has them.

The policies and their ids are ``BlockStoragePolicySuite.createDefaultSuite`` (names and ids
as ``HdfsConstants`` declares them); HOT is the default. A policy set on a file or directory is
kept, as HDFS keeps a directory's, in the xattr ``system.hsm.block.storage.policy.id`` (one
byte, the id), which no user can read or set directly; the policy in effect on an inode is
its own or else its nearest ancestor's (``INode.getStoragePolicyID``), 0 when none is set.
nnlite stores every block on one local disk, so a policy changes nothing about placement: it
is recorded and answered, as a NameNode whose DataNodes have only DISK storage answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from nnlite.namenode.namespace.inode import INode

XATTR = "system.hsm.block.storage.policy.id"
UNSPECIFIED = 0
# FSNamesystem.satisfyStoragePolicy's refusal with the satisfier off, as by default
# (dfs.storage.policy.satisfier.mode=none): an UnsupportedActionException
SATISFIER_OFF = ("Cannot request to satisfy storage policy when storage policy satisfier "
                 "feature has been disabled by admin. Seek for an admin help to enable it or "
                 "use Mover tool.")


@dataclass(frozen=True)
class Policy:
    id: int
    name: str
    storage_types: tuple[str, ...]
    creation_fallbacks: tuple[str, ...]
    replication_fallbacks: tuple[str, ...]
    copy_on_create_file: bool = False

    def to_json(self) -> dict:
        """JsonUtil.toJsonMap(BlockStoragePolicy)."""
        return {"id": self.id, "name": self.name, "storageTypes": list(self.storage_types),
                "creationFallbacks": list(self.creation_fallbacks),
                "replicationFallbacks": list(self.replication_fallbacks),
                "copyOnCreateFile": self.copy_on_create_file}


POLICIES = (
    Policy(1, "PROVIDED", ("PROVIDED", "DISK"), ("PROVIDED", "DISK"), ("PROVIDED", "DISK")),
    Policy(2, "COLD", ("ARCHIVE",), (), ()),
    Policy(5, "WARM", ("DISK", "ARCHIVE"), ("DISK", "ARCHIVE"), ("DISK", "ARCHIVE")),
    Policy(7, "HOT", ("DISK",), (), ("ARCHIVE",)),
    Policy(10, "ONE_SSD", ("SSD", "DISK"), ("SSD", "DISK"), ("SSD", "DISK")),
    Policy(12, "ALL_SSD", ("SSD",), ("DISK",), ("DISK",)),
    Policy(14, "ALL_NVDIMM", ("NVDIMM",), ("DISK",), ("DISK",)),
    Policy(15, "LAZY_PERSIST", ("RAM_DISK", "DISK"), ("DISK",), ("DISK",), True),
)
BY_ID = {p.id: p for p in POLICIES}
DEFAULT = BY_ID[7]


def by_name(name: str) -> Policy | None:
    """The policy called ``name`` (case-insensitively, as BlockStoragePolicySuite looks it
    up), or None."""
    for policy in POLICIES:
        if policy.name.lower() == (name or "").lower():
            return policy
    return None


def local_id(node: INode) -> int:
    raw = (node.xattrs or {}).get(XATTR)
    return raw[0] if raw else UNSPECIFIED


def effective_id(node: INode | None) -> int:
    """The policy id in effect: the inode's own, else its nearest ancestor's, else 0."""
    while node is not None:
        if node.xattrs and XATTR in node.xattrs:
            return node.xattrs[XATTR][0]
        node = node.parent
    return UNSPECIFIED


def effective(node: INode) -> Policy:
    """``BlockStoragePolicySuite.getPolicy``: id 0 (none set) is the default policy."""
    return BY_ID.get(effective_id(node), DEFAULT)
