"""Client-side failover between the namenodes of an HA nameservice, as Hadoop's
``WebHdfsFileSystem`` does with the namenodes ``ConfiguredFailoverProxyProvider`` lists and
``RetryPolicies.FailoverOnNetworkExceptionRetry``.

A ``Nameservice`` is the HA set as a client sees it: ``dfs.ha.namenodes.<ns>`` and each
``dfs.namenode.http-address.<ns>.<nn>``, in that order (``resolve`` turns ``ns1``,
``webhdfs://ns1`` or ``hdfs://ns1`` into one, given the nameservices a configuration names).
``FailoverConnection`` has ``Connection``'s interface over them, so ``WebHdfsClient`` (and
what rides on it: the shell, the catalog client, the watcher) follows the active namenode
without knowing it. A client of one URL keeps a plain ``Connection``: nothing of this module
runs per request.

The rule, ``FailoverPolicy.should_retry`` (FailoverOnNetworkExceptionRetry.shouldRetry):

* the namenode cannot have seen the request (no connection: refused, unknown host, connect
  timeout, no route; Hadoop's ConnectException, UnknownHostException, ConnectTimeoutException,
  NoRouteToHostException) or it refused with ``StandbyException``: fail over to the next
  namenode, at once;
* ``RetriableException`` (no namenode is active now, or the shared journal has no quorum):
  ask the same namenode again after ``sleep_time(retries)``, an exponential back-off;
* the connection broke after the request went out (the answer was lost): fail over and ask
  again only for an idempotent request (``is_idempotent``), else give up saying the outcome
  is unknown;
* any other answer (a file not found, a permission refused) is the caller's, untouched;
* give up once ``retries - failovers > max_retries``, or ``failovers >= max_failovers``.

``WebHdfsFileSystem.runWithRetry`` calls ``shouldRetry(e, retry, 0, true)``: it passes 0
failovers, so a failover never sleeps (``getFailoverOrRetrySleepTime(0)`` is 0) and
``max_failovers`` never binds -- the call ends after ``max_retries + 1`` retries whatever
failed -- and the same is done here. The numbers are HdfsClientConfigKeys.HttpClient's
defaults: ``dfs.http.client.retry.max.attempts`` 10, ``dfs.http.client.failover.max.attempts``
15, ``dfs.http.client.failover.sleep.base.millis`` 500, ``...sleep.max.millis`` 15000. The
back-off is ``RetryPolicies.calculateExponentialTime``: ``min(base * 2**n, max)`` times a
random factor in [0.5, 1.5); the first retry does not wait.

Idempotency is where nnlite differs from ``WebHdfsFileSystem``, which passes ``true`` for every
op: Hadoop's namenode keeps a retry cache for ClientProtocol's ``@AtMostOnce`` methods, nnlite's
has none, so a DELETE or RENAME sent again after its answer was lost could be applied twice
(and answer false). Only what ClientProtocol marks ``@Idempotent`` is asked again after a lost
answer (``IDEMPOTENT_OPS``, every GET), plus the first step of CREATE and APPEND, which only
redirects (nnlite's namenode opens the file when the data step starts). The data step itself
(``/data/v1``, where the body goes) is never sent again once sent, as Hadoop writes the body
outside its retry loop. A body is sent again (refused, standby, retriable) only if it can be
(bytes, none, or a file that seeks back).
"""

from __future__ import annotations

import enum
import http.client
import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

from nnlite.client import java_classes as java
from nnlite.client.connection import TIMEOUT, Connection, Reply, answer_of, position, rewind
from nnlite.client.errors import BadArgumentError, NamenodeUnreachableError, NoActiveNamenodeError
from nnlite.client.peer import probe_active

log = logging.getLogger(__name__)
T = TypeVar("T")

# HdfsClientConfigKeys.HttpClient's defaults (the dfs.http.client.* keys).
RETRY_MAX_ATTEMPTS = 10          # dfs.http.client.retry.max.attempts
FAILOVER_MAX_ATTEMPTS = 15       # dfs.http.client.failover.max.attempts
FAILOVER_SLEEP_BASE = 0.5        # dfs.http.client.failover.sleep.base.millis = 500
FAILOVER_SLEEP_MAX = 15.0        # dfs.http.client.failover.sleep.max.millis = 15000

WEBHDFS_PREFIX = "/webhdfs/v1"
DATA_PREFIX = "/data/v1"         # the data step of CREATE, APPEND, OPEN (namenode/http/data.py)

