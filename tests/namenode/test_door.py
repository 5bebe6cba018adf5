"""FSNamesystem is the one door to the namespace (ARCHITECTURE: Hadoop's ``FSNamesystem`` with
``checkOperation``): outside ``namenode/fsnamesystem.py`` no module reaches through it to its
namespace, lock or journal, or calls its private methods, and every constructor that takes it
says so. An AST scan of the package and the benchmarks (the tests may look inside)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nnlite.namenode.config import Config
from nnlite.namenode.errors import SafeModeError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.security.auth_to_local import AuthToLocal
from nnlite.namenode.security.identity import Caller
from nnlite.namenode.security.settings import SecuritySettings
from tests.namenode.helpers import USER, formatted, open_fs
from tests.test_package import ROOT, sources

SETTINGS = SecuritySettings.from_config(Config({
    "hadoop.security.authentication": "kerberos",
    "dfs.namenode.kerberos.principal": "nn/_HOST@NNLITE.TEST",
    "dfs.namenode.keytab.file": "/nonexistent/nn.keytab",
    "dfs.web.authentication.kerberos.principal": "HTTP/_HOST@NNLITE.TEST"}))
ALICE = Caller("alice", "127.0.0.1", "KERBEROS", None, "alice@NNLITE.TEST")

DOOR = Path("namenode/fsnamesystem.py")
BEHIND = {"ns", "lock", "journal"}          # what the door keeps behind it
NAMES = {"fs", "namesystem"}                # how the code names an FSNamesystem


def scanned() -> list[Path]:
    """Every shipped module but the door itself, and the benchmarks' Python."""
    bench = [p.relative_to(ROOT) for p in sorted((ROOT / "bench").glob("*.py"))]
    return [rel for rel in [*sources(), *bench] if rel != DOOR]


