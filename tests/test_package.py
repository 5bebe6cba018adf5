"""The package as a whole: the layers of ``__init__.py`` hold, inside ``namenode/`` too, every
name is imported from the module that defines it (no module re-exports another's names), and
``setup.cfg`` ships every package (one import package ``nnlite`` mapped from the top-level
folders), and tests/ mirrors the package both ways: every test module names the module it
tests, and every module with logic has its test module (the exceptions listed, with why)."""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {"tests", "bench", "examples", "build"}   # and every hidden folder (.git, .venv, ...)

# Top to bottom, as the root __init__.py lists them: a module may import from its own folder
# and from folders below its own, never from one above; durability/ and formats/ import
# nothing of nnlite.
LAYERS = ["cli", "commands", "analytics", "catalog", "tools", "secondary", "namenode", "client",
          "durability", "formats"]
MAY_NOT_IMPORT = {"durability": {"formats"}}

# Inside namenode/, top to bottom, as namenode/__init__.py lists them: the process (daemon.py)
# composes the two transports, the RPC service (rpc/) and the HTTP service (http/), which never
# import each other (TRANSPORTS) and call the namesystem, the operations on file contents both serve
# (files/), the parity table of their ops (ops.py) and the caller settled the same way for both
# (security/); high availability (ha/) drives the namesystem from etcd and the HTTP service reports
# its state; the namesystem composes the image (load, save, the checkpoint), the journal, the
# blocks' sweep and the namespace; offline recovery works on the image and the journal alone; the
# image, the journal and recovery keep their files in the name directories (storage/); the built-in
# datanode (datanode/) serves the block store to hdfs:// clients; binding a port (listen.py),
# config.py and errors.py are the floor.
# Each entry is a sub-package or a module of namenode/ itself.
NAMENODE_LAYERS = ["daemon", "rpc", "http", "ops", "files", "ha", "fsnamesystem", "recovery",
                   "image", "journal", "datanode", "blocks", "namespace", "storage", "security",
                   "listen", "config", "errors"]
# A transport never imports another: what both need lives below them.
TRANSPORTS = {"rpc", "http"}

def sources():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if (not_shipped(rel) or rel.name == "__init__.py" and len(rel.parts) == 1):
            continue
        yield rel


def not_shipped(rel: Path) -> bool:
    return bool(rel.parts) and (rel.parts[0] in NOT_SHIPPED or rel.parts[0].startswith("."))


