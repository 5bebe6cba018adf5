"""What a namenode serves, by call, and (optionally) where its time goes: imported first, as
its ``sitecustomize``, by the namenodes ``bench/bench_data.py --probe`` starts.

* Counts, exposed in ``/metrics.json`` as ``BenchCalls`` (name -> calls so far): every Hadoop
  IPC call by protocol and method (``rpc ClientProtocol.getFileInfo``; the datanode's IPC port
  too), every data-transfer op of the built-in datanode (``dt WRITE_BLOCK``), every HTTP
  request by method and WebHDFS op (``http PUT CREATE``; ``/metrics.json`` and the like by
  path) and every streamed upload (``http PUT upload``). ``BenchSeconds``: the seconds each
  RPC method and data-transfer op spent in the server, from the call's frame (the op's
  header) to its answer queued (the op's end; ``dt ack`` counts the packets acknowledged),
  and each HTTP request from its dispatch to its answer (a data step's ``... data``: from its
  body's end), waits for the edits' sync
  included; ``<name> (timed)`` counts the HTTP requests timed. ``step <Class.method>``: the
  block steps run in the executor (a replica's files created, its publish, an upload's seal).
  A counter, a clock read and a wrapper per call: about a microsecond against the tens each
  call costs.
* ``BenchTimeline``: the last TIMELINE events ``[name, start, end]`` (seconds of the
  namenode's ``perf_counter``, ``BenchNow`` its value when the metrics were read): every RPC
  call, data-transfer op, HTTP request (not ``/metrics.json``) and block step as above, each
  group commit's write and sync of the edits (``journal sync``: ``Journal._write_and_sync``)
  and every ``fsync`` / ``fdatasync`` the process made, wherever (the journal's, the
  datanode's). ``fsync`` / ``fsync serial`` in ``BenchCalls``: those calls, and those that
  began while no other was under way (the serial ones a client waits for one after the
  other; two files synced at once count once). bench_data.py's per-step breakdown and its
  floor read them.
* With ``NNLITE_BENCH_PROFILE=PREFIX`` (and ``NNLITE_BENCH_PEERS``, the path of
  bench/peers/profile_threads.py), every thread runs under cProfile as profile_threads.py runs
  a script, the event loop's thread (MainThread) with its CPU time as the clock
  (``time.thread_time``: where the loop's CPU goes, not its waits), the others with wall time;
  each thread's stats go to ``PREFIX.<thread>.prof`` when the namenode exits (SIGTERM).

``NNLITE_BENCH_EARLY=create,addBlock`` is an experiment: those RPC methods are answered
without waiting for their edits' sync (what a change to the namenode would save, measured
before anyone makes it; not safe as it stands: see BENCHMARKS.md).

It patches classes of the tree it runs (``nnlite``, whichever PYTHONPATH names) and nothing
else; a tree without one of them is counted without it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import time

COUNTS: collections.Counter[str] = collections.Counter()
SECONDS: collections.Counter[str] = collections.Counter()     # name -> seconds in the server
OPEN: dict[int, tuple[str, float]] = {}                        # id(call) -> (name, start)
TIMELINE = 512                                                 # events kept
EVENTS: collections.deque[tuple[str, float, float]] = collections.deque(maxlen=TIMELINE)


def _event(name: str, start: float, end: float) -> None:
    EVENTS.append((name, start, end))


def _count_rpc() -> None:
    from nnlite.namenode.rpc import server as rpc
    conn = rpc.Connection
    invoke, send, error = conn._invoke, conn._send, conn._answer_error

    def counted(self, call):
        name = f"rpc {self.server.protocol.PROTOCOL.rsplit('.', 1)[-1]}.{call.method.methodName}"
        COUNTS[name] += 1
        OPEN[id(call)] = (name, time.perf_counter())
        return invoke(self, call)

    def answered(call) -> None:
        name, start = OPEN.pop(id(call), ("", 0.0))
        if name:
            end = time.perf_counter()
            SECONDS[name] += end - start
            _event(name, start, end)

    def timed_send(self, call, message):
        answered(call)
        return send(self, call, message)

    def timed_error(self, call, exc):
        answered(call)
        return error(self, call, exc)
    conn._invoke, conn._send, conn._answer_error = counted, timed_send, timed_error


def _count_transfer() -> None:
    from nnlite.namenode.datanode import server as dn
    run = dn.DataNodeServer._run

    async def timed(self, op, request, reader, writer):
        name = f"dt {op.name}"
        COUNTS[name] += 1
        start = time.perf_counter()
        try:
            return await run(self, op, request, reader, writer)
        finally:
            end = time.perf_counter()
            SECONDS[name] += end - start
            _event(name, start, end)
    dn.DataNodeServer._run = timed
    from nnlite.formats.hadoop import datatransfer
    encode_ack = datatransfer.encode_ack

    def counted_ack(*args):
        COUNTS["dt ack"] += 1
        return encode_ack(*args)
    datatransfer.encode_ack = counted_ack


STEPS = (("nnlite.namenode.datanode.replica", "ReplicaWriter", "create"),
         ("nnlite.namenode.datanode.replica", "ReplicaWriter", "publish"),
         ("nnlite.namenode.blocks.streams", "BlockWriter", "seal"))


def _time_steps() -> None:
    """The block steps that run in the executor, timed as ``step <Class.method>``: a datanode
    replica's tmp files created, its publish (fsyncs, renames), a WebHDFS upload's seal."""
    import functools
    import importlib
    import threading
    lock = threading.Lock()
    for module, cls, method in STEPS:
        owner = getattr(importlib.import_module(module), cls)
        name = f"step {cls}.{method}"
        original = getattr(owner, method)

        def timed(*args, _fn=original, _name=name, **kw):
            start = time.perf_counter()
            try:
                return _fn(*args, **kw)
            finally:
                end = time.perf_counter()
                with lock:
                    SECONDS[_name] += end - start
                    COUNTS[_name] += 1
                _event(_name, start, end)
        setattr(owner, method, functools.wraps(original)(timed))


def _count_http() -> None:
    from nnlite.namenode.http import app as http
    app = http.NamenodeApp
    call, counted_of, metrics = app.__call__, app.counted, app.metrics

    def counted_call(self, req):
        op = (req.param("op") or "").upper() or req.path.rsplit("/", 1)[-1]
        COUNTS[f"http {req.method} {op}"] += 1
        return call(self, req)

    def counted_uploads(self, factory):
        inner = counted_of(self, factory)

        def start(req):
            COUNTS[f"http {req.method} upload"] += 1
            return inner(req)
        return start

    app.__call__ = counted_call
    app.counted = counted_uploads
    _time_http()
    app.metrics = lambda self: {**metrics(self), "BenchCalls": dict(COUNTS),
                                "BenchSeconds": dict(SECONDS), "BenchNow": time.perf_counter(),
                                "BenchTimeline": list(EVENTS)}


def _time_http() -> None:
    """A connection answers its requests one at a time, in order: the time from a request's
    dispatch (a data step's: its body's end, the seal and the close) to its answer."""
    from nnlite.namenode.http import server
    conn = server._Connection
    dispatch, respond = conn.dispatch, conn.respond

    def timed_dispatch(self, request, fn, *args):
        op = (request.param("op") or "").upper() or request.path.rsplit("/", 1)[-1]
        step = "" if fn is self.server.app else " data"     # a body's end: its sink
        self.bench_open = (f"http {request.method} {op}{step}", time.perf_counter())
        return dispatch(self, request, fn, *args)

    def timed_respond(self, response, keep_alive, head_only=False):
        name, start = getattr(self, "bench_open", ("", 0.0))
        if name:
            self.bench_open = ("", 0.0)
            end = time.perf_counter()
            SECONDS[name] += end - start
            COUNTS[f"{name} (timed)"] += 1
            if not name.endswith("metrics.json"):
                _event(name, start, end)
        return respond(self, response, keep_alive, head_only)
    conn.dispatch, conn.respond = timed_dispatch, timed_respond


def _time_syncs() -> None:
    """``journal sync`` events (a group commit's write and fdatasync of the edits) and every
    ``fsync`` / ``fdatasync`` of the process, counted (``fsync serial``: begun while none
    other was under way) and put on the timeline."""
    import threading

    from nnlite.namenode.journal import journal
    write_and_sync = journal.Journal._write_and_sync

    def timed_journal(self, *args, **kw):
        start = time.perf_counter()
        try:
            return write_and_sync(self, *args, **kw)
        finally:
            _event("journal sync", start, time.perf_counter())
    journal.Journal._write_and_sync = timed_journal
    lock = threading.Lock()
    under_way = [0]

    def counted(fn, name):
        def sync(fd):
            with lock:
                COUNTS["fsync"] += 1
                COUNTS["fsync serial"] += not under_way[0]
                under_way[0] += 1
            start = time.perf_counter()
            try:
                return fn(fd)
            finally:
                end = time.perf_counter()
                with lock:
                    under_way[0] -= 1
                    SECONDS["fsync"] += end - start
                _event(name, start, end)
        return sync
    os.fsync, os.fdatasync = counted(os.fsync, "fsync"), counted(os.fdatasync, "fdatasync")


def _answer_early(methods: set[str]) -> None:
    """An experiment, not a proposal as it stands: the RPC ``methods`` are answered as soon
    as they are applied, without waiting for their edits' sync (the calls after them still
    wait for everything logged before their own answer: ``complete`` for the file)."""
    from nnlite.namenode.rpc import server as rpc
    deliver = rpc.Connection._deliver

    def early(self, call, message, generation=None):
        if call.method.methodName in methods:
            return self._send(call, message)
        return deliver(self, call, message, generation)
    rpc.Connection._deliver = early


def _profile(prefix: str, peers: str) -> None:
    import atexit
    import cProfile
    import importlib.util
    import threading
    import time
    spec = importlib.util.spec_from_file_location("profile_threads", peers)
    assert spec is not None and spec.loader is not None
    threads = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(threads)
    threading.Thread.run = threads.profiled(threading.Thread.run)
    main = cProfile.Profile(time.thread_time)
    threads.register("MainThread", main)
    atexit.register(threads.dump, prefix)
    main.enable()


for _install in (_count_rpc, _count_transfer, _count_http, _time_steps, _time_syncs):
    with contextlib.suppress(ImportError, AttributeError):   # an older tree: count what it has
        _install()
if os.environ.get("NNLITE_BENCH_EARLY"):
    _answer_early(set(os.environ["NNLITE_BENCH_EARLY"].split(",")))
if os.environ.get("NNLITE_BENCH_PROFILE"):
    _profile(os.environ["NNLITE_BENCH_PROFILE"], os.environ["NNLITE_BENCH_PEERS"])
