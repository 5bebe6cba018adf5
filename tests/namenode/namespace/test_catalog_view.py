"""catalog_view.py: the catalog's view makes the namespace's own requests (the same ops, the
same refusals) and shows nothing else of it."""

import ast
from pathlib import Path

import pytest

from nnlite.formats import edits
from nnlite.namenode import errors
from nnlite.namenode.namespace import snapshot_ops
from nnlite.namenode.namespace.catalog_view import CatalogView
from tests.namenode.helpers import ALICE, BOB, CLOCK_MS, HOME, SUPER, refused, touch


def test_a_request_through_the_view_is_the_namespaces_own(ns):
    touch(ns, HOME + "/a", ALICE)
    touch(ns, HOME + "/b", ALICE)
    view = CatalogView(ns)
    assert view.delete_many([HOME + "/a", HOME + "/b"], ALICE) == (
        2, [edits.DeleteManyOp((HOME + "/a", HOME + "/b"), CLOCK_MS)])
    assert view.lookup(HOME + "/a") is None


def test_a_refusal_through_the_view_is_the_namespaces_own(ns):
    touch(ns, HOME + "/f", ALICE)
    view = CatalogView(ns)
    refused(ns, errors.AccessControlError, view.delete, HOME + "/f", False, BOB)
    refused(ns, errors.AccessControlError, view.check_delete, ("home", "alice", "f"), BOB)
    refused(ns, errors.HadoopIllegalArgumentError, view.check_writable,
            ("home", "alice", ".snapshot", "s"), HOME + "/.snapshot/s")


def test_lookup_checks_no_permission_and_status_does(ns):
    ns.mkdirs(HOME + "/private/d", 0o700, ALICE)
    view = CatalogView(ns)
    assert view.lookup(HOME + "/private/d").name == "d"
    with pytest.raises(errors.AccessControlError):
        view.status(HOME + "/private/d", BOB)


def test_the_view_knows_the_snapshots_above_a_path(ns):
    ns.mkdirs(HOME + "/q/offsets", 0o755, ALICE)
    snapshot_ops.allow_snapshot(ns, HOME, SUPER)
    view = CatalogView(ns)
    assert view.snapshottable_above(HOME + "/q/offsets") == HOME
    assert not view.kept_by_snapshot(HOME + "/q/offsets")
    taken, _ = view.create_snapshot(HOME, "s1", ALICE)
    assert taken == HOME + "/.snapshot/s1" and view.kept_by_snapshot(HOME + "/q/offsets")


def test_the_view_shows_the_limits_and_nothing_else(ns):
    view = CatalogView(ns)
    assert (view.max_record, view.max_xattr_size) == (ns.max_record, ns.tree.max_xattr_size)
    assert not hasattr(view, "tree") and not hasattr(view, "__dict__")


def test_the_catalog_names_no_namespace_but_its_view():
    """catalog/ is typed against CatalogView: it imports neither Namespace nor the op
    families, so what it may do to the namespace is the view's list."""
    root = Path(__file__).resolve().parents[3]
    found = []
    for path in sorted((root / "catalog").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "nnlite.namenode.namespace"):
                names = {a.name for a in node.names}
                if node.module == "nnlite.namenode.namespace.namespace" or names & FAMILIES:
                    found.append(f"{path.name}: from {node.module} import {sorted(names)}")
    assert found == []


FAMILIES = {"attributes", "delete", "rename", "xattrs", "acl_ops", "snapshot_ops"}
