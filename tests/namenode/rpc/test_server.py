"""The IPC layer of the RPC server against a real namenode process, over a plain socket:
the preamble, the connection context and proxy users, FATAL answers for frames that cannot
be read, ERROR answers for calls that cannot be made; after each, the server keeps serving."""

from __future__ import annotations

import json
import random
import urllib.request

import pytest

from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import ipc
from nnlite.formats.hadoop.acl import FsPermissionProto
from nnlite.formats.hadoop.proto import delimited
from tests.namenode.rpc.rawclient import CLIENT_ID, RawClient

Status = ipc.RpcResponseHeaderRpcStatusProto
Code = ipc.RpcResponseHeaderRpcErrorCodeProto
PROXY = ("-D", "hadoop.proxyuser.gateway.users=tester",
         "-D", "hadoop.proxyuser.gateway.hosts=127.0.0.1")


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode(*PROXY)


def still_serving(nn) -> None:
    with RawClient(nn.rpc_port).connect() as client:
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs.fileType \
            == 1


def fatal(client: RawClient):
    """The FATAL answer the server sent before closing the connection."""
    header, rest = client.response()
    assert header.status == Status.FATAL and rest == b""
    assert client.closed()
    return header


def test_a_call_is_answered_with_its_call_id_and_client_id(nn):
    with RawClient(nn.rpc_port).connect() as client:
        header, _ = client.call("getServerDefaults", cn.GetServerDefaultsRequestProto())
        assert (header.callId, header.clientId, header.status) == (1, CLIENT_ID,
                                                                   Status.SUCCESS)
        assert header.serverIpcVersionNum == ipc.VERSION


