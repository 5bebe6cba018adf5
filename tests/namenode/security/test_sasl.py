"""SASL on the IPC port of a secure namenode process (a real KDC, ``tests/kerberos_realm.py``),
with the SASL client of ``sasl_client.py``: Hadoop's NEGOTIATE answer, Kerberos GSSAPI at
every qop, who the connection is, and the refusals (no SASL, SIMPLE, a context before the
exchange, a context naming someone else, wrapped frames out of turn)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite.formats.hadoop import client_datanode as cd
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import ipc
from nnlite.formats.hadoop import security as sec
from nnlite.formats.hadoop.acl import FsPermissionProto
from nnlite.formats.hadoop.proto import delimited, parse_delimited
from tests.namenode.rpc.rawclient import RawClient
from tests.namenode.security.sasl_client import Refused, SaslClient, sasl_frame
from tests.servers import wait_for

Status = ipc.RpcResponseHeaderRpcStatusProto
Code = ipc.RpcResponseHeaderRpcErrorCodeProto
ACCESS_CONTROL = "org.apache.hadoop.security.AccessControlException"
AUTHORIZATION = "org.apache.hadoop.security.authorize.AuthorizationException"


def client_core_site(protection: str = "privacy") -> str:
    """A Hadoop client's core-site.xml for a secure namenode over hdfs:// (Kerberos, the
    namenode's principal, ``hadoop.rpc.protection``), as the Spark and Flink tests hand it
    to their JVMs through HADOOP_CONF_DIR."""
    return f"""<?xml version="1.0"?>
<configuration>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@NNLITE.TEST</value>
  </property>
  <property><name>hadoop.rpc.protection</name><value>{protection}</value></property>
