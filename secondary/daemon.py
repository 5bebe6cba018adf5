"""``nnlite secondary``: the check loop and the status endpoint.

Every ``checkpoint.check.period`` seconds the loop runs ``Checkpointer.check`` in a worker
thread (the namenode's status, the trigger policy, maybe a checkpoint); a failure is logged and
left for the next check. A small HTTP server (``dfs.namenode.secondary.http-address``, default
127.0.0.1:9868; port 0 picks a free one, reported on stderr as
``NNLITE_SECONDARY_HTTP_PORT=<port>``) answers:

    GET /  or  /status   JSON: namenode, last checkpoint (txids, time, phases), last failure,
                         counters, policy
    GET /jmx[?qry=NAME]  Hadoop's JMX JSON shape: {"beans": [...]}, the SecondaryNameNodeInfo
                         bean (as Hadoop's) and a Checkpointer bean with the counters

SIGTERM/SIGINT stop the loop (a checkpoint in progress is finished first) and the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import asdict
from pathlib import Path

from nnlite.client.failover import Address
from nnlite.client.peer import Credentials
from nnlite.namenode.config import Config
from nnlite.namenode.errors import InvalidTokenError
from nnlite.namenode.http.authentication import HttpAuthentication, with_headers
from nnlite.namenode.http.server import HttpServer
from nnlite.namenode.http.wire import Response
from nnlite.namenode.listen import announce_port
from nnlite.namenode.security import services, tls
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.secondary.checkpointer import Checkpointer
from nnlite.secondary.client import TransferClient
from nnlite.secondary.errors import SecondaryError, SettingError
from nnlite.secondary.outcome import PHASES, CheckpointResult

log = logging.getLogger(__name__)

SOFTWARE_VERSION = "nnlite-0.1.0"
INFO_BEAN = "Hadoop:service=SecondaryNameNode,name=SecondaryNameNodeInfo"
CHECKPOINTER_BEAN = "Hadoop:service=SecondaryNameNode,name=Checkpointer"


def lower_priority(config: Config) -> int:
    """Run this process at ``nnlite.secondary.nice`` (0-19) and return the niceness it has.

    A checkpoint is background work of a few CPU-seconds per million edits; on a host it
    shares with the namenode it should give way to the namenode's requests, as compaction
    threads are lowered in databases (RocksDB's LowerThreadPoolCPUPriority). On Linux the
    niceness belongs to each thread, and a new thread inherits its creator's: so every thread
    that exists now (imports already started some, e.g. jemalloc's background thread) is
    lowered, and the ones started later follow. A niceness already higher
    (``nice -n 19 nnlite secondary``) is kept; going back down would need privileges."""
    nice = config.int("nnlite.secondary.nice")
    if not 0 <= nice <= 19:
        raise SettingError(f"nnlite.secondary.nice must be within 0..19, not {nice}")
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if nice <= current:
        return current
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(ProcessLookupError):     # the thread ended meanwhile
            os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
    return nice


def resolve_secret(secret_file: str | None, config: Config) -> str:
    """``--secret-file`` (e.g. the namenode's <name-dir>/checkpoint.token), else the
    ``nnlite.checkpoint.secret`` configuration key."""
    if secret_file:
        try:
            secret = Path(secret_file).read_text().strip()
        except OSError as exc:
            raise SettingError(f"cannot read the secret file {secret_file}: "
                              f"{exc.strerror}") from exc
        if not secret:
            raise SettingError(f"the secret file {secret_file} is empty")
        return secret
    secret = config.get("nnlite.checkpoint.secret")
    if not secret:
        raise SettingError("no shared secret: pass --secret-file (the namenode's "
                          "<name-dir>/checkpoint.token) or set nnlite.checkpoint.secret")
    return secret


def resolve_credentials(secret_file: str | None, config: Config) -> Credentials:
    """How the secondary authenticates to the namenode: in secure mode by SPNEGO as
    ``dfs.secondary.namenode.kerberos.principal`` (``_HOST``: the host of
    ``dfs.namenode.secondary.http-address``) from ``dfs.secondary.namenode.keytab.file``, as
    Hadoop's SecondaryNameNode logs in before its image transfers; else the shared secret
    (``resolve_secret``)."""
    if not config.security_enabled():
        return resolve_secret(secret_file, config)
    host, _ = config.address("dfs.namenode.secondary.http-address")
    return services.credentials(config, host, "", True,
                                "dfs.secondary.namenode.kerberos.principal",
                                "dfs.secondary.namenode.keytab.file")


def _no_tokens(token):
    """The secondary issues no delegation tokens, so none verifies here."""
    raise InvalidTokenError("the secondary namenode accepts no delegation token")


def _error(status: int, message: str) -> Response:
    return Response(status, json.dumps({"error": message, "status": status}).encode())


class SecondaryDaemon:
    """The running secondary; ``await run()`` returns after a stop was requested."""

    def __init__(self, checkpointer: Checkpointer, config: Config, port: int | None = None):
        self.checkpointer = checkpointer
        self.check_period = config.float("checkpoint.check.period")
        self.host, default_port = config.address("dfs.namenode.secondary.http-address")
        self.port = default_port if port is None else port
        self.config = config
        self.https_port: int | None = None     # bound when dfs.http.policy serves HTTPS
        self.http = HttpServer(self.app, _error)
        # secure mode: the status pages answer only a caller proved by SPNEGO or the
        # hadoop.auth cookie, as the SecondaryNameNode's HttpServer2 with its
        # AuthenticationFilter (no delegation tokens here: this is no WebHDFS)
        self.authentication: HttpAuthentication | None = None
        if config.security_enabled():
            self.authentication = HttpAuthentication(
                SecuritySettings.from_config(config, self.host), _no_tokens,
                ProxyUsers(config.proxy_users()), lambda name: ())
        self.started = time.time()
        self.stop_requested: asyncio.Event | None = None

    # ------------------------------------------------------------------ HTTP

    def app(self, req) -> Response:
        headers: list[tuple[str, str]] = []
        if self.authentication is not None:
            proved = self.authentication.authenticate(req)
            if isinstance(proved, Response):
                return proved
            headers = proved[1]
        return with_headers(self.answer(req), headers)

    def answer(self, req) -> Response:
        if req.method != "GET":
            return _error(405, f"{req.method} is not supported here: the secondary's HTTP "
                               "server is read-only")
        if req.path in ("/", "/status"):
            return Response(200, json.dumps(self.status()).encode())
        if req.path == "/jmx":
            return Response(200, json.dumps(self.jmx(req.param("qry"))).encode())
        return _error(404, f"No such page {req.path}; try /status or /jmx")

    def status(self) -> dict:
        c = self.checkpointer
        s = c.last_status
        return {
            "namenode": c.client.url, "checkpointDir": str(c.dir.root),
            "startTime": int(self.started * 1000), "checkPeriod": self.check_period,
            "checkpointing": c.busy.is_set(), "namespaceTxid": c.namespace_txid,
            "namenodeStatus": None if s is None else {      # as of the last check
                "namespaceId": s.namespace_id, "txid": s.txid, "pending": s.pending,
                "lastCheckpointTxid": s.last_checkpoint_txid,
                "lastCheckpointTime": int(s.last_checkpoint_time * 1000),
                "uncheckpointedTxns": s.uncheckpointed},
            "lastCheckpoint": c.last_result.to_json() if c.last_result else None,
            "lastFailure": c.last_failure.to_json() if c.last_failure else None,
            "counters": asdict(c.counters),
            "policy": {"txns": c.policy.txns, "period": c.policy.period,
                       "maxRetries": c.max_retries},
        }

    def jmx(self, query: str | None) -> dict:
        beans = [self._info_bean(), self._checkpointer_bean()]
        return {"beans": [b for b in beans if not query or b["name"] == query]}

    def _info_bean(self) -> dict:
        last = self.checkpointer.last_result
        last_ms = int(last.finished * 1000) if last else 0
        directory = str(self.checkpointer.dir.root)
        return {"name": INFO_BEAN,
                "modelerType": "org.apache.hadoop.hdfs.server.namenode.SecondaryNameNode",
                "HostAndPort": f"{self.host}:{self.port}",
                "StartTime": int(self.started * 1000),
                "LastCheckpointTime": last_ms,
                "LastCheckpointDeltaMs": int(time.time() * 1000) - last_ms if last else -1,
                "CheckpointDirectories": [directory],
                "CheckpointEditlogDirectories": [directory],
                "SoftwareVersion": SOFTWARE_VERSION}

    def _checkpointer_bean(self) -> dict:
        c = self.checkpointer
        n = c.counters
        last = c.last_result
        status = c.last_status
        phases = last.phases if last else dict.fromkeys(PHASES, 0.0)
        return {"name": CHECKPOINTER_BEAN, "modelerType": "Checkpointer",
                "Checkpointing": int(c.busy.is_set()),
                "Checkpoints": n.checkpoints, "CheckpointFailures": n.failures,
                "ConsecutiveFailures": n.failures_in_row,
                "MergeFailuresInRow": n.merge_failures_in_row,
                "ImagesDownloaded": n.images_downloaded, "EditsDownloaded": n.edits_downloaded,
                "BytesDownloaded": n.bytes_downloaded, "BytesUploaded": n.bytes_uploaded,
                "LastCheckpointTxid": last.last_txid if last else -1,
                "LastCheckpointOps": last.ops if last else 0,
                "LastCheckpointImageBytes": last.image_size if last else 0,
                **{f"Last{p.capitalize()}Seconds": round(s, 4) for p, s in phases.items()},
                "NamenodeTxid": status.txid if status else -1,
                "TransactionsSinceLastCheckpoint": status.uncheckpointed if status else -1,
                "LastFailure": c.last_failure.error if c.last_failure else ""}

    # ------------------------------------------------------------------ life cycle

    async def start(self) -> int:
        """Bind the status pages on the ports ``dfs.http.policy`` asks for, as Hadoop's
        SecondaryNameNode binds ``dfs.namenode.secondary.http-address`` and
        ``.https-address`` (the keystore of ssl-server.xml, ``security/tls.py``)."""
        http, https = tls.web_ports(self.config)
        if http:
            self.port = await self.http.start(self.host, self.port)
            log.info("secondary status on http://%s:%d/status; checking %s every %g s",
                     self.host, self.port, self.checkpointer.client.url, self.check_period)
            announce_port("NNLITE_SECONDARY_HTTP_PORT", self.port)
        if https:
            host, port = self.config.address("dfs.namenode.secondary.https-address")
            self.https_port = await self.http.start(host, port,
                                                    ssl=tls.server_context(self.config))
            log.info("secondary status on https://%s:%d/status; checking %s every %g s",
                     host, self.https_port, self.checkpointer.client.url, self.check_period)
            announce_port("NNLITE_SECONDARY_HTTPS_PORT", self.https_port)
            if not http:
                self.port = self.https_port
        return self.port

    async def checks(self) -> None:
        loop = asyncio.get_running_loop()
        stop = self.stop_requested
        if stop is None:        # never: run makes it before it checks
            raise SecondaryError("the secondary checks only while it runs (run())")
        while not stop.is_set():
            try:
                await loop.run_in_executor(None, self.checkpointer.check)
            except Exception:
                log.exception("unexpected error in a checkpoint check; retrying at the "
                              "next check")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.check_period)

    async def run(self) -> None:
        self.stop_requested = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop_requested.set)
        try:
            await self.start()
            await self.checks()
            log.info("secondary stopping")
        finally:
            await self.http.stop(1.0)


# ---------------------------------------------------------------------- entry points (cli)

def serve(namenode_url: Address, checkpoint_dir: str, secret: Credentials, config: Config,
          port: int | None = None) -> None:
    """Run the daemon until SIGTERM/SIGINT."""
    with Checkpointer.from_config(namenode_url, checkpoint_dir, secret, config) as cp:
        asyncio.run(SecondaryDaemon(cp, config, port).run())


def checkpoint_now(namenode_url: Address, checkpoint_dir: str, secret: Credentials,
                   config: Config) -> CheckpointResult:
    """One forced checkpoint (raises SecondaryError when it fails)."""
    with Checkpointer.from_config(namenode_url, checkpoint_dir, secret, config) as cp:
        return cp.do_checkpoint("forced")


def edits_size(namenode_url: Address, secret: Credentials, config: Config) -> int:
    """The namenode's uncheckpointed transactions."""
    timeout = config.int("dfs.image.transfer.timeout") / 1000
    return TransferClient(namenode_url, secret, timeout=timeout).status().uncheckpointed
