"""Configuration (namenode/config.py): an HA set's per-namenode keys are known, and a
namenode given its id binds the addresses named after it, as Hadoop's
``NameNode.initializeGenericKeys`` copies ``<key>.<nameservice>.<id>`` onto ``<key>``."""

from __future__ import annotations

import logging

import pytest

from nnlite.namenode.config import Config, ConfigError

PROVIDER = "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider"
HA_CONF = f"""\
dfs.nameservices = ns1
dfs.ha.namenodes.ns1 = nn1,nn2
dfs.namenode.http-address.ns1.nn1 = 127.0.0.1:9880
dfs.namenode.http-address.ns1.nn2 = 127.0.0.1:9881
dfs.namenode.rpc-address.ns1.nn1 = 127.0.0.1:8030
dfs.namenode.rpc-address.ns1.nn2 = 127.0.0.1:8031
dfs.client.failover.proxy.provider.ns1 = {PROVIDER}
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


def write(path, properties):
    path.write_text('<?xml version="1.0"?>\n<configuration>' + "".join(
        f"<property><name>{k}</name><value>{v}</value><final>true</final></property>"
        for k, v in properties.items()) + "</configuration>")


def test_a_hadoop_conf_dir_is_read_as_hadoop_reads_its_site_files(tmp_path):
    write(tmp_path / "core-site.xml", {"hadoop.security.authentication": "kerberos",
                                       "hadoop.proxyuser.spark.hosts": "*",
                                       "dfs.replication": "2"})
    write(tmp_path / "hdfs-site.xml", {"dfs.namenode.kerberos.principal": "nn/_HOST@R",
                                       "dfs.replication": "3",
                                       "dfs.web.authentication.kerberos.keytab":
                                           "${dfs.namenode.keytab.file}",
                                       "dfs.namenode.keytab.file": "/nn.keytab"})
    write(tmp_path / "ssl-server.xml", {"ssl.server.keystore.location": "/ks.jks"})
    write(tmp_path / "ssl-client.xml", {"ssl.client.truststore.location": "/ca.pem"})
    config = Config.load(str(tmp_path))
    assert config.security_enabled()
    assert config.get("dfs.namenode.kerberos.principal") == "nn/_HOST@R"
    assert config.int("dfs.replication") == 3                  # hdfs-site.xml after core-site
    assert config.proxy_users() == {"hadoop.proxyuser.spark.hosts": "*"}
    assert config.get("ssl.server.keystore.location") == "/ks.jks"
    assert config.get("ssl.client.truststore.location") == "/ca.pem"     # ssl-client.xml
    # expanded at the end, from whatever file set it (Configuration.substituteVars)
    assert config.get("dfs.web.authentication.kerberos.keytab") == "/nn.keytab"
    assert Config({"a": "${b}/x", "b": "${c}"}).get("a") == "${c}/x"   # unknown names stay


def test_one_xml_file_and_the_ssl_file_beside_it(tmp_path):
    write(tmp_path / "hdfs-site.xml", {"dfs.namenode.keytab.file": "/nn.keytab",
                                       "dfs.web.authentication.kerberos.keytab":
                                           "${dfs.namenode.keytab.file}",
                                       "hadoop.ssl.server.conf": "my-ssl.xml"})
    write(tmp_path / "my-ssl.xml", {"ssl.server.keystore.type": "pem"})
    config = Config.load(str(tmp_path / "hdfs-site.xml"))
    assert config.get("dfs.web.authentication.kerberos.keytab") == "/nn.keytab"
    assert config.get("ssl.server.keystore.type") == "pem"
    assert not config.security_enabled()


@pytest.mark.parametrize("text, message", [
    ("<configuration><property><value>x</value></property></configuration>", "has no <name>"),
    ("<configuration><property>", "not a Hadoop configuration file"),
    ("<?xml version='1.0'?><props/>", "expected <configuration>"),
])
def test_a_broken_xml_file_is_one_clear_error(tmp_path, text, message):
    (tmp_path / "bad.xml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        Config.load(str(tmp_path / "bad.xml"))


def test_authentication_is_simple_or_kerberos():
    assert not Config().security_enabled()
    with pytest.raises(ConfigError, match="simple or kerberos"):
        Config({"hadoop.security.authentication": "token"}).security_enabled()
