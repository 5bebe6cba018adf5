"""``BlockTokens``: block access tokens for writes, as HDFS's ``BlockTokenSecretManager``
issues them on the namenode and checks them on DataNodes with a key they share. An HA set's
namenodes share ``nnlite.checkpoint.secret``; with it the active's ``addBlock`` hands the
writer a token that every datanode of the set accepts, so the standby's datanode takes the
block as the second node of the pipeline though its own namenode never allocated it.

A token (``TokenProto``, kind ``HDFS_BLOCK_TOKEN``, service empty)::

    identifier  b"nnlite-block-write:<block pool id>:<block id>"
    password    HMAC-SHA256(secret, identifier)

It names one block and one access mode (write); block ids are never reused, and a datanode
takes one write of a block (a block published or being written is refused), so a token
needs no expiry. Clients treat tokens as opaque: under simple authentication neither
Hadoop's client nor hdfs-native decodes them or starts SASL for them.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from nnlite.formats.hadoop.security import TokenProto

KIND = "HDFS_BLOCK_TOKEN"
PREFIX = b"nnlite-block-write:"


class BlockTokens:
    def __init__(self, secret: str | bytes, pool_id: str) -> None:
        self.secret = secret.encode() if isinstance(secret, str) else secret
        self.pool_id = pool_id

    def _identifier(self, block_id: int) -> bytes:
        return PREFIX + f"{self.pool_id}:{block_id}".encode()

    def _password(self, identifier: bytes) -> bytes:
        return hmac.new(self.secret, identifier, hashlib.sha256).digest()

    def issue(self, block_id: int) -> Any:
        """The token that lets its bearer write block ``block_id`` on any datanode that
        shares the secret."""
        identifier = self._identifier(block_id)
        return TokenProto(identifier=identifier, password=self._password(identifier),
                          kind=KIND, service="")

    def allows_write(self, token: Any, block_id: int) -> bool:
        return token.identifier == self._identifier(block_id) and \
            hmac.compare_digest(token.password, self._password(token.identifier))
