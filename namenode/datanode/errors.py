"""The datanode's typed errors: a request refused, with the data transfer ``Status`` the
client is answered with (in a ``BlockOpResponseProto`` or a packet's ack); a replica's bytes
that do not match their stored CRCs."""

from __future__ import annotations

from nnlite.formats.hadoop.datatransfer import Status
from nnlite.namenode.errors import NamenodeError


class DataTransferError(NamenodeError):
    """An op or a packet refused; ``status`` is what the client reads (``Status.ERROR``
    unless more is known: ``ERROR_CHECKSUM``, ``ERROR_INVALID``, ``ERROR_EXISTS``,
    ``ERROR_UNSUPPORTED``), ``first_bad_link`` the pipeline target a write could not reach,
    ``answered`` whether the client was told already (in a packet's ack)."""

    def __init__(self, message: str, status: int = Status.ERROR, *,
                 first_bad_link: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.first_bad_link = first_bad_link
        self.answered = False


class ReplicaNotFoundError(DataTransferError):
    """This datanode has no replica of the block (neither published nor being written)."""
    JAVA_CLASS = "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException"


class ChecksumError(DataTransferError):
    """A chunk of a replica does not match its stored CRC (what a reader of READ_BLOCK's
    packets finds, ``DataChecksum.verifyChunkedSums``)."""
    JAVA_CLASS = "org.apache.hadoop.fs.ChecksumException"

    def __init__(self, message: str, *, block_id: int = 0, position: int = 0) -> None:
        super().__init__(message, Status.ERROR_CHECKSUM)
        self.block_id = block_id
        self.position = position        # the damaged chunk's offset in the block


class BlockTokenError(DataTransferError):
    """A block access token that does not let its bearer do what it asks
    (``SecretManager.InvalidToken`` from ``BlockTokenSecretManager.checkAccess``): the op
    is answered ``ERROR_ACCESS_TOKEN``, as ``DataXceiver.checkAccess`` does."""
    JAVA_CLASS = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

    def __init__(self, message: str) -> None:
        super().__init__(message, Status.ERROR_ACCESS_TOKEN)