</configuration>
"""


def secure_args(kdc, keytab, protection="authentication,integrity,privacy") -> tuple:
    return ("-D", "hadoop.security.authentication=kerberos",
            "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
            "-D", f"dfs.namenode.keytab.file={keytab}",
            "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
            "-D", f"dfs.web.authentication.kerberos.keytab={keytab}",
            "-D", f"hadoop.rpc.protection={protection}",
            "-D", "hadoop.proxyuser.alice.users=carol",
            "-D", "hadoop.proxyuser.alice.hosts=127.0.0.1",
            "-D", "dfs.block.access.token.enable=true")


@pytest.fixture(scope="module")
def secure(kdc, start_module_namenode, tmp_path_factory):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path_factory.mktemp("keytab") / "nn.keytab")
    # the superuser group, so the calls here need no directory of their own
    return start_module_namenode(*secure_args(kdc, keytab), env=kdc.env_for(),
                                 users="alice=supergroup;carol=supergroup")


@pytest.fixture(scope="module")
def alice(kdc):
    return kdc.user("alice")


# ------------------------------------------------------------------ GssapiServer in-process

def gss_exchange(kdc, alice, qops):
    """A GssapiServer for nn/localhost with ``qops`` and alice's initiator, up to the
    server's layer offer: (server, client context, the offer's unwrapped bytes)."""
    import gssapi

    from nnlite.namenode.security.sasl import GssapiServer, acceptor_credentials
    nn = kdc.service("nn")
    server = GssapiServer(acceptor_credentials(nn.name, str(nn.keytab)), qops)
    creds = gssapi.Credentials(usage="initiate", store={"ccache": str(alice.ccache)})
    client = gssapi.SecurityContext(
        name=gssapi.Name("nn@localhost", gssapi.NameType.hostbased_service), creds=creds,
        usage="initiate", flags=gssapi.RequirementFlag.mutual_authentication)
    reply = server.step(client.step())
    client.step(reply)
    offer = server.step(b"")
    return server, client, client.unwrap(offer).message


def test_the_layer_offer_is_the_qops_bit_mask_and_a_64k_buffer(kdc, alice):
    server, _, offer = gss_exchange(kdc, alice, ("auth", "auth-conf"))
    assert offer == bytes((1 | 4,)) + (65536).to_bytes(3, "big")
    assert server.principal == "alice@NNLITE.TEST" and not server.complete


@pytest.mark.parametrize("answer,message", [
    pytest.param(bytes((2,)) + b"\x01\x00\x00", "unsupported protection: 2", id="not-offered"),
    pytest.param(bytes((1,)) + b"\x01\x00\x00hdfs@NNLITE.TEST", "not authorized to act as",
                 id="another-authzid"),
    pytest.param(b"\x01", "too short", id="short"),
])
def test_a_layer_answer_the_server_did_not_offer_is_refused(kdc, alice, answer, message):
    from nnlite.namenode.security.sasl import SaslRefused
    server, client, _ = gss_exchange(kdc, alice, ("auth",))
    with pytest.raises(SaslRefused, match=message):
        server.step(client.wrap(answer, False).message)
    assert not server.complete


def test_its_own_principal_as_authzid_is_accepted(kdc, alice):
    server, client, _ = gss_exchange(kdc, alice, ("auth-int",))
    assert server.step(client.wrap(bytes((2,)) + b"\x01\x00\x00alice@NNLITE.TEST",
                                   False).message) is None
    assert (server.complete, server.qop, server.authorization_id) == \
        (True, "auth-int", "alice@NNLITE.TEST")
    assert client.unwrap(server.wrap(b"answer")).message == b"answer"
    assert server.unwrap(client.wrap(b"call", False).message) == b"call"


def mkdir_and_owner(client, path: str) -> str:
    client.answer("mkdirs", cn.MkdirsRequestProto(
        src=path, masked=FsPermissionProto(perm=0o755), createParent=True))
    return client.answer("getFileInfo", cn.GetFileInfoRequestProto(src=path)).fs.owner


def fatal(client) -> object:
    answer = client.response()
    assert answer is not None, "no answer before the close"
    header, _ = answer
    assert header.status == Status.FATAL, header
    assert client.closed()
    return header


def test_negotiate_offers_token_then_kerberos(secure):
    with SaslClient(secure.rpc_port) as client:
        answer = client.negotiate()
    assert answer.state == ipc.RpcSaslSaslState.NEGOTIATE
    token, kerberos = answer.auths
    assert (token.method, token.mechanism, token.protocol, token.serverId) == \
        ("TOKEN", "DIGEST-MD5", "", "default")
    assert token.challenge.startswith(b'realm="default",nonce="')
    assert b'qop="auth,auth-int,auth-conf"' in token.challenge
    assert (kerberos.method, kerberos.mechanism, kerberos.protocol, kerberos.serverId) == \
        ("KERBEROS", "GSSAPI", "nn", "localhost")
    assert not kerberos.HasField("challenge")


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_kerberos_at_every_qop_is_the_principals_short_name(secure, alice, qop):
    with SaslClient(secure.rpc_port).kerberos(alice.ccache, qop).context(
            "alice@NNLITE.TEST") as client:
        assert mkdir_and_owner(client, f"/kerberos/{qop}") == "alice"
        # many calls, both ways through the layer, sequence numbers in step
        for _ in range(20):
            assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


def test_a_connection_context_without_a_user_is_the_authenticated_one(secure, alice):
    # hdfs-native's Kerberos context: the real user only, no effective user
    with SaslClient(secure.rpc_port).kerberos(alice.ccache).context(
            "", real_user="mallory") as client:
        assert mkdir_and_owner(client, "/kerberos/no-user") == "alice"


def test_a_context_naming_another_user_is_a_proxy_request_the_rules_refuse(secure, alice):
    with SaslClient(secure.rpc_port).kerberos(alice.ccache).context("hdfs") as client:
        header = fatal(client)
    assert header.exceptionClassName == AUTHORIZATION
    assert header.errorMsg == "User: alice is not allowed to impersonate hdfs"
    assert header.errorDetail == Code.FATAL_UNAUTHORIZED


def test_a_proxy_user_the_rules_allow(secure, alice):
    with SaslClient(secure.rpc_port).kerberos(alice.ccache, "auth-int").context(
            "carol") as client:
        assert mkdir_and_owner(client, "/kerberos/proxied") == "carol"


def test_a_simple_preamble_is_refused(secure):
    with RawClient(secure.rpc_port).connect(user="hdfs") as client:
        header = fatal(client)
    assert header.exceptionClassName == ACCESS_CONTROL
    assert header.errorMsg == \
        "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]"
    assert header.errorDetail == Code.FATAL_UNAUTHORIZED
    assert header.callId == 0xFFFFFFFF        # Server.AUTHORIZATION_FAILED_CALL_ID, -1


def test_initiating_simple_is_refused(secure):
    with SaslClient(secure.rpc_port) as client:
        client.negotiate()
        simple = ipc.RpcSaslSaslAuth(method="SIMPLE", mechanism="")
        client.send(sasl_frame(ipc.RpcSaslProto(state=ipc.RpcSaslSaslState.INITIATE,
                                                auths=[simple])))
        with pytest.raises(Refused) as refused:
            client.sasl_answer()
        assert client.closed()
    assert refused.value.java_class == ACCESS_CONTROL
    assert refused.value.message == \
        "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]"
    assert refused.value.header.callId == ipc.SASL_CALL_ID & 0xFFFFFFFF


def test_a_context_or_a_call_before_sasl_completes_is_fatal(secure):
    with SaslClient(secure.rpc_port) as client:
        client.negotiate()
        client.context("alice")
        header = fatal(client)
    assert header.errorMsg == "Connection header sent during SASL negotiation"
    with SaslClient(secure.rpc_port) as client:
        client.negotiate()
        header, _ = client.call("getFileInfo", cn.GetFileInfoRequestProto(src="/"))
        assert header.status == Status.FATAL
        assert header.errorMsg == "Connection context not established"


def test_a_second_negotiate_and_a_wrap_out_of_turn_are_fatal(secure, alice):
    with SaslClient(secure.rpc_port) as client:
        client.negotiate()
        client.send(sasl_frame(ipc.RpcSaslProto(state=ipc.RpcSaslSaslState.NEGOTIATE)))
        with pytest.raises(Refused, match="Client already attempted negotiation"):
            client.sasl_answer()
    with SaslClient(secure.rpc_port).kerberos(alice.ccache) as client:
        client.send(sasl_frame(ipc.RpcSaslProto(state=ipc.RpcSaslSaslState.WRAP,
                                                token=b"x")))
        header = fatal(client)
    assert header.errorMsg == "Server is not wrapping data"


def test_a_ticket_for_another_service_is_refused(secure, kdc, alice):
    import gssapi
    with SaslClient(secure.rpc_port) as client:
        client.negotiate()
        creds = gssapi.Credentials(usage="initiate", store={"ccache": str(alice.ccache)})
        other = kdc.service("other")
        ctx = gssapi.SecurityContext(name=gssapi.Name(other.name,
                                                      gssapi.NameType.kerberos_principal),
                                     creds=creds, usage="initiate")
        with pytest.raises(Refused) as refused:
            client.initiate("KERBEROS", ctx.step())
    assert refused.value.java_class == "javax.security.sasl.SaslException"
    assert refused.value.message.startswith("GSS initiate failed")


def test_the_server_keeps_serving_after_refusals(secure, alice):
    with SaslClient(secure.rpc_port).kerberos(alice.ccache, "auth-conf").context() as client:
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


# ------------------------------------------------------------------ delegation tokens

INVALID_TOKEN = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
SASL_EXCEPTION = "javax.security.sasl.SaslException"


def get_token(port, user, renewer: str | None = None):
    """A delegation token fetched over Kerberos (``getDelegationToken``)."""
    with SaslClient(port).kerberos(user.ccache).context() as client:
        answer = client.answer("getDelegationToken", sec.GetDelegationTokenRequestProto(
            renewer=renewer if renewer is not None else user.short))
    assert answer.HasField("token"), "the namenode issued no token"
    assert answer.token.kind == "HDFS_DELEGATION_TOKEN" and answer.token.service == ""
    return answer.token


@pytest.fixture(scope="module")
def token(secure, alice):
    return get_token(secure.rpc_port, alice)


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_a_token_authenticates_its_owner_at_every_qop(secure, token, qop):
    with SaslClient(secure.rpc_port).token(token.identifier, token.password, qop) \
            .context() as client:
        assert mkdir_and_owner(client, f"/token/{qop}") == "alice"
        for _ in range(20):
            assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


def test_a_token_connection_may_not_get_another_token(secure, token):
    with SaslClient(secure.rpc_port).token(token.identifier, token.password) \
            .context() as client:
        header, _ = client.call("getDelegationToken",
                                sec.GetDelegationTokenRequestProto(renewer="alice"))
    assert header.status == Status.ERROR
    assert header.errorMsg == \
        "Delegation Token can be issued only with kerberos or web authentication"


def test_a_token_connection_naming_another_user_is_refused(secure, token):
    with SaslClient(secure.rpc_port).token(token.identifier, token.password) \
            .context("hdfs") as client:
        header = fatal(client)
    assert header.exceptionClassName == ACCESS_CONTROL
    assert header.errorMsg.startswith(
        "Authenticated user (alice@NNLITE.TEST (auth:TOKEN)) doesn't match what the client "
        "claims to be (hdfs")


def test_a_wrong_password_is_a_mismatched_response(secure, token):
    with SaslClient(secure.rpc_port) as client, pytest.raises(Refused) as refused:
        client.token(token.identifier, b"forged" * 4)
    assert refused.value.java_class == SASL_EXCEPTION
    assert "Mismatched response" in refused.value.message
    assert refused.value.header.errorDetail == Code.FATAL_UNAUTHORIZED


def test_an_identifier_never_issued_is_an_invalid_token(secure, token):
    from nnlite.namenode.security.tokens import DelegationTokenIdentifier
    forged = DelegationTokenIdentifier("hdfs@NNLITE.TEST", "hdfs", "", 1, 2, 99999, 1)
    with SaslClient(secure.rpc_port) as client, pytest.raises(Refused) as refused:
        client.token(forged.encode(), token.password)
    assert refused.value.java_class == INVALID_TOKEN
    assert "can't be found in cache" in refused.value.message


def test_renew_by_the_renewer_only_cancel_then_refused(secure, alice, kdc):
    bob = kdc.user("bob")
    token = get_token(secure.rpc_port, alice, renewer="bob")
    with SaslClient(secure.rpc_port).kerberos(alice.ccache).context() as client:
        header, _ = client.call("renewDelegationToken",
                                sec.RenewDelegationTokenRequestProto(token=token))
        assert header.status == Status.ERROR
        assert header.exceptionClassName == ACCESS_CONTROL
    with SaslClient(secure.rpc_port).kerberos(bob.ccache).context() as client:
        renewed = client.answer("renewDelegationToken",
                                sec.RenewDelegationTokenRequestProto(token=token))
        assert renewed.newExpiryTime > 0
    with SaslClient(secure.rpc_port).token(token.identifier, token.password).context() \
            as client:
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs
    with SaslClient(secure.rpc_port).kerberos(alice.ccache).context() as client:
        client.answer("cancelDelegationToken",
                      sec.CancelDelegationTokenRequestProto(token=token))
    with SaslClient(secure.rpc_port) as client, pytest.raises(Refused) as refused:
        client.token(token.identifier, token.password)
    assert refused.value.java_class == INVALID_TOKEN
    assert "can't be found in cache" in refused.value.message


def test_an_expired_token_is_refused(kdc, start_namenode, tmp_path, alice):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path / "nn.keytab")
    nn = start_namenode(*secure_args(kdc, keytab), "-D",
                        "dfs.namenode.delegation.token.renew-interval=1000",
                        env=kdc.env_for(), users="alice=supergroup")
    token = get_token(nn.rpc_port, alice)

    def refused() -> Refused | None:
        with SaslClient(nn.rpc_port) as client:
            try:
                client.token(token.identifier, token.password)
            except Refused as exc:
                return exc
        return None
    exc = wait_for(refused, 30, "the token to expire")
    assert exc.java_class == INVALID_TOKEN and "is expired" in exc.message


def test_a_token_answered_over_rpc_survives_kill_9(kdc, start_namenode, tmp_path, alice):
    """getDelegationToken is answered only once its op is durable: SIGKILL right after the
    answer, restart on the same name dir, and the token authenticates."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path / "nn.keytab")
    args = secure_args(kdc, keytab)
    nn = start_namenode(*args, env=kdc.env_for(), users="alice=supergroup")
    token = get_token(nn.rpc_port, alice)
    nn.kill()
    again = start_namenode(*args, name_dirs=nn.name_dirs, env=kdc.env_for(),
                           users="alice=supergroup")
    with SaslClient(again.rpc_port).token(token.identifier, token.password).context() \
            as client:
        assert mkdir_and_owner(client, "/after-kill") == "alice"


