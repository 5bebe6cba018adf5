"""The namenode's HTTP application: routes a request to WebHDFS, admin, JMX or metrics.

Paths:
    /webhdfs/v1/<path>?op=...        WebHDFS (webhdfs.py; CREATE, APPEND, OPEN... in data.py)
    /data/v1/<path>?op=...           the data step of CREATE, APPEND, OPEN (data.py)
    /admin?op=SAFEMODE&action=get|enter|leave|wait
    /admin?op=SAVENAMESPACE | ROLLEDITS | REPORT      superuser only (user.name)
    /checkpoint/...                                   image transfer (transfer.py)
    /jmx[?qry=Hadoop:service=NameNode,name=...]       Hadoop's JMX JSON shape
    /metrics                                          Prometheus text format
    /metrics.json                                     the same as JSON (plus "fsyncs")
    <mounted prefix>/...                              a layer above the namenode (the catalog)
In secure mode (``hadoop.security.authentication=kerberos``) every request but /isActive
first proves who it is (authentication.py: a delegation token, the hadoop.auth cookie or
SPNEGO; else 401), streamed uploads included, and the admin ops ask who it proved to be.
While the namespace loads, every WebHDFS, data, image-transfer and admin request gets
RetriableException "Namenode is in startup mode" (403), as HDFS's NamenodeWebHdfsMethods
answers while ``NameNode.isInStartupMode``: a client following a nameservice (Hadoop's
WebHdfsFileSystem with its failover retry policy, nnlite's ``client/failover.py``) backs off
and asks the same namenode again. The status page, /isActive, /jmx and the metrics answer
(``"Loading": 1``).

Nothing that is not durable is ever visible: an answer produced while ops applied before it
are still being synced (a write's own answer already waits for its txid) is held until the
journal has synced everything logged when it was produced (``visible``). If that sync fails
the answer is the error, and with no name directory left the namenode stops serving. One
exception: when the shared journal (etcd, in an HA set) refused those ops, the namenode drops
them and reloads its tree, and a held GET or HEAD is answered again on the reloaded tree
(``HeldRead``): reads go on while etcd has no quorum, as HDFS's do while its journal nodes
refuse edits, instead of failing with the writes' error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from nnlite.client import java_classes as java
from nnlite.client.peer import Credentials, Peer, PeerRefusedError
from nnlite.namenode import errors
from nnlite.namenode.blocks.replication import Replicator
from nnlite.namenode.config import Config
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.ha.controller import HAController
from nnlite.namenode.ha.state import HAServiceState
from nnlite.namenode.http import remote, status
from nnlite.namenode.http.authentication import HttpAuthentication, with_headers
from nnlite.namenode.http.data import DATA_PREFIX
from nnlite.namenode.http.webhdfs import PREFIX, WebHdfs
from nnlite.namenode.http.webhdfs_json import dumps
from nnlite.namenode.http.wire import Request, Response
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings

HA_OPS = ("TRANSITIONTOACTIVE", "TRANSITIONTOSTANDBY", "FAILOVER")
# NamenodeWebHdfsMethods.init's answer before the namesystem is loaded
LOADING = errors.RetriableError("Namenode is in startup mode")


class NamenodeApp:
    def __init__(self) -> None:
        self.fs: FSNamesystem | None = None
        self.committer: AsyncCommitter | None = None
        self.webhdfs: WebHdfs | None = None
        self.started = time.time()
        self.requests = 0
        self.transfer: Any = None    # the image transfer endpoints, once ready
        self.data: Any = None        # the data path (DataNodeHttp), once ready
        self.mounts: dict[str, Callable[[Request], object]] = {}
        self.catalog: Any = None     # the catalog service, when one is installed
        self.rpc_address: str | None = None     # host:port of Hadoop IPC, once it listens
        self.rpc_metrics: Callable[[], dict] | None = None    # its counters (RpcServer)
        self.ha: HAController | None = None     # in an HA set
        self.replicator: Replicator | None = None
        # how this namenode authenticates to the others (a failover's cede): the shared
        # secret, or in secure mode its service login (security/services.py)
        self.peers: Credentials = ""
        # secure mode: the filter every request but /isActive passes (authentication.py)
        self.authentication: HttpAuthentication | None = None

    def secure(self, settings: SecuritySettings, config: Config) -> None:
        """Secure mode: from now on every request but /isActive proves who it is
        (authentication.py), while the namespace loads too."""
        self.authentication = HttpAuthentication(
            settings, self._verify_token, ProxyUsers(config.proxy_users()),
            lambda name: self.fs.caller(name).groups if self.fs is not None else ())

    def _verify_token(self, token: Any) -> Any:
        if self.fs is None:
            raise LOADING
        return self.fs.verify_delegation_token(token)

    def mount(self, prefix: str, handler: Callable[[Request], object]) -> None:
        """Serve ``prefix`` and everything under it with ``handler`` (a layer above the
        namenode, such as the catalog, installed by the daemon's composer)."""
        self.mounts[prefix] = handler

    def ready(self, fs: FSNamesystem, committer: AsyncCommitter, config: Config,
              transfer: Any = None, data: Any = None) -> None:
        self.transfer = transfer
        self.fs = fs
        self.committer = committer
        self.webhdfs = WebHdfs(fs, committer,
                               default_user=config.get("hadoop.http.staticuser.user"),
                               proxy_users=ProxyUsers(config.proxy_users()),
                               authentication=self.authentication)
        self.webhdfs.token_service = lambda: self.rpc_address or ""
        if data is not None:
            data.attach(self.webhdfs)
        self.data = data

    def __call__(self, req: Request) -> Any:
        self.requests += 1
        if self.authentication is None:
            return self.visible(self.route(req), req)
        proved = self.authentication.authenticate(req)
        if isinstance(proved, Response):
            return proved
        req.proof, headers = proved
        return with_headers(self.visible(self.route(req), req), headers)

    def visible(self, result: Any, req: Request) -> Any:
        """``result``, once every op logged before it was produced is durable: an answer
        never shows an op that a crash or a failed sync could still take away."""
        fs = self.fs
        if self.committer is None or fs is None or not isinstance(result, Response):
            return result
        written = fs.last_written_txid
        if fs.last_synced_txid >= written:
            return result
        if req.method in ("GET", "HEAD"):
            return HeldRead(self, req, result, written, fs.generation)
        return self.committer.durable(written, result)

    def route(self, req: Request) -> Any:
        path = req.path
        if path.startswith(PREFIX + "/") or path == PREFIX:
            return self.webhdfs(req) if self.webhdfs else remote.from_error(LOADING)
        if path.startswith(DATA_PREFIX + "/"):
            return self.data(req) if self.data else remote.from_error(LOADING)
        if path in ("/", "/index.html"):
            return status.page(self, req)
        if path == "/isActive":
            # Hadoop's IsNameNodeActiveServlet, for load balancers and the standbys' pulse
            if self.fs is not None and (self.ha is None
                                        or self.ha.state.state is HAServiceState.ACTIVE):
                return Response(200, b"I am Active!", "text/plain")
            return Response(405, b"I am not Active!", "text/plain")
        if path == "/jmx":
            return Response(200, dumps(self.jmx(req.param("qry"))))
        if path == "/metrics":
            return Response(200, self.prometheus().encode(), "text/plain; version=0.0.4")
        if path == "/metrics.json":
            metrics = self.metrics()
            return Response(200, dumps({**metrics, "fsyncs": metrics.get("Syncs", 0)}))
        if path == "/admin":
            return self.admin(req)
        if path.startswith("/checkpoint/"):
            return self.transfer(req) if self.transfer else remote.from_error(LOADING)
        for prefix, handler in self.mounts.items():
            if path == prefix or path.startswith(prefix + "/"):
                return handler(req)
        return remote.remote(404, java.FILE_NOT_FOUND,
                             f"No handler for {req.method} {path}")

    def counted(self, factory: Callable[[Request], Any]) -> Callable[[Request], Any]:
        """``factory``, a handler of streamed bodies (data and image uploads), counted in
        ``Requests``: the server hands such a request to its factory, never to ``__call__``,
        so without this the counter misses every upload."""
        def start(req: Request) -> Any:
            self.requests += 1
            if self.authentication is None:
                return factory(req)
            proved = self.authentication.authenticate(req)
            if isinstance(proved, Response):
                return proved
            req.proof = proved[0]
            return factory(req)
        return start

    # ------------------------------------------------------------------ admin

    def admin(self, req: Request) -> Any:
        if self.fs is None:
            return remote.from_error(LOADING)
        try:
            user = self._admin_user(req)
            op = (req.param("op") or "").upper()
            if op == "GETSERVICESTATE":     # HAServiceProtocol's status: anyone may ask
                return Response(200, dumps(self.service_state()))
            if not self.fs.caller(user).superuser:
                raise errors.AccessControlError(
                    f"Access denied for user {user or '(none)'}. Superuser privilege is "
                    "required")
            if op == "SAFEMODE":
                return self._safe_mode((req.param("action") or "get").lower())
            if op == "SAVENAMESPACE" and req.method in ("PUT", "POST"):
                return self._blocking(self.fs.save_namespace, "txid")
            if op == "ROLLEDITS" and req.method in ("PUT", "POST"):
                return self._blocking(self.fs.roll_edits, "txid")
            if op == "REPORT":
                return Response(200, dumps({"Report": self.fs.report()}))
            if op in HA_OPS and req.method in ("PUT", "POST"):
                return self._transition(op, req, user)
            return remote.illegal_argument(f"Unknown admin operation {op!r} for {req.method}")
        except Exception as exc:
            return remote.from_error(exc)

    def _admin_user(self, req: Request) -> str:
        """Who asks: ``user.name`` in simple mode, who it proved to be in secure mode."""
        if self.authentication is None or self.webhdfs is None:
            return req.param("user.name") or ""
        return self.webhdfs.identify(req)

    def service_state(self) -> dict:
        """``haadmin -getServiceState``: active or standby (a namenode without an HA set is
        active), with what this one knows of the set."""
        if self.ha is None:
            return {"state": "active", "ha": False}
        return {**self.ha.report(), "ha": True}

    def _transition(self, op: str, req: Request, user: str) -> Any:
        ha = self.ha
        if ha is None:
            return remote.illegal_argument("this namenode is not part of an HA set "
                                           "(dfs.nameservices is empty)")
        force = (req.param("force") or "false").lower() == "true"
        if op == "TRANSITIONTOACTIVE":
            action = partial(ha.transition_to_active, force)
        elif op == "TRANSITIONTOSTANDBY":
            cede = req.param("cede")
            action = partial(ha.transition_to_standby, force,
                             float(cede) if cede is not None else None)
        else:
            action = partial(ha.failover, partial(_cede, user=user, seconds=ha.ttl,
                                                  credentials=self.peers, scheme=ha.scheme))
        return self._blocking(action, "state")

    def _safe_mode(self, action: str) -> Any:
        fs = self.fs
        if fs is None:
            return remote.from_error(LOADING)
        if action in ("enter", "leave"):
            fs.set_safe_mode(action == "enter")
        elif action == "wait":
            return self._wait_safe_mode(fs)
        elif action != "get":
            return remote.illegal_argument(f"safemode action must be get, enter, leave or "
                                           f"wait, not {action!r}")
        return Response(200, dumps({"SafeMode": fs.safe_mode}))

    async def _wait_safe_mode(self, fs: FSNamesystem) -> Response:
        while fs.safe_mode:
            await asyncio.sleep(0.1)
        return Response(200, dumps({"SafeMode": False}))

    async def _blocking(self, fn: Callable[[], Any], key: str) -> Response:
        """Run a long admin action off the event loop (it takes the namesystem lock)."""
        try:
            value = await asyncio.get_running_loop().run_in_executor(None, fn)
        except Exception as exc:
            return remote.from_error(exc)
        return Response(200, dumps({key: value}))

    # ------------------------------------------------------------------ metrics

    def metrics(self) -> dict:
        fs = self.fs
        base = {"Requests": self.requests, "UptimeSeconds": int(time.time() - self.started)}
        if fs is None:
            return {**base, "SafeMode": 1, "Loading": 1}
        return {
            **base, "Loading": 0, **fs.metrics(),
            **self._checkpoint_metrics(),
            **(self.catalog.metrics() if self.catalog is not None else {}),
            **(self.replicator.metrics() if self.replicator is not None else {}),
            **(self._ha_metrics(self.ha) if self.ha is not None else {}),
            **(self.rpc_metrics() if self.rpc_metrics is not None else {}),
        }

    @staticmethod
    def _ha_metrics(ha: HAController) -> dict:
        """An HA namenode's figures for /metrics: its state, its standbys' worst lag."""
        standbys = ha.standby_positions().values()
        return {"HAActive": int(ha.state.state is HAServiceState.ACTIVE),
                "HAEpoch": ha.state.epoch,
                "HAStandbyLagTxns": max((p["lagTxns"] for p in standbys), default=0),
                "HAStandbyLagMs": max((p["lagMs"] for p in standbys), default=0)}

    def _checkpoint_metrics(self) -> dict:
        fs = self.fs
        if self.transfer is None or fs is None:
            return {}
        m = fs.image.metrics
        return {"CheckpointPending": int(fs.image.pending), "Checkpoints": m.checkpoints,
                "LastCheckpointDurationSeconds": round(m.last_duration, 3),
                "LastCheckpointImageBytes": m.last_image_size,
                "CheckpointBytesSent": m.bytes_sent, "CheckpointBytesReceived": m.bytes_received,
                "CheckpointTransfersRefused": m.refused}

    def jmx(self, query: str | None) -> dict:
        beans = [
            {"name": "Hadoop:service=NameNode,name=FSNamesystem",
             "modelerType": "FSNamesystem", "tag.HAState": self.ha_state(), **self.metrics()},
            {"name": "Hadoop:service=NameNode,name=NameNodeStatus",
             "modelerType": "org.apache.hadoop.hdfs.server.namenode.NameNode",
             "State": self.ha_state(), "NNRole": "NameNode",
             **({"HostAndPort": self.rpc_address} if self.rpc_address else {}),
             **({f"HA{k[0].upper()}{k[1:]}": json.dumps(v) if isinstance(v, dict) else v
                 for k, v in self.ha.report().items()}
                if self.ha is not None else {})},
            {"name": "Hadoop:service=NameNode,name=NameNodeInfo",
             "modelerType": "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
             "SoftwareVersion": "nnlite-0.1.0",
             "Safemode": "ON" if self.fs is None or self.fs.safe_mode else "",
             "NameDirStatuses": json.dumps(self._dir_statuses())},
        ]
        if query:
            beans = [b for b in beans if b["name"] == query]
        return {"beans": beans}

    def ha_state(self) -> str:
        return "active" if self.ha is None else self.ha.state.state.value

    def _dir_statuses(self) -> dict:
        if self.fs is None:
            return {"active": {}, "failed": {}}
        return {"active": {str(d.root): "IMAGE_AND_EDITS" for d in self.fs.dirs if d.healthy},
                "failed": {str(d.root): d.failure for d in self.fs.dirs if not d.healthy}}

    def prometheus(self) -> str:
        lines = []
        for name, value in self.metrics().items():
            metric = "nnlite_namenode_" + _snake(name)
            lines.append(f"# TYPE {metric} gauge")
            lines.append(f"{metric} {value}")
        return "\n".join(lines) + "\n"


class HeldRead:
    """A GET's answer held until the ops logged before it are durable (``then`` as the
    committer's ``Durable``). If the shared journal refused them (``SharedJournalError``),
    the namenode drops them and reloads (``HAController``), and the request is answered
    again on the reloaded tree: a read must neither show those ops nor fail because a
    write did. Any other failure of the sync is the answer, as for a write."""

    __slots__ = ("app", "req", "result", "txid", "generation")

    def __init__(self, app: NamenodeApp, req: Request, result: Response, txid: int,
                 generation: int) -> None:
        self.app = app
        self.req = req
        self.result = result
        self.txid = txid
        self.generation = generation

    def then(self, callback: Callable[[Any, Any, Any], None], arg: Any) -> None:
        assert self.app.committer is not None
        self.app.committer.when_durable(self.txid, self._released, self.result,
                                        (callback, arg))

    def _released(self, value: Any, error: BaseException | None, waiter: Any) -> None:
        callback, arg = waiter
        if not isinstance(error, errors.SharedJournalError):
            callback(value, error, arg)
            return
        assert self.app.committer is not None
        self.app.committer.after_reload(self.generation, lambda: self._again(callback, arg))

    def _again(self, callback: Callable[[Any, Any, Any], None], arg: Any) -> None:
        app = self.app
        try:
            result = app.visible(app.route(self.req), self.req)
        except Exception as exc:
            callback(None, exc, arg)
            return
        if isinstance(result, Response):
            callback(result, None, arg)
        elif hasattr(result, "then"):
            result.then(callback, arg)
        else:                          # a coroutine (safemode wait)
            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda t: callback(
                None, asyncio.CancelledError(), arg) if t.cancelled() else callback(
                None if t.exception() else t.result(), t.exception(), arg))


def _cede(http: str, *, user: str, seconds: float, credentials: Credentials = "",
          scheme: str = "http") -> None:
    """Ask the active at ``http`` (host:port, called in ``scheme``: https in an HTTPS_ONLY
    set) to step down and give way for ``seconds`` (a graceful failover: long enough for
    the asking standby to win the election), through the one client between namenodes (in
    secure mode as this namenode's service principal)."""
    peer = Peer(f"{scheme}://{http}", secret=credentials, timeout=30)
    try:
        peer.cede(seconds, user)
    except PeerRefusedError as exc:
        raise errors.NamenodeError(f"the active namenode at {http} did not give way: "
                                   f"{exc.status} {exc.message}") from exc
    finally:
        peer.close()


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
