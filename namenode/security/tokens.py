"""Delegation tokens as HDFS issues them: the token, its identifier, and the secret manager
that signs, renews, cancels and checks them (Hadoop's ``Token``,
``AbstractDelegationTokenIdentifier``, ``AbstractDelegationTokenSecretManager`` and HDFS's
``DelegationTokenSecretManager``).

Bytes (``formats/hadoop/writable.py``'s primitives)::

    token       := blob(identifier) blob(password) text(kind) text(service)    -- Token.write
    identifier  := version byte = 0, text(owner) text(renewer) text(realUser)
                   vlong(issueDate) vlong(maxDate) vint(sequenceNumber) vint(masterKeyId)

``Token.encode_url`` is ``Token.encodeToUrlString``: those token bytes in URL-safe base64
without padding (commons-codec's ``Base64(0, null, true)``); ``decode_url`` also takes the
standard alphabet and padding, as that decoder does.

The secret manager holds only state, and changes it only through records (``MasterKeyUpdate``,
``TokenIssue``, ``TokenRenewal``, ``TokenCancel``: Hadoop's OP_UPDATE_MASTER_KEY,
OP_GET_DELEGATION_TOKEN, OP_RENEW_DELEGATION_TOKEN, OP_CANCEL_DELEGATION_TOKEN). A live change
hands each record to ``journal`` (the namesystem logs it) and then applies it; a replay, a
standby and an image load call ``apply`` with the same records, so a restart, a checkpoint
and a failover keep every token. The password is ``HMAC-SHA1(master key, identifier bytes)``
(``SecretManager.createPassword``); master keys roll every key-update interval and live
``key-update interval + max lifetime``; a token lives one renew interval from its issue or
last renewal, never past its max date. Time comes from an injected clock (ms).

A check is Hadoop's ``verifyToken``: one map lookup and a password compare. The store keeps
what it verified, the identifier's bytes to its identifier, password and expiry
(``TokenStore.verified``), so a known token is neither decoded nor hashed again; every change
to a token or a key empties it (``apply``, ``load``, dropping expired keys) and a store
replaced by an image load starts with none, so a cancelled, renewed or removed token is seen at
once, and the expiry is compared with the clock on every use.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from nnlite.formats import edits
from nnlite.formats.hadoop import writable
from nnlite.formats.hadoop.security import TokenProto
from nnlite.formats.hadoop.writable import WritableError
from nnlite.namenode.errors import AccessControlError, InvalidTokenError, NamenodeError

HDFS_DELEGATION_KIND = "HDFS_DELEGATION_TOKEN"
IDENTIFIER_VERSION = 0
KEY_BYTES = 64           # Hadoop's KeyGenerator asks for 64 bits; nnlite's keys are longer


class TokenFormatError(InvalidTokenError):
    """Bytes or text that are not a token or a delegation token identifier."""


@dataclass(frozen=True, slots=True)
class Token:
    """Hadoop's ``Token`` Writable: an opaque identifier and its password, a kind, a service."""
    identifier: bytes
    password: bytes = field(repr=False)
    kind: str = HDFS_DELEGATION_KIND
    service: str = ""

    def encode(self) -> bytes:
        return (writable.blob(self.identifier) + writable.blob(self.password)
                + writable.text(self.kind) + writable.text(self.service))

    @classmethod
    def decode(cls, data: bytes) -> Token:
        reader = writable.Reader(data)
        try:
            return cls(reader.blob(), reader.blob(), reader.text(), reader.text())
        except WritableError as error:
            raise TokenFormatError(f"not a token: {error}") from error

    def encode_url(self) -> str:
        """``Token.encodeToUrlString``."""
        return base64.urlsafe_b64encode(self.encode()).rstrip(b"=").decode("ascii")

    @classmethod
    def decode_url(cls, text: str) -> Token:
        """``Token.decodeFromUrlString``: either base64 alphabet, padding optional."""
        raw = text.strip().replace("+", "-").replace("/", "_").rstrip("=")
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except (binascii.Error, ValueError) as error:
            raise TokenFormatError(f"not a URL-encoded token: {error}") from error
        return cls.decode(data)

    def to_proto(self):
        """``TokenProto`` (Security.proto), as the RPC calls carry a token."""
        return TokenProto(identifier=self.identifier, password=self.password,
                          kind=self.kind, service=self.service)

    @classmethod
    def from_proto(cls, proto) -> Token:
        return cls(bytes(proto.identifier), bytes(proto.password), proto.kind, proto.service)

    def with_service(self, service: str, kind: str | None = None) -> Token:
        """The same token for another service (and kind), as ``SecurityUtil.setTokenService``."""
        return Token(self.identifier, self.password, kind or self.kind, service)


