"""Block access tokens as HDFS issues and checks them (``BlockTokenSecretManager``): the
namenode signs, for one block and the access modes a call needs, a token its datanodes check
on every READ_BLOCK, WRITE_BLOCK and BLOCK_CHECKSUM (``DataXceiver.checkAccess``).

A token (``TokenProto``): the identifier (``formats/hadoop/block_token.py``, Hadoop's legacy
Writable layout), ``password = HMAC-SHA1(block key, identifier bytes)``
(``SecretManager.createPassword``), kind ``HDFS_BLOCK_TOKEN``, service empty.

**Block keys.** HDFS's NameNode draws random block keys, rolls them every
``dfs.block.access.key.update.interval`` and hands them to its DataNodes by heartbeat
(``ExportedBlockKeys``); a key is kept until ``update interval + token lifetime`` after it
retires. nnlite's datanodes live in the namenodes' own processes, and an HA set's datanodes
must take the tokens the active signed (the standby's is the second node of every
pipeline), across restarts and failovers, with no heartbeat between them. So the keys are
derived, not drawn: key ``n`` -- current during the ``n``-th update interval since the
epoch -- is ``HMAC-SHA512(set secret, "nnlite block key" | pool | n)``, the set's secret
being ``nnlite.checkpoint.secret`` (or the token file every namenode of a set shares).
Every namenode and datanode of the set computes the same keys with no state to log,
replay or send; one who lacks the secret cannot compute any. ``BlockKeys.key`` refuses a
key id outside Hadoop's window: the next key, the current one, and retired ones until one
update interval plus one token lifetime after they retired. Key ids are ``n`` modulo
2**31 (a Java int, as ``BlockKey.keyId``).

**Checks** (``BlockTokenSecretManager.checkAccess``, in its order, with its messages): the
identifier decodes, names this block pool and block, has not expired, holds the mode; then
its key is known and the password is the HMAC. A refusal is ``BlockTokenError`` (the
datanode answers ``ERROR_ACCESS_TOKEN``).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Iterable
from typing import Any

from nnlite.formats.hadoop.block_token import KIND, BlockTokenIdentifier
from nnlite.formats.hadoop.security import TokenProto
from nnlite.formats.hadoop.writable import WritableError
from nnlite.namenode.blocks.streams import GENSTAMP
from nnlite.namenode.datanode.errors import BlockTokenError

KEY_ID_SPACE = 1 << 31
DERIVATION_LABEL = b"nnlite block key"
READ, WRITE, COPY, REPLACE = "READ", "WRITE", "COPY", "REPLACE"
EMPTY_TOKEN = TokenProto(identifier=b"", password=b"", kind="", service="")


def block_name(pool_id: str, block_id: int, genstamp: int = GENSTAMP) -> str:
    """``ExtendedBlock.toString``: ``<pool>:blk_<id>_<genstamp>``."""
    return f"{pool_id}:blk_{block_id}_{genstamp}"


class BlockKeys:
    """The block keys of a set sharing ``secret``, rolled every ``update_interval_ms``;
    ``clock`` gives milliseconds since the epoch."""

    def __init__(self, secret: str | bytes, pool_id: str, update_interval_ms: int,
                 token_lifetime_ms: int, clock: Callable[[], float] = time.time) -> None:
        if update_interval_ms <= 0 or token_lifetime_ms <= 0:
            raise ValueError("block key update interval and token lifetime must be positive")
        self._secret = secret.encode() if isinstance(secret, str) else secret
        self.pool_id = pool_id
        self.update_interval_ms = update_interval_ms
        self.token_lifetime_ms = token_lifetime_ms
        self._clock = clock
        # intervals a key stays after its own: Hadoop keeps a key retired at the end of
        # interval n until (n + 1) * I + I + L, so it is valid in interval c while
        # c <= n + 2 + L // I
        self._kept = 2 + token_lifetime_ms // update_interval_ms

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def current_id(self) -> int:
        return (self.now_ms() // self.update_interval_ms) % KEY_ID_SPACE

    def derive(self, key_id: int) -> bytes:
        message = b"\0".join((DERIVATION_LABEL, self.pool_id.encode(),
                              key_id.to_bytes(4, "big")))
        return hmac.new(self._secret, message, hashlib.sha512).digest()

    def key(self, key_id: int) -> bytes | None:
        """Key ``key_id`` while Hadoop would still hold it (next, current, or retired less
        than interval + lifetime ago); None otherwise."""
        behind = (self.current_id() - key_id) % KEY_ID_SPACE
        if behind <= self._kept or behind == KEY_ID_SPACE - 1:
            return self.derive(key_id)
        return None


class BlockTokenSecretManager:
    """Signs and checks the block tokens of one block pool with ``keys``. ``issued`` are the
    modes ``token`` signs; for any other it answers the empty token (an HA set in simple
    mode signs writes only, so the standby's datanode takes the active's pipelines)."""

    def __init__(self, keys: BlockKeys, issued: Iterable[str] = (READ, WRITE, COPY, REPLACE)
                 ) -> None:
        self.keys = keys
        self.issued = frozenset(issued)

    @property
    def pool_id(self) -> str:
        return self.keys.pool_id

    def token(self, block_id: int, mode: str, user: str = "") -> Any:
        """``generateToken``: the token of ``block_id`` for ``mode``, for ``user`` (the
        caller's short name; informational, a datanode checks no user)."""
        if mode not in self.issued:
            return EMPTY_TOKEN
        key_id = self.keys.current_id()
        identifier = BlockTokenIdentifier(
            expiry_date=self.keys.now_ms() + self.keys.token_lifetime_ms, key_id=key_id,
            user_id=user, block_pool_id=self.pool_id, block_id=block_id,
            modes=frozenset((mode,))).encode()
        return TokenProto(identifier=identifier, password=self._mac(key_id, identifier),
                          kind=KIND, service="")

    def check(self, token: Any, block_id: int, mode: str, genstamp: int = GENSTAMP,
              pool_id: str | None = None) -> BlockTokenIdentifier:
        """``checkAccess``: the identifier of ``token`` if it lets its bearer use ``mode``
        on ``block_id`` now; ``BlockTokenError`` with Hadoop's message otherwise."""
        pool = self.pool_id if pool_id is None else pool_id
        block = block_name(pool, block_id, genstamp)
        try:
            ident = BlockTokenIdentifier.decode(token.identifier)
        except WritableError as exc:
            raise BlockTokenError("Unable to de-serialize block token identifier for "
                                  f"user=null, block={block}, access mode={mode}") from exc
        self.check_access(ident, block_id, mode, genstamp, pool)
        if not hmac.compare_digest(self.password(ident), bytes(token.password)):
            raise BlockTokenError(f"Block token with {ident} doesn't have the correct "
                                  "token password")
        return ident

    def check_access(self, ident: BlockTokenIdentifier, block_id: int, mode: str,
                     genstamp: int = GENSTAMP, pool_id: str | None = None) -> None:
        """``checkAccess`` of an identifier whose password was checked already (a SASL
        handshake's): it names ``block_id`` of the pool, is not expired and grants ``mode``;
        ``BlockTokenError`` with Hadoop's message otherwise."""
        pool = self.pool_id if pool_id is None else pool_id
        if ident.block_pool_id != pool or ident.block_id != block_id:
            raise BlockTokenError(f"Block token with {ident} doesn't apply to block "
                                  f"{block_name(pool, block_id, genstamp)}")
        if self._expired(ident):
            raise BlockTokenError(f"Block token with {ident} is expired.")
        if mode not in ident.modes:
            raise BlockTokenError(f"Block token with {ident} doesn't have {mode} permission")

    def permits(self, token: Any, block_id: int, mode: str) -> bool:
        try:
            self.check(token, block_id, mode)
        except BlockTokenError:
            return False
        return True

    def password(self, ident: BlockTokenIdentifier) -> bytes:
        """``retrievePassword``: the password of an identifier (the DIGEST-MD5 secret of
        the data port's SASL handshake, ``SaslDataTransferServer.buildServerPassword``)."""
        if self._expired(ident):
            raise BlockTokenError(f"Block token with {ident} is expired.")
        if self.keys.key(ident.key_id) is None:
            raise BlockTokenError(f"Can't re-compute password for {ident}, since the "
                                  f"required block key (keyID={ident.key_id}) doesn't exist.")
        return self._mac(ident.key_id, ident.encode())

    def _expired(self, ident: BlockTokenIdentifier) -> bool:
        return self.keys.now_ms() > ident.expiry_date

    def _mac(self, key_id: int, identifier: bytes) -> bytes:
        return hmac.new(self.keys.derive(key_id), identifier, hashlib.sha1).digest()