def namesystem_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The local names and the attribute names that hold an FSNamesystem in a module: the
    conventional ones, those annotated ``FSNamesystem``, and ``self.x = <such a name>``."""
    names, attrs = set(NAMES), set(NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and _is_namesystem(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and _is_namesystem(node.annotation):
            target = node.target
            if isinstance(target, ast.Name):
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                attrs.add(target.attr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                node.value.id in names:
            attrs |= {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
    return names, attrs


def _is_namesystem(annotation) -> bool:
    return annotation is not None and "FSNamesystem" in ast.unparse(annotation)


def reaches(rel: Path) -> list[str]:
    """``file:line: expression`` of each reach through an FSNamesystem in ``rel``."""
    return reaches_in((ROOT / rel).read_text(), rel)


def reaches_in(source: str, where) -> list[str]:
    tree = ast.parse(source)
    names, attrs = namesystem_names(tree)

    def is_namesystem(expr) -> bool:
        return (isinstance(expr, ast.Name) and expr.id in names or
                isinstance(expr, ast.Attribute) and expr.attr in attrs)

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_namesystem(node.value) and (
                node.attr in BEHIND or node.attr.startswith("_")):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Attribute) and node.attr == "ns":
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)} (only the door has one)")
    return found


def untyped_constructors(rel: Path) -> list[str]:
    """``__init__`` parameters named as a namesystem but not annotated ``FSNamesystem``."""
    out = []
    for node in ast.walk(ast.parse((ROOT / rel).read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.arg in NAMES and not _is_namesystem(arg.annotation):
                    out.append(f"{rel}:{node.lineno}: {arg.arg}")
    return out


def test_nothing_reaches_through_the_namesystem():
    found = [reach for rel in scanned() for reach in reaches(rel)]
    assert found == [], "\n".join(found)


def test_constructors_take_a_typed_namesystem():
    found = [hit for rel in scanned() for hit in untyped_constructors(rel)]
    assert found == [], "\n".join(found)


def test_the_scan_finds_a_reach():
    """The scan itself: each kind of reach it must refuse, in a module of its own."""
    source = ("class A:\n"
              "    def __init__(self, fs: FSNamesystem, other: 'FSNamesystem | None'):\n"
              "        self.fs, self.door = fs, other\n"
              "        self.keep = other\n"
              "    def go(self, app):\n"
              "        self.fs.lock\n        app.fs.journal\n        self.keep.ns.tree\n"
              "        self.fs._write(1)\n        self.fs.mkdirs('/a', 0o755, 'u')\n"
              "        namenode.store.ns\n        self.lock\n")
    names, attrs = namesystem_names(ast.parse(source))
    assert {"fs", "other"} <= names and "keep" in attrs
    found = sorted(f.split(": ", 1)[1] for f in reaches_in(source, "probe"))
    assert found == ["app.fs.journal", "namenode.store.ns (only the door has one)",
                     "self.fs._write", "self.fs.lock", "self.keep.ns"]


# ------------------------------------------------------------------ one check per op

WRITES = {
    "mkdirs": ("/b", 0o755, USER),
    "create": ("/f", USER),
    "delete": ("/a", True, USER),
    "rename_legacy": ("/a", "/b", USER),
    "rename": ("/a", "/b", False, USER),
    "set_permission": ("/a", 0o700, USER),
    "set_owner": ("/a", "x", None, USER),
    "set_times": ("/a", 5, 5, USER),
    "set_replication": ("/a", 2, USER),
    "set_quota": ("/a", 10, None, USER),
    "set_xattr": ("/a", "user.x", b"1", 1, USER),
    "remove_xattr": ("/a", "user.x", USER),
    "change_acl": ("/a", "remove_all", [], USER),
    "set_storage_policy": ("/a", "COLD", USER),
    "unset_storage_policy": ("/a", USER),
    "allow_snapshot": ("/a", USER),
    "disallow_snapshot": ("/a", USER),
    "create_snapshot": ("/a", "s", USER),
    "delete_snapshot": ("/a", "s", USER),
    "rename_snapshot": ("/a", "s", "t", USER),
    "concat": ("/a/t", ["/a/s"], USER),
    "truncate": ("/a/t", 0, USER),
    "recover_upload": ("/a/t", 1),
    "check_create": ("/f", USER),
    "get_writable_file": ("/a/t", USER, "append to"),
    "start_upload": ("/f", USER, "webhdfs-create-1", "h"),
    "reopen_for_append": ("/a/t", USER, "webhdfs-append-1", "h"),
    "complete_upload": (None, "webhdfs-create-1", (), 0, b"", False),
    "abandon_upload": (None, "webhdfs-create-1"),
    "record_upload_blocks": (None, "webhdfs-create-1", ()),
    "truncate_blocks": ("/a/t", USER, 0),
}
KEYWORDS = {"complete_upload": ("blocks", "length", "checksum", "appended")}


@pytest.mark.parametrize("op", sorted(WRITES))
def test_every_write_is_refused_in_safe_mode_and_logs_nothing(tmp_path, op):
    """``check_operation(WRITE)`` decides before the namespace sees the request."""
    with open_fs(formatted(tmp_path)) as fs:
        fs.durable(fs.mkdirs("/a", 0o755, USER))
        fs.set_safe_mode(True)
        before = fs.last_written_txid
        args, names = WRITES[op], KEYWORDS.get(op, ())
        # without names args[-0:] is every arg: zip stops at the empty names, none is a keyword
        keywords = dict(zip(names, args[-len(names):], strict=False))
        positional = args[:len(args) - len(names)]
        with pytest.raises(SafeModeError):
            getattr(FSNamesystem, op)(fs, *positional, **(keywords if names else {}))
        assert fs.last_written_txid == before


def test_the_public_writes_are_all_in_the_table():
    """A write added to the door is added to the table above (or is not a namespace write)."""
    not_namespace = {"write", "durable", "async_committer", "save_namespace", "roll_edits",
                     "set_safe_mode", "check_resources", "close", "open", "configure",
                     "check_operation"}
    source = ast.parse((ROOT / DOOR).read_text())
    door = next(n for n in source.body if isinstance(n, ast.ClassDef)
                and n.name == "FSNamesystem")
    writes = {f.name for f in door.body if isinstance(f, ast.FunctionDef)
              and not f.name.startswith("_") and f.returns is not None
              and "Logged" in ast.unparse(f.returns)}
    checked = set(WRITES) | set(TOKEN_WRITES) | {"delegation_housekeeping"}
    assert writes - not_namespace <= checked, writes - not_namespace - checked


# Secure mode's token writes (simple mode issues none and answers as it always did).
TOKEN_WRITES = {
    "get_delegation_token": lambda fs, token: fs.get_delegation_token("alice", "alice", ALICE),
    "renew_delegation_token": lambda fs, token: fs.renew_delegation_token("alice", token,
                                                                          ALICE),
    "cancel_delegation_token": lambda fs, token: fs.cancel_delegation_token("alice", token,
                                                                            ALICE),
    "start_delegation_tokens": lambda fs, token: fs.start_delegation_tokens(),
}


@pytest.mark.parametrize("op", sorted(TOKEN_WRITES))
def test_every_token_write_is_refused_in_safe_mode_and_logs_nothing(tmp_path, op):
    """The token calls take the same check first (``checkNameNodeSafeMode``: "Cannot
    issue delegation token"); the housekeeping round skips a namenode in safe mode."""
    with open_fs(formatted(tmp_path)) as fs:
        fs.enable_delegation_tokens(SETTINGS, AuthToLocal("DEFAULT", "NNLITE.TEST"))
        fs.durable(fs.start_delegation_tokens())
        token = fs.durable(fs.get_delegation_token("alice", "alice", ALICE))
        fs.set_safe_mode(True)
        before = fs.last_written_txid
        with pytest.raises(SafeModeError):
            TOKEN_WRITES[op](fs, token)
        assert fs.delegation_housekeeping() is None
        assert fs.last_written_txid == before