# ClientProtocol's @Idempotent methods, by WebHDFS op name (PUT, POST, DELETE; every GET is a
# read, @Idempotent too). CREATE and APPEND are @AtMostOnce, but their WebHDFS first step only
# redirects: the namespace changes in the data step, which is never sent twice.
IDEMPOTENT_OPS = frozenset({
    "MKDIRS", "SETREPLICATION", "SETPERMISSION", "SETOWNER", "SETTIMES", "SETQUOTA",
    "SETQUOTABYSTORAGETYPE", "MODIFYACLENTRIES", "REMOVEACLENTRIES", "REMOVEDEFAULTACL",
    "REMOVEACL", "SETACL", "ALLOWSNAPSHOT", "DISALLOWSNAPSHOT", "TRUNCATE", "SETSTORAGEPOLICY",
    "UNSETSTORAGEPOLICY", "RENEWDELEGATIONTOKEN", "CANCELDELEGATIONTOKEN",
    "SAFEMODE", "ROLLEDITS",                    # setSafeMode, rollEdits (the admin endpoint)
    "CREATE", "APPEND",                         # the first step: a redirect, nothing applied
})


NOT_IDEMPOTENT = "it is not idempotent, and whether it was applied cannot be known"
NOT_AGAIN = "its body cannot be sent again"


class Failure(enum.Enum):
    """One attempt's failure, as FailoverOnNetworkExceptionRetry tells them apart."""
    NOT_CONNECTED = "no connection"     # ConnectException & co: the request never left
    STANDBY = "standby"                 # StandbyException: another namenode is active
    RETRIABLE = "retriable"             # RetriableException: ask again later
    LOST = "answer lost"                # an IOException after sending: applied or not?


class Decision(enum.Enum):
    FAIL = "fail"
    RETRY = "retry"
    FAILOVER_AND_RETRY = "failover and retry"


@dataclass(frozen=True, slots=True)
class RetryAction:
    decision: Decision
    delay: float = 0.0           # seconds to wait before the next attempt
    reason: str = ""             # why it fails, for the error


@dataclass(frozen=True, slots=True)
class FailoverPolicy:
    """``RetryPolicies.FailoverOnNetworkExceptionRetry`` with ``WebHdfsFileSystem``'s numbers
    (seconds here, milliseconds there)."""
    max_failovers: int = FAILOVER_MAX_ATTEMPTS
    max_retries: int = RETRY_MAX_ATTEMPTS
    sleep_base: float = FAILOVER_SLEEP_BASE
    sleep_max: float = FAILOVER_SLEEP_MAX
    rand: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def should_retry(self, failure: Failure, retries: int, failovers: int, idempotent: bool,
                     rand: Callable[[], float] | None = None) -> RetryAction:
        rand = rand or self.rand
        if failovers >= self.max_failovers:
            return RetryAction(Decision.FAIL, 0.0, f"failovers ({failovers}) exceeded maximum "
                                                   f"allowed ({self.max_failovers})")
        if retries - failovers > self.max_retries:
            return RetryAction(Decision.FAIL, 0.0, f"retries ({retries}) exceeded maximum "
                                                   f"allowed ({self.max_retries})")
        if failure in (Failure.NOT_CONNECTED, Failure.STANDBY):
            return RetryAction(Decision.FAILOVER_AND_RETRY, self.sleep_time(failovers, rand))
        if failure is Failure.RETRIABLE:
            return RetryAction(Decision.RETRY, self.sleep_time(retries, rand))
        if idempotent:
            return RetryAction(Decision.FAILOVER_AND_RETRY, self.sleep_time(retries, rand))
        return RetryAction(Decision.FAIL, 0.0, NOT_IDEMPOTENT)

    def sleep_time(self, times: int, rand: Callable[[], float] | None = None) -> float:
        """``getFailoverOrRetrySleepTime``: 0 the first time, then
        ``calculateExponentialTime(base, times, max)``: ``min(base * 2**times, max)`` times a
        random factor in [0.5, 1.5)."""
        if times == 0:
            return 0.0
        factor = (rand or self.rand)() + 0.5
        return min(self.sleep_base * (1 << times), self.sleep_max) * factor


# ---------------------------------------------------------------------- the nameservice

@dataclass(frozen=True, slots=True)
class Nameservice:
    """An HA set as a client sees it: its name and its namenodes' URLs by id, in the order
    of ``dfs.ha.namenodes.<ns>`` (the order ConfiguredFailoverProxyProvider tries them)."""
    name: str
    namenodes: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of_urls(cls, urls: Sequence[str]) -> Nameservice:
        """Namenodes given by URL alone: each is named by its URL."""
        return cls(", ".join(urls), {url: url for url in urls})

    def label(self, nn: str) -> str:
        url = self.namenodes[nn]
        return url if nn == url else f"{nn} ({url})"


LOGICAL_SCHEMES = {"webhdfs": "http", "swebhdfs": "https", "hdfs": None}


