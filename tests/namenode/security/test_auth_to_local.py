"""hadoop.security.auth_to_local (namenode/security/auth_to_local.py): the cases of Hadoop's
TestKerberosName, with its rules and its default realm; then a secure namenode process whose
rules map alice@NNLITE.TEST to another user, whose permission and ACL checks see that name
over WebHDFS and hdfs:// alike."""

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop.acl import FsPermissionProto
from nnlite.namenode.security.auth_to_local import (
    AuthToLocal,
    BadFormatString,
    InvalidRules,
    KerberosName,
    MalformedName,
    NoMatchingRule,
)
from tests.kerberos_realm import Principal
from tests.namenode.http.secure import kerberos_session, secure_args, server_env
from tests.namenode.security.sasl_client import SaslClient

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


# ------------------------------------ a secure namenode: permissions and ACLs, mapped names

RULE = (r"RULE:[1:$1@$0](alice@NNLITE\.TEST)s/.*/analyst/ "
        r"RULE:[2:$1@$0](nn@NNLITE\.TEST)s/.*/hdfs/ DEFAULT")


@pytest.fixture(scope="module")
def mapped(kdc, start_module_namenode, tmp_path_factory):
    """A secure namenode whose auth_to_local maps alice@NNLITE.TEST to ``analyst`` and its
    own principal nn/localhost to ``hdfs``, the superuser then."""
    args = secure_args(kdc, "-D", f"hadoop.security.auth_to_local={RULE}")
    return start_module_namenode(*args, env=server_env(kdc), users="analyst=staff;bob=staff")


def webhdfs(session, nn, method: str, path: str, op: str, **params):
    return session.request(method, f"http://localhost:{nn.port}/webhdfs/v1{path}",
                           params={"op": op, **params})


def test_permissions_and_acls_see_the_mapped_name_over_both_schemes(kdc, mapped):
    nn_service = kdc.service("nn")
    superuser = Principal(nn_service.name, nn_service.keytab,
                          nn_service.keytab.with_suffix(".ccache"))
    kdc.kinit(superuser)
    admin, alice, bob = (kerberos_session(p) for p in (superuser, kdc.user("alice"),
                                                         kdc.user("bob")))
    denied = webhdfs(alice, mapped, "PUT", "/top", "MKDIRS")
    assert denied.status_code == 403
    assert "Permission denied: user=analyst, access=WRITE" in denied.text
    assert webhdfs(admin, mapped, "PUT", "/home/analyst", "MKDIRS").json() == {"boolean": True}
    assert webhdfs(admin, mapped, "PUT", "/home/analyst", "SETOWNER",
                   owner="analyst").status_code == 200
    claimed = webhdfs(alice, mapped, "PUT", "/home/analyst/q1", "MKDIRS", **{"user.name": "hdfs"})
    assert claimed.status_code == 403                           # JspHelper.checkUsername
    assert "Usernames not matched: name=hdfs != expected=analyst" in claimed.text
    made = webhdfs(alice, mapped, "PUT", "/home/analyst/q1", "MKDIRS")
    assert made.status_code == 200, made.text
    status = webhdfs(alice, mapped, "GET", "/home/analyst/q1", "GETFILESTATUS").json()
    assert status["FileStatus"]["owner"] == "analyst"
    refused = webhdfs(bob, mapped, "PUT", "/home/analyst/q1/x", "MKDIRS")
    assert refused.status_code == 403 and "user=bob" in refused.text
    assert webhdfs(alice, mapped, "PUT", "/home/analyst/q1", "MODIFYACLENTRIES",
                   aclspec="user:bob:rwx").status_code == 200
    assert webhdfs(bob, mapped, "PUT", "/home/analyst/q1/x", "MKDIRS").status_code == 200
    with SaslClient(mapped.rpc_port).kerberos(kdc.user("alice").ccache).context() as client:
        info = client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/home/analyst/q1/x"))
        assert info.fs.owner == "bob"
        client.answer("mkdirs", cn.MkdirsRequestProto(
            src="/home/analyst/rpc", masked=FsPermissionProto(perm=0o755), createParent=True))
        info = client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/home/analyst/rpc"))
        assert info.fs.owner == "analyst"
