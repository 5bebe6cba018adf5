"""``nnlite dfsadmin safemode|save-namespace|roll-edits|report`` with CliRunner against one live
namenode per module ("tester" is in the supergroup, "bob" is not). Each test leaves the
namenode out of safe mode; txids are compared with the report, never assumed."""

from __future__ import annotations

import json

import pytest

from nnlite.client.webhdfs import WebHdfsClient
from tests.commands.helpers import dfs, dfsadmin, failed, ok
from tests.servers import closed_port


@pytest.fixture(autouse=True)
def out_of_safe_mode(server):
    yield
    with WebHdfsClient(server.url, "tester") as client:
        client.safe_mode("leave")


def report(server) -> dict:
    return json.loads(*ok(dfsadmin(server, "report", "--json")))


def test_safemode_cycle_blocks_writes(server):
    assert ok(dfsadmin(server, "safemode", "get")) == ["Safe mode is OFF"]
    assert ok(dfsadmin(server, "safemode", "enter")) == ["Safe mode is ON"]
    assert ok(dfsadmin(server, "safemode", "get", "--json")) == ['{"SafeMode":true}']
    message = failed(dfs(server, "mkdir", "/blocked"), "SafeModeError", 1)
    assert "safemode leave" in message
    assert ok(dfsadmin(server, "safemode", "leave")) == ["Safe mode is OFF"]
    assert ok(dfsadmin(server, "safemode", "wait")) == ["Safe mode is OFF"]
    ok(dfs(server, "mkdir", "/blocked"))


def test_save_namespace_needs_safe_mode(server):
    ok(dfs(server, "mkdir", "-p", "/saved/b"))
    message = failed(dfsadmin(server, "save-namespace"), "SafeModeError", 1)
    assert "Safe mode should be turned ON" in message
    ok(dfsadmin(server, "safemode", "enter"))
    txid = report(server)["lastWrittenTxid"]
    assert ok(dfsadmin(server, "save-namespace")) == [
        f"Save namespace successful (image at txid {txid})"]
    again = json.loads(*ok(dfsadmin(server, "save-namespace", "--json")))["txid"]
    assert again == txid + 1                  # the new segment's START_LOG_SEGMENT
    assert report(server)["lastCheckpointTxid"] == again


def test_roll_edits_then_report(server):
    ok(dfs(server, "mkdir", "/rolled"))
    before = report(server)
    [line] = ok(dfsadmin(server, "roll-edits"))
    closed = before["lastWrittenTxid"] + 1        # + the END_LOG_SEGMENT record
    assert line == f"Successfully rolled edit logs (the closed segment ends at txid {closed})"
    text = ok(dfsadmin(server, "report"))
    now = report(server)
    name_dir = server.name_dirs[0]
    assert now["segment"] == "edits.new" and "Edits segment: edits.new" in text
    assert f"Namespace ID: {now['namespaceId']}" in text
    assert f"  last written txid:  {now['lastWrittenTxid']}" in text
    assert f"  last checkpoint:    txid {now['lastCheckpointTxid']} at " in text[6]
    assert "Name directories: 1 healthy, 0 failed" in text
    assert f"  {name_dir}: healthy" in text
    assert f"  {name_dir}: {now['editsSize'][name_dir]} bytes" in text
    assert f"Namespace: {now['files']} files, {now['directories']} directories" in text


def test_report_json_is_the_namenode_report(server):
    doc = report(server)
    assert {"namespaceId", "safeMode", "lastWrittenTxid", "editsSize", "nameDirs",
            "files", "directories"} <= set(doc)
    assert doc["nameDirs"] == [{"path": server.name_dirs[0], "healthy": True,
                                "failure": None}]


@pytest.mark.parametrize("args", [["safemode", "get"], ["safemode", "enter"],
                                  ["save-namespace"], ["roll-edits"], ["report"]])
def test_admin_needs_a_superuser(server, args):
    message = failed(dfsadmin(server, *args, user="bob"), "AccessControlError", 1)
    assert "Superuser privilege is required" in message
    assert ok(dfsadmin(server, "safemode", "get")) == ["Safe mode is OFF"]


def test_admin_usage_mistakes(server):
    assert "'bogus' is not one of" in failed(dfsadmin(server, "safemode", "bogus"),
                                             "UsageError", 2)
    assert "Missing argument" in failed(dfsadmin(server, "safemode"), "UsageError", 2)


def test_admin_unreachable():
    url = f"http://127.0.0.1:{closed_port()}"
    for args in (["safemode", "get"], ["report"], ["roll-edits"], ["save-namespace"]):
        assert url in failed(dfsadmin(None, *args, "--namenode", url),
                             "NamenodeUnreachableError", 3)
