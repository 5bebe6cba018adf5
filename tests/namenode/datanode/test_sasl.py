"""namenode/datanode/sasl.py: the data port's SASL handshake (SaslDataTransferServer), spoken
by a test client as SaslDataTransferClient does (the magic number, then
DataTransferEncryptorMessageProto turns carrying DIGEST-MD5 with a block token:
security/digest_md5.py's DigestMD5Client), at each qop, then the ops over the wrapped
streams; and its refusals: no handshake, a forged or expired token, a qop the key does not
allow. Hadoop's own client and hdfs-native: test_sasl_clients.py."""

from __future__ import annotations

import base64
import socket
import struct

import pytest

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.datatransfer import (
    DataTransferEncryptorMessageProto,
    HandshakeSecretProto,
    Status,
)
from nnlite.formats.hadoop.hdfs import CipherOptionProto, CipherSuiteProto
from nnlite.formats.hadoop.proto import parse_delimited
from nnlite.formats.hadoop.security import TokenProto
from nnlite.namenode.datanode import sasl
from nnlite.namenode.datanode.sasl import DataTransferSasl
from nnlite.namenode.datanode.tokens import READ, WRITE
from nnlite.namenode.security.digest_md5 import DigestMD5Client
from tests.namenode.datanode.client import TransferClient, block_tokens, running_datanode
from tests.namenode.datanode.test_pipeline import info
from tests.namenode.datanode.test_server import DATA

SECRET = "shared by the set"
AES_CTR = "AES/CTR/NoPadding"
PROTECTIONS = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}


def aes_ctr(key: bytes, iv: bytes):
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    return Cipher(algorithms.AES(key), modes.CTR(iv))


class Unwrapping:
    """``rfile`` of a wrapped connection: u32 length, wrapped message, unwrapped."""

    def __init__(self, raw, digest: DigestMD5Client) -> None:
        self.raw, self.digest, self.plain = raw, digest, bytearray()

    def read(self, n: int) -> bytes:
        while len(self.plain) < n:
            head = self.raw.read(4)
            if len(head) < 4:
                break
            self.plain += self.digest.unwrap(self.raw.read(struct.unpack(">I", head)[0]))
        out = bytes(self.plain[:n])
        del self.plain[:n]
        return out

    def close(self) -> None:
        self.raw.close()


class Decrypting:
    """``rfile`` under the negotiated AES/CTR."""

    def __init__(self, raw, decryptor) -> None:
        self.raw, self.decryptor = raw, decryptor

    def read(self, n: int) -> bytes:
        return self.decryptor.update(self.raw.read(n))

    def close(self) -> None:
        self.raw.close()


class SaslTransferClient(TransferClient):
    """A TransferClient that opens with the handshake for ``token`` at ``qop``; with
    ``aes``, offering AES/CTR as hdfs-native does."""

    def __init__(self, port: int, pool_id: str, token, qop: str = "auth",
                 secret: bytes | None = None, aes: bool = False) -> None:
        super().__init__(port, pool_id)
        self.digest = DigestMD5Client(base64.b64encode(token.identifier).decode(),
                                      base64.b64encode(token.password).decode(), "hdfs/0",
                                      (qop,))
        self.aes = aes
        self.encryptor = None
        self.answer = self.handshake(secret)
        if self.answer.status == 0 and len(self.answer.cipherOption):
            option = self.answer.cipherOption[0]
            self.keys = (self.digest.unwrap(bytes(option.inKey)),
                         self.digest.unwrap(bytes(option.outKey)))
            # the client writes with the in key and reads with the out key
            self.encryptor = aes_ctr(self.keys[0], bytes(option.inIv)).encryptor()
            self.rfile = Decrypting(self.rfile, aes_ctr(self.keys[1],
                                                        bytes(option.outIv)).decryptor())
        elif self.answer.status == 0 and qop != "auth":
            self.rfile = Unwrapping(self.rfile, self.digest)

    def handshake(self, secret: bytes | None):
        """The exchange; the server's last message (its rspauth, or its refusal)."""
        self.sock.sendall(struct.pack(">I", dt.SASL_TRANSFER_MAGIC))
        first = DataTransferEncryptorMessageProto(status=0, payload=b"")
        if secret is not None:
            first.handshakeSecret.CopyFrom(HandshakeSecretProto(secret=secret, bpid=self.pool_id))
        self.sock.sendall(dt.delimited(first))
        challenge = self.read_message(DataTransferEncryptorMessageProto)
        if challenge.status != 0:
            return challenge
        response = DataTransferEncryptorMessageProto(
            status=0, payload=self.digest.respond(bytes(challenge.payload)))
        if self.aes:
            response.cipherOption.append(CipherOptionProto(
                suite=CipherSuiteProto.AES_CTR_NOPADDING))
        self.sock.sendall(dt.delimited(response))
        final = self.read_message(DataTransferEncryptorMessageProto)
        if final.status == 0:
            self.digest.verify(bytes(final.payload))
        return final

    def send(self, data: bytes) -> None:
        if self.encryptor is not None:
            self.sock.sendall(self.encryptor.update(data))
            return
        if self.digest.qop == "auth":
            self.sock.sendall(data)
            return
        for start in range(0, len(data), 30_000):
            wrapped = self.digest.wrap(data[start:start + 30_000])
            self.sock.sendall(struct.pack(">I", len(wrapped)) + wrapped)


