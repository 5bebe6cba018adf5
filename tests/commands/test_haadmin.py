"""``nnlite haadmin`` (commands/haadmin.py) on a real HA set (the ``haset`` fixture: two
namenode processes of ns1 on a three-member etcd cluster): each command's output and exit code,
as HDFS's haadmin prints them, and its refusals as one line."""

from __future__ import annotations

import pytest

from tests.commands.helpers import failed, nnlite, ok
from tests.servers import closed_port

pytestmark = pytest.mark.crash


def haadmin(haset, *args: str, user: str = "tester"):
    return nnlite(None, "haadmin", *args, "--conf", str(haset.conf), user=user)


def state(haset, i: int) -> str:
    (line,) = ok(haadmin(haset, "getServiceState", haset.ids[i]))
    return line


def test_get_service_state_prints_active_or_standby(haset):
    active = haset.start_all()
    assert state(haset, active) == "active"
    assert state(haset, 1 - active) == "standby"


def test_a_graceful_failover_says_where_the_active_went(haset):
    active = haset.start_all()
    other = 1 - active
    lines = ok(haadmin(haset, "failover", haset.ids[active], haset.ids[other]))
    assert lines == [f"Failover to NameNode at 127.0.0.1:{haset.ports[other]} successful"]
    assert (state(haset, other), state(haset, active)) == ("active", "standby")
    # without automatic failover, HAAdmin's other message
    lines = ok(haadmin(haset, "failover", haset.ids[other], haset.ids[active],
                       "-D", "dfs.ha.automatic-failover.enabled=false"))
    assert lines == [f"Failover from {haset.ids[other]} to {haset.ids[active]} successful"]
    assert haset.active() == active


def test_manual_transitions_need_forcemanual_under_automatic_failover(haset):
    active = haset.start_all()
    other = 1 - active
    for command, nn in (("transitionToStandby", active), ("transitionToActive", other)):
        message = failed(haadmin(haset, command, haset.ids[nn]), "RemoteIOError", 1)
        assert message.startswith("Refusing to manually manage HA state, since automatic "
                                  "failover is enabled"), message
    # forced: the active steps down (printing nothing, as HAAdmin) and the other takes over
    assert ok(haadmin(haset, "transitionToStandby", "--forcemanual", haset.ids[active])) == []
    assert haset.active() == other
    message = failed(haadmin(haset, "transitionToActive", "--forcemanual", haset.ids[active]),
                     "RemoteIOError", 1)
    assert f"namenode {haset.ids[other]} is active: use -failover" in message
    assert ok(haadmin(haset, "transitionToActive", "--forcemanual", haset.ids[other])) == []


def test_transitions_are_for_the_superuser(haset):
    active = haset.start_all()
    message = failed(haadmin(haset, "transitionToStandby", "--forcemanual",
                             haset.ids[active], user="bob"), "AccessControlError", 1)
    assert "Superuser privilege is required" in message
    assert state(haset, active) == "active"


def test_a_namenode_that_is_down_is_unreachable(haset):
    active = haset.start_all()
    haset.kill(active)
    message = failed(haadmin(haset, "getServiceState", haset.ids[active]),
                     "NamenodeUnreachableError", 3)
    assert f"127.0.0.1:{haset.ports[active]}" in message


@pytest.mark.parametrize("args, message", [
    (["getServiceState", "nn3"], "nn3 is not a namenode of ns1 (dfs.ha.namenodes.ns1: nn1, nn2)"),
    (["failover", "nn9", "nn1"], "nn9 is not a namenode of ns1"),
])
def test_an_unknown_namenode_id_is_a_usage_error(haset, args, message):
    assert message in failed(haadmin(haset, *args), "UsageError", 2)


def test_without_a_nameservice_haadmin_says_what_to_configure(tmp_path):
    conf = tmp_path / "plain.conf"
    conf.write_text(f"dfs.namenode.http-address = 127.0.0.1:{closed_port()}\n")
    result = nnlite(None, "haadmin", "getServiceState", "nn1", "--conf", str(conf))
    assert "no nameservice is configured: give --conf with dfs.nameservices" in failed(
        result, "UsageError", 2)
