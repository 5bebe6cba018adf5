"""hadoop.security.auth_to_local (namenode/security/auth_to_local.py): the cases of Hadoop's
TestKerberosName, with its rules and its default realm."""

import pytest

from nnlite.namenode.security.auth_to_local import (
    AuthToLocal,
    BadFormatString,
    InvalidRules,
    KerberosName,
    MalformedName,
    NoMatchingRule,
)

REALM = "EXAMPLE.COM"
RULES = "\n".join([r"RULE:[1:$1@$0](.*@YAHOO\.COM)s/@.*//",
                   r"RULE:[2:$1](johndoe)s/^.*$/guest/",
                   r"RULE:[2:$1;$2](^.*;admin$)s/;admin$//",
                   r"RULE:[2:$2](root)",
                   "DEFAULT"])


@pytest.mark.parametrize("principal, short", [
    ("omalley@EXAMPLE.COM", "omalley"),
    ("hdfs/10.0.0.1@EXAMPLE.COM", "hdfs"),
    ("oom@YAHOO.COM", "oom"),
    ("johndoe/zoo@FOO.COM", "guest"),
    ("joe/admin@FOO.COM", "joe"),
    ("joe/root@FOO.COM", "root"),
    ("alice", "alice"),                        # already short
])
def test_rules(principal, short):
    assert AuthToLocal(RULES, REALM).short_name(principal) == short


@pytest.mark.parametrize("principal", ["foo@ACME.COM", "root/joe@FOO.COM"])
def test_no_rule_applies_under_the_hadoop_mechanism(principal):
    with pytest.raises(NoMatchingRule, match=f"No rules applied to {principal}"):
        AuthToLocal(RULES, REALM).short_name(principal)


@pytest.mark.parametrize("principal", ["foo@ACME.COM", "root/joe@FOO.COM"])
def test_the_mit_mechanism_keeps_the_principal(principal):
    assert AuthToLocal(RULES, REALM, "mit").short_name(principal) == principal


@pytest.mark.parametrize("name", ["owen/owen/owen@FOO.COM", "owen@foo/bar.com"])
def test_malformed_names(name):
    with pytest.raises(MalformedName, match="Malformed Kerberos name"):
        AuthToLocal(RULES, REALM).short_name(name)


@pytest.mark.parametrize("principal", ["Joe@FOO.COM", "Joe/root@FOO.COM", "Joe/admin@FOO.COM",
                                       "Joe/guestguest@FOO.COM"])
def test_to_lower_case(principal):
    rules = "\n".join(["RULE:[1:$1]/L", "RULE:[2:$1]/L",
                       r"RULE:[2:$1;$2](^.*;admin$)s/;admin$///L",
                       r"RULE:[2:$1;$2](^.*;guest$)s/;guest$//g/L", "DEFAULT"])
    assert AuthToLocal(rules, REALM).short_name(principal) == "joe"


def test_parsing_a_name():
    assert KerberosName.parse("HTTP/abc.com@EXAMPLE.COM") == KerberosName(
        "HTTP", "abc.com", "EXAMPLE.COM")
    assert KerberosName.parse("HTTP/abc.com") == KerberosName("HTTP", "abc.com", None)
    assert KerberosName.parse("HTTP@EXAMPLE.COM") == KerberosName("HTTP", None, "EXAMPLE.COM")
    assert str(KerberosName.parse("HTTP/abc.com@EXAMPLE.COM")) == "HTTP/abc.com@EXAMPLE.COM"


def test_a_non_simple_result_is_refused_under_hadoop():
    with pytest.raises(NoMatchingRule, match="Non-simple name nn/host"):
        AuthToLocal("RULE:[2:$1/$2]", REALM).short_name("nn/host@EXAMPLE.COM")


def test_global_substitution_and_groups_in_the_replacement():
    rules = r"RULE:[1:$1](a.*)s/(a)/x$1/g"
    assert AuthToLocal(rules, REALM).short_name("aba@X.COM") == "xabxa"


def test_a_format_naming_a_missing_component():
    with pytest.raises(BadFormatString, match="outside of the valid range 0 to 2"):
        AuthToLocal("RULE:[2:$3]", REALM).short_name("a/b@EXAMPLE.COM")


@pytest.mark.parametrize("rules", ["RULE:[1:$1", "NOPE", "DEFAULT\nRULE:[x:$1]"])
def test_rules_that_do_not_parse(rules):
    with pytest.raises(InvalidRules, match="Invalid rule"):
        AuthToLocal(rules, REALM)


def test_default_maps_only_the_default_realm():
    rules = AuthToLocal("DEFAULT", "NNLITE.TEST")
    assert rules.short_name("nn/localhost@NNLITE.TEST") == "nn"
    with pytest.raises(NoMatchingRule):
        rules.short_name("nn/localhost@OTHER.TEST")
