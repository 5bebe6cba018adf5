"""``nnlite dfs put|get|cat|appendToFile`` with CliRunner against one live namenode whose
block size is 4096 bytes, so a 20 KB file spans five blocks.

Directories are made per test under ``/t/<test name>`` (tester, a superuser); "bob" is a plain
user. Local files live in pytest's ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nnlite import cli
from tests.commands.helpers import dfs, failed, ok

BLOCK = 4096


@pytest.fixture(scope="module")
def server(start_module_namenode):
    return start_module_namenode("-D", f"dfs.blocksize={BLOCK}")


def payload(size: int, seed: int = 0) -> bytes:
    return bytes((i * 31 + seed) % 251 for i in range(size))


def local(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def cat_bytes(server, *paths: str, user: str = "tester") -> bytes:
    result = dfs(server, "cat", *paths, user=user)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout_bytes


# ------------------------------------------------------------------ put / cat / get round trips

@pytest.mark.parametrize("size", [0, 100, BLOCK, 20_000])
def test_put_cat_get_round_trip(server, tester, base, tmp_path, size):
    data = payload(size, size)
    src = local(tmp_path, "in.bin", data)
    assert ok(dfs(server, "put", src, f"{base}/f")) == []
    st = tester.status(f"{base}/f")
    assert (st["type"], st["length"], st["owner"]) == ("FILE", size, "tester")
    assert cat_bytes(server, f"{base}/f") == data
    out = tmp_path / "out.bin"
    assert ok(dfs(server, "get", f"{base}/f", str(out))) == []
    assert out.read_bytes() == data
    assert not list(tmp_path.glob("*_COPYING_"))


def test_multi_block_file_spans_blocks(server, tester, base, tmp_path):
    data = payload(20_000, 7)
    assert ok(dfs(server, "put", local(tmp_path, "big", data), f"{base}/big")) == []
    blocks = tester._call("GET", f"{base}/big", "GETFILEBLOCKLOCATIONS")
    locations = blocks["BlockLocations"]["BlockLocation"]
    assert len(locations) == 5, locations          # 4 x 4096 + 3616
    assert cat_bytes(server, f"{base}/big") == data


def test_put_into_directory_and_several_sources(server, tester, base, tmp_path):
    a, b = local(tmp_path, "a.txt", b"alpha\n"), local(tmp_path, "b.txt", b"beta\n")
    assert ok(dfs(server, "put", a, b, base)) == []
    assert sorted(s["pathSuffix"] for s in tester.list(base)) == ["a.txt", "b.txt"]
    assert cat_bytes(server, f"{base}/a.txt", f"{base}/b.txt") == b"alpha\nbeta\n"


def test_relative_destination_is_under_home(server, tester, tmp_path):
    tester.mkdirs("/user/tester")
    assert ok(dfs(server, "put", "-f", local(tmp_path, "r", b"rel"), "rel.txt")) == []
    assert cat_bytes(server, "/user/tester/rel.txt") == b"rel"


def test_put_and_get_directory_recursively(server, tester, base, tmp_path):
    tree = {"d/x.txt": b"x" * 10, "d/sub/y.bin": payload(9000, 3), "d/sub/deeper/z": b"",
            "d/empty/.keep": b"k"}
    for name, data in tree.items():
        local(tmp_path, name, data)
    assert ok(dfs(server, "put", str(tmp_path / "d"), f"{base}/copy")) == []
    assert tester.status(f"{base}/copy/sub/deeper")["type"] == "DIRECTORY"
    assert cat_bytes(server, f"{base}/copy/sub/y.bin") == tree["d/sub/y.bin"]
    # into an existing directory: keeps the source's name
    assert ok(dfs(server, "put", str(tmp_path / "d"), base)) == []
    assert tester.status(f"{base}/d/x.txt")["length"] == 10

    out = tmp_path / "back"
    assert ok(dfs(server, "get", f"{base}/copy", str(out))) == []
    for name, data in tree.items():
        assert (out / name[2:]).read_bytes() == data
    # into an existing local directory: keeps the source's name
    assert ok(dfs(server, "get", f"{base}/d", str(out))) == []
    assert (out / "d" / "sub" / "y.bin").read_bytes() == tree["d/sub/y.bin"]


# ------------------------------------------------------------------ refusals

def test_put_refuses_overwrite_without_f(server, tester, base, tmp_path):
    src = local(tmp_path, "one", b"first")
    assert ok(dfs(server, "put", src, f"{base}/f")) == []
    msg = failed(dfs(server, "put", local(tmp_path, "two", b"second"), f"{base}/f"),
                 "FileAlreadyExistsError", 1)
    assert msg == f"`{base}/f': File exists"
    assert cat_bytes(server, f"{base}/f") == b"first"
    assert ok(dfs(server, "put", "-f", str(tmp_path / "two"), f"{base}/f")) == []
    assert cat_bytes(server, f"{base}/f") == b"second"


def test_get_refuses_existing_local_file_without_f(server, tester, base, tmp_path):
    tester.create(f"{base}/f", b"remote")
    out = local(tmp_path, "exists", b"local")
    msg = failed(dfs(server, "get", f"{base}/f", out), "FileAlreadyExistsError", 1)
    assert "File exists" in msg
    assert Path(out).read_bytes() == b"local"
    assert ok(dfs(server, "get", "-f", f"{base}/f", out)) == []
    assert Path(out).read_bytes() == b"remote"


def test_missing_sources(server, base, tmp_path):
    missing = str(tmp_path / "nope")
    msg = failed(dfs(server, "put", missing, f"{base}/f"), "PathNotFoundError", 1)
    assert msg == f"`{missing}': No such file or directory"
    msg = failed(dfs(server, "get", f"{base}/nope", str(tmp_path / "x")), "PathNotFoundError", 1)
    assert msg == f"`{base}/nope': No such file or directory"
    assert not (tmp_path / "x").exists()
    failed(dfs(server, "cat", f"{base}/nope"), "PathNotFoundError", 1)
    failed(dfs(server, "appendToFile", missing, f"{base}/f"), "PathNotFoundError", 1)
    # a missing parent of the destination
    failed(dfs(server, "put", local(tmp_path, "s", b"s"), f"{base}/no/such/f"),
           "PathNotFoundError", 1)


def test_cat_of_a_directory(server, base):
    msg = failed(dfs(server, "cat", base), "PathIsDirectoryError", 1)
    assert msg == f"`{base}': Is a directory"


def test_permission_denied_for_bob(server, tester, base, tmp_path):
    tester.create(f"{base}/secret", b"top secret")
    tester.set_permission(f"{base}/secret", 0o600)
    tester.set_permission(base, 0o755)
    src = local(tmp_path, "b", b"bob's")
    failed(dfs(server, "put", src, f"{base}/bobs", user="bob"), "AccessControlError", 1)
    failed(dfs(server, "cat", f"{base}/secret", user="bob"), "AccessControlError", 1)
    failed(dfs(server, "get", f"{base}/secret", str(tmp_path / "s"), user="bob"),
           "AccessControlError", 1)
    assert not list(tmp_path.glob("s*"))
    failed(dfs(server, "appendToFile", src, f"{base}/secret", user="bob"),
           "AccessControlError", 1)
    assert not tester.exists(f"{base}/bobs")
    assert cat_bytes(server, f"{base}/secret") == b"top secret"


# ------------------------------------------------------------------ appendToFile

def test_append_to_file_creates_then_appends(server, tester, base, tmp_path):
    a = local(tmp_path, "a", payload(5000, 1))
    b = local(tmp_path, "b", payload(3000, 2))
    assert ok(dfs(server, "appendToFile", a, b, f"{base}/log")) == []
    assert cat_bytes(server, f"{base}/log") == payload(5000, 1) + payload(3000, 2)
    assert ok(dfs(server, "appendToFile", a, f"{base}/log")) == []
    assert tester.status(f"{base}/log")["length"] == 13000
    assert cat_bytes(server, f"{base}/log") == (payload(5000, 1) + payload(3000, 2)
                                                + payload(5000, 1))


def test_append_to_file_from_stdin(server, tester, base):
    env = {"NNLITE_NAMENODE": server.url, "HADOOP_USER_NAME": "tester"}
    data = payload(10_000, 9)
    result = CliRunner(env=env).invoke(cli.main, ["dfs", "appendToFile", "-", f"{base}/in"],
                                       input=data)
    assert result.exit_code == 0, (result.output, result.exception)
    result = CliRunner(env=env).invoke(cli.main, ["dfs", "appendToFile", "-", f"{base}/in"],
                                       input=b"tail")
    assert result.exit_code == 0, (result.output, result.exception)
    assert cat_bytes(server, f"{base}/in") == data + b"tail"


def test_append_to_a_directory(server, base, tmp_path):
    failed(dfs(server, "appendToFile", local(tmp_path, "a", b"a"), base),
           "PathIsDirectoryError", 1)


def test_unreachable_namenode(tmp_path):
    from tests.servers import closed_port
    src = local(tmp_path, "a", b"a")
    result = CliRunner(env={"NNLITE_NAMENODE": f"http://127.0.0.1:{closed_port()}",
                            "HADOOP_USER_NAME": "tester"}).invoke(
        cli.main, ["dfs", "put", src, "/x"])
    assert result.exit_code == 3
    assert result.stderr.startswith("nnlite: NamenodeUnreachableError: ")