@pytest.fixture(params=["auth", "auth-int", "auth-conf"])
def qop(request) -> str:
    return request.param


@pytest.fixture
def protected(store, qop):
    """A datanode that wants the handshake at ``qop`` and a token on every op."""
    with running_datanode(store, SECRET, require_tokens=True,
                          protection=(PROTECTIONS[qop],)) as datanode:
        yield datanode


def test_ops_run_over_the_handshake_at_each_qop(store, protected, qop):
    signer = block_tokens(SECRET, protected.pool_id)
    block_id = store.allocate()
    protected.expect(block_id)
    write = signer.token(block_id, WRITE)
    with SaslTransferClient(protected.xfer_port, protected.pool_id, write, qop) as client:
        assert client.answer.status == 0
        acks = client.write_block(block_id, DATA, token=write)
    assert acks[-1] == (len(acks) - 1, [Status.SUCCESS])
    assert store.data_path(block_id).read_bytes() == DATA
    read = signer.token(block_id, READ)
    with SaslTransferClient(protected.xfer_port, protected.pool_id, read, qop) as client:
        data, _ = client.read_block(block_id, 0, len(DATA), token=read)
        assert data == DATA
        # the connection carries a second op, as a DFSInputStream's does
        answer = client.block_checksum(block_id, len(DATA), token=read)
        assert answer.status == Status.SUCCESS


def test_a_handshake_secret_picks_one_qop_of_the_key(store):
    with running_datanode(store, SECRET, require_tokens=True,
                          protection=("authentication", "integrity")) as datanode:
        token = block_tokens(SECRET, datanode.pool_id).token(1, READ)
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, token, "auth-int",
                                secret=b"auth-int") as client:
            assert client.answer.status == 0
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, token, "auth-conf",
                                secret=b"auth-conf") as client:
            assert client.answer.status == 2 and "auth-conf" in client.answer.message


def test_a_connection_without_the_handshake_is_closed_unanswered(store):
    with running_datanode(store, SECRET, require_tokens=True,
                          protection=("authentication",)) as datanode:
        token = block_tokens(SECRET, datanode.pool_id).token(1, READ)
        with TransferClient(datanode.xfer_port, datanode.pool_id) as client:
            client.send(client.write_request(1, token=token))
            assert client.at_eof()


@pytest.mark.parametrize("case", ["forged", "expired", "not an identifier"])
def test_a_token_that_does_not_hold_is_refused_in_the_handshake(store, case):
    with running_datanode(store, SECRET, require_tokens=True,
                          protection=("authentication",)) as datanode:
        signer = block_tokens(SECRET, datanode.pool_id)
        token = {
            "forged": lambda: TokenProto(identifier=signer.token(1, READ).identifier,
                                         password=b"\1" * 20, kind="HDFS_BLOCK_TOKEN",
                                         service=""),
            "expired": lambda: block_tokens(SECRET, datanode.pool_id,
                                            clock=lambda: 1_000_000.0).token(1, READ),
            "not an identifier": lambda: TokenProto(identifier=b"\x01junk", password=b"",
                                                    kind="", service=""),
        }[case]()
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, token) as client:
            assert client.answer.status == 2              # ERROR
            if case == "expired":
                assert client.answer.accessTokenError and "is expired" in \
                    client.answer.message
            if case == "forged":
                assert "Mismatched response" in client.answer.message
            assert client.at_eof()


def test_the_key_s_protection_is_required_of_the_settings():
    with pytest.raises(ValueError):
        DataTransferSasl(block_tokens(SECRET, "BP-7-nnlite-0"), ())


def test_a_client_that_sends_garbage_after_the_magic_is_closed(store):
    with (running_datanode(store, SECRET, require_tokens=True,
                           protection=("integrity",)) as datanode,
          socket.create_connection(("127.0.0.1", datanode.xfer_port), timeout=10) as sock):
        sock.sendall(struct.pack(">I", dt.SASL_TRANSFER_MAGIC) + b"\x03\xff\xff\xff")
        answer = parse_delimited(DataTransferEncryptorMessageProto, sock.recv(4096))[0]
        assert answer.status == 2 and answer.message.startswith("malformed")
        assert sock.recv(1) == b""