@dataclass(frozen=True, slots=True)
class DelegationTokenIdentifier:
    """``AbstractDelegationTokenIdentifier``'s fields; owner and real user are full user
    names (a principal), the renewer a short name (``setRenewer`` maps it)."""
    owner: str
    renewer: str
    real_user: str
    issue_date: int = 0
    max_date: int = 0
    sequence_number: int = 0
    master_key_id: int = 0
    kind: str = field(default=HDFS_DELEGATION_KIND, compare=False)

    def encode(self) -> bytes:
        """``AbstractDelegationTokenIdentifier.write``."""
        return (bytes([IDENTIFIER_VERSION]) + writable.text(self.owner)
                + writable.text(self.renewer) + writable.text(self.real_user)
                + writable.vlong(self.issue_date) + writable.vlong(self.max_date)
                + writable.vint(self.sequence_number) + writable.vint(self.master_key_id))

    @classmethod
    def decode(cls, data: bytes, kind: str = HDFS_DELEGATION_KIND) -> DelegationTokenIdentifier:
        """``readFields``; an unknown version is Hadoop's "Unknown version of delegation
        token"."""
        reader = writable.Reader(data)
        try:
            version = reader.byte()
            if version != IDENTIFIER_VERSION:
                raise TokenFormatError(f"Unknown version of delegation token {version}")
            return cls(reader.text(), reader.text(), reader.text(), reader.vlong(),
                       reader.vlong(), reader.vint(), reader.vint(), kind)
        except WritableError as error:
            raise TokenFormatError(f"not a delegation token identifier: {error}") from error

    @property
    def user(self) -> str:
        """``getUser``'s effective user: the owner."""
        return self.owner

    @property
    def proxy_real_user(self) -> str | None:
        """The real user when the owner is a proxied user (``getUser``'s real user), else
        None."""
        return self.real_user if self.real_user and self.real_user != self.owner else None

    def describe(self, short_owner: str) -> str:
        """HDFS's ``DelegationTokenIdentifier.toString``."""
        return (f"{self.kind} token {self.sequence_number} for {short_owner} "
                f"with renewer {self.renewer}")

    def fields(self) -> str:
        """``AbstractDelegationTokenIdentifier.toString``: every field (no secret in it)."""
        return (f"{self.kind} owner={self.owner}, renewer={self.renewer}, "
                f"realUser={self.real_user}, issueDate={self.issue_date}, "
                f"maxDate={self.max_date}, sequenceNumber={self.sequence_number}, "
                f"masterKeyId={self.master_key_id}")


@dataclass(frozen=True, slots=True)
class DelegationKey:
    """A master key (``DelegationKey``): its id, when it expires (ms) and its secret."""
    key_id: int
    expiry_date: int
    secret: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class MasterKeyUpdate:
    """OP_UPDATE_MASTER_KEY: a new current key, or a key's later expiry."""
    key: DelegationKey


@dataclass(frozen=True, slots=True)
class TokenIssue:
    """OP_GET_DELEGATION_TOKEN: a token issued, valid until ``expiry`` (ms)."""
    identifier: DelegationTokenIdentifier
    expiry: int


@dataclass(frozen=True, slots=True)
class TokenRenewal:
    """OP_RENEW_DELEGATION_TOKEN: a token now valid until ``expiry`` (ms)."""
    identifier: DelegationTokenIdentifier
    expiry: int


@dataclass(frozen=True, slots=True)
class TokenCancel:
    """OP_CANCEL_DELEGATION_TOKEN: a token cancelled, or removed once expired."""
    identifier: DelegationTokenIdentifier


Record = MasterKeyUpdate | TokenIssue | TokenRenewal | TokenCancel


