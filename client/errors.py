"""Typed errors of the WebHDFS client.

One root, ``ClientError``. Four families (and ``InternalError``, for a bug):

* ``NamenodeUnreachableError``: no connection, a timeout, or the connection dropped before an
  answer; ``NotANamenodeError`` when what answers is not a namenode (HTML, not HTTP). Nothing
  is known about whether a mutation was applied (unless ``sent`` is False: no connection).
  Its sibling ``NoActiveNamenodeError``: a client of several namenodes (an HA nameservice)
  found none that would serve the call within its retry policy (``failover.py``); exit 3 too.
* ``ProtocolError``: an answer that is not WebHDFS (bad JSON, an unexpected status or shape).
* ``BadArgumentError``: an argument refused before anything is sent (a bad mode string, a bad
  OWNER:GROUP, a replication below 1).
* ``RemoteError``: the namenode answered with a ``RemoteException``. Its ``javaClassName``
  (the names are ``java_classes.py``'s, the table the namenode's errors take theirs from)
  picks the subclass from ``REGISTRY`` (as kazoo's exceptions pick theirs by wire code); an
  unknown class is a plain ``RemoteError`` that keeps the Java name. The shell raises the
  same classes for what it finds itself (``rm`` of a directory without ``-r``), so a caller
  sees one type per situation whoever noticed it.

The etcd client (``etcd/``) has its own family under ``EtcdError``, each carrying the gRPC
status code etcd answered (``code``, None when it said nothing) and the member (``endpoint``):
``EtcdUnavailableError`` (no member could serve: down, no leader, timed out; exit 3, like an
unreachable namenode), ``EtcdRequestError`` (etcd refused the request itself: too large, too
many ops, malformed; ``EtcdLeaseNotFoundError`` for a lease that is gone),
``EtcdCompactedError`` (a revision older than the last compaction).
"""

from __future__ import annotations

from nnlite.client import java_classes as java


class ClientError(Exception):
    """Root of the client's errors; ``path`` names the path concerned, when there is one."""

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)


class NamenodeUnreachableError(ClientError):
    """The namenode could not be reached (refused, unknown host, timeout, dropped).
    ``sent`` is False only when no connection was made, so the request cannot have reached
    the namenode (what a failover client may send elsewhere whatever the op)."""

    def __init__(self, message: str, *, url: str, sent: bool = True):
        self.url = url
        self.sent = sent
        super().__init__(message)


class NotANamenodeError(NamenodeUnreachableError):
    """Something answers at the URL, but not a namenode: HTML, not JSON, or not HTTP at all.
    Unreachable as far as the user is concerned (exit 3): the namenode is elsewhere."""


class NoActiveNamenodeError(ClientError):
    """A client of a nameservice (several namenodes of an HA set, ``failover.py``) found no
    namenode that would serve the call within its retry policy; the message names each
    namenode tried and its last answer. Nothing is known of whether a write was applied
    unless every answer was a refusal."""

    def __init__(self, message: str, *, tried: dict[str, str]):
        self.tried = tried          # namenode -> its last answer, in words
        super().__init__(message)


class ProtocolError(ClientError):
    """The answer does not follow the protocol (WebHDFS, or the image transfer); ``url``, when
    given, names the server in the message."""

    def __init__(self, message: str, *, path: str | None = None, url: str | None = None):
        self.url = url
        super().__init__(f"{message} ({url})" if url else message, path=path)


class BadArgumentError(ClientError):
    """An argument the client refuses before sending anything."""


class InternalError(ClientError):
    """Something the client did not expect (a bug): reported in one line, not a traceback."""


# ------------------------------------------------------------------------ remote exceptions

REGISTRY: dict[str, type[RemoteError]] = {}


def _java(java_class: str):
    """Register a RemoteError subclass for the exception Hadoop names ``java_class``."""
    def register(cls):
        cls.JAVA_CLASS = java_class
        REGISTRY[java_class] = cls
        return cls
    return register


register_remote = _java      # for layers above the client (the catalog) with their own classes


class RemoteError(ClientError):
    """A ``RemoteException`` from the namenode (or the same situation found by the client)."""

    JAVA_CLASS = java.IO_EXCEPTION

    def __init__(self, message: str, *, path: str | None = None, status: int | None = None,
                 java_class: str | None = None):
        self.status = status
        self.java_class = java_class or self.JAVA_CLASS
        super().__init__(message, path=path)

    @property
    def exception(self) -> str:
        """The Java exception's simple name, as WebHDFS's ``exception`` field carries it."""
        return self.java_class.rsplit(".", 1)[-1]


@_java(java.IO_EXCEPTION)
class RemoteIOError(RemoteError):
    """Hadoop's catch-all IOException (e.g. a missing xattr)."""


@_java(java.FILE_NOT_FOUND)
class PathNotFoundError(RemoteError):
    pass


@_java(java.ACCESS_CONTROL)
class AccessControlError(RemoteError):
    """Permission denied (or a superuser-only operation by someone else)."""


