"""Configuration (namenode/config.py): an HA set's per-namenode keys are known, and a
namenode given its id binds the addresses named after it, as Hadoop's
``NameNode.initializeGenericKeys`` copies ``<key>.<nameservice>.<id>`` onto ``<key>``."""

from __future__ import annotations

import logging

from nnlite.namenode.config import Config

HA_CONF = """\
dfs.nameservices = ns1
dfs.ha.namenodes.ns1 = nn1,nn2
dfs.namenode.http-address.ns1.nn1 = 127.0.0.1:9880
dfs.namenode.http-address.ns1.nn2 = 127.0.0.1:9881
dfs.namenode.rpc-address.ns1.nn1 = 127.0.0.1:8030
dfs.namenode.rpc-address.ns1.nn2 = 127.0.0.1:8031
dfs.client.failover.proxy.provider.ns1 = org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider
"""


def test_an_ha_sets_keys_raise_no_warning_and_each_namenode_binds_its_own(tmp_path, caplog):
    conf = tmp_path / "ha.conf"
    conf.write_text(HA_CONF)
    with caplog.at_level(logging.WARNING, logger="nnlite.namenode.config"):
        config = Config.load(str(conf), ["dfs.ha.namenode.id=nn2"])
    assert caplog.records == []
    http = config.namenode_key("dfs.namenode.http-address", "nn2")
    rpc = config.namenode_key("dfs.namenode.rpc-address", "nn2")
    assert (config.address(http), config.address(rpc)) == (("127.0.0.1", 9881),
                                                           ("127.0.0.1", 8031))
    # not named after that namenode, or no HA set: the generic key
    assert config.namenode_key("dfs.namenode.rpc-address", "nn3") == "dfs.namenode.rpc-address"
    assert config.namenode_key("dfs.namenode.rpc-address", "") == "dfs.namenode.rpc-address"
    assert Config().namenode_key("dfs.namenode.http-address", "nn1") == \
        "dfs.namenode.http-address"


def test_a_key_nnlite_does_not_use_is_still_reported(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="nnlite.namenode.config"):
        Config.load(None, ["dfs.namenode.servicerpc-address.ns1.nn1=127.0.0.1:8040"])
    assert "unknown configuration key 'dfs.namenode.servicerpc-address.ns1.nn1'" in caplog.text