@dataclass(frozen=True, slots=True)
class TokenState:
    """What the fsimage keeps (``SecretManagerSection``): the counters, the keys, the live
    tokens with their expiry."""
    current_key_id: int
    sequence_number: int
    keys: tuple[DelegationKey, ...]
    tokens: tuple[tuple[DelegationTokenIdentifier, int], ...]


def to_op(record: Record) -> edits.Op:
    """The edits op that logs ``record`` (``Tree``'s appliers turn it back into the record)."""
    if isinstance(record, MasterKeyUpdate):
        key = record.key
        return edits.UpdateMasterKeyOp(key.key_id, key.expiry_date, key.secret)
    if isinstance(record, TokenIssue):
        return edits.GetDelegationTokenOp(record.identifier.encode(), record.expiry)
    if isinstance(record, TokenRenewal):
        return edits.RenewDelegationTokenOp(record.identifier.encode(), record.expiry)
    return edits.CancelDelegationTokenOp(record.identifier.encode())


def create_password(identifier: bytes, secret: bytes) -> bytes:
    """``SecretManager.createPassword``: HMAC-SHA1 of the identifier under the key."""
    return hmac.new(secret, identifier, hashlib.sha1).digest()


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def format_time(ms: int) -> str:
    """``Time.formatTime``: ``yyyy-MM-dd HH:mm:ss,SSSZ`` (in UTC here)."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}+0000"


class TokenStore:
    """The secret manager's state, as the namespace keeps it: the counters, the master keys,
    the live tokens and when each expires. Changed by ``apply``, and by the active dropping
    expired keys as it rolls (``drop_keys_expired``: unlogged, as Hadoop's
    ``removeExpiredKeys``; a standby drops them at its own first roll). ``verified`` holds the
    live tokens checked since the last change (canonical identifier bytes to identifier,
    password, expiry); each change empties it. No clock, no rules."""

    def __init__(self) -> None:
        self.current_key_id = 0
        self.sequence_number = 0
        self.keys: dict[int, DelegationKey] = {}
        self.tokens: dict[DelegationTokenIdentifier, int] = {}
        self.verified: dict[bytes, tuple[DelegationTokenIdentifier, bytes, int]] = {}

    def apply(self, record: Record) -> None:
        """Apply one record: a live change as it is logged, a replay, a standby."""
        if not isinstance(record, TokenIssue):      # a new token changes none verified
            self.verified.clear()
        if isinstance(record, MasterKeyUpdate):
            self.keys[record.key.key_id] = record.key
            self.current_key_id = max(self.current_key_id, record.key.key_id)
        elif isinstance(record, TokenIssue):
            self._add_token(record.identifier, record.expiry)
        elif isinstance(record, TokenRenewal):
            if record.identifier in self.tokens:
                self.tokens[record.identifier] = record.expiry
        elif isinstance(record, TokenCancel):
            self.tokens.pop(record.identifier, None)
        else:
            raise TypeError(f"not a token record: {record!r}")

    def password(self, ident: DelegationTokenIdentifier,
                 raw: bytes | None = None) -> bytes | None:
        """The password of ``ident`` (whose bytes are ``raw``, when known) under its master
        key, None when the key is gone."""
        key = self.keys.get(ident.master_key_id)
        return None if key is None else create_password(raw or ident.encode(), key.secret)

    def drop_keys_expired(self, now: int) -> None:
        """Forget the master keys that expired before ``now`` (``removeExpiredKeys``)."""
        for key_id in [k for k, key in self.keys.items() if key.expiry_date < now]:
            del self.keys[key_id]
        self.verified.clear()

    def state(self) -> TokenState:
        """What an image saves."""
        return TokenState(self.current_key_id, self.sequence_number,
                          tuple(sorted(self.keys.values(), key=lambda k: k.key_id)),
                          tuple(sorted(self.tokens.items(),
                                       key=lambda item: item[0].sequence_number)))

    def load(self, state: TokenState) -> None:
        """Replace everything with an image's state (``loadSecretManagerState``)."""
        self.keys = {key.key_id: key for key in state.keys}
        self.tokens = {}
        self.verified = {}
        self.current_key_id = state.current_key_id
        self.sequence_number = state.sequence_number
        for ident, expiry in state.tokens:
            self._add_token(ident, expiry)

    def __bool__(self) -> bool:
        return bool(self.keys or self.tokens or self.current_key_id or self.sequence_number)

    def _add_token(self, ident: DelegationTokenIdentifier, expiry: int) -> None:
        """``addPersistedDelegationToken``: a token whose key is gone cannot be checked, so it
        is not kept (Hadoop warns and skips it)."""
        self.sequence_number = max(self.sequence_number, ident.sequence_number)
        if ident.master_key_id in self.keys:
            self.tokens[ident] = expiry


