"""The parity table (``namenode/ops.py``) against both dispatch tables: every WebHDFS op of
``WebHdfs.ops`` (and the data path's, added by ``DataPath.attach``) is a row, every row's
RPC twin is a ``ClientProtocol`` handler, every handler is a twin or RPC-only, and every call
named is one the namesystem (or ``files/``) has."""

from __future__ import annotations

from nnlite.namenode import ops
from nnlite.namenode.files import writers
from nnlite.namenode.files.truncate import Truncator
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http.data import DataPath
from nnlite.namenode.http.webhdfs import WebHdfs
from nnlite.namenode.rpc.client_protocol import ClientProtocol


def webhdfs_ops() -> set[tuple[str, str]]:
    webhdfs = WebHdfs(None, None)           # type: ignore[arg-type]  # the table only
    DataPath.__new__(DataPath).attach(webhdfs)
    return set(webhdfs.ops)


def rpc_calls() -> set[str]:
    return {name[len("call_"):] for name in dir(ClientProtocol) if name.startswith("call_")}


def test_every_webhdfs_op_is_a_row_and_every_row_an_op():
    rows = [(op.method, op.webhdfs) for op in ops.OPS]
    assert len(rows) == len(set(rows)), "a WebHDFS op is listed twice"
    assert set(rows) == webhdfs_ops()


def test_every_twin_is_an_rpc_handler_and_every_handler_a_twin_or_rpc_only():
    twins = {op.rpc for op in ops.OPS if op.rpc is not None}
    assert twins <= rpc_calls(), twins - rpc_calls()
    assert rpc_calls() - twins == ops.RPC_ONLY
    assert not twins & ops.RPC_ONLY


def test_every_call_is_the_namesystems_or_a_file_op():
    for op in ops.OPS:
        if op.call is None:
            continue
        owner, _, name = op.call.rpartition(".")
        where = {"": (FSNamesystem, writers), "Truncator": (Truncator,)}[owner]
        assert any(hasattr(w, name) for w in where), f"{op.webhdfs}: no {op.call}"
