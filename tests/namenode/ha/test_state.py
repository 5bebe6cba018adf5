"""What an HA namenode answers in each state (namenode/ha/state.py), with a real socket pair
standing for the standby's pulse connection to the active."""

from __future__ import annotations

import socket

import pytest

from nnlite.namenode.errors import RetriableError, StandbyError
from nnlite.namenode.fsnamesystem import OperationCategory
from nnlite.namenode.ha.state import HAServiceState, HAState


@pytest.fixture
def pulse():
    standby_end, active_end = socket.socketpair()
    standby_end.settimeout(1.0)     # as the pulse's own connection (create_connection)
    yield standby_end, active_end
    standby_end.close()
    active_end.close()


def standby_seeing(sock: socket.socket | None) -> HAState:
    state = HAState()
    state.active_alive = True       # the pulse thread's last word: the active answered
    state.pulse = sock
    return state


@pytest.mark.parametrize("category", [OperationCategory.READ, OperationCategory.WRITE])
def test_a_standby_whose_pulse_is_open_sends_the_client_to_the_active(pulse, category):
    with pytest.raises(StandbyError, match=f"Operation category {category.name} is not "
                                           f"supported in state standby"):
        standby_seeing(pulse[0]).check_operation(category)


def test_an_answer_in_flight_on_the_pulse_still_counts_as_open(pulse):
    pulse[1].sendall(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(StandbyError):
        standby_seeing(pulse[0]).check_operation(OperationCategory.WRITE)
    assert pulse[0].recv(100) == b"HTTP/1.1 200 OK\r\n"     # not consumed


def test_the_active_s_connection_closed_means_retry_at_once(pulse):
    """The active died: its end closed at its exit. The pulse thread has not run since, but
    the very next refusal already says RetriableException, so a client does not spend its
    failover tries between the dead active and this standby."""
    state = standby_seeing(pulse[0])
    pulse[1].close()
    with pytest.raises(RetriableError, match="No namenode of the HA set is active now"):
        state.check_operation(OperationCategory.WRITE)
    assert state.active_alive           # nothing but the check itself saw the close


def test_no_pulse_connection_means_no_live_active():
    with pytest.raises(RetriableError):
        standby_seeing(None).check_operation(OperationCategory.READ)


def test_an_active_serves_and_a_transitioning_one_asks_to_retry():
    state = HAState()
    state.set(HAServiceState.ACTIVE, epoch=7)
    state.check_operation(OperationCategory.WRITE)
    state.set(HAServiceState.TRANSITIONING)
    with pytest.raises(RetriableError, match="becoming active"):
        state.check_operation(OperationCategory.READ)