def imports(path: Path):
    """``(module, name)`` for every import of nnlite in ``path``, wherever it is (functions and
    ``TYPE_CHECKING`` blocks too); ``name`` is None for ``import nnlite.x.y``."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("nnlite."):
                yield from ((node.module, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            yield from ((a.name, None) for a in node.names if a.name.startswith("nnlite."))


def imported_folders(path: Path) -> set[str]:
    return {module.split(".")[1] for module, _ in imports(path)}


def imported_namenode_parts(path: Path) -> set[str]:
    """The sub-packages and modules of namenode/ that ``path`` imports from."""
    found = set()
    for module, name in imports(path):
        dotted = module.split(".") + ([name] if name else [])
        if dotted[:2] == ["nnlite", "namenode"] and len(dotted) > 2:
            found.add(dotted[2])
    return found


def folder(rel: Path) -> str:
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


@pytest.mark.parametrize("rel", list(sources()), ids=str)
def test_imports_point_down_the_layers(rel):
    own = LAYERS.index(folder(rel))
    for target in imported_folders(ROOT / rel) - {folder(rel)}:
        assert target in LAYERS, f"{rel} imports nnlite.{target}, which is not a layer"
        assert LAYERS.index(target) > own, f"{rel} imports nnlite.{target}, a layer above it"
        assert target not in MAY_NOT_IMPORT.get(folder(rel), ()), f"{rel} imports {target}"


@pytest.mark.parametrize("rel", [rel for rel in sources() if folder(rel) == "namenode"
                                 and rel.name != "__init__.py"], ids=str)
def test_namenode_imports_point_down_its_sub_packages(rel):
    own = namenode_part(rel)
    assert own in NAMENODE_LAYERS, f"place namenode/{own} in NAMENODE_LAYERS"
    for target in imported_namenode_parts(ROOT / rel) - {own}:
        assert target in NAMENODE_LAYERS, f"{rel} imports namenode.{target}, not in the order"
        assert NAMENODE_LAYERS.index(target) > NAMENODE_LAYERS.index(own), (
            f"{rel} imports nnlite.namenode.{target}, which is above namenode/{own}")


def namenode_part(rel: Path) -> str:
    return rel.parts[1] if len(rel.parts) > 2 else rel.stem


@pytest.mark.parametrize("rel", [rel for rel in sources() if folder(rel) == "namenode"
                                 and namenode_part(rel) in TRANSPORTS], ids=str)
def test_a_transport_never_imports_another(rel):
    others = TRANSPORTS - {namenode_part(rel)}
    assert not imported_namenode_parts(ROOT / rel) & others, (
        f"{rel} imports another transport ({', '.join(sorted(others))}): move what both "
        f"need below them (files/, security/, fsnamesystem.py)")


def test_the_namenode_order_has_no_stale_entry():
    on_disk = {namenode_part(rel) for rel in sources() if folder(rel) == "namenode"}
    assert set(NAMENODE_LAYERS) == on_disk - {"__init__"}


# ------------------------------------------------------------------ tests mirror the folders

# Tests of the engines nnlite serves (real Spark and Flink jobs against a namenode), not of a
# folder of the package.
ENGINE_TESTS = {"spark", "flink"}


def test_the_tests_mirror_the_source_folders():
    """``tests/<folder>/`` holds the tests of ``<folder>/`` (tests/namenode/journal/ those of
    namenode/journal/, ...): every folder of tests/ with a test module in it is a folder of the
    package, the engine tests aside; a folder of helpers or data only holds no tests."""
    tests = ROOT / "tests"
    folders = {m.parent.relative_to(tests) for m in tests.rglob("test_*.py")}
    strays = sorted(f"tests/{f}" for f in folders
                    if not (f.parts and f.parts[0] in ENGINE_TESTS)
                    and not (ROOT / f / "__init__.py").is_file())
    assert strays == [], f"{strays}: no folder of the package is there to mirror"


# A test module is named after the module it tests: tests/<folder>/test_<module>.py, or
# test_<module>_<aspect>.py for one aspect of it (tests/commands/test_dfs_acl.py: the ACL
# commands of commands/dfs.py); <module> may be a sub-package. These test modules are named
# after a behaviour that runs through many modules instead, grouped by why (paths under tests/).
SCENARIO_TESTS = {
    # the repository as a whole: its layers, documents, Makefile, types and first command
    "test_benchmarks.py", "test_makefile.py", "test_package.py", "test_readme.py",
    "test_readme_ha.py", "test_run.py", "test_typecheck.py",
    # Hadoop's own clients, and other projects', against namenode processes
    "namenode/test_java_acl.py", "namenode/test_java_client.py", "namenode/test_java_contract.py",
    "namenode/test_java_data.py", "namenode/test_java_reserved.py",
    "namenode/test_java_schemes.py", "namenode/test_java_snapshot.py",
    "namenode/datanode/test_java_hdfs.py", "namenode/datanode/test_java_lease_recovery.py",
    "namenode/datanode/test_java_transfer.py", "namenode/datanode/test_hdfs_native.py",
    "namenode/http/test_clients_data.py", "namenode/http/test_fsspec.py",
    "namenode/http/test_hdfscli.py",
    # crashes and faults: processes killed, disks failing, etcd members down
    "namenode/test_crash.py", "namenode/test_service_crash.py", "namenode/test_disk_faults.py",
    "namenode/ha/test_faults.py", "namenode/ha/test_following.py",
    "namenode/ha/test_name_dirs.py", "namenode/datanode/test_lease_recovery.py",
    "namenode/test_startup_answers.py",
    # hostile or odd clients of a namenode process, and fuzzing
    "namenode/http/test_hostile_bodies.py", "namenode/http/test_hostile_names.py",
    "namenode/http/test_smuggling.py", "namenode/http/test_listing.py",
    "namenode/datanode/test_fuzz.py",
    # one feature end to end through several modules of its folder
    "namenode/datanode/test_pipeline.py", "namenode/rpc/test_ha.py", "namenode/test_door.py",
    "secondary/test_end_to_end.py", "commands/test_dfsadmin.py",
    "commands/test_dfsadmin_fetch_image.py", "catalog/test_conformance.py",
    "catalog/test_gc.py", "catalog/test_permissions.py", "catalog/test_snapshot_paths.py",
}

# Modules with logic (a function or a method) whose tests are in another test module, named
# here: a sub-package tested as one format, a module whose behaviour only shows through a
# namenode process, a helper of one command. A module of constants, message classes or error
# classes alone needs no test module of its own.
TESTED_BY = {
    "cli.py": "commands/test_daemons.py",               # the group: every command test runs it
    "catalog/client.py": "catalog/test_service.py",     # the service's own client
    "catalog/http.py": "catalog/test_service.py",
    "catalog/mirror.py": "catalog/test_watch.py",
    "catalog/others.py": "catalog/test_gc.py",
    "catalog/report.py": "catalog/test_streaming.py",
    "catalog/verdicts.py": "catalog/test_jobs.py",
    "client/acls.py": "commands/test_dfs_acl.py",       # FsShell's setfacl and getfacl
    "client/connection.py": "client/test_failover.py",
    "client/replies.py": "client/test_webhdfs.py",
    "client/etcd/client.py": "client/test_etcd.py",     # against real etcd members
    "client/etcd/messages.py": "client/etcd/test_codec.py",
    "commands/tools.py": "tools/test_oiv.py",           # the offline tools through the CLI
    "formats/errors.py": "formats/test_edits.py",
    "formats/fsimage/layout.py": "formats/test_fsimage.py",     # fsimage/: one format
    "formats/fsimage/md5.py": "formats/test_fsimage.py",
    "formats/fsimage/read.py": "formats/test_fsimage.py",
    "formats/fsimage/write.py": "formats/test_fsimage.py",
    "namenode/errors.py": "client/test_errors.py",      # each one as the client meets it
    # the built-in datanode: through the transfer protocol, one datanode or a pipeline
    "namenode/datanode/errors.py": "namenode/datanode/test_server.py",
    "namenode/datanode/mirror.py": "namenode/datanode/test_pipeline.py",
    "namenode/datanode/receiver.py": "namenode/datanode/test_server.py",
    "namenode/datanode/replicas.py": "namenode/datanode/test_pipeline.py",
    "namenode/datanode/stream.py": "namenode/datanode/test_server.py",
    # file contents and the HTTP service: through a namenode process over raw HTTP
    "namenode/files/truncate.py": "namenode/http/test_webhdfs_data.py",
    "namenode/http/app.py": "namenode/http/test_webhdfs_raw.py",
    "namenode/http/data.py": "namenode/http/test_webhdfs_data.py",
    "namenode/http/params.py": "namenode/http/test_webhdfs_raw.py",
    "namenode/http/remote.py": "namenode/http/test_webhdfs_raw.py",
    "namenode/http/replica.py": "namenode/blocks/test_replication.py",
    "namenode/http/stream.py": "namenode/http/test_webhdfs_data.py",
    "namenode/http/upload.py": "namenode/http/test_webhdfs_data.py",
    "namenode/ha/election.py": "namenode/ha/test_quorum_journal.py",
    "namenode/image/install.py": "namenode/image/test_checkpoint.py",   # the swap installs
    "namenode/namespace/checks.py": "namenode/namespace/test_namespace.py",
    "namenode/namespace/erasure_coding.py": "namenode/http/test_webhdfs_raw.py",
    "namenode/namespace/inode.py": "namenode/namespace/test_tree.py",
    "namenode/namespace/storage_policy.py": "namenode/http/test_webhdfs_raw.py",
    "namenode/recovery/dialog.py": "namenode/recovery/test_recover.py",  # recovery/: one tool
    "namenode/recovery/repair.py": "namenode/recovery/test_recover.py",
    "namenode/recovery/scan.py": "namenode/recovery/test_recover.py",
    "namenode/rpc/status.py": "namenode/rpc/test_client_protocol.py",
    "namenode/security/proxy_users.py": "namenode/http/test_webhdfs_raw.py",
    "secondary/errors.py": "secondary/test_client.py",
    "secondary/merge.py": "secondary/test_checkpointer.py",
    "secondary/storage.py": "secondary/test_checkpointer.py",
    "tools/dirindex.py": "tools/test_oiv.py",
    "tools/distribution.py": "tools/test_oiv.py",
    "tools/errors.py": "tools/test_oev.py",
    "tools/oev_binary.py": "tools/test_oev.py",
    "tools/oiv_writers.py": "tools/test_oiv.py",
}


def test_modules() -> list[Path]:
    """Every test module of a package folder, as a path under tests/ (the engines' aside)."""
    tests = ROOT / "tests"
    return sorted(m.relative_to(tests) for m in tests.rglob("test_*.py")
                  if m.relative_to(tests).parts[0] not in ENGINE_TESTS)


def names_a_module(test: Path) -> bool:
    """Whether tests/<folder>/test_<module>[_<aspect>].py has its <folder>/<module>.py (or
    <folder>/<module>/, a sub-package)."""
    words = test.stem.removeprefix("test_").split("_")
    names = ("_".join(words[:n]) for n in range(1, len(words) + 1))
    return any((ROOT / test.parent / f"{name}.py").is_file()
               or (ROOT / test.parent / name / "__init__.py").is_file() for name in names)


def has_logic(rel: Path) -> bool:
    """A function or a method anywhere in it: more than constants, messages or error classes."""
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               for node in ast.walk(ast.parse((ROOT / rel).read_text())))


