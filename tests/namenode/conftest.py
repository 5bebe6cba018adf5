"""``small_disk``: a 4 MiB tmpfs of the test's own at ``tmp_path / "disk"`` to put a name dir
on, fill to the last byte and free again (tests/namenode/disk.py), unmounted after the test.
Request it before ``start_namenode``, so that the namenode on it is stopped first."""

import pytest

from tests.namenode.disk import SmallDisk


@pytest.fixture
def small_disk(tmp_path):
    disk = SmallDisk(tmp_path / "disk", "4m")
    disk.mount()
    try:
        yield disk
    finally:
        disk.unmount()
