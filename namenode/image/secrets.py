"""The delegation keys and tokens in the fsimage: the footer section ``secret_manager``
(``ImageMeta.sections``), as HDFS's ``FSImageFormatProtobuf`` saves a ``SecretManagerSection``.

The section is one msgpack array::

    [current_key_id, sequence_number,
     [[key_id, expiry_date, secret], ...],          -- DelegationKey, in key id order
     [[identifier, expiry], ...]]                   -- PersistToken: the identifier's Writable
                                                       bytes (no secret in them) and when the
                                                       token expires unless renewed

A simple-mode namenode has none, and writes no section. The secrets are what sign tokens, so
a secure namenode's image is as secret as its keytab; ``oiv`` shows the section without them.
"""

from __future__ import annotations

import msgpack

from nnlite.namenode.errors import ReplayError
from nnlite.namenode.security.tokens import (
    DelegationKey,
    DelegationTokenIdentifier,
    TokenFormatError,
    TokenState,
)

SECTION = "secret_manager"


def encode(state: TokenState) -> bytes:
    return msgpack.packb([
        state.current_key_id, state.sequence_number,
        [[key.key_id, key.expiry_date, key.secret] for key in state.keys],
        [[ident.encode(), expiry] for ident, expiry in state.tokens]], use_bin_type=True)


def decode(data: bytes, path: str = "") -> TokenState:
    """The state a section holds; ``ReplayError`` naming the image when it does not parse."""
    try:
        current, sequence, keys, tokens = msgpack.unpackb(data, raw=False)
        return TokenState(
            int(current), int(sequence),
            tuple(DelegationKey(int(i), int(e), bytes(s)) for i, e, s in keys),
            tuple((DelegationTokenIdentifier.decode(bytes(raw)), int(expiry))
                  for raw, expiry in tokens))
    except (ValueError, TypeError, TokenFormatError, msgpack.UnpackException) as exc:
        raise ReplayError(f"the image's {SECTION} section does not parse: {exc}",
                          path=path) from exc


def summary(data: bytes, path: str = "") -> dict:
    """What ``oiv`` shows of a section: every field but the key secrets."""
    state = decode(data, path)
    return {"current_key_id": state.current_key_id,
            "sequence_number": state.sequence_number,
            "keys": [{"id": k.key_id, "expiry_date": k.expiry_date} for k in state.keys],
            "tokens": [{"owner": i.owner, "renewer": i.renewer, "real_user": i.real_user,
                        "issue_date": i.issue_date, "max_date": i.max_date,
                        "sequence_number": i.sequence_number,
                        "master_key_id": i.master_key_id, "expiry": expiry}
                       for i, expiry in state.tokens]}
