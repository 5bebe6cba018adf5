"""``small_disk``: a 4 MiB tmpfs of the test's own at ``tmp_path / "disk"`` to put a name dir
on, fill to the last byte and free again (tests/namenode/disk.py), unmounted after the test.
Request it before ``start_namenode``, so that the namenode on it is stopped first.

The fixtures of the modules that drive Hadoop's Java client (test_java_*.py), and of the ones
that need the module's namenode: ``server`` (tests/conftest.py's ``module_namenode``, unless
the module brings its own), ``java`` (the handles for it, once over each scheme of
tests/namenode/java.py's ``SCHEMES``, so every test runs over ``webhdfs://`` and over
``hdfs://``; with Hadoop's block size unless the module's ``java_block_size`` says otherwise:
the data modules use 1 KiB blocks), ``javas`` (those handles by scheme, for the checks that
compare the schemes), ``fs`` and ``alice_fs`` (a FileSystem of that scheme
acting as tester, as alice) and ``d`` (a fresh directory per test, owned by tester, unless the
module brings its own)."""

import itertools

import pytest

from tests.namenode.disk import SmallDisk
from tests.namenode.java import SCHEMES, Java

_dirs = itertools.count()


@pytest.fixture
def small_disk(tmp_path):
    disk = SmallDisk(tmp_path / "disk", "4m")
    disk.mount()
    try:
        yield disk
    finally:
        disk.unmount()


@pytest.fixture(scope="module")
def server(module_namenode):
    return module_namenode


@pytest.fixture(scope="module")
def java_block_size() -> int | None:
    """The Java client's dfs.blocksize (None: Hadoop's own)."""
    return None


@pytest.fixture(scope="module")
def javas(spark, server, java_block_size) -> dict[str, Java]:
    """The handles over every scheme at once, for the checks that compare them."""
    return {scheme: Java(spark, server, scheme, block_size=java_block_size)
            for scheme in SCHEMES}


@pytest.fixture(scope="module", params=SCHEMES)
def java(request, javas) -> Java:
    return javas[request.param]


def _file_system(java, user: str):
    handle = java.open(user)
    try:
        yield handle
    finally:
        handle.close()


@pytest.fixture(scope="module")
def fs(java):
    yield from _file_system(java, "tester")


@pytest.fixture(scope="module")
def alice_fs(java):
    yield from _file_system(java, "alice")


@pytest.fixture
def d(fs, java) -> str:
    path = f"/j{next(_dirs)}"
    assert fs.mkdirs(java.path(path))
    return path
