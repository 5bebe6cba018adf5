"""Typed errors of the namenode.

Each class carries ``JAVA_CLASS``, the fully qualified name of the exception Hadoop's NameNode
raises in the same situation, from the one table of those names the client reads them back
with (``client/java_classes.py``); the HTTP layer turns that into a WebHDFS ``RemoteException``
(its status table lives there, not here). Messages name the path and say what to do.
"""

from __future__ import annotations

from nnlite.client import java_classes as java


def simple_name(java_class: str) -> str:
    """``Class.getSimpleName``: the last part of the name, of a nested class too."""
    return java_class.rsplit(".", 1)[-1].rsplit("$", 1)[-1]


class NamenodeError(Exception):
    """Root of the namenode's errors."""

    JAVA_CLASS = java.IO_EXCEPTION

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)

    @property
    def exception_name(self) -> str:
        return simple_name(self.JAVA_CLASS)


class InvalidPathError(NamenodeError):
    JAVA_CLASS = java.INVALID_PATH


class IllegalArgumentError(NamenodeError):
    JAVA_CLASS = java.ILLEGAL_ARGUMENT


class PathNotFoundError(NamenodeError):
    JAVA_CLASS = java.FILE_NOT_FOUND


class FileAlreadyExistsError(NamenodeError):
    JAVA_CLASS = java.FILE_ALREADY_EXISTS


class ParentNotDirectoryError(NamenodeError):
    JAVA_CLASS = java.PARENT_NOT_DIRECTORY


class PathIsNotEmptyDirectoryError(NamenodeError):
    JAVA_CLASS = java.PATH_IS_NOT_EMPTY_DIRECTORY


class PathIsNotDirectoryError(NamenodeError):
    JAVA_CLASS = java.PATH_IS_NOT_DIRECTORY


class AccessControlError(NamenodeError):
    JAVA_CLASS = java.ACCESS_CONTROL


class SafeModeError(NamenodeError):
    JAVA_CLASS = java.SAFE_MODE


class QuotaExceededError(NamenodeError):
    JAVA_CLASS = java.QUOTA_EXCEEDED


class NSQuotaExceededError(QuotaExceededError):
    JAVA_CLASS = java.NS_QUOTA_EXCEEDED


class DSQuotaExceededError(QuotaExceededError):
    JAVA_CLASS = java.DS_QUOTA_EXCEEDED


class XAttrError(NamenodeError):
    """An xattr that must (not) exist does (not), or a limit on xattrs is reached."""
    JAVA_CLASS = java.IO_EXCEPTION


class AclError(NamenodeError):
    """An ACL that is not valid, or an ACL operation while ACLs are disabled."""
    JAVA_CLASS = java.ACL


class SnapshotError(NamenodeError):
    """A snapshot operation HDFS refuses (not snapshottable, a name taken, snapshots left)."""
    JAVA_CLASS = java.SNAPSHOT


class SnapshotAccessControlError(AccessControlError):
    """A change to a path inside a snapshot (``<dir>/.snapshot/...``), which is read-only."""
    JAVA_CLASS = java.SNAPSHOT_ACCESS_CONTROL


class NoECPolicySetError(NamenodeError):
    JAVA_CLASS = java.NO_EC_POLICY_SET


class InvalidTokenError(NamenodeError):
    JAVA_CLASS = java.INVALID_TOKEN


class UnsupportedOperationError(NamenodeError):
    JAVA_CLASS = java.UNSUPPORTED_OPERATION


class HadoopIllegalArgumentError(IllegalArgumentError):
    JAVA_CLASS = java.HADOOP_ILLEGAL_ARGUMENT


class UnsupportedActionError(NamenodeError):
    """A feature the NameNode has switched off (the storage policy satisfier)."""
    JAVA_CLASS = java.UNSUPPORTED_ACTION


class LeaseError(NamenodeError):
    """The file is under construction by another client, or not under construction at all."""
    JAVA_CLASS = java.ALREADY_BEING_CREATED


class LeaseExpiredError(NamenodeError):
    """The writer no longer holds the file: its lease was taken over or recovered, or the
    file it wrote was deleted (FSNamesystem.checkLease)."""
    JAVA_CLASS = java.LEASE_EXPIRED


class ReplayError(NamenodeError):
    """A logged op cannot be applied to the namespace it should fit: the log and the image
    disagree. Startup stops; only ``nnlite namenode --recover`` may skip such an op."""


class StorageError(NamenodeError):
    """No healthy name directory is left, or one cannot be used; nothing can be made durable."""


class StandbyError(NamenodeError):
    """This namenode is a standby of an HA set and another one is active: the client should
    fail over (Hadoop's ``StandbyState.checkOperation``; its Java client's failover proxy and
    ``WebHdfsFileSystem`` fail over at once on this exception)."""
    JAVA_CLASS = java.STANDBY


class RetriableError(NamenodeError):
    """Try the same call again after a pause: no namenode of the HA set can take it now (a
    failover is under way, or the shared journal in etcd has no quorum). Hadoop's retry
    policies back off exponentially on this exception instead of failing over at once, so a
    client with the default settings waits through a failover."""
    JAVA_CLASS = java.RETRIABLE


class SharedJournalError(RetriableError):
    """A batch of edits could not be made durable in the shared journal (etcd): etcd has no
    quorum, or this namenode's leadership was taken over (its guarded write was refused).
    Nothing of the batch was acknowledged."""


class FencedError(SharedJournalError):
    """This namenode's guarded write was refused: another namenode holds the leadership.
    It must never append again under the epoch it had."""


class HAError(NamenodeError):
    """This namenode cannot take part in the HA set (another namespace, a journal behind
    its own edits), or cannot make the HA transition asked of it."""


class AddressError(NamenodeError):
    """An HTTP address cannot be listened on: in use by another process, or not this host's."""


class NameDirError(StorageError):
    """A name directory is missing, unformatted, locked by another process, or inconsistent."""