@_java(java.SECURITY)
class ImpersonationError(AccessControlError):
    """A ``doas`` the caller may not use."""


@_java(java.FILE_ALREADY_EXISTS)
class FileAlreadyExistsError(RemoteError):
    pass


@_java(java.PARENT_NOT_DIRECTORY)
class ParentNotDirectoryError(RemoteError):
    pass


@_java(java.PATH_IS_DIRECTORY)
class PathIsDirectoryError(RemoteError):
    pass


@_java(java.PATH_IS_NOT_DIRECTORY)
class PathIsNotDirectoryError(RemoteError):
    pass


@_java(java.PATH_IS_NOT_EMPTY_DIRECTORY)
class PathIsNotEmptyDirectoryError(RemoteError):
    pass


@_java(java.SAFE_MODE)
class SafeModeError(RemoteError):
    pass


@_java(java.QUOTA_EXCEEDED)
class QuotaExceededError(RemoteError):
    pass


@_java(java.NS_QUOTA_EXCEEDED)
class NSQuotaExceededError(QuotaExceededError):
    pass


@_java(java.DS_QUOTA_EXCEEDED)
class DSQuotaExceededError(QuotaExceededError):
    pass


@_java(java.ALREADY_BEING_CREATED)
class AlreadyBeingCreatedError(RemoteError):
    pass


@_java(java.ACL)
class AclError(RemoteError):
    """An ACL the namenode refuses (no user, group or other entry, a default ACL on a file,
    an entry twice)."""


@_java(java.SNAPSHOT)
class SnapshotError(RemoteError):
    """A snapshot operation that does not fit the directory (not snapshottable, a name taken
    or missing, snapshots left)."""


@_java(java.SNAPSHOT_ACCESS_CONTROL)
class SnapshotAccessControlError(AccessControlError):
    """A change under ``.snapshot``, which is read-only."""


@_java(java.ILLEGAL_ARGUMENT)
class IllegalArgumentError(RemoteError):
    """The namenode refused a parameter value."""


@_java(java.HADOOP_ILLEGAL_ARGUMENT)
class HadoopIllegalArgumentError(IllegalArgumentError):
    """Hadoop's own refusal of an argument (an ACL spec that does not parse)."""


@_java(java.INVALID_PATH)
class InvalidPathError(RemoteError):
    pass


@_java(java.UNSUPPORTED_OPERATION)
class UnsupportedOperationError(RemoteError):
    pass


class UnknownOperationError(UnsupportedOperationError):
    """The namenode does not know the op at all (an older server: e.g. no CREATE yet)."""


@_java(java.STANDBY)
class StandbyError(RemoteError):
    """A standby namenode of an HA set refused the op while another one is active: a
    failover client sends it to the next namenode (``failover.py``)."""


@_java(java.RETRIABLE)
class RetriableError(RemoteError):
    """No namenode of the HA set can take the op now (a failover is under way, or the
    shared journal has no quorum): a failover client waits and asks the same one again."""


@_java(java.RUNTIME)
class NamenodeInternalError(RemoteError):
    """A 500: the namenode failed unexpectedly; its log has the details."""


def from_remote_exception(doc: dict, *, status: int, path: str | None = None) -> RemoteError:
    """The RemoteError for a ``{"RemoteException": {...}}`` body's inner object; ``path``
    is added to a message that does not name it."""
    java_class = str(doc.get("javaClassName") or java.IO_EXCEPTION)
    message = str(doc.get("message") or doc.get("exception") or "(no message)")
    if path and path not in message:
        message = f"{message} ({path})"
    cls = REGISTRY.get(java_class, RemoteError)
    return cls(message, path=path, status=status, java_class=java_class)


# ------------------------------------------------------------------------------ etcd

class EtcdError(ClientError):
    """etcd refused a call; ``code`` is the gRPC status code it answered (None when the
    error is the client's own) and ``endpoint`` the member that answered, when one did."""

    def __init__(self, message: str, *, code: int | None = None, endpoint: str | None = None):
        self.code = code
        self.endpoint = endpoint
        super().__init__(message)


class EtcdUnavailableError(EtcdError):
    """No member could serve the call: each was unreachable, had no leader, timed out or
    answered with a gRPC status that sends the call elsewhere; or a watch's stream broke
    (watch again from the last revision seen). A write in flight when that happened may
    have been applied."""


class EtcdRequestError(EtcdError):
    """etcd refused the request itself (too large, too many operations in a txn, a duplicate
    key, a future revision, a malformed field): sending it again anywhere fails the same."""


class EtcdLeaseNotFoundError(EtcdRequestError):
    """The request names a lease etcd no longer has (revoked or expired)."""


class EtcdCompactedError(EtcdError):
    """The revision asked for is older than etcd's last compaction; ``compact_revision`` is
    that compaction's revision when etcd said it (a watch does), else None."""

    def __init__(self, message: str, *, compact_revision: int | None = None,
                 code: int | None = None, endpoint: str | None = None):
        self.compact_revision = compact_revision
        super().__init__(message, code=code, endpoint=endpoint)