def test_a_garbage_preamble_is_one_fatal_answer(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(b"\x00garbage-bytes")
        header = fatal(client)
        assert "not a Hadoop IPC connection header" in header.errorMsg
    still_serving(nn)


def test_an_http_request_gets_hadoops_hint(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = client.sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 404") and b"Hadoop IPC port" in answer


def test_another_ipc_version_is_a_version_mismatch(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(b"hrpc\x07\x00\x00")
        header = fatal(client)
    assert header.exceptionClassName == "org.apache.hadoop.ipc.RPC$VersionMismatch"
    assert header.errorDetail == Code.FATAL_VERSION_MISMATCH


def test_a_frame_over_the_maximum_data_length_is_fatal(nn):
    with RawClient(nn.rpc_port).connect() as client:
        client.send(((128 << 20) + 1).to_bytes(4, "big"))
        header = fatal(client)
    assert "longer than maximum configured RPC length 134217728" in header.errorMsg
    still_serving(nn)


def test_a_frame_whose_header_does_not_parse_is_fatal(nn):
    with RawClient(nn.rpc_port).connect() as client:
        client.send(ipc.frame(b"\x05\xff\xff\xff\xff\xff"))
        header = fatal(client)
    assert header.errorDetail == Code.FATAL_DESERIALIZING_REQUEST
    still_serving(nn)


@pytest.mark.parametrize("cut", [2, 4, 30], ids=["in-length", "after-length", "in-payload"])
def test_a_frame_cut_off_by_the_client_leaves_the_server_serving(nn, cut):
    frame = ipc.request(1, CLIENT_ID, "mkdirs", cn.PROTOCOL, cn.MkdirsRequestProto(
        src="/cut", masked=FsPermissionProto(perm=0o755), createParent=True))
    with RawClient(nn.rpc_port).connect() as client:
        client.send(frame[:cut])
    still_serving(nn)
    with RawClient(nn.rpc_port).connect() as client:
        assert not client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/cut")) \
            .HasField("fs")


def test_an_unknown_method_is_rpc_no_such_method_and_the_connection_stays(nn):
    with RawClient(nn.rpc_port).connect() as client:
        header, _ = client.call("frobnicate", cn.GetServerDefaultsRequestProto())
        assert header.status == Status.ERROR
        assert header.exceptionClassName == "org.apache.hadoop.ipc.RpcNoSuchMethodException"
        assert header.errorDetail == Code.ERROR_NO_SUCH_METHOD
        assert "Unknown method frobnicate" in header.errorMsg
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


def test_another_protocol_is_rpc_no_such_protocol(nn):
    with RawClient(nn.rpc_port).connect() as client:
        header, _ = client.call("getFileInfo", cn.GetFileInfoRequestProto(src="/"),
                                protocol="org.example.Nope")
    assert header.exceptionClassName == "org.apache.hadoop.ipc.RpcNoSuchProtocolException"


def test_a_call_before_the_connection_context_is_fatal(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_NONE).to_bytes())
        client.send(ipc.request(0, CLIENT_ID, "getFileInfo", cn.PROTOCOL,
                                cn.GetFileInfoRequestProto(src="/")))
        assert "Connection context not established" in fatal(client).errorMsg


def test_a_namenode_error_carries_its_java_class(nn):
    with RawClient(nn.rpc_port).connect() as client:
        header, _ = client.call("getBlockLocations", cn.GetBlockLocationsRequestProto(
            src="/missing", offset=0, length=1))
        assert header.status == Status.ERROR and header.errorDetail == Code.ERROR_APPLICATION
        assert header.exceptionClassName == "java.io.FileNotFoundException"
        assert "/missing" in header.errorMsg
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


def test_a_write_is_answered_once_durable_and_then_visible(nn):
    with RawClient(nn.rpc_port).connect() as client:
        made = client.answer("mkdirs", cn.MkdirsRequestProto(
            src="/durable/a", masked=FsPermissionProto(perm=0o755), createParent=True))
        assert made.result
        status = client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/durable/a"))
    assert (status.fs.fileType, status.fs.owner) == (1, "tester")


def test_a_proxy_user_acts_as_the_user_it_may_impersonate(nn):
    with RawClient(nn.rpc_port).connect(user="tester", real_user="gateway") as client:
        client.answer("mkdirs", cn.MkdirsRequestProto(
            src="/proxied", masked=FsPermissionProto(perm=0o755), createParent=True))
        owner = client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/proxied")).fs.owner
    assert owner == "tester"


def test_a_proxy_user_the_rules_refuse_is_fatal_unauthorized(nn):
    with RawClient(nn.rpc_port).connect(user="root", real_user="gateway") as client:
        header = fatal(client)
    assert header.exceptionClassName == \
        "org.apache.hadoop.security.authorize.AuthorizationException"
    assert header.errorMsg == "User: gateway is not allowed to impersonate root"
    assert header.errorDetail == Code.FATAL_UNAUTHORIZED


def test_sasl_negotiation_is_answered_success_for_simple_authentication(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_SASL).to_bytes())
        header = ipc.RpcRequestHeaderProto(callId=ipc.SASL_CALL_ID, clientId=b"",
                                           rpcKind=ipc.RpcKindProto.RPC_PROTOCOL_BUFFER)
        client.send(ipc.frame(delimited(header, ipc.RpcSaslProto(
            state=ipc.RpcSaslSaslState.NEGOTIATE))))
        answer, rest = client.response()
        assert answer.status == Status.SUCCESS and answer.callId == ipc.SASL_CALL_ID & 0xFFFFFFFF
        client.send(ipc.connection_context(CLIENT_ID, cn.PROTOCOL, "tester"))
        assert client.answer("getFileInfo", cn.GetFileInfoRequestProto(src="/")).fs


def test_fuzzed_calls_and_frames_get_answers_or_a_close_never_an_internal_error(nn):
    """Random methods of the protocol with random request bytes, random frames: each is
    answered (ERROR or FATAL) or the connection closed; the server keeps serving and logs
    no internal error."""
    rng = random.Random(25)
    methods = sorted(cn.METHODS) + ["nope", ""]
    for _ in range(200):
        with RawClient(nn.rpc_port).connect() as client:
            if rng.random() < 0.8:
                method = rng.choice(methods)
                body = rng.randbytes(rng.randrange(0, 40))
                header = ipc.RpcRequestHeaderProto(
                    rpcKind=ipc.RpcKindProto.RPC_PROTOCOL_BUFFER, callId=1, clientId=CLIENT_ID)
                head = ipc.RequestHeaderProto(methodName=method,
                                              declaringClassProtocolName=cn.PROTOCOL,
                                              clientProtocolVersion=1)
                client.send(ipc.frame(delimited(header, head) + body))
            else:
                client.send(ipc.frame(rng.randbytes(rng.randrange(0, 60))))
            answer = client.response()
            assert answer is None or answer[0].status in (Status.ERROR, Status.FATAL,
                                                         Status.SUCCESS)
    still_serving(nn)
    assert "internal error" not in nn.log.read_text()


def test_a_sasl_message_that_does_not_parse_is_fatal(nn):
    with RawClient(nn.rpc_port) as client:
        client.send(ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_SASL).to_bytes())
        header = ipc.RpcRequestHeaderProto(callId=ipc.SASL_CALL_ID, clientId=b"")
        client.send(ipc.frame(delimited(header) + b"\x05\xff\xff"))
        assert fatal(client).errorDetail == Code.FATAL_DESERIALIZING_REQUEST
    still_serving(nn)


def test_jmx_names_the_rpc_address_and_counts_calls(nn):
    still_serving(nn)
    with RawClient(nn.rpc_port) as client:
        client.send(b"garbage")
        fatal(client)
    with urllib.request.urlopen(nn.url + "/jmx") as answer:
        beans = {b["name"]: b for b in json.load(answer)["beans"]}
    assert beans["Hadoop:service=NameNode,name=NameNodeStatus"]["HostAndPort"] == \
        f"127.0.0.1:{nn.rpc_port}"
    metrics = beans["Hadoop:service=NameNode,name=FSNamesystem"]
    assert metrics["RpcCalls"] >= 1 and metrics["RpcFatalConnections"] >= 1
