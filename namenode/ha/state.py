"""An HA namenode's state and what it answers in each (FSNamesystem.check_operation's HA part).

States, as Hadoop's ``HAServiceState``: ``standby`` (follows the shared journal, serves
nothing of the namespace), ``active`` (serves everything), and ``transitioning`` between them
(catching up before it serves). What a refused op gets is chosen for Hadoop's own clients
(``RetryPolicies.FailoverOnNetworkExceptionRetry`` with ``WebHdfsFileSystem``'s defaults:
a StandbyException or a refused connection fails over to the next namenode at once, with no
pause, and about a dozen such tries end the call, while a RetriableException makes the client
pause and retry the same namenode with an exponential back-off):

* a standby answers StandbyException while it sees a live active: the client goes there.
  "Live" is checked at the refusal itself, not only by the pulse thread: a SIGKILLed
  active's connections close at its exit, and the client's next try, to the standby, comes
  within microseconds of its refused one, before the pulse thread may have run; so the
  standby polls the pulse connection (``pulse_open``) and a closed one means no active;
* a standby that sees no live active (the active's connection dropped, its lease is gone, a
  takeover is under way), and a namenode transitioning, answer RetriableException: the client
  waits and asks again, long enough for the takeover to finish, instead of burning its tries
  between a dead active and a standby in a few milliseconds;
* an active whose shared journal is unavailable (etcd has no quorum) serves reads and answers
  writes with RetriableException until it can write again.

Hadoop's message for a standby is ``Operation category READ is not supported in state
standby`` (``StandbyState.checkOperation``); the same text is used here.
"""

from __future__ import annotations

import enum
import select
import socket
import threading

from nnlite.namenode.errors import RetriableError, StandbyError
from nnlite.namenode.fsnamesystem import OperationCategory

SBNN_HELP = "Visit https://s.apache.org/sbnn-error"
CLOSED = select.POLLRDHUP | select.POLLHUP | select.POLLERR   # the peer closed or reset


class HAServiceState(enum.Enum):
    ACTIVE = "active"
    STANDBY = "standby"
    TRANSITIONING = "transitioning"
    STOPPING = "stopping"


class HAState:
    """The state an HAController moves and every op's check reads (FSNamesystem.ha)."""

    def __init__(self) -> None:
        self.state = HAServiceState.STANDBY
        self.active_alive = False            # a standby saw the active answer, just now
        self.pulse: socket.socket | None = None   # the open connection to the active's pulse
        self.active: dict | None = None       # the leader key's value: {"id", "http"}
        self.writes_blocked: str | None = None    # why an active refuses writes for now
        self.epoch = 0
        self.changed = threading.Condition()

    def pulse_open(self) -> bool:
        """Whether the pulse connection to the active is still open: a poll with no wait for
        the peer's close (POLLRDHUP), a reset or an error. Nothing is read, and an answer in
        flight does not count as a close; the loop never blocks here."""
        sock = self.pulse
        if sock is None:
            return False
        try:
            poller = select.poll()
            poller.register(sock, CLOSED)
            return not poller.poll(0)
        except (OSError, ValueError):       # closed by the pulse thread meanwhile
            return False

    def set(self, state: HAServiceState, *, epoch: int | None = None) -> None:
        with self.changed:
            self.state = state
            if epoch is not None:
                self.epoch = epoch
            self.changed.notify_all()

    def check_operation(self, category: OperationCategory) -> None:
        state = self.state
        if state is HAServiceState.ACTIVE:
            if category is OperationCategory.WRITE and self.writes_blocked is not None:
                raise RetriableError(self.writes_blocked)
            return
        if category is OperationCategory.UNCHECKED:
            return
        if state is HAServiceState.TRANSITIONING and category is OperationCategory.RECOVERY:
            return
        if state is HAServiceState.STANDBY and self.active_alive and self.pulse_open():
            raise StandbyError(f"Operation category {category.name} is not supported in state "
                               f"standby. {SBNN_HELP}")
        if state is HAServiceState.TRANSITIONING:
            raise RetriableError("This namenode is becoming active: it is catching up with the "
                                 "shared journal. Try again in a moment.")
        raise RetriableError(f"No namenode of the HA set is active now (this one is "
                             f"{state.value}): a failover is under way. Try again in a moment.")
