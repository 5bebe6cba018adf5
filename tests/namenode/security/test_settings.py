"""Secure mode's settings (namenode/security/settings.py): Hadoop's keys read once, ``_HOST``
resolved as ``SecurityUtil.getServerPrincipal`` does, and a missing key named."""

import pytest

from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security.settings import SecuritySettings, server_principal

SECURE = {"hadoop.security.authentication": "kerberos",
          "dfs.namenode.kerberos.principal": "nn/_HOST@EXAMPLE.COM",
          "dfs.namenode.keytab.file": "/etc/nn.keytab",
          "dfs.web.authentication.kerberos.principal": "HTTP/_HOST@EXAMPLE.COM"}


def test_simple_mode_is_the_default_and_has_no_superuser_principal():
    settings = SecuritySettings.from_config(Config())
    assert not settings.enabled and settings.superuser is None
    assert settings.rpc_protection == ("authentication",) and settings.http_enabled


def test_host_pattern_is_resolved_for_loopback_and_the_superuser_is_the_short_name():
    settings = SecuritySettings.from_config(Config(SECURE), host="127.0.0.1")
    assert settings.namenode_principal == "nn/localhost@EXAMPLE.COM"
    assert settings.web_principal == "HTTP/localhost@EXAMPLE.COM"
    assert settings.web_keytab == "/etc/nn.keytab"           # falls back to the namenode's
    assert settings.superuser == "nn"
    assert server_principal("hdfs@EXAMPLE.COM", "127.0.0.1") == "hdfs@EXAMPLE.COM"


@pytest.mark.parametrize("key", sorted(set(SECURE) - {"hadoop.security.authentication"}))
def test_kerberos_without_a_principal_or_keytab_names_the_key(key):
    with pytest.raises(ConfigError, match=key):
        SecuritySettings.from_config(Config({**SECURE, key: ""}))


@pytest.mark.parametrize("key, value, message", [
    ("hadoop.rpc.protection", "integrity,secret", "not 'secret'"),
    ("hadoop.rpc.protection", "", "must name one of"),
    ("dfs.http.policy", "HTTPS_PLEASE", "must be one of HTTP_ONLY"),
])
def test_bad_values_are_one_clear_error(key, value, message):
    with pytest.raises(ConfigError, match=message):
        SecuritySettings.from_config(Config({key: value}))


def test_qops_and_policies_parse_as_hadoop_lists():
    settings = SecuritySettings.from_config(Config({
        **SECURE, "hadoop.rpc.protection": "privacy, integrity",
        "dfs.data.transfer.protection": "integrity", "dfs.http.policy": "https_only"}))
    assert settings.rpc_protection == ("privacy", "integrity")
    assert settings.data_transfer_protection == ("integrity",)
    assert settings.block_tokens                 # SASL on the data port implies block tokens
    assert settings.https_enabled and not settings.http_enabled
