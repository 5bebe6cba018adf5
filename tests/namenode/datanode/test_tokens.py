"""namenode/datanode/tokens.py: block keys derived from a set's secret, tokens signed and
checked as BlockTokenSecretManager does (with an injected clock), and the datanode's
refusals on its transfer port (DataXceiver.checkAccess: ERROR_ACCESS_TOKEN) for a missing
token, another block's, another mode's, an expired one and a forged one."""

from __future__ import annotations

import pytest

from nnlite.formats.hadoop.block_token import BlockTokenIdentifier
from nnlite.formats.hadoop.datatransfer import Status
from nnlite.formats.hadoop.security import TokenProto
from nnlite.namenode.datanode.errors import BlockTokenError
from nnlite.namenode.datanode.tokens import (
    EMPTY_TOKEN,
    KEY_ID_SPACE,
    READ,
    WRITE,
    BlockKeys,
    BlockTokenSecretManager,
)
from tests.namenode.datanode.client import TransferClient, block_tokens, running_datanode
from tests.namenode.datanode.test_server import DATA

POOL = "BP-7-nnlite-0"
SECRET = "shared by the set"
MINUTE = 60_000


class Clock:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


def manager(clock: Clock, secret: str = SECRET, interval: int = 10 * MINUTE,
            lifetime: int = 10 * MINUTE, issued=(READ, WRITE)) -> BlockTokenSecretManager:
    return BlockTokenSecretManager(BlockKeys(secret, POOL, interval, lifetime, clock), issued)


def test_a_token_is_hadoop_s_identifier_and_an_hmac_sha1_of_it():
    clock = Clock(1_700_000_000_000)
    token = manager(clock).token(42, READ, user="alice")
    ident = BlockTokenIdentifier.decode(token.identifier)
    assert (ident.expiry_date, ident.user_id, ident.block_pool_id, ident.block_id,
            ident.modes) == (1_700_000_000_000 + 10 * MINUTE, "alice", POOL, 42, {READ})
    assert ident.key_id == 1_700_000_000_000 // (10 * MINUTE)
    assert token.kind == "HDFS_BLOCK_TOKEN" and token.service == ""
    assert len(token.password) == 20                     # HmacSHA1
    assert manager(clock).check(token, 42, READ) == ident


def test_every_namenode_of_a_set_derives_the_same_keys():
    clock = Clock(1_700_000_000_000)
    active, standby = manager(clock), manager(clock)
    token = active.token(42, WRITE)
    assert standby.permits(token, 42, WRITE)
    assert not manager(clock, secret="another set's").permits(token, 42, WRITE)


def test_an_unissued_mode_gets_the_empty_token():
    """An HA set in simple mode signs writes only (its standby's datanode admits them)."""
    writes_only = manager(Clock(0), issued=(WRITE,))
    assert writes_only.token(42, READ) == EMPTY_TOKEN
    assert writes_only.token(42, WRITE).identifier


def test_keys_are_kept_for_an_interval_and_a_lifetime_after_they_retire():
    clock = Clock(1_700_000_000_000)
    keys = BlockKeys(SECRET, POOL, 10 * MINUTE, 25 * MINUTE, clock)
    now = keys.current_id()
    assert keys.key(now) is not None and keys.key(now + 1) is not None     # current, next
    assert keys.key(now + 2) is None                                       # not yet drawn
    assert keys.key(now - 4) is not None          # 2 + 25 // 10 = 4 intervals kept
    assert keys.key(now - 5) is None
    assert keys.key(now) != keys.key(now + 1)


def test_key_ids_wrap_as_a_java_int():
    """A one-millisecond interval counts past 2**31: ids wrap, the window still holds."""
    clock = Clock(KEY_ID_SPACE)                  # interval number 2**31 -> id 0
    keys = BlockKeys(SECRET, POOL, 1, 1, clock)
    assert keys.key(KEY_ID_SPACE - 3) is not None and keys.key(KEY_ID_SPACE - 4) is None
    assert keys.current_id() == 0
    assert keys.key(KEY_ID_SPACE - 1) is not None        # the one before, across the wrap


