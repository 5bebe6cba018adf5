"""Typed errors of the catalog.

They extend the namenode's root error so the HTTP layer's one table turns them into WebHDFS
``RemoteException``s (403 for these IOExceptions, 404 for a missing checkpoint); the client
maps the Java class name back to the same class (``REGISTRY``).
"""

from __future__ import annotations

from nnlite.namenode import errors


class CatalogError(errors.NamenodeError):
    """Root of the catalog's errors."""

    JAVA_CLASS = "org.nnlite.catalog.CatalogException"


class NotACheckpointError(CatalogError):
    """The path exists but holds nothing the catalog recognises as a checkpoint."""

    JAVA_CLASS = "org.nnlite.catalog.NotACheckpointException"


class CheckpointNotFoundError(CatalogError, errors.PathNotFoundError):
    """A checkpoint, batch or checkpoint id that does not exist."""

    JAVA_CLASS = "org.nnlite.catalog.CheckpointNotFoundException"


class CheckpointBusyError(CatalogError):
    """The checkpoint is being written (an active lease, or writes within the quiet period)."""

    JAVA_CLASS = "org.nnlite.catalog.CheckpointBusyException"


class NotRestorableError(CatalogError):
    """An action would leave (or target) a batch that cannot be restored."""

    JAVA_CLASS = "org.nnlite.catalog.NotRestorableException"


class IncompleteCheckpointError(CatalogError):
    """``complete`` found parts missing, a job commit unfinished, or the id not in progress."""

    JAVA_CLASS = "org.nnlite.catalog.IncompleteCheckpointException"


class InvalidRequestError(CatalogError, errors.IllegalArgumentError):
    """A malformed catalog request (bad batch number, unknown op, keep below 1)."""

    JAVA_CLASS = "java.lang.IllegalArgumentException"


REGISTRY: dict[str, type[CatalogError]] = {
    cls.JAVA_CLASS: cls for cls in (CatalogError, NotACheckpointError, CheckpointNotFoundError,
                                    CheckpointBusyError, NotRestorableError,
                                    IncompleteCheckpointError)
}