def test_a_token_works_on_the_new_active_after_a_failover(kdc, etcd_cluster, tmp_path,
                                                          alice):
    """An HA set in secure mode: a token the active issued over RPC is refused by the
    standby with StandbyException (FATAL_UNAUTHORIZED), as HDFS's
    ``retriableRetrievePassword`` checks the READ category first and ``Server.getTrueCause``
    sends that exception, so a client fails over; the same token authenticates on the
    standby once it took over from the killed active (its ops went through the shared
    journal like any other)."""
    from tests.namenode.ha.haset import HASet
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"),
                           path=tmp_path / "nn.keytab")
    settings = {"hadoop.security.authentication": "kerberos",
                "dfs.namenode.kerberos.principal": f"nn/_HOST@{kdc.name}",
                "dfs.namenode.keytab.file": str(keytab),
                "dfs.web.authentication.kerberos.principal": f"HTTP/_HOST@{kdc.name}",
                "dfs.web.authentication.kerberos.keytab": str(keytab),
                "hadoop.user.group.static.mapping.overrides": "alice=supergroup"}
    (tmp_path / "ha").mkdir()
    haset = HASet(tmp_path / "ha", etcd_cluster, settings=settings)
    try:
        active = haset.start_all()
        token = get_token(haset.rpc_ports[active], alice)
        standby = 1 - active

        def standby_refusal() -> Refused | None:
            try:
                with SaslClient(haset.rpc_ports[standby]).token(
                        token.identifier, token.password).context():
                    raise AssertionError("the standby authenticated a token")
            except Refused as exc:  # RetriableException until it hears the active's pulse
                return exc if "Retriable" not in exc.java_class else None
        refused = wait_for(standby_refusal, 60, "the standby's StandbyException")
        assert refused.java_class == "org.apache.hadoop.ipc.StandbyException"
        assert refused.header.errorDetail == \
            ipc.RpcResponseHeaderRpcErrorCodeProto.FATAL_UNAUTHORIZED
        assert "Operation category READ is not supported in state standby" in refused.message
        haset.kill(active)
        new = haset.active(excluding=active)
        assert new == standby

        def owner() -> str | None:
            try:
                with SaslClient(haset.rpc_ports[new]).token(
                        token.identifier, token.password).context() as client:
                    return mkdir_and_owner(client, "/after-failover")
            except Refused:         # RetriableException while it takes over
                return None
        assert wait_for(owner, 60, "the token on the new active") == "alice"
    finally:
        haset.close()