@pytest.mark.parametrize("case, message", [
    ("empty", "Unable to de-serialize block token identifier for user=null, "
              f"block={POOL}:blk_42_1001, access mode=READ"),
    ("other block", f"doesn't apply to block {POOL}:blk_42_1001"),
    ("other pool", f"doesn't apply to block {POOL}:blk_42_1001"),
    ("other mode", "doesn't have READ permission"),
    ("expired", "is expired."),
    ("forged", "doesn't have the correct token password"),
    ("key gone", "since the required block key (keyID="),
])
def test_refusals_carry_hadoop_s_messages(case, message):
    clock = Clock(1_700_000_000_000)
    signer = manager(clock, issued=(READ, WRITE))
    token = {
        "empty": lambda: EMPTY_TOKEN,
        "other block": lambda: signer.token(43, READ),
        "other pool": lambda: other_pool(clock).token(42, READ),
        "other mode": lambda: signer.token(42, WRITE),
        "expired": lambda: signer.token(42, READ),
        "forged": lambda: manager(clock, secret="guessed").token(42, READ),
        "key gone": lambda: manager(clock, lifetime=1000 * MINUTE).token(42, READ),
    }[case]()
    if case == "expired":
        clock.ms += 10 * MINUTE + 1
    if case == "key gone":
        clock.ms += 40 * MINUTE                   # past the window, not past the expiry
    with pytest.raises(BlockTokenError, match=message.replace("(", r"\(")) as refused:
        signer.check(token, 42, READ)
    assert refused.value.status == Status.ERROR_ACCESS_TOKEN


def other_pool(clock: Clock) -> BlockTokenSecretManager:
    return BlockTokenSecretManager(BlockKeys(SECRET, "BP-8-nnlite-0", 10 * MINUTE,
                                             10 * MINUTE, clock))


# ---------------------------------------------------------------------- the transfer port

@pytest.fixture
def guarded(store):
    """A datanode that wants a block token on every op (dfs.block.access.token.enable)."""
    with running_datanode(store, SECRET, require_tokens=True) as datanode:
        yield datanode


def written(store, datanode, signer) -> int:
    block_id = store.allocate()
    datanode.expect(block_id)
    with TransferClient(datanode.xfer_port, datanode.pool_id) as client:
        acks = client.write_block(block_id, DATA, token=signer.token(block_id, WRITE))
    assert acks[-1][1] == [Status.SUCCESS]
    return block_id


def test_each_op_with_its_own_token_is_served(store, guarded):
    signer = block_tokens(SECRET, guarded.pool_id)
    block_id = written(store, guarded, signer)
    with TransferClient(guarded.xfer_port, guarded.pool_id) as client:
        data, _ = client.read_block(block_id, 0, len(DATA), token=signer.token(block_id, READ))
        assert data == DATA
        answer = client.block_checksum(block_id, len(DATA), token=signer.token(block_id, READ))
        assert answer.status == Status.SUCCESS


def refusal(datanode, op: str, block_id: int, token) -> object:
    with TransferClient(datanode.xfer_port, datanode.pool_id) as client:
        kwargs = {} if token is None else {"token": token}
        if op == "write":
            response = client.open_write(block_id, **kwargs)
        elif op == "read":
            response = client.open_read(block_id, 0, 100, **kwargs)
        else:
            response = client.block_checksum(block_id, 100, **kwargs)
        assert client.at_eof()                    # and the connection is closed
    return response


@pytest.mark.parametrize("op", ["write", "read", "checksum"])
@pytest.mark.parametrize("case", ["none", "other block", "other mode", "expired", "forged"])
def test_the_data_port_refuses_a_token_that_does_not_fit(store, guarded, op, case):
    signer = block_tokens(SECRET, guarded.pool_id)
    block_id = written(store, guarded, signer)
    if op == "write":
        block_id = store.allocate()
        guarded.expect(block_id)
    mode = WRITE if op == "write" else READ
    other = READ if mode == WRITE else WRITE
    token = {
        "none": lambda: None,
        "other block": lambda: signer.token(block_id + 1, mode),
        "other mode": lambda: signer.token(block_id, other),
        "expired": lambda: block_tokens(SECRET, guarded.pool_id,
                                        clock=lambda: 1_000_000.0).token(block_id, mode),
        "forged": lambda: TokenProto(identifier=signer.token(block_id, mode).identifier,
                                     password=b"\0" * 20, kind="HDFS_BLOCK_TOKEN",
                                     service=""),
    }[case]()
    response = refusal(guarded, op, block_id, token)
    assert response.status == Status.ERROR_ACCESS_TOKEN
    assert "Block token" in response.message or "block token" in response.message
    if op == "write":                    # DataXceiver names itself as the first bad link
        assert response.firstBadLink == f"127.0.0.1:{guarded.xfer_port}"
    else:
        assert not response.firstBadLink
