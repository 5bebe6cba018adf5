"""The data port's SASL handshake (``SaslDataTransferServer``): in secure mode with
``dfs.data.transfer.protection`` set, every connection proves, before its first op, that it
holds a block token the namenode signed, and agrees on a quality of protection.

The exchange (``formats/hadoop/datatransfer.py``'s framing)::

    client  0xDEADBEEF
    client  DataTransferEncryptorMessageProto  SUCCESS, payload empty
                                               [handshakeSecret: the qop the client asks for]
    server  DataTransferEncryptorMessageProto  SUCCESS, payload = the digest-challenge
    client  DataTransferEncryptorMessageProto  SUCCESS, payload = the digest-response
                                               [cipherOption: ignored, none is configured]
    server  DataTransferEncryptorMessageProto  SUCCESS, payload = rspauth

DIGEST-MD5 (``namenode/security/digest_md5.py``) with protocol ``hdfs`` and server id and
realm ``0`` (``SaslParticipant``: digest-uri ``hdfs/0``); the user name is the base64 of a
block token's identifier, its password the base64 of the token's password
(``buildServerPassword``), which ``BlockTokenSecretManager.password`` recomputes: a token
that is expired or whose key is gone is refused there. The qops offered are the key's
(``authentication`` -> auth, ``integrity`` -> auth-int, ``privacy`` -> auth-conf), or the
one the client's handshake secret names when the key allows it. A refusal is answered
``ERROR`` with the reason (and ``accessTokenError`` for a token's,
``sendInvalidTokenSaslErrorMessage``) and the connection closed; so is a connection that
does not open with the magic number (``InvalidMagicNumberException``: Hadoop answers
nothing; nnlite answers nothing either).

Under auth-conf, with ``dfs.encrypt.data.transfer.cipher.suites`` = ``AES/CTR/NoPadding``
and a client that offers it (hdfs-native always does; Hadoop's when its own key names it),
the last message also carries a ``CipherOptionProto`` of fresh AES keys and IVs each way,
the keys wrapped by the SASL layer (``negotiateCipherOption``, ``DataTransferSaslUtil.wrap``),
and every later byte is AES/CTR instead (``CryptoInputStream``/``CryptoOutputStream``: the
server reads with the in key and IV and writes with the out ones) -- DIGEST-MD5's 3DES
runs at a few MB/s. Otherwise, under auth-int and auth-conf every later byte each way is
wrapped (``SaslInputStream``/``SaslOutputStream``: a u32 length, then the wrapped
message). ``SaslReader``/``SaslWriter`` and ``AesCtrReader``/``AesCtrWriter`` stand in for
the connection's asyncio streams, so the ops run unchanged on top. Written messages are cut
at ``WRAP_CHUNK`` bytes so a wrapped one stays within DIGEST-MD5's default maxbuf (64 KiB).

A datanode that mirrors a write to the next of a pipeline speaks the client side to it
(``connect``: ``DigestMD5Client``, the writer's own token, the strongest qop of the key
both offer, and AES/CTR offered under privacy when this datanode has the suite), as a
DataNode's ``SaslDataTransferClient`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import struct
from typing import Any, Protocol

from nnlite.formats.hadoop import datatransfer as dt
from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.datatransfer import (
    DataTransferEncryptorMessageProto,
    DataTransferEncryptorStatus,
)
from nnlite.formats.hadoop.hdfs import CipherOptionProto, CipherSuiteProto
from nnlite.formats.hadoop.proto import ProtoError
from nnlite.formats.hadoop.writable import WritableError
from nnlite.namenode.datanode.errors import BlockTokenError, DataTransferError
from nnlite.namenode.datanode.stream import read_message
from nnlite.namenode.datanode.tokens import BlockTokenSecretManager
from nnlite.namenode.security import digest_md5
from nnlite.namenode.security.digest_md5 import DigestError, DigestMD5Client, DigestMD5Server

log = logging.getLogger(__name__)

PROTOCOL = "hdfs"               # SaslParticipant.PROTOCOL
SERVER_NAME = "0"               # SaslParticipant.SERVER_NAME, also the realm
MAGIC = struct.Struct(">I")
LENGTH = struct.Struct(">I")
WRAP_CHUNK = 65536 - 64         # a wrapped message within the peer's 64 KiB maxbuf
MAX_WRAPPED = 16 << 20          # a longer wrapped message is not a SaslOutputStream's
AES_CTR = "AES/CTR/NoPadding"   # CipherSuite.AES_CTR_NOPADDING's name
AES_BLOCK = 16


class HandshakeError(DataTransferError):
    """A connection that did not complete the data port's SASL handshake."""


