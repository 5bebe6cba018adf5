"""Delegation tokens (namenode/security/tokens.py): the identifier's and the token's bytes as
Hadoop writes them, and AbstractDelegationTokenSecretManager's rules and messages under an
injected clock: passwords under rolling keys, renew by the renewer up to the max date,
cancel by owner or renewer, expired, cancelled, forged and unknown tokens refused; every
change a record that rebuilds the same state when applied again."""

import base64
import hashlib
import hmac

import pytest

from nnlite.formats import edits
from nnlite.namenode.errors import AccessControlError, InvalidTokenError
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.security.auth_to_local import AuthToLocal
from nnlite.namenode.security.tokens import (
    DelegationKey,
    DelegationTokenIdentifier,
    DelegationTokenSecretManager,
    MasterKeyUpdate,
    Token,
    TokenCancel,
    TokenFormatError,
    TokenIssue,
    TokenRenewal,
    TokenStore,
    create_password,
    format_time,
    to_op,
)

DAY, HOUR = 86_400_000, 3_600_000
T0 = 1_700_000_000_000
RULES = AuthToLocal("DEFAULT", "NNLITE.TEST")

IDENTIFIER_BYTES = bytes.fromhex(
    "00"                                    # version
    "05" "616c696365"                       # Text "alice"
    "04" "7961726e"                         # Text "yarn"
    "00"                                    # Text "" (no real user)
    "8a" "018bcfe56800"                     # vlong issueDate 1700000000000
    "8a" "018bf3f1ec00"                     # vlong maxDate 1700604800000
    "07"                                    # vint sequenceNumber
    "03")                                   # vint masterKeyId


class Clock:
    def __init__(self, now: int = T0):
        self.now = now

    def __call__(self) -> int:
        return self.now


def manager(clock, journal=None):
    """A manager over its own store; ``journal`` sees each record before it is applied."""
    counter = iter(range(1, 1000))
    store = TokenStore()

    def log(record):
        if journal is not None:
            journal(record)
        store.apply(record)
    return DelegationTokenSecretManager(
        DAY, DAY, 7 * DAY, store=lambda: store, short_name=RULES.short_name, clock=clock,
        journal=log, random_bytes=lambda n: bytes([next(counter)]) * n)


def test_identifier_bytes_are_abstract_delegation_token_identifier_write():
    ident = DelegationTokenIdentifier("alice", "yarn", "", T0, T0 + 7 * DAY, 7, 3)
    assert ident.encode() == IDENTIFIER_BYTES
    assert DelegationTokenIdentifier.decode(IDENTIFIER_BYTES) == ident


def test_an_unknown_identifier_version_is_hadoops_message():
    with pytest.raises(TokenFormatError, match="Unknown version of delegation token 1"):
        DelegationTokenIdentifier.decode(b"\x01" + IDENTIFIER_BYTES[1:])


def test_token_writable_and_its_url_string():
    token = Token(b"\x01\x02", b"\xff" * 3, "HDFS_DELEGATION_TOKEN", "127.0.0.1:8020")
    raw = token.encode()
    assert raw == (b"\x02\x01\x02" + b"\x03\xff\xff\xff" + b"\x15HDFS_DELEGATION_TOKEN"
                   + b"\x0e127.0.0.1:8020")
    url = token.encode_url()
    assert url == base64.urlsafe_b64encode(raw).decode().rstrip("=") and "=" not in url
    assert Token.decode_url(url) == token
    assert Token.decode_url(base64.b64encode(raw).decode()) == token   # standard alphabet
    assert Token.from_proto(token.to_proto()) == token


@pytest.mark.parametrize("text", ["!!!", "AAAA", base64.urlsafe_b64encode(b"\x09ab").decode()])
def test_garbage_is_not_a_token(text):
    with pytest.raises(TokenFormatError):
        Token.decode_url(text)


def test_password_is_hmac_sha1_of_the_identifier_under_the_current_key():
    clock = Clock()
    m = manager(clock)
    m.start()
    token = m.create("alice@NNLITE.TEST", "yarn/host@NNLITE.TEST", "")
    ident = DelegationTokenIdentifier.decode(token.identifier)
    assert ident == DelegationTokenIdentifier("alice@NNLITE.TEST", "yarn", "", T0,
                                              T0 + 7 * DAY, 1, 1)
    assert token.password == hmac.new(b"\x01" * 64, token.identifier, hashlib.sha1).digest()
    assert m.verify(token) == ident
    assert m.verify_identifier_password(token.identifier) == token.password
    assert token.kind == "HDFS_DELEGATION_TOKEN"


def test_no_token_before_the_manager_runs():
    with pytest.raises(InvalidTokenError, match="no secret manager running"):
        manager(Clock()).create("alice", "alice")