def has_test_module(rel: Path) -> bool:
    """tests/<folder>/test_<module>.py, or a test_<module>_<aspect>.py, for <folder>/<module>.py."""
    return any(t.stem == f"test_{rel.stem}" or t.stem.startswith(f"test_{rel.stem}_")
               for t in (ROOT / "tests" / rel.parent).glob(f"test_{rel.stem}*.py"))


def test_every_test_module_names_the_module_it_tests():
    strays = [str(t) for t in test_modules()
              if not names_a_module(t) and str(t) not in SCENARIO_TESTS]
    assert strays == [], (f"{strays}: name each after the module it tests "
                          "(test_<module>[_<aspect>].py) or add it to SCENARIO_TESTS")


def test_every_module_with_logic_has_its_test_module():
    lacking = [str(rel) for rel in sources() if rel.name != "__init__.py"
               and has_logic(rel) and not has_test_module(rel) and str(rel) not in TESTED_BY]
    assert lacking == [], (f"{lacking}: give each tests/<folder>/test_<module>.py, or name in "
                           "TESTED_BY the test module that tests it")


def test_the_allow_lists_name_what_is_there():
    """No entry outlives its file, and a module that has its own test module now leaves
    TESTED_BY."""
    tests = ROOT / "tests"
    gone = [t for t in SCENARIO_TESTS if not (tests / t).is_file()]
    assert gone == [], f"{gone}: no such test module; take it off SCENARIO_TESTS"
    gone = [m for m in TESTED_BY if not (ROOT / m).is_file()]
    assert gone == [], f"{gone}: no such module; take it off TESTED_BY"
    gone = [t for t in TESTED_BY.values() if not (tests / t).is_file()]
    assert gone == [], f"{gone}: no such test module; name the one that tests it in TESTED_BY"
    own = [m for m in TESTED_BY if has_test_module(Path(m))]
    assert own == [], f"{own}: has its own test module now; take it off TESTED_BY"


