"""Hadoop IPC frames: the preamble, call and response frames, lengths, bad bytes."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnlite.formats.hadoop import client_namenode, ipc
from nnlite.formats.hadoop.proto import ProtoError, delimited

CLIENT_ID = bytes(range(16))


def test_the_preamble_is_hrpc_version_service_class_and_auth():
    preamble = ipc.Preamble(ipc.VERSION, 0, ipc.AUTH_NONE)
    assert preamble.to_bytes() == b"hrpc\x09\x00\x00"
    assert ipc.Preamble.parse(b"hrpc\x09\x00\xdf") == ipc.Preamble(9, 0, ipc.AUTH_SASL)


@pytest.mark.parametrize("data", [b"", b"hrpc\x09\x00", b"GET / HTTP/1.1", b"HRPC\x09\x00\x00"],
                         ids=["empty", "short", "http", "wrong-magic"])
def test_a_preamble_that_is_not_hadoop_ipc_is_refused(data):
    with pytest.raises(ProtoError, match="not a Hadoop IPC connection header"):
        ipc.Preamble.parse(data[:7])


def test_a_call_frame_round_trips():
    message = client_namenode.GetFileInfoRequestProto(src="/a/b")
    frame = ipc.request(7, CLIENT_ID, "getFileInfo", client_namenode.PROTOCOL, message)
    assert ipc.frame_length(frame[:4]) == len(frame) - 4
    call = ipc.parse_call(frame[4:])
    assert (call.header.callId, call.header.clientId) == (7, CLIENT_ID)
    assert call.method.methodName == "getFileInfo"
    assert call.method.declaringClassProtocolName == client_namenode.PROTOCOL
    assert ipc.parse_body(client_namenode.GetFileInfoRequestProto, call.body).src == "/a/b"


def test_the_connection_context_has_no_method_header():
    frame = ipc.connection_context(CLIENT_ID, client_namenode.PROTOCOL, "alice", "hive")
    call = ipc.parse_call(frame[4:])
    assert call.header.callId == ipc.CONNECTION_CONTEXT_CALL_ID and call.method is None
    context = ipc.parse_body(ipc.IpcConnectionContextProto, call.body)
    assert (context.userInfo.effectiveUser, context.userInfo.realUser) == ("alice", "hive")


@pytest.mark.parametrize("prefix, error", [
    (b"\x08\x00\x00\x01", "longer than maximum configured RPC length"),
    (b"\xff\xff\xff\xff", "Unexpected data length -1"),
], ids=["over-128MiB", "negative"])
def test_a_frame_length_out_of_range_is_refused(prefix, error):
    with pytest.raises(ProtoError, match=error):
        ipc.frame_length(prefix)


def test_the_limit_is_inclusive():
    assert ipc.frame_length((128 << 20).to_bytes(4, "big")) == 128 << 20


@pytest.mark.parametrize("cut", [1, 5, 20], ids=["in-header-length", "in-header", "in-method"])
def test_a_truncated_call_is_a_proto_error(cut):
    frame = ipc.request(1, CLIENT_ID, "mkdirs", client_namenode.PROTOCOL,
                        client_namenode.MkdirsRequestProto(src="/x", createParent=True,
                                                           masked={"perm": 0o755}))
    with pytest.raises(ProtoError):
        ipc.parse_call(frame[4:4 + cut])


def test_a_response_frame_carries_the_header_then_the_message():
    header = ipc.RpcResponseHeaderProto(
        callId=3, status=ipc.RpcResponseHeaderRpcStatusProto.SUCCESS, clientId=CLIENT_ID)
    body = client_namenode.MkdirsResponseProto(result=True)
    frame = ipc.response(header, body)
    got, rest = ipc.parse_response(frame[4:])
    assert got.callId == 3 and rest == delimited(body)


def test_an_error_response_names_the_java_class():
    header = ipc.RpcResponseHeaderProto(
        callId=3, status=ipc.RpcResponseHeaderRpcStatusProto.ERROR,
        exceptionClassName="java.io.FileNotFoundException", errorMsg="File does not exist: /x",
        errorDetail=ipc.RpcResponseHeaderRpcErrorCodeProto.ERROR_APPLICATION)
    got, rest = ipc.parse_response(ipc.response(header)[4:])
    assert got.exceptionClassName == "java.io.FileNotFoundException" and rest == b""


def test_every_method_of_the_table_has_message_classes():
    assert len(client_namenode.METHODS) > 100
    for request, response in client_namenode.METHODS.values():
        request(), response()


@given(st.binary(max_size=300))
def test_any_bytes_are_a_call_or_a_proto_error(data):
    with contextlib.suppress(ProtoError):
        ipc.parse_call(data)


def test_every_prefix_of_a_call_is_a_call_or_a_proto_error():
    frame = ipc.request(9, CLIENT_ID, "rename2", client_namenode.PROTOCOL,
                        client_namenode.Rename2RequestProto(src="/a", dst="/b",
                                                            overwriteDest=True))
    payload = frame[4:]
    for end in range(len(payload) + 1):
        try:
            call = ipc.parse_call(payload[:end])
        except ProtoError:
            continue
        assert call.header.callId == 9


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 70_000])
def test_a_wrapped_response_is_the_messages_bytes(size):
    """``wrapped_response`` lays the frame out directly: the same bytes as the header and the
    RpcSaslProto WRAP message it stands for."""
    token = bytes(range(256)) * (size // 256) + bytes(size % 256)
    header = ipc.RpcResponseHeaderProto(
        callId=ipc.SASL_CALL_ID & 0xFFFFFFFF,
        status=ipc.RpcResponseHeaderRpcStatusProto.SUCCESS)
    expected = ipc.response(header, ipc.RpcSaslProto(state=ipc.RpcSaslSaslState.WRAP,
                                                     token=token))
    assert ipc.wrapped_response(token) == expected


@given(call_id=st.integers(-(1 << 31), (1 << 31) - 1), retry=st.integers(-(1 << 31), (1 << 31) - 1),
       client_id=st.binary(max_size=200), state_id=st.integers(-(1 << 63), (1 << 63) - 1),
       body=st.binary(max_size=300))
def test_a_success_response_is_the_bytes_of_its_header_and_message(call_id, retry, client_id,
                                                                  state_id, body):
    """``success_response`` lays the frame out directly: the same bytes as the header
    ``response`` serializes, whatever the call id, retry count, client id and state id."""
    call = ipc.RpcRequestHeaderProto(callId=call_id, clientId=client_id, retryCount=retry)
    header = ipc.RpcResponseHeaderProto(
        callId=call_id & 0xFFFFFFFF, status=ipc.RpcResponseHeaderRpcStatusProto.SUCCESS,
        serverIpcVersionNum=ipc.VERSION, clientId=client_id, retryCount=retry,
        stateId=state_id)
    message = client_namenode.GetFileInfoRequestProto(src=body.decode("latin-1"))
    assert ipc.success_response(call, state_id, message.SerializeToString()) == \
        ipc.response(header, message)


def test_calls_of_one_method_share_its_parsed_header_and_keep_their_own():
    first, second = (ipc.parse_call(ipc.request(n, CLIENT_ID, "mkdirs", client_namenode.PROTOCOL,
                                                client_namenode.MkdirsRequestProto(
                                                    src=f"/d{n}", createParent=True,
                                                    masked={"perm": 0o755}))[4:])
                     for n in (1, 2))
    assert first.method is second.method and first.method.methodName == "mkdirs"
    assert (first.header.callId, second.header.callId) == (1, 2)
    assert ipc.parse_body(client_namenode.MkdirsRequestProto, second.body).src == "/d2"