class Layer(Protocol):
    """Either side of a DIGEST-MD5 security layer."""

    def wrap(self, message: bytes) -> bytes: ...

    def unwrap(self, data: bytes) -> bytes: ...


class DataTransferSasl:
    """The server side of the handshake for a datanode whose tokens ``tokens`` checks;
    ``protection`` is ``dfs.data.transfer.protection``'s list, ``cipher_suites``
    ``dfs.encrypt.data.transfer.cipher.suites`` (empty, or ``AES_CTR``) and ``key_bits``
    the AES key's length."""

    def __init__(self, tokens: BlockTokenSecretManager, protection: tuple[str, ...],
                 cipher_suites: str = "", key_bits: int = 128) -> None:
        if not protection:
            raise ValueError("dfs.data.transfer.protection is empty: no SASL to speak")
        if cipher_suites not in ("", AES_CTR):
            raise ValueError(f"Invalid cipher suite, dfs.encrypt.data.transfer.cipher.suites="
                             f"{cipher_suites}")
        if key_bits not in (128, 192, 256):
            raise ValueError(f"dfs.encrypt.data.transfer.cipher.key.bitlength={key_bits}: "
                             "AES takes 128, 192 or 256")
        self.tokens = tokens
        self.qops = digest_md5.qops_for(protection)
        self.aes = cipher_suites == AES_CTR
        self.key_bytes = key_bits // 8

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Run the handshake on a new connection; the streams its ops then use (wrapped
        when the qop has a security layer). HandshakeError after answering a refusal."""
        async with asyncio.timeout(timeout):
            (magic,) = MAGIC.unpack(await reader.readexactly(MAGIC.size))
            if magic != dt.SASL_TRANSFER_MAGIC:
                raise HandshakeError(
                    f"Received {magic:#x} instead of {dt.SASL_TRANSFER_MAGIC:#x} from the "
                    "client: the data port wants the SASL handshake of "
                    "dfs.data.transfer.protection")
            server, cipher = await self._exchange(reader, writer)
        log.debug("datanode: SASL handshake done, qop %s%s", server.qop,
                  ", AES/CTR" if cipher else "")
        if cipher is not None:
            return AesCtrReader(reader, cipher.inKey, cipher.inIv), \
                AesCtrWriter(writer, cipher.outKey, cipher.outIv)
        if not server.security_layer:
            return reader, writer
        return SaslReader(reader, server), SaslWriter(writer, server)

    async def connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      token: Any, timeout: float
                      ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """The client side (``SaslDataTransferClient``), for the next datanode of a write
        pipeline, with the writer's own block ``token`` (``DataXceiver.writeBlock``):
        the streams to it: under AES/CTR when this datanode has the suite and the next
        one answers it, else wrapped when the qop has a security layer. DigestError (with
        the datanode's reason when it refused) otherwise."""
        client = DigestMD5Client(digest_md5.token_username(bytes(token.identifier)),
                                 digest_md5.token_password(bytes(token.password)),
                                 f"{PROTOCOL}/{SERVER_NAME}", self.qops)
        offer = [CipherOptionProto(suite=CipherSuiteProto.AES_CTR_NOPADDING)] \
            if self.aes and "auth-conf" in self.qops else []
        async with asyncio.timeout(timeout):
            writer.write(MAGIC.pack(dt.SASL_TRANSFER_MAGIC))
            await self._send(writer, b"")
            challenge = await self._read(reader)
            await self._send(writer, client.respond(bytes(challenge.payload)), *offer)
            final = await self._read(reader)
            client.verify(bytes(final.payload))
        if client.qop == "auth-conf" and offer and len(final.cipherOption):
            option = final.cipherOption[0]
            in_key = client.unwrap(bytes(option.inKey))        # wrapped in this order
            out_key = client.unwrap(bytes(option.outKey))
            # a client writes with the in key and IV, reads with the out ones
            return AesCtrReader(reader, out_key, option.outIv), \
                AesCtrWriter(writer, in_key, option.inIv)
        if not client.security_layer:
            return reader, writer
        return SaslReader(reader, client), SaslWriter(writer, client)

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                        ) -> tuple[DigestMD5Server, Any]:
        """The exchange; the server side, and the AES/CTR option agreed, if any."""
        try:
            first = await self._read(reader)
            server = DigestMD5Server(self._password, protocol=PROTOCOL,
                                     server_id=SERVER_NAME, qops=self._offered(first))
            await self._send(writer, server.step(bytes(first.payload)))
            second = await self._read(reader)
            final = server.step(bytes(second.payload))
            cipher = self._cipher(server, second.cipherOption)
            await self._send(writer, final, None if cipher is None else wrapped(cipher, server))
        except BlockTokenError as exc:
            await self._refuse(writer, str(exc), token=True)
            raise HandshakeError(f"SASL handshake refused: {exc}") from exc
        except (DigestError, ProtoError, WritableError) as exc:
            await self._refuse(writer, str(exc))
            raise HandshakeError(f"SASL handshake refused: {exc}") from exc
        return server, cipher

    def _cipher(self, server: DigestMD5Server, offered: Any) -> Any:
        """``negotiateCipherOption``: under privacy, with the suite configured and offered,
        fresh AES keys and IVs each way (as this side reads and writes them)."""
        if server.qop != "auth-conf" or not self.aes or \
                not any(o.suite == CipherSuiteProto.AES_CTR_NOPADDING for o in offered):
            return None
        return CipherOptionProto(suite=CipherSuiteProto.AES_CTR_NOPADDING,
                                 inKey=secrets.token_bytes(self.key_bytes),
                                 inIv=secrets.token_bytes(AES_BLOCK),
                                 outKey=secrets.token_bytes(self.key_bytes),
                                 outIv=secrets.token_bytes(AES_BLOCK))

    def _offered(self, first: Any) -> tuple[str, ...]:
        """The qops of the key, or the one the client's handshake secret asks for."""
        if first.HasField("handshakeSecret"):
            asked = bytes(first.handshakeSecret.secret).decode("utf-8", "replace")
            if asked not in self.qops:
                raise DigestError(f"the handshake secret asks for qop {asked!r}, not one of "
                                  f"{', '.join(self.qops)}")
            return (asked,)
        return self.qops

    def _password(self, username: str) -> str:
        """``buildServerPassword``: the token password of the identifier ``username``
        carries, in base64; BlockTokenError (InvalidToken) when the token is not valid."""
        identifier = BlockTokenIdentifier.decode(digest_md5.token_identifier(username))
        return digest_md5.token_password(self.tokens.password(identifier))

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> Any:
        message = await read_message(reader, DataTransferEncryptorMessageProto)
        if message.status != DataTransferEncryptorStatus.SUCCESS:
            raise DigestError(f"the peer ended the handshake: {message.message}")
        return message

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, payload: bytes, cipher: Any = None) -> None:
        message = DataTransferEncryptorMessageProto(
            status=DataTransferEncryptorStatus.SUCCESS, payload=payload)
        if cipher is not None:
            message.cipherOption.append(cipher)
        writer.write(dt.delimited(message))
        await writer.drain()

    @staticmethod
    async def _refuse(writer: asyncio.StreamWriter, message: str, token: bool = False) -> None:
        answer = DataTransferEncryptorMessageProto(status=DataTransferEncryptorStatus.ERROR,
                                                   message=message)
        if token:
            answer.accessTokenError = True
        writer.write(dt.delimited(answer))
        with contextlib.suppress(ConnectionError):
            await writer.drain()