def test_a_forged_password_is_refused():
    m = manager(Clock())
    m.start()
    token = m.create("alice", "alice")
    forged = Token(token.identifier, b"\x00" * 20, token.kind)
    with pytest.raises(InvalidTokenError, match=r"token \(HDFS_DELEGATION_TOKEN token 1 for "
                                                r"alice with renewer alice\) is invalid, "
                                                r"password doesn't match"):
        m.verify(forged)


def test_an_identifier_never_issued_is_not_in_the_cache():
    m = manager(Clock())
    m.start()
    ident = DelegationTokenIdentifier("mallory", "mallory", "", T0, T0 + DAY, 99, 1)
    token = Token(ident.encode(), create_password(ident.encode(), b"\x01" * 64))
    with pytest.raises(InvalidTokenError, match="can't be found in cache"):
        m.verify(token)


def test_expiry_after_the_renew_interval_and_renewal_up_to_the_max_date():
    clock = Clock()
    m = manager(clock)
    m.start()
    token = m.create("alice@NNLITE.TEST", "alice")
    clock.now = T0 + DAY + 1
    with pytest.raises(InvalidTokenError, match=r"is expired, current time: 2023-11-15 "
                                                r"22:13:20,001\+0000 expected renewal time: "
                                                r"2023-11-15 22:13:20,000\+0000"):
        m.verify(token)
    clock.now = T0 + DAY - 1
    assert m.renew(token, "alice") == T0 + 2 * DAY - 1
    clock.now = T0 + 6 * DAY + HOUR
    m.renew(token, "alice")
    clock.now = T0 + 7 * DAY - 1
    assert m.renew(token, "alice") == T0 + 7 * DAY          # never past the max date
    clock.now = T0 + 7 * DAY + 1
    with pytest.raises(InvalidTokenError, match="alice tried to renew an expired token"):
        m.renew(token, "alice")


def test_only_the_renewer_renews():
    m = manager(Clock())
    m.start()
    token = m.create("alice@NNLITE.TEST", "yarn")
    with pytest.raises(AccessControlError, match="alice tries to renew a token .* with "
                                                 "non-matching renewer yarn"):
        m.renew(token, "alice")
    no_renewer = m.create("alice@NNLITE.TEST", "")
    with pytest.raises(AccessControlError, match="without a renewer"):
        m.renew(no_renewer, "yarn")
    wrong = Token(token.identifier, b"x" * 20)
    with pytest.raises(AccessControlError, match="with wrong password"):
        m.renew(wrong, "yarn")


def test_cancel_by_owner_or_renewer_and_a_cancelled_token_is_gone():
    m = manager(Clock())
    m.start()
    first = m.create("alice@NNLITE.TEST", "yarn")
    second = m.create("alice@NNLITE.TEST", "yarn")
    with pytest.raises(AccessControlError, match="bob@NNLITE.TEST is not authorized to cancel"):
        m.cancel(first, "bob@NNLITE.TEST")
    m.cancel(first, "alice@NNLITE.TEST")
    m.cancel(second, "yarn/rm@NNLITE.TEST")                 # the renewer, by short name
    for token in (first, second):
        with pytest.raises(InvalidTokenError, match="can't be found in cache"):
            m.verify(token)
    with pytest.raises(InvalidTokenError, match="Token not found"):
        m.cancel(first, "alice@NNLITE.TEST")
    with pytest.raises(InvalidTokenError, match="Renewal request for unknown token"):
        m.renew(second, "yarn")


def test_keys_roll_and_old_tokens_stay_valid_until_their_key_expires():
    clock = Clock()
    m = manager(clock)
    m.start()
    old = m.create("alice", "alice")
    assert not m.roll_if_due()
    clock.now = T0 + DAY
    assert m.roll_if_due() and m.current_key_id == 2
    new = m.create("alice", "alice")
    assert DelegationTokenIdentifier.decode(new.identifier).master_key_id == 2
    m.renew(old, "alice")
    assert m.verify(old) and m.verify(new)
    clock.now = T0 + 9 * DAY                                # key 1 lived 1 + 7 days
    m.roll_if_due()
    assert 1 not in m.keys and {2, 3} <= set(m.keys)


def test_expired_tokens_are_removed_as_cancels():
    clock, records = Clock(), []
    m = manager(clock, journal=records.append)
    m.start()
    token = m.create("alice", "alice")
    clock.now = T0 + DAY + 1
    assert m.remove_expired() == 1
    assert records[-1] == TokenCancel(DelegationTokenIdentifier.decode(token.identifier))