# ------------------------------------------------------------------ no re-export shims

def module_file(dotted: str) -> Path | None:
    """The file of ``nnlite.a.b``: ``a/b.py`` or ``a/b/__init__.py``."""
    base = ROOT.joinpath(*dotted.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def defined_names(path: Path) -> set[str]:
    """Names a module binds itself at its top level (functions, classes, assignments, also
    under a top-level ``if`` or ``try``), not the ones it imports."""
    found = set()
    body = list(ast.parse(path.read_text()).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try)):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            body += [s for h in getattr(node, "handlers", []) for s in h.body]
    return found


def everything_that_imports_nnlite():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if not (rel.parts[0].startswith(".") or rel.parts[0] == "build"):
            yield rel


@pytest.mark.parametrize("rel", list(everything_that_imports_nnlite()), ids=str)
def test_every_name_is_imported_from_the_module_that_defines_it(rel):
    """So no module is kept to re-export names that moved (the tests and benchmarks too)."""
    for module, name in imports(ROOT / rel):
        source = module_file(module)
        assert source is not None, f"{rel} imports {module}, which does not exist"
        if name is None or module_file(f"{module}.{name}") is not None:
            continue                                # a module itself
        assert name in defined_names(source), (
            f"{rel} imports {name} from {module}, which does not define it")


