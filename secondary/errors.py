"""Typed errors of the secondary (the checkpointer).

One root, ``SecondaryError``; every error names what it was doing (URL, file, txid) and is
chained with ``raise ... from`` to its cause. Two families decide what the checkpointer does
next (checkpointer.py):

* ``TransferError``: talking to the namenode failed (cut off, refused, bad digest), and so do
  the client stack's ``NamenodeUnreachableError`` and ``ProtocolError`` (``client/errors.py``,
  one definition for every client of the namenode). The in-memory namespace is untouched; the
  checkpoint is retried at the next check. ``TRANSFER_FAILURES`` names them,
  ``CHECKPOINT_FAILURES`` every failure of a checkpoint.
* ``MergeError``: building the new image failed (load, replay, save, verify). Counted; after
  ``checkpoint.max-retries`` of them in a row the in-memory namespace and the local image are
  dropped and the next checkpoint starts again from a freshly downloaded image.
"""

from __future__ import annotations

from nnlite.client.errors import ClientError, NamenodeUnreachableError, ProtocolError


class SecondaryError(Exception):
    """Root of the secondary's errors."""


class TransferError(SecondaryError):
    """A request to the namenode's transfer endpoints did not complete."""

    def __init__(self, message: str, *, url: str | None = None):
        self.url = url
        super().__init__(f"{message} ({url})" if url else message)


class RefusedError(TransferError):
    """The namenode answered with an error status; ``status`` is that HTTP status."""

    def __init__(self, status: int, message: str, *, url: str | None = None):
        self.status = status
        super().__init__(f"namenode refused ({status}): {message}", url=url)


class ShortTransferError(TransferError):
    """A body ended before its Content-Length (a cut transfer)."""


class DigestMismatchError(TransferError):
    """A downloaded body's MD5 is not the one its X-MD5-Digest header announced."""


class MergeError(SecondaryError):
    """Loading the image, replaying the edits or saving the new image failed."""

    def __init__(self, message: str, *, phase: str, txid: int | None = None):
        self.phase = phase
        self.txid = txid
        super().__init__(message)


class ImageVerifyError(MergeError):
    """The image just written does not read back as written (digest, txid, namespace)."""


class SettingError(SecondaryError):
    """A command-line or configuration value the secondary cannot use (URL, secret)."""


class CheckpointDirError(SecondaryError):
    """The checkpoint directory is in use, belongs to another namespace, or is unusable."""


# Talking to the namenode failed: unreachable, answered outside the protocol, refused, cut off.
TRANSFER_FAILURES = (TransferError, NamenodeUnreachableError, ProtocolError)
# What a checkpoint step can fail with, and the checkpointer counts and retries.
CHECKPOINT_FAILURES = (SecondaryError, ClientError)
