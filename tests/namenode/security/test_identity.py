"""Who a secure request acts as (namenode/security/identity.py): a Kerberos principal mapped
by auth_to_local, a doas only as hadoop.proxyuser.* allows it, a delegation token's owner
(and its real user) with no doas on top."""

import pytest

from nnlite.namenode.config import Config, ConfigError
from nnlite.namenode.security.auth_to_local import AuthToLocal, NoMatchingRule
from nnlite.namenode.security.identity import (
    Caller,
    TokenImpersonationError,
    kerberos_caller,
    login_user,
    token_caller,
)
from nnlite.namenode.security.proxy_users import ImpersonationError, ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.tokens import DelegationTokenIdentifier

RULES = AuthToLocal("RULE:[2:$1@$0](spark@NNLITE.TEST)s/.*/sparky/\nDEFAULT", "NNLITE.TEST")
PROXIES = ProxyUsers({"hadoop.proxyuser.sparky.users": "alice",
                      "hadoop.proxyuser.sparky.hosts": "127.0.0.1"})


def groups(user):
    return ["staff"]


def test_a_principal_acts_as_its_short_name():
    caller = kerberos_caller("alice@NNLITE.TEST", None, "127.0.0.1", RULES, PROXIES, groups)
    assert caller == Caller("alice", "127.0.0.1", "KERBEROS", None, "alice@NNLITE.TEST")
    assert caller.name == "alice@NNLITE.TEST" and caller.may_handle_tokens


@pytest.mark.parametrize("requested", ["alice@NNLITE.TEST", "alice"])
def test_naming_oneself_is_no_proxy(requested):
    caller = kerberos_caller("alice@NNLITE.TEST", requested, "127.0.0.1", RULES, PROXIES,
                             groups)
    assert caller.user == "alice" and caller.real_user is None


def test_a_doas_the_rules_allow():
    caller = kerberos_caller("spark/localhost@NNLITE.TEST", "alice", "127.0.0.1", RULES,
                             PROXIES, groups)
    assert (caller.user, caller.real_user, caller.real_name) == (
        "alice", "sparky", "spark/localhost@NNLITE.TEST")


@pytest.mark.parametrize("principal, requested, address", [
    ("spark/localhost@NNLITE.TEST", "hdfs", "127.0.0.1"),       # not in the users list
    ("spark/localhost@NNLITE.TEST", "alice", "10.0.0.9"),       # not from an allowed host
    ("alice@NNLITE.TEST", "bob", "127.0.0.1"),                  # no rules for alice at all
])
def test_a_doas_the_rules_refuse(principal, requested, address):
    with pytest.raises(ImpersonationError):
        kerberos_caller(principal, requested, address, RULES, PROXIES, groups)


def test_a_principal_no_rule_maps_is_refused():
    with pytest.raises(NoMatchingRule):
        kerberos_caller("eve@EVIL.TEST", None, "127.0.0.1", RULES, PROXIES, groups)


def test_a_token_acts_as_its_owner_and_keeps_its_real_user():
    ident = DelegationTokenIdentifier("alice@NNLITE.TEST", "yarn",
                                      "spark/localhost@NNLITE.TEST", 1, 2, 3, 4)
    caller = token_caller(ident, None, "127.0.0.1", RULES)
    assert (caller.user, caller.auth, caller.real_user) == ("alice", "TOKEN", "sparky")
    assert not caller.may_handle_tokens
    assert token_caller(ident, "alice@NNLITE.TEST", "127.0.0.1", RULES).user == "alice"


def test_no_doas_on_top_of_a_token():
    ident = DelegationTokenIdentifier("alice@NNLITE.TEST", "yarn", "", 1, 2, 3, 4)
    with pytest.raises(TokenImpersonationError, match="doesn't match what the client claims"):
        token_caller(ident, "hdfs", "127.0.0.1", RULES)


def test_simple_callers_are_as_before():
    caller = Caller("bob", "10.0.0.1")
    assert caller.auth == "SIMPLE" and caller.name == "bob" and caller.real_name == ""


def settings_with(rules: str) -> SecuritySettings:
    return SecuritySettings.from_config(Config({
        "hadoop.security.authentication": "kerberos",
        "dfs.namenode.kerberos.principal": "nn/_HOST@NNLITE.TEST",
        "dfs.namenode.keytab.file": "/nonexistent/nn.keytab",
        "dfs.web.authentication.kerberos.principal": "HTTP/_HOST@NNLITE.TEST",
        "hadoop.security.auth_to_local": rules}))


@pytest.mark.parametrize("rules, user", [
    ("DEFAULT", "nn"),
    (r"RULE:[2:$1@$0](nn@NNLITE\.TEST)s/.*/hdfs/ DEFAULT", "hdfs"),   # a common set-up
])
def test_the_namenode_logs_in_as_its_principal_under_auth_to_local(rules, user):
    assert login_user(settings_with(rules)) == user


def test_a_namenode_principal_no_rule_maps_cannot_log_in():
    with pytest.raises(ConfigError, match="dfs.namenode.kerberos.principal nn/"):
        login_user(settings_with("RULE:[1:$1]"))