def test_a_pipeline_mirrors_through_the_handshake(store, second_store, qop):
    """The first datanode speaks the client side to the second (SaslDataTransferClient in
    DataXceiver.writeBlock) with the writer's token: both hold the block, every ack has
    both replies."""
    protection = (PROTECTIONS[qop],)
    with running_datanode(store, SECRET, require_tokens=True, protection=protection) as first, \
            running_datanode(second_store, SECRET, require_tokens=True,
                             protection=protection) as second:
        block_id = store.allocate()
        first.expect(block_id)
        token = block_tokens(SECRET, first.pool_id).token(block_id, WRITE)
        with SaslTransferClient(first.xfer_port, first.pool_id, token, qop) as client:
            acks = client.write_block(block_id, DATA, token=token,
                                      targets=[info(second.xfer_port)])
    assert acks == [(n, [Status.SUCCESS, Status.SUCCESS]) for n in range(len(acks))]
    assert second_store.data_path(block_id).read_bytes() == DATA


def test_a_mirror_that_refuses_the_handshake_is_the_first_bad_link(store, second_store):
    """The second datanode of another set (its keys from another secret) refuses the
    token: the first answers ERROR naming it, as a DataNode does."""
    with running_datanode(store, SECRET, require_tokens=True,
                          protection=("authentication",)) as first, \
            running_datanode(second_store, "another set", require_tokens=True,
                             protection=("authentication",)) as second:
        block_id = store.allocate()
        first.expect(block_id)
        token = block_tokens(SECRET, first.pool_id).token(block_id, WRITE)
        with SaslTransferClient(first.xfer_port, first.pool_id, token) as client:
            response = client.open_write(block_id, token=token,
                                         targets=[info(second.xfer_port)])
    assert response.status == Status.ERROR
    assert response.firstBadLink == f"127.0.0.1:{second.xfer_port}"
    assert "SASL handshake" in response.message


@pytest.mark.parametrize("key_bits", [128, 256])
def test_privacy_with_the_aes_suite_runs_the_ops_under_aes_ctr(store, key_bits):
    """negotiateCipherOption: the client offers AES/CTR, the last message carries the keys
    wrapped by the SASL layer, and the ops run under AES/CTR both ways."""
    with running_datanode(store, SECRET, require_tokens=True, protection=("privacy",),
                          cipher_suites=AES_CTR, cipher_key_bits=key_bits) as datanode:
        signer = block_tokens(SECRET, datanode.pool_id)
        block_id = store.allocate()
        datanode.expect(block_id)
        write = signer.token(block_id, WRITE)
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, write, "auth-conf",
                                aes=True) as client:
            option = client.answer.cipherOption[0]
            assert option.suite == CipherSuiteProto.AES_CTR_NOPADDING
            assert [len(k) for k in client.keys] == [key_bits // 8] * 2
            assert client.write_block(block_id, DATA, token=write)[-1][1] == [Status.SUCCESS]
        read = signer.token(block_id, READ)
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, read, "auth-conf",
                                aes=True) as client:
            assert client.read_block(block_id, 0, len(DATA), token=read)[0] == DATA
        # a client that offers no suite keeps DIGEST-MD5's own layer
        with SaslTransferClient(datanode.xfer_port, datanode.pool_id, read,
                                "auth-conf") as client:
            assert not len(client.answer.cipherOption)
            assert client.read_block(block_id, 0, 1000, token=read)[0] == DATA[:1000]


def test_only_the_aes_suite_is_known():
    with pytest.raises(ValueError, match="Invalid cipher suite"):
        DataTransferSasl(block_tokens(SECRET, "BP-7-nnlite-0"), ("privacy",), "SM4/CTR")


def test_a_pipeline_under_privacy_mirrors_through_aes_ctr(store, second_store,
                                                          monkeypatch):
    """With the suite on both datanodes, the first offers AES/CTR to the second, as a
    client, and the mirrored packets run under it: three AES writers, the first's to the
    client, the mirror's to the second, the second's to the first."""
    made = []

    class Counted(sasl.AesCtrWriter):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)
    monkeypatch.setattr(sasl, "AesCtrWriter", Counted)
    options = dict(require_tokens=True, protection=("privacy",), cipher_suites=AES_CTR)
    with running_datanode(store, SECRET, **options) as first, \
            running_datanode(second_store, SECRET, **options) as second:
        block_id = store.allocate()
        first.expect(block_id)
        token = block_tokens(SECRET, first.pool_id).token(block_id, WRITE)
        with SaslTransferClient(first.xfer_port, first.pool_id, token, "auth-conf",
                                aes=True) as client:
            acks = client.write_block(block_id, DATA, token=token,
                                      targets=[info(second.xfer_port)])
    assert acks == [(n, [Status.SUCCESS, Status.SUCCESS]) for n in range(len(acks))]
    assert second_store.data_path(block_id).read_bytes() == DATA
    assert len(made) == 3
