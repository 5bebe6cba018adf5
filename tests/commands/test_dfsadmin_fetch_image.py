"""``nnlite dfsadmin fetch-image DIR`` against a live namenode (tests/servers.py), and the
whole way back: fetch, then ``--import-checkpoint`` into an empty name dir."""

from __future__ import annotations

import json
import urllib.request

from click.testing import CliRunner

from nnlite import cli
from nnlite.commands.support import EXIT_FAILED, EXIT_STORAGE
from nnlite.formats.fsimage.md5 import file_md5, parse_md5_sidecar
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.image import importer
from tests.servers import closed_port


def call(url: str, method: str = "PUT") -> dict:
    request = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.load(resp)


def save_namespace(server) -> int:
    """Some dirs, then saveNamespace, so the served image holds more than the root."""
    for path in ("/jobs/q1/offsets", "/jobs/q1/commits", "/tmp"):
        call(server.webhdfs(path) + "?op=MKDIRS&user.name=tester")
    admin = server.url + "/admin?user.name=tester&op="
    call(admin + "SAFEMODE&action=enter", "GET")
    txid = call(admin + "SAVENAMESPACE")["txid"]
    call(admin + "SAFEMODE&action=leave", "GET")
    return txid


def fetch(server, out, *extra, home=None):
    env = {"NNLITE_NAMENODE": None, "HOME": str(home or out.parent / "home")}
    return CliRunner(env=env).invoke(cli.main, ["dfsadmin", "fetch-image", str(out),
                                                "--namenode", server.url, *extra])


def test_fetch_then_import(namenode, tmp_path):
    txid = save_namespace(namenode)
    token = tmp_path / "name" / "checkpoint.token"
    out = tmp_path / "fetched"
    result = fetch(namenode, out, "--secret-file", str(token))
    assert result.exit_code == 0, result.output
    assert f"Fetched the last checkpoint's image, txid {txid} " in result.output
    assert "later edits are not in it" in result.output
    served = tmp_path / "name" / "current" / "fsimage"
    assert (out / "fsimage").read_bytes() == served.read_bytes()
    assert parse_md5_sidecar((out / "fsimage.md5").read_text()) == file_md5(served)
    assert not list(out.glob("*.download"))

    importer.import_checkpoint(out, [str(tmp_path / "rebuilt")])
    with FSNamesystem.open([str(tmp_path / "rebuilt")]) as fs:
        assert fs.journal.txid == txid + 1
        assert sorted(fs.ns.tree.get("/jobs/q1").children) == ["commits", "offsets"]


def test_secret_from_the_configuration(namenode, tmp_path):
    secret = (tmp_path / "name" / "checkpoint.token").read_text().strip()
    result = fetch(namenode, tmp_path / "out", "-D", f"nnlite.checkpoint.secret={secret}")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "fsimage.md5").exists()


def test_a_wrong_secret_is_refused_and_writes_nothing(namenode, tmp_path):
    wrong = tmp_path / "wrong.token"
    wrong.write_text("not-the-secret\n")
    result = fetch(namenode, tmp_path / "out", "--secret-file", str(wrong))
    assert result.exit_code == EXIT_FAILED, result.output
    assert "403" in result.output
    assert not list((tmp_path / "out").iterdir())


def test_no_secret_is_a_usage_error(namenode, tmp_path):
    result = fetch(namenode, tmp_path / "out")
    assert result.exit_code == 2
    assert "secret" in result.output


def test_the_namenode_from_the_environment_and_the_default_token(namenode, tmp_path):
    """NNLITE_NAMENODE as the dfs commands take it, and the token a namenode on the default
    name dir (~/.nnlite/name, what make run uses) wrote."""
    home = tmp_path / "home"
    token = home / ".nnlite" / "name" / "checkpoint.token"
    token.parent.mkdir(parents=True)
    token.write_text((tmp_path / "name" / "checkpoint.token").read_text())
    env = {"NNLITE_NAMENODE": namenode.url, "HOME": str(home)}
    result = CliRunner(env=env).invoke(cli.main, ["dfsadmin", "fetch-image",
                                                  str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "fsimage.md5").exists()


def test_an_unreachable_namenode_is_exit_3_in_one_line(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    env = {"NNLITE_NAMENODE": f"http://127.0.0.1:{closed_port()}", "HOME": str(tmp_path)}
    result = CliRunner(env=env).invoke(cli.main, ["dfsadmin", "fetch-image",
                                                  str(tmp_path / "out"), "--secret-file",
                                                  str(secret)])
    assert result.exit_code == EXIT_STORAGE, result.output
    assert result.stderr.startswith("nnlite: NamenodeUnreachableError: ")
    assert len(result.stderr.splitlines()) == 1