# ------------------------------------------------------------------ the datanode's IPC port

def located_block(port, user, path: str, data: bytes):
    """``path`` written over Kerberos with hdfs-native, then its first located block."""
    hdfs_native = pytest.importorskip("hdfs_native")
    os.environ["KRB5CCNAME"] = f"FILE:{user.ccache}"
    try:
        client = hdfs_native.Client(f"hdfs://127.0.0.1:{port}",
                                    config={"hadoop.security.authentication": "kerberos"})
        with client.create(path) as stream:
            stream.write(data)
    finally:
        del os.environ["KRB5CCNAME"]
    with SaslClient(port).kerberos(user.ccache).context() as conn:
        located = conn.answer("getBlockLocations", cn.GetBlockLocationsRequestProto(
            src=path, offset=0, length=len(data)))
    return located.locations.blocks[0]


def test_the_datanode_ipc_port_takes_a_block_token_only(secure, alice):
    block = located_block(secure.rpc_port, alice, "/dn/f", b"x" * 1000)
    port = block.locs[0].id.ipcPort
    request = cd.GetReplicaVisibleLengthRequestProto(block=block.b)
    with RawClient(port).connect(user="alice") as client:
        header = fatal(client)
    assert header.errorMsg == \
        "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]"
    token = block.blockToken
    assert token.kind == "HDFS_BLOCK_TOKEN"
    with SaslClient(port).token(token.identifier, token.password, "auth-int").context() \
            as client:
        header, rest = client.call("getReplicaVisibleLength", request, protocol=cd.PROTOCOL)
        assert header.status == Status.SUCCESS, header
        length = parse_delimited(cd.GetReplicaVisibleLengthResponseProto, rest)[0].length
    assert length == 1000
    with SaslClient(port) as client, pytest.raises(Refused) as refused:
        client.token(token.identifier, b"forged" * 4)
    assert "Mismatched response" in refused.value.message
    other = located_block(secure.rpc_port, alice, "/dn/g", b"y" * 10).blockToken
    with SaslClient(port).token(other.identifier, other.password, "auth-int").context() \
            as client:                  # DataNode.checkReadAccess: the token's own block only
        header, _ = client.call("getReplicaVisibleLength", request, protocol=cd.PROTOCOL)
    assert header.status == Status.ERROR, header
    assert header.exceptionClassName == INVALID_TOKEN
    assert "doesn't apply to block" in header.errorMsg
    assert f"blk_{block.b.blockId}_" in header.errorMsg