class SaslReader(asyncio.StreamReader):
    """The plain bytes of a wrapped stream (``SaslInputStream``): ``readexactly`` unwraps
    message after message from ``raw``."""

    def __init__(self, raw: asyncio.StreamReader, layer: Layer) -> None:
        super().__init__()
        self.raw = raw
        self.layer = layer
        self.plain = bytearray()

    async def readexactly(self, n: int) -> bytes:
        while len(self.plain) < n:
            await self._more()
        out = bytes(self.plain[:n])
        del self.plain[:n]
        return out

    async def read(self, n: int = -1) -> bytes:
        if not self.plain:
            try:
                await self._more()
            except asyncio.IncompleteReadError:
                return b""
        size = len(self.plain) if n < 0 else min(n, len(self.plain))
        out = bytes(self.plain[:size])
        del self.plain[:size]
        return out

    async def _more(self) -> None:
        (length,) = LENGTH.unpack(await self.raw.readexactly(LENGTH.size))
        if length > MAX_WRAPPED:
            raise DataTransferError(f"a wrapped message of {length} bytes")
        try:
            self.plain += self.layer.unwrap(await self.raw.readexactly(length))
        except DigestError as exc:
            raise DataTransferError(f"a wrapped message does not verify: {exc}") from exc


class SaslWriter(asyncio.StreamWriter):
    """Writes through the security layer (``SaslOutputStream``): each write is wrapped, in
    pieces of at most ``WRAP_CHUNK`` bytes, each sent as its length and its bytes."""

    def __init__(self, raw: asyncio.StreamWriter, layer: Layer) -> None:
        # getattr: typeshed declares no StreamWriter._protocol (mypy)
        super().__init__(raw.transport, getattr(raw, "_protocol"), None,  # noqa: B009
                         asyncio.get_running_loop())
        # held: a StreamWriter collected closes its transport (asyncio's __del__)
        self.raw = raw
        self.layer = layer

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        for start in range(0, len(view), WRAP_CHUNK):
            wrapped = self.layer.wrap(bytes(view[start:start + WRAP_CHUNK]))
            super().write(LENGTH.pack(len(wrapped)) + wrapped)


