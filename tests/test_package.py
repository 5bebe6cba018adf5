"""The package as a whole: the layers of ``__init__.py`` hold, inside ``namenode/`` too, every
name is imported from the module that defines it (no module re-exports another's names), and
``setup.cfg`` ships every package (one import package ``nnlite`` mapped from the top-level
folders), and the folders of tests/ mirror the package's."""

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
# import each other (TRANSPORTS) and call the namesystem, the operations on file contents both
# serve (files/), the parity table of their ops (ops.py) and the caller settled the same way for both (security/); high availability
# (ha/) drives the namesystem from etcd and the HTTP service reports its state; the namesystem
# composes the image (load, save, the checkpoint), the journal, the blocks' sweep and the
# namespace; offline recovery works on the image and the journal alone; the image, the journal
# and recovery keep their files in the name directories (storage/); the built-in datanode
# (datanode/) serves the block store to hdfs:// clients; binding a port (listen.py),
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
