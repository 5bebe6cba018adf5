"""The snapshot column of the fsimage (image/snapshots.py), read back: what older images wrote
is read as what the namespace keeps now. Snapshots saved and loaded with the whole tree are
tested with the namespace's snapshots (tests/namenode/namespace/test_snapshot.py)."""

from __future__ import annotations

from nnlite.namenode.image import snapshots
from nnlite.namenode.namespace.inode import INodeDirectory, INodeFile
from nnlite.namenode.namespace.snapshot import Registry


def test_an_older_image_pin_reads_as_a_stretch_of_its_directory():
    """Images before stretches wrote a moved inode's pin as one snapshot id."""
    registry = Registry()
    root, moved = INodeDirectory(16386, None, "s", 0o755, "u", "g", 0), \
        INodeFile(16390, None, "f", 0o644, "u", "g", 0, 0, 1, 1024)
    restorer = snapshots.Restorer()
    restorer.note(root, '{"root":{"quota":65536,"snapshots":[[1,"a",5,16390],[3,"b",6,16391]]}}')
    restorer.note(moved, '{"pinned":3}')
    restorer.finish(registry, lambda: iter(()))
    assert registry.pinned == {16390: ((16386, 0, 3),)}
