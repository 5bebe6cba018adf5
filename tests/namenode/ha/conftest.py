import pytest

from tests.namenode.ha.haset import HASet


@pytest.fixture
def haset(tmp_path, etcd_cluster):
    """Two namenodes of HA set ns1 on a three-member etcd cluster, not started yet."""
    ha = HASet(tmp_path, etcd_cluster)
    try:
        yield ha
    finally:
        ha.close()