# ------------------------------------------------------------------ Hadoop's own client

JAVA_CLIENT = Path(__file__).with_name("SecureHdfsClient.java")


def jvm(kdc) -> list[str]:
    """``java`` with PySpark's Hadoop jars and the realm's krb5.conf."""
    pyspark = pytest.importorskip("pyspark")
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    jars = Path(pyspark.__file__).parent / "jars"
    return [java, "-cp", f"{jars}/*", f"-Djava.security.krb5.conf={kdc.krb5_conf}"]


def run_java_client(kdc, namenode, user, protection: str, directory: str) -> dict[str, str]:
    """SecureHdfsClient.java in a JVM of its own: its ``key=value`` lines."""
    proc = subprocess.run(
        [*jvm(kdc), str(JAVA_CLIENT), namenode.hdfs, protection, user.name, str(user.keytab),
         directory],
        capture_output=True, text=True, timeout=240, env={**os.environ, **kdc.env_for()})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.partition("=") for line in proc.stdout.splitlines() if "=" in line]
    return {key: value for key, _, value in lines}


@pytest.mark.parametrize("protection", ["authentication", "privacy"])
def test_hadoops_client_logged_in_from_a_keytab(kdc, secure, alice, protection):
    out = run_java_client(kdc, secure, alice, protection, f"/java/{protection}")
    assert out["login"] == "alice@NNLITE.TEST short=alice"
    assert out["ls"] == "f owner=alice len=13"
    assert out["cat"] == "hello, secure"
    assert out["hflushed"] == "flushed"
    # the token path: DIGEST-MD5 from Java's own SASL client, 3DES under privacy
    assert out["token"].startswith("HDFS_DELEGATION_TOKEN service=127.0.0.1:")
    assert (out["token-cat"], out["token-owner"]) == ("hello, secure", "alice")
    assert out["token-renew-error"] == ("java.io.IOException:Delegation Token can be renewed "
                                        "only with kerberos or web authentication")
    assert out["token-get-error"] == ("java.io.IOException:Delegation Token can be issued "
                                      "only with kerberos or web authentication")
    assert out["renew"] == "true"
    assert out["cancelled-cat-error"].startswith(f"{INVALID_TOKEN}:token (HDFS_DELEGATION_"
                                                 f"TOKEN token ")
    assert out["cancelled-cat-error"].endswith("can't be found in cache")