@pytest.mark.parametrize("rel", list(sources()), ids=str)
def test_no_module_only_imports(rel):
    """A module holds code of its own; an ``__init__.py`` holds its package's map and no
    imports of nnlite (so it re-exports nothing)."""
    tree = ast.parse((ROOT / rel).read_text())
    if rel.name == "__init__.py":
        assert not list(imports(ROOT / rel)), f"{rel} imports from nnlite"
        assert ast.get_docstring(tree), f"{rel} has no map docstring"
    else:
        assert defined_names(ROOT / rel), f"{rel} defines nothing of its own"


def test_no_generic_top_level_names_are_installed():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    options = cfg["options"]
    assert options["package_dir"].split() == ["nnlite", "=", "."]
    assert "py_modules" not in options
    listed = set(options["packages"].split())
    on_disk = {"nnlite" + "".join("." + p for p in d.relative_to(ROOT).parts)
               for d in [ROOT, *ROOT.rglob("*")] if (d / "__init__.py").is_file()
               and not not_shipped(d.relative_to(ROOT))}
    assert listed == on_disk
    assert all(name == "nnlite" or name.startswith("nnlite.") for name in listed)


# ------------------------------------------------------------------ the README's map

def readme_layout() -> set[str]:
    """What README.md's Layout block names, as paths: ``namenode/ha`` for ``  ha/`` indented
    under ``namenode/``, ``cli.py`` for a module."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Layout\n"):]
    start = section.index("```\n") + 4
    named, parents = set(), []
    for line in section[start:section.index("```", start)].splitlines():
        depth = (len(line) - len(line.lstrip())) // 2
        parents[depth:] = [line.split()[0].rstrip("/")]
        named.add("/".join(parents))
    return named


def test_the_readme_layout_names_every_package_and_folder():
    """A line for every package and sub-package of nnlite and every other top-level folder
    (tests, benchmarks, examples), and none for what is not there."""
    packages = {"/".join(d.relative_to(ROOT).parts) for d in ROOT.rglob("*")
                if (d / "__init__.py").is_file() and not not_shipped(d.relative_to(ROOT))}
    folders = {d.name for d in ROOT.iterdir() if d.is_dir() and d.name not in ("build",)
               and not d.name.startswith((".", "__")) and not d.name.endswith(".egg-info")}
    named = readme_layout()
    assert sorted((packages | folders) - named) == []
    assert sorted(p for p in named if not (ROOT / p).exists()) == []
