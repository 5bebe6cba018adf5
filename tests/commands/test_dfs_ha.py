"""``nnlite dfs``/``dfsadmin`` on an HA nameservice (``--namenode ns1 --conf``, the ``haset``
fixture: real namenode processes on a real etcd cluster): the commands follow the active as
Hadoop's failover client does -- across a StandbyException, across a SIGKILL of the active
(waiting out the standby's RetriableExceptions until it takes over) -- and give up in one line
with exit 3 when no namenode serves."""

from __future__ import annotations

import time

import pytest

from tests.client.test_failover import sees_the_active
from tests.commands.helpers import failed, nnlite, ok
from tests.servers import closed_port, wait_for

pytestmark = pytest.mark.crash


def dfs(haset, *args: str, namenode: str = "ns1"):
    return nnlite(None, "dfs", *args, "--namenode", namenode, "--conf", str(haset.conf))


def standby_first(haset, tmp_path, active: int):
    """A configuration that lists the standby first: every command meets it first."""
    conf = tmp_path / "standby-first.conf"
    text = haset.conf.read_text()
    order = f"dfs.ha.namenodes.ns1 = {haset.ids[1 - active]},{haset.ids[active]}"
    conf.write_text(text.replace(f"dfs.ha.namenodes.ns1 = {','.join(haset.ids)}", order))
    assert order in conf.read_text()
    return conf


def test_a_command_meeting_the_standby_first_goes_to_the_active(haset, tmp_path):
    active = haset.start_all()
    wait_for(lambda: sees_the_active(haset, 1 - active), 30, "the standby to see the active")
    conf = standby_first(haset, tmp_path, active)
    ok(nnlite(None, "dfs", "mkdir", "-p", "/ha/a", "--namenode", "ns1", "--conf", str(conf)))
    lines = ok(nnlite(None, "--conf", str(conf), "dfs", "ls", "/ha", "--namenode",
                      "webhdfs://ns1"))
    assert lines[-1].endswith(" /ha/a")
    (tmp_path / "f.txt").write_bytes(b"through the active\n")
    ok(nnlite(None, "dfs", "put", str(tmp_path / "f.txt"), "/ha/f.txt", "--namenode", "ns1",
              "--conf", str(conf)))
    cat = nnlite(None, "dfs", "cat", "/ha/f.txt", "--namenode", "ns1", "--conf", str(conf))
    assert ok(cat) == ["through the active"]
    # dfsadmin's report is the active's, though a standby would answer it too
    report = ok(nnlite(None, "dfsadmin", "report", "--json", "--namenode", "ns1",
                       "--conf", str(conf)))
    assert f"nn{active + 1}-name" in report[0]


def test_the_commands_follow_the_active_across_a_kill_of_it(haset):
    active = haset.start_all()
    ok(dfs(haset, "mkdir", "-p", "/k/before"))
    haset.kill(active)
    started = time.monotonic()
    ok(dfs(haset, "mkdir", "-p", "/k/after"))       # the standby takes over meanwhile
    took = time.monotonic() - started
    assert haset.active() == 1 - active
    assert ok(dfs(haset, "ls", "-d", "/k/before", "/k/after"))[1].endswith("/k/after")
    # it waited out RetriableExceptions (1 s, 2 s, ... each) rather than giving up at once
    assert 0.5 < took < 60, took


def test_the_killed_one_back_as_a_standby_is_passed_over(haset):
    active = haset.start_all()
    haset.kill(active)
    new = haset.active(excluding=active)
    haset.start(active)
    assert not haset.is_active(active)
    ok(dfs(haset, "mkdir", "-p", "/r/x"))
    assert ok(dfs(haset, "ls", "-d", "/r/x"))[0].endswith("/r/x")
    assert haset.is_active(new)


def test_no_namenode_serving_is_one_line_and_exit_3(tmp_path):
    conf = tmp_path / "down.conf"
    ports = [closed_port(), closed_port()]
    conf.write_text("dfs.nameservices = ns1\ndfs.ha.namenodes.ns1 = nn1,nn2\n" + "".join(
        f"dfs.namenode.http-address.ns1.nn{i + 1} = 127.0.0.1:{port}\n"
        for i, port in enumerate(ports)))
    result = nnlite(None, "dfs", "ls", "/", "--namenode", "ns1", "--conf", str(conf))
    message = failed(result, "NoActiveNamenodeError", 3)
    assert message.startswith("no namenode of ns1 served GETFILESTATUS / after 12 attempts")
    for i, port in enumerate(ports):
        assert f"nn{i + 1} (http://127.0.0.1:{port}): connection refused" in message


def test_a_nameservice_without_its_configuration_is_a_usage_error():
    message = failed(nnlite(None, "dfs", "ls", "/", "--namenode", "ns1"),
                     "BadArgumentError", 2)
    assert "give --conf with dfs.nameservices" in message


def test_without_namenode_the_configured_nameservice_is_used(haset):
    haset.start_all()
    ok(nnlite(None, "dfs", "mkdir", "-p", "/d/x", "--conf", str(haset.conf)))
    assert ok(nnlite(None, "--conf", str(haset.conf), "dfs", "ls", "-d", "/d/x"))[0].endswith(
        "/d/x")


def test_safemode_and_save_namespace_run_on_every_namenode_as_hdfs_dfsadmin(haset):
    haset.start_all()
    where = [f"127.0.0.1:{port}" for port in haset.ports]

    def dfsadmin(*args: str) -> list[str]:
        return ok(nnlite(None, "dfsadmin", *args, "--namenode", "ns1", "--conf",
                         str(haset.conf)))
    assert dfsadmin("safemode", "get") == [f"Safe mode is OFF in {w}" for w in where]
    assert dfsadmin("safemode", "enter") == [f"Safe mode is ON in {w}" for w in where]
    saved = dfsadmin("save-namespace")
    assert [line.rsplit(" for ", 1)[1] for line in saved] == where
    assert dfsadmin("safemode", "leave", "--json") == [
        f'{{"SafeMode":false,"namenode":"{w}"}}' for w in where]
    # roll-edits is the active's alone (a standby refuses it: StandbyException)
    (line,) = dfsadmin("roll-edits")
    assert line.startswith("Successfully rolled edit logs")