def test_records_rebuild_the_same_state_on_a_replay_and_from_an_image():
    clock, records = Clock(), []
    m = manager(clock, journal=records.append)
    m.start()
    kept = m.create("alice@NNLITE.TEST", "yarn", "oozie@NNLITE.TEST")
    gone = m.create("bob@NNLITE.TEST", "bob")
    clock.now += HOUR
    m.renew(kept, "yarn")
    m.cancel(gone, "bob@NNLITE.TEST")
    assert [type(r) for r in records] == [MasterKeyUpdate, TokenIssue, TokenIssue,
                                          TokenRenewal, TokenCancel]
    assert repr(records[0].key.secret) not in repr(records[0])
    replayed = manager(clock)
    for record in records:
        replayed.store().apply(record)
    assert replayed.store().state() == m.store().state()
    assert replayed.verify(kept).real_user == "oozie@NNLITE.TEST"
    loaded = manager(clock)
    loaded.store().load(m.store().state())
    assert loaded.store().state() == m.store().state() and loaded.verify(kept)
    loaded.start()                                          # a new active's first key
    assert loaded.current_key_id == 2
    assert DelegationTokenIdentifier.decode(
        loaded.create("carol", "carol").identifier).sequence_number == 3


def test_a_verified_token_is_kept_and_every_change_is_seen_at_once():
    """A check once verified skips the decode (the store keeps it), yet a renewal, a
    cancel, a removal, a dropped key and an image load are each seen by the next check, and
    the expiry is compared with the clock at each one."""
    clock = Clock()
    m = manager(clock)
    m.start()
    token, other = m.create("alice", "alice"), m.create("bob", "bob")
    password = m.verify_identifier_password(token.identifier)
    assert m.verify(token).owner == "alice" and token.identifier in m.store().verified
    clock.now = T0 + DAY + 1                                # the instant after its expiry
    with pytest.raises(InvalidTokenError, match="is expired"):
        m.verify(token)
    with pytest.raises(InvalidTokenError, match="is expired"):
        m.verify_identifier_password(token.identifier)
    clock.now = T0 + DAY
    m.verify(token)
    m.renew(token, "alice")                                 # a later expiry, at once
    clock.now = T0 + DAY + 1
    assert m.verify(token) and m.verify_identifier_password(token.identifier) == password
    with pytest.raises(InvalidTokenError, match="is invalid, password doesn't match"):
        m.verify(Token(token.identifier, b"\x00" * 20))
    m.cancel(token, "alice")
    with pytest.raises(InvalidTokenError, match="can't be found in cache"):
        m.verify(token)
    assert m.remove_expired() == 1                          # bob's, expired a moment ago
    with pytest.raises(InvalidTokenError, match="can't be found in cache"):
        m.verify_identifier_password(other.identifier)
    kept = m.create("carol", "carol")
    m.verify(kept)
    clock.now = T0 + 10 * DAY                               # key 1 expired: dropped
    m.store().apply(TokenRenewal(DelegationTokenIdentifier.decode(kept.identifier),
                                 T0 + 11 * DAY))
    m.verify(kept)
    m.roll_if_due()
    with pytest.raises(InvalidTokenError, match="can't be found in cache"):
        m.verify(kept)


def test_an_image_load_replaces_what_was_verified():
    m = manager(Clock())
    m.start()
    token = m.create("alice", "alice")
    m.verify(token)
    m.store().load(manager(Clock()).store().state())        # an empty image
    with pytest.raises(InvalidTokenError, match="can't be found in cache"):
        m.verify(token)


def test_only_an_identifiers_own_bytes_are_kept():
    """A longer encoding of the same identifier still verifies (as Hadoop's readFields
    takes it) but is not kept: the store holds one entry per live token at most."""
    m = manager(Clock())
    m.start()
    token = m.create("alice", "alice")
    ident = DelegationTokenIdentifier.decode(token.identifier)
    longer = token.identifier[:-2] + b"\x8f\x01" + token.identifier[-1:]   # vint 1, 2 bytes
    assert DelegationTokenIdentifier.decode(longer) == ident
    assert m.verify(Token(longer, token.password)) == ident
    assert longer not in m.store().verified


def test_format_time_is_hadoops_layout_in_utc():
    assert format_time(T0 + 5) == "2023-11-14 22:13:20,005+0000"


def test_each_record_is_an_edits_op_and_back():
    ident = DelegationTokenIdentifier("alice", "yarn", "", T0, T0 + DAY, 3, 2)
    records = [MasterKeyUpdate(DelegationKey(2, T0 + 8 * DAY, b"k" * 64)),
               TokenIssue(ident, T0 + DAY), TokenRenewal(ident, T0 + 2 * DAY),
               TokenCancel(ident)]
    tree = Tree()
    for record in records:
        op = to_op(record)
        assert edits.OPS[op.CODE] is type(op)
        tree.apply(op)                                  # the one apply path, as replay takes
    store = TokenStore()
    for record in records:
        store.apply(record)
    assert tree.secrets.state() == store.state() and store.keys and not store.tokens
