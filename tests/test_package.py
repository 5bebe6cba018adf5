"""The package as a whole: the layers of ``__init__.py`` hold, and ``setup.cfg`` ships every
package (one import package ``nnlite`` mapped from the top-level folders)."""

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


def sources():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if (not_shipped(rel) or rel.name == "__init__.py" and len(rel.parts) == 1):
            continue
        yield rel


def not_shipped(rel: Path) -> bool:
    return bool(rel.parts) and (rel.parts[0] in NOT_SHIPPED or rel.parts[0].startswith("."))


def imported_folders(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n.split(".")[1] for n in names if n.startswith("nnlite.") and n.count(".")}
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