# ------------------------------------------------------------------ hdfs-native

def test_hdfs_native_with_a_ticket_cache(secure, alice, monkeypatch):
    """The Rust client: GSSAPI from the ticket cache KRB5CCNAME names (libgssapi_krb5,
    loaded by hdfs-native itself), the strongest layer offered (privacy)."""
    hdfs_native = pytest.importorskip("hdfs_native")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{alice.ccache}")
    client = hdfs_native.Client(secure.hdfs,
                                config={"hadoop.security.authentication": "kerberos"})
    data = os.urandom(300_000)
    with client.create("/native/f") as stream:
        stream.write(data)
    with client.read("/native/f") as stream:
        assert stream.read() == data
    status = client.get_file_info("/native/f")
    assert (status.owner, status.length) == ("alice", len(data))


CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>{uri}</value></property>
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@NNLITE.TEST</value>
  </property>
  <property><name>hadoop.rpc.protection</name><value>integrity</value></property>
  <property><name>ipc.client.connect.max.retries</name><value>1</value></property>
</configuration>
"""


def fsshell(kdc, conf_dir: Path, user, *args: str) -> subprocess.CompletedProcess:
    """Hadoop's FsShell (its own main, ``conf_dir``'s core-site.xml) as ``user``'s ticket
    cache (None: an empty one)."""
    java, _, jars, *rest = jvm(kdc)
    return subprocess.run(
        [java, "-cp", f"{conf_dir}:{jars}", *rest, "org.apache.hadoop.fs.FsShell", *args],
        capture_output=True, text=True, timeout=240, env={**os.environ, **kdc.env_for(user)})


def test_fsshell_with_a_ticket_cache_and_without_one(kdc, secure, alice, tmp_path):
    (tmp_path / "core-site.xml").write_text(CORE_SITE.format(uri=secure.hdfs))
    local = tmp_path / "up.txt"
    local.write_text("shell bytes")
    put = fsshell(kdc, tmp_path, alice, "-put", str(local), "/shell-f")
    assert put.returncode == 0, put.stderr
    cat = fsshell(kdc, tmp_path, alice, "-cat", "/shell-f")
    assert (cat.returncode, cat.stdout) == (0, "shell bytes"), cat.stderr
    listing = fsshell(kdc, tmp_path, alice, "-ls", "/")
    line = next(line for line in listing.stdout.splitlines() if line.endswith("/shell-f"))
    assert " alice supergroup " in line, listing.stderr
    # no ticket: Hadoop's client finds nothing it can offer and refuses on its side
    refused = fsshell(kdc, tmp_path, None, "-ls", "/")
    assert refused.returncode != 0
    assert "Client cannot authenticate via:[TOKEN, KERBEROS]" in refused.stderr


NATIVE_WITH_TOKENS = """
import os, sys, hdfs_native
client = hdfs_native.Client(sys.argv[1], config={"hadoop.security.authentication": "kerberos"})
with client.create("/native/token-f") as stream:
    stream.write(b"written with a token")
with client.read("/native/token-f") as stream:
    print(stream.read().decode())
print(client.get_file_info("/native/token-f").owner)
"""


def test_hdfs_native_with_only_a_delegation_token(secure, alice, tmp_path):
    """The Rust client's own DIGEST-MD5 (3DES under the privacy it picks) with a token from
    HADOOP_TOKEN_FILE_LOCATION (Hadoop's Credentials file, protobuf format) and an empty
    ticket cache: a process of its own, since it reads the file once."""
    pytest.importorskip("hdfs_native")
    token = get_token(secure.rpc_port, alice)
    token.service = f"127.0.0.1:{secure.rpc_port}"      # as DFSClient sets it
    credentials = sec.CredentialsProto(tokens=[sec.CredentialsKVProto(
        alias=token.service, token=token)])
    (tmp_path / "tokens").write_bytes(b"HDTS\x01" + delimited(credentials))
    env = {**os.environ, "KRB5CCNAME": f"FILE:{tmp_path / 'empty.ccache'}",
           "HADOOP_TOKEN_FILE_LOCATION": str(tmp_path / "tokens")}
    proc = subprocess.run([sys.executable, "-c", NATIVE_WITH_TOKENS, secure.hdfs],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["written with a token", "alice"]