def resolve(given: str, nameservices: Mapping[str, Mapping[str, str]]) -> str | Nameservice:
    """What ``--namenode`` names: a nameservice of ``nameservices`` (``ns1``,
    ``webhdfs://ns1``, ``hdfs://ns1``, as Hadoop's logical URIs), else one namenode's URL
    (``http://HOST:PORT``, ``HOST:PORT``, ``webhdfs://HOST:PORT``)."""
    if "://" not in given:
        if given in nameservices:
            return Nameservice(given, dict(nameservices[given]))
        if ":" in given:
            return given
        raise BadArgumentError(f"{given!r} is neither a namenode address (http://HOST:PORT or "
                               f"HOST:PORT) nor a nameservice of the configuration "
                               f"({_known(nameservices)})")
    parts = urlsplit(given)
    if parts.scheme not in LOGICAL_SCHEMES:
        return given
    if parts.path not in ("", "/") or parts.query:
        raise BadArgumentError(f"{given!r}: give the file system's address alone, without "
                               f"a path")
    if parts.netloc in nameservices:
        return Nameservice(parts.netloc, dict(nameservices[parts.netloc]))
    transport = LOGICAL_SCHEMES[parts.scheme]
    if transport is None or not _has_port(given):
        raise BadArgumentError(f"{given!r} is not a nameservice of the configuration "
                               f"({_known(nameservices)}); one namenode is "
                               f"webhdfs://HOST:PORT or http://HOST:PORT (nnlite speaks "
                               f"WebHDFS, not Hadoop RPC)")
    return f"{transport}://{parts.netloc}"


def _known(nameservices: Mapping[str, Mapping[str, str]]) -> str:
    if not nameservices:
        return "it names none: give --conf with dfs.nameservices"
    return "dfs.nameservices: " + ", ".join(nameservices)


def _has_port(url: str) -> bool:
    try:
        return urlsplit(url).port is not None
    except ValueError:
        return False


# ---------------------------------------------------------------------- idempotency

def is_idempotent(method: str, target: str) -> bool:
    """May this request be sent again after its answer was lost? (module docstring)"""
    path, _, query = target.partition("?")
    if method in ("GET", "HEAD"):
        return True
    if DATA_PREFIX + "/" in path:
        return False
    op = next((v for k, v in parse_qsl(query) if k == "op"), "")
    return op.upper() in IDEMPOTENT_OPS


def refusal(reply: Reply) -> tuple[Failure, str] | None:
    """A StandbyException or RetriableException answer, with its message; None otherwise
    (the answer is the caller's)."""
    if reply.status != 403 or b"RemoteException" not in reply.body:
        return None
    try:
        remote = json.loads(reply.body)["RemoteException"]
        java_class = remote["javaClassName"]
    except (ValueError, KeyError, TypeError):
        return None
    kind = {java.STANDBY: Failure.STANDBY, java.RETRIABLE: Failure.RETRIABLE}.get(java_class)
    if kind is None:
        return None
    return kind, f"{java_class.rsplit('.', 1)[-1]}: {remote.get('message', '')}"


# ---------------------------------------------------------------------- the connection