def wrapped(cipher: Any, server: DigestMD5Server) -> Any:
    """The option as the client gets it (``DataTransferSaslUtil.wrap``): its keys wrapped
    by the SASL layer, in key order, its IVs as they are."""
    out = CipherOptionProto()
    out.CopyFrom(cipher)
    out.inKey = server.wrap(bytes(cipher.inKey))
    out.outKey = server.wrap(bytes(cipher.outKey))
    return out


def _aes_ctr(key: bytes, iv: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    return Cipher(algorithms.AES(bytes(key)), modes.CTR(bytes(iv)))


class AesCtrReader(asyncio.StreamReader):
    """The plain bytes of a stream under the negotiated AES/CTR (``CryptoInputStream``:
    the server reads with the option's in key and IV)."""

    def __init__(self, raw: asyncio.StreamReader, key: bytes, iv: bytes) -> None:
        super().__init__()
        self.raw = raw
        self.decryptor = _aes_ctr(key, iv).decryptor()

    async def readexactly(self, n: int) -> bytes:
        return self.decryptor.update(await self.raw.readexactly(n))

    async def read(self, n: int = -1) -> bytes:
        return self.decryptor.update(await self.raw.read(n))


class AesCtrWriter(asyncio.StreamWriter):
    """Writes under the negotiated AES/CTR (``CryptoOutputStream``: the server writes with
    the option's out key and IV)."""

    def __init__(self, raw: asyncio.StreamWriter, key: bytes, iv: bytes) -> None:
        # getattr: typeshed declares no StreamWriter._protocol (mypy)
        super().__init__(raw.transport, getattr(raw, "_protocol"), None,  # noqa: B009
                         asyncio.get_running_loop())
        self.raw = raw          # held: a StreamWriter collected closes its transport
        self.encryptor = _aes_ctr(key, iv).encryptor()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        super().write(self.encryptor.update(bytes(data)))