class DelegationTokenSecretManager:
    """Hadoop's rules over a ``TokenStore`` (the namespace's, found through ``store`` each
    time, since a reload or an image install replaces it). ``journal`` gets each change as a
    record and must apply it to the store (the namesystem logs and applies it as an op)."""

    def __init__(self, key_update_interval_ms: int, renew_interval_ms: int,
                 max_lifetime_ms: int, *, store: Callable[[], TokenStore] | None = None,
                 short_name: Callable[[str], str] = lambda u: u,
                 journal: Callable[[Record], None] | None = None,
                 clock: Callable[[], int] = wall_clock_ms,
                 random_bytes: Callable[[int], bytes] = os.urandom):
        own = TokenStore()
        self.store: Callable[[], TokenStore] = store or (lambda: own)
        self.key_update_interval = key_update_interval_ms
        self.renew_interval = renew_interval_ms
        self.max_lifetime = max_lifetime_ms
        self.short_name = short_name
        self.journal: Callable[[Record], None] = journal or (lambda r: self.store().apply(r))
        self.clock = clock
        self.random_bytes = random_bytes
        self.running = False
        self.last_key_update = 0

    @property
    def keys(self) -> dict[int, DelegationKey]:
        return self.store().keys

    @property
    def current_key_id(self) -> int:
        return self.store().current_key_id

    # ------------------------------------------------------------- active-side changes
    def start(self) -> None:
        """Begin issuing (``startThreads``): a fresh current key, logged."""
        self._update_current_key()
        self.running = True

    def stop(self) -> None:
        """Stop issuing (a namenode leaving the active state); keys and tokens stay."""
        self.running = False

    def roll_if_due(self) -> bool:
        """``rollMasterKey`` once a key-update interval has passed since the last new key: a
        new current key (expired keys are dropped from the store as it is applied). True
        when it rolled."""
        if not self.running or self.clock() - self.last_key_update < self.key_update_interval:
            return False
        self.store().drop_keys_expired(self.clock())
        self._update_current_key()
        return True

    def remove_expired(self) -> int:
        """``ExpiredTokenRemover``: every token past its expiry is removed, logged as a
        cancel (HDFS's ``logExpireDelegationToken``). Returns how many."""
        now = self.clock()
        expired = [ident for ident, expiry in self.store().tokens.items() if expiry < now]
        for ident in expired:
            self.journal(TokenCancel(ident))
        return len(expired)

    def create(self, owner: str, renewer: str, real_user: str = "") -> Token:
        """A new token for ``owner`` (``createPassword``): logged, then live. The renewer is
        kept as its short name (``setRenewer``)."""
        store = self.store()
        key = store.keys.get(store.current_key_id)
        if not self.running or key is None:
            raise InvalidTokenError("trying to get DT with no secret manager running")
        now = self.clock()
        ident = DelegationTokenIdentifier(
            owner, self.short_name(renewer) if renewer else "",
            real_user if real_user and real_user != owner else "",
            now, now + self.max_lifetime, store.sequence_number + 1, key.key_id)
        raw = ident.encode()
        self.journal(TokenIssue(ident, now + self.renew_interval))
        return Token(raw, create_password(raw, key.secret), HDFS_DELEGATION_KIND)

    def renew(self, token: Token, by_user: str) -> int:
        """``renewToken``: the new expiry (ms); ``by_user`` is the caller's short name."""
        ident = DelegationTokenIdentifier.decode(token.identifier)
        now = self.clock()
        if ident.max_date < now:
            raise InvalidTokenError(
                f"{by_user} tried to renew an expired token ({self._describe(ident)}) max "
                f"expiration date: {format_time(ident.max_date)} currentTime: "
                f"{format_time(now)}")
        if not ident.renewer:
            raise AccessControlError(f"{by_user} tried to renew a token "
                                     f"({self._describe(ident)}) without a renewer")
        if ident.renewer != by_user:
            raise AccessControlError(
                f"{by_user} tries to renew a token ({self._describe(ident)}) with "
                f"non-matching renewer {ident.renewer}")
        password = self.store().password(ident)
        if password is None:
            raise InvalidTokenError(
                f"Unable to find master key for keyId={ident.master_key_id} from cache. "
                f"Failed to renew an unexpired token ({self._describe(ident)}) with "
                f"sequenceNumber={ident.sequence_number}")
        if not hmac.compare_digest(password, token.password):
            raise AccessControlError(f"{by_user} is trying to renew a token "
                                     f"({self._describe(ident)}) with wrong password")
        if ident not in self.store().tokens:
            raise InvalidTokenError(f"Renewal request for unknown token "
                                    f"({self._describe(ident)})")
        expiry = min(ident.max_date, now + self.renew_interval)
        self.journal(TokenRenewal(ident, expiry))
        return expiry

    def cancel(self, token: Token, by_user: str) -> DelegationTokenIdentifier:
        """``cancelToken``: by the owner (``by_user`` is the caller's full name) or by the
        renewer (its short name)."""
        ident = DelegationTokenIdentifier.decode(token.identifier)
        if not ident.owner:
            raise InvalidTokenError(f"Token with no owner ({self._describe(ident)})")
        if by_user != ident.owner and (
                not ident.renewer or self.short_name(by_user) != ident.renewer):
            raise AccessControlError(f"{by_user} is not authorized to cancel the token "
                                     f"({self._describe(ident)})")
        if ident not in self.store().tokens:
            raise InvalidTokenError(f"Token not found ({self._describe(ident)})")
        self.journal(TokenCancel(ident))
        return ident

    # ------------------------------------------------------------------------ checks
    def verify(self, token: Token) -> DelegationTokenIdentifier:
        """``verifyToken``: the identifier of a live token whose password matches."""
        ident, password = self._check(token.identifier, token.kind)
        if not hmac.compare_digest(password, token.password):
            raise InvalidTokenError(f"token ({self._describe(ident)}) is invalid, password "
                                    f"doesn't match")
        return ident

    def verify_identifier_password(self, identifier: bytes) -> bytes:
        """``retrievePassword``: the password of a live token's identifier (DIGEST-MD5's
        secret)."""
        return self._check(identifier, HDFS_DELEGATION_KIND)[1]

    def _check(self, raw: bytes, kind: str) -> tuple[DelegationTokenIdentifier, bytes]:
        """``checkToken``: known and not expired at this instant; its identifier and
        password, from the store's ``verified`` when checked since its last change."""
        store = self.store()
        entry = store.verified.get(raw)
        if entry is None or entry[0].kind != kind:
            entry = self._look_up(store, raw, kind)
        ident, password, expiry = entry
        now = self.clock()
        if expiry < now:
            raise InvalidTokenError(
                f"token ({self._describe(ident)}) is expired, current time: "
                f"{format_time(now)} expected renewal time: {format_time(expiry)}")
        return ident, password

    def _look_up(self, store: TokenStore, raw: bytes,
                 kind: str) -> tuple[DelegationTokenIdentifier, bytes, int]:
        """Decode ``raw``, find its token and password; kept in ``verified`` when ``raw`` is
        the identifier's own encoding (so it holds one entry per live token at most)."""
        ident = DelegationTokenIdentifier.decode(raw, kind)
        expiry = store.tokens.get(ident)
        canonical = ident.encode()
        password = None if expiry is None else store.password(ident, canonical)
        if expiry is None or password is None:
            raise InvalidTokenError(f"token ({self._describe(ident)}) can't be found in cache")
        entry = (ident, password, expiry)
        if raw == canonical:
            store.verified[raw] = entry
        return entry

    def _update_current_key(self) -> None:
        now = self.clock()
        key = DelegationKey(self.store().current_key_id + 1,
                            now + self.key_update_interval + self.max_lifetime,
                            self.random_bytes(KEY_BYTES))
        self.journal(MasterKeyUpdate(key))
        self.last_key_update = now

    def _describe(self, ident: DelegationTokenIdentifier) -> str:
        try:
            owner = self.short_name(ident.owner) if ident.owner else ""
        except NamenodeError:       # a name the rules refuse still names its token
            owner = ident.owner
        return ident.describe(owner)