class FailoverConnection:
    """``Connection``'s interface over the namenodes of ``nameservice``: each request goes to
    the current namenode and follows the policy (module docstring) to the next one. One
    keep-alive connection per namenode; ``url`` is the current one's."""

    def __init__(self, nameservice: Nameservice, timeout: float | None = TIMEOUT,
                 policy: FailoverPolicy = FailoverPolicy(), *,
                 sleep: Callable[[float], None] = time.sleep, start: int = 0):
        if len(nameservice.namenodes) < 2:
            raise BadArgumentError(f"nameservice {nameservice.name} needs at least two "
                                   f"namenodes, not {len(nameservice.namenodes)}")
        self.nameservice = nameservice
        self.ids = list(nameservice.namenodes)
        self.connections = [Connection(url, timeout) for url in nameservice.namenodes.values()]
        for conn in self.connections:
            # a request that fails on a kept-alive connection lost its answer (drop_stale
            # dropped the stale ones first): it is not sent again behind the policy's back
            conn.retry_stale = False
        bases = {c.base for c in self.connections}
        if len(bases) != 1:
            raise BadArgumentError(f"the namenodes of {nameservice.name} must share one path "
                                   f"prefix, not {sorted(bases)}")
        self.base = bases.pop()
        self.timeout = timeout
        self.policy = policy
        self.index = start
        self._sleep = sleep

    @property
    def url(self) -> str:
        return self.connections[self.index].url

    def close(self) -> None:
        for conn in self.connections:
            conn.close()

    def without_timeout(self) -> FailoverConnection:
        return FailoverConnection(self.nameservice, None, self.policy, sleep=self._sleep,
                                  start=self.index)

    def set_timeout(self, timeout: float | None) -> None:
        self.timeout = timeout
        for conn in self.connections:
            conn.set_timeout(timeout)

    def request(self, method: str, target: str, body: bytes | BinaryIO | None = None,
                headers: dict[str, str] | None = None) -> Reply:
        """One exchange with the namenode that serves it (module docstring)."""
        return self._attempts(method, target, body, lambda conn: conn.request(
            method, target, body, headers))

    def stream(self, method: str, target: str, headers: dict[str, str] | None = None,
               body: bytes | None = None) -> http.client.HTTPResponse:
        """``Connection.stream`` on the current namenode, failing over only while no
        connection can be made (a refusal in the answer is the caller's to read)."""
        return self._attempts(method, target, body, lambda conn: conn.stream(
            method, target, headers, body))

    def find_active(self) -> None:
        """Make the namenode that says ``/isActive`` the current one (the current one is
        asked first); stay where it is when none says so. For requests a standby answers
        itself instead of refusing (the admin endpoint's REPORT, SAFEMODE)."""
        for step in range(len(self.connections)):
            index = (self.index + step) % len(self.connections)
            conn = self.connections[index]
            conn.drop_stale()
            if probe_active(conn) is None:
                self.index = index
                return

    def _attempts(self, method: str, target: str, body: bytes | BinaryIO | None,
                  send: Callable[[Connection], T]) -> T:
        """``send`` to the current namenode until it is answered or the policy gives up; a
        StandbyException or RetriableException ``Reply`` counts as a failure."""
        idempotent = is_idempotent(method, target)
        start = position(body)
        answers: dict[str, str] = {}
        retries = 0
        while True:
            conn = self.connections[self.index]
            conn.drop_stale()
            cause: NamenodeUnreachableError | None = None
            try:
                result = send(conn)
            except NamenodeUnreachableError as exc:
                failure = Failure.LOST if exc.sent else Failure.NOT_CONNECTED
                answer, cause = answer_of(exc), exc
            else:
                refused = refusal(result) if isinstance(result, Reply) else None
                if refused is None:
                    return result
                failure, answer = refused
            answers[self.ids[self.index]] = answer
            action = self.policy.should_retry(failure, retries, 0, idempotent)
            if action.decision is not Decision.FAIL and not rewind(body, start):
                action = RetryAction(Decision.FAIL, 0.0, NOT_AGAIN)
            if action.decision is Decision.FAIL:
                raise self._give_up(method, target, action, answers, retries,
                                    cause) from cause
            self._next(action, failure, answer, retries)
            retries += 1

    def _next(self, action: RetryAction, failure: Failure, answer: str, retries: int) -> None:
        log.debug("namenode %s: %s (%s); %s in %.3f s (retry %d)",
                 self.nameservice.label(self.ids[self.index]), failure.value, answer,
                 action.decision.value, action.delay, retries + 1)
        if action.decision is Decision.FAILOVER_AND_RETRY:
            self.index = (self.index + 1) % len(self.connections)
        if action.delay > 0:
            self._sleep(action.delay)

    def _give_up(self, method: str, target: str, action: RetryAction,
                 answers: dict[str, str], retries: int,
                 cause: NamenodeUnreachableError | None) -> Exception:
        what = _describe_request(method, target)
        if action.reason == NOT_IDEMPOTENT and cause is not None:
            return NamenodeUnreachableError(
                f"{what}: the answer of {self.url} was lost ({answer_of(cause)}) and the "
                f"request was not sent again: {action.reason}; check whether it was applied",
                url=self.url)
        last = "; ".join(f"{self.nameservice.label(nn)}: {answer}"
                         for nn, answer in answers.items())
        return NoActiveNamenodeError(
            f"no namenode of {self.nameservice.name} served {what} after {retries + 1} "
            f"attempts ({action.reason}): {last}", tried=dict(answers))


def _describe_request(method: str, target: str) -> str:
    """``MKDIRS /a/b``: the op and the path, as the user gave them."""
    path, _, query = target.partition("?")
    for prefix in (WEBHDFS_PREFIX, DATA_PREFIX):
        if prefix in path:
            path = path[path.index(prefix) + len(prefix):] or "/"
            break
    op = next((v for k, v in parse_qsl(query) if k == "op"), "")
    return f"{op or method} {unquote(path)}"


Address = str | Sequence[str] | Nameservice


def connect(address: Address, timeout: float | None = TIMEOUT,
            policy: FailoverPolicy | None = None) -> Connection | FailoverConnection:
    """A plain ``Connection`` for one namenode (nothing of the failover runs per request),
    a ``FailoverConnection`` for several."""
    if isinstance(address, str):
        return Connection(address, timeout)
    nameservice = address if isinstance(address, Nameservice) else Nameservice.of_urls(address)
    urls = list(nameservice.namenodes.values())
    if len(urls) == 1:
        return Connection(urls[0], timeout)
    if not urls:
        raise BadArgumentError(f"nameservice {nameservice.name} names no namenode")
    return FailoverConnection(nameservice, timeout, policy or FailoverPolicy())
