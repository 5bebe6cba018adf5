"""``nnlite namenode``: load the namespace, serve HTTP, stop cleanly on SIGTERM/SIGINT.

Startup: lock the name dirs (a second namenode on them stops here, before it binds a port or
creates anything), bind the HTTP and RPC ports (so clients get RetriableException rather than
a refused connection while a large image loads, as HDFS's NamenodeWebHdfsMethods answer
"Namenode is in startup mode" and NameNodeRpcServer.checkNNStartup "NameNode still not
started"), load the namespace in a worker thread, then serve.
After loading: open the block store (``nnlite.data.dir``) and recover the leases of uploads
a crash cut off (``namenode/blocks/lease_recovery.py``); while serving, housekeeping revokes
leases past their hard limit and sweeps unreferenced blocks every
``nnlite.blocks.sweep.interval`` seconds.
Stop: refuse new connections, let in-flight requests finish (``nnlite.shutdown.grace``
seconds), sync the journal, release the name-dir locks, exit 0.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import threading
import time
from collections.abc import Callable

from nnlite.client.etcd.client import Etcd
from nnlite.durability import faults
from nnlite.namenode.blocks import rwr, store
from nnlite.namenode.blocks.lease_recovery import recover_uploads
from nnlite.namenode.blocks.replication import PREFIX as REPLICA_PREFIX
from nnlite.namenode.blocks.replication import Replicator
from nnlite.namenode.blocks.sweep import OpenWrites, Sweeper
from nnlite.namenode.config import DEFAULTS, Config, ConfigError
from nnlite.namenode.datanode.ipc import ClientDatanodeService
from nnlite.namenode.datanode.server import DataNodeServer, block_pool_id
from nnlite.namenode.datanode.tokens import READ, WRITE, BlockKeys, BlockTokenSecretManager
from nnlite.namenode.errors import AddressError, NamenodeError
from nnlite.namenode.fsnamesystem import FSNamesystem, Identity
from nnlite.namenode.ha.checkpointer import StandbyCheckpointer
from nnlite.namenode.ha.controller import HAController
from nnlite.namenode.ha.positions import STALE_POSITION
from nnlite.namenode.ha.quorum_journal import Layout
from nnlite.namenode.ha.state import HAServiceState
from nnlite.namenode.http import remote
from nnlite.namenode.http.app import NamenodeApp
from nnlite.namenode.http.data import DataPath
from nnlite.namenode.http.replica import Replica
from nnlite.namenode.http.server import HttpServer
from nnlite.namenode.http.status import version
from nnlite.namenode.http.transfer import Transfer, load_secret
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.listen import announce_port
from nnlite.namenode.namespace import leases
from nnlite.namenode.rpc.client_protocol import ClientProtocol
from nnlite.namenode.rpc.server import RpcServer, block_token_caller, block_token_password
from nnlite.namenode.rpc.status import Datanode, Locator
from nnlite.namenode.rpc.writes import Writes
from nnlite.namenode.security import services, tls
from nnlite.namenode.security.identity import login_user, rules_of
from nnlite.namenode.security.proxy_users import ProxyUsers
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import NameDir

log = logging.getLogger(__name__)

# s a standby may lag in seeing a write opened (the journal's tail), beyond the sweep interval
STANDBY_LAG_SLACK = 60.0


def identity(config: Config, security: SecuritySettings | None = None) -> Identity:
    """Who is a superuser and in which groups: in secure mode the superuser is the user the
    namenode logs in as from its keytab (its principal under auth_to_local), as in Hadoop."""
    superuser = config.superuser()
    if security is not None and security.enabled:
        superuser = login_user(security)
    return Identity(
        superuser=superuser,
        supergroup=config.get("dfs.permissions.superusergroup"),
        groups=Identity.parse_mapping(config.get("hadoop.user.group.static.mapping.overrides")),
        permissions_enabled=config.bool("dfs.permissions.enabled"))


def stale_standbys(ha: HAController, namenodes: dict[str, str]) -> set[str]:
    """The addresses of the standbys whose published position is older than
    ``STALE_POSITION`` (``StandbyPositions.read``): the block copies of a close
    leave them out. A standby with no position known yet is not stale."""
    return {namenodes[nn] for nn, p in ha.standby_positions().items()
            if nn in namenodes and p["ageMs"] >= STALE_POSITION * 1000}


class Namenode:
    """The running service; ``await run()`` returns when a stop was requested and done."""

    def __init__(self, dirs: list[str], config: Config, host: str | None = None,
                 port: int | None = None, extensions=(), rpc_port: int | None = None,
                 lease_clock: Callable[[], float] = time.monotonic,
                 https_port: int | None = None):
        self.dirs = dirs
        self.config = config
        # an HA set's namenode that names its id binds dfs.namenode.http-address.<ns>.<id>
        default_host, default_port = config.address(config.namenode_key(
            "dfs.namenode.http-address", config.get("dfs.ha.namenode.id")))
        self.host = host or default_host
        self.host_given = host
        self.port = default_port if port is None else port
        # secure mode's settings (namenode/security/settings.py), for every transport
        self.security = SecuritySettings.from_config(config, self.host)
        self.app = NamenodeApp()
        if self.security.enabled:
            self.app.secure(self.security, config)
        self.http = HttpServer(self.app, remote.parse_error_response,
                               max_body=config.int("nnlite.http.max-body"),
                               body_budget=config.int("nnlite.http.body-budget"),
                               request_timeout=config.float("nnlite.http.request-timeout"),
                               min_body_rate=config.float("nnlite.http.min-body-rate"),
                               error_for=remote.from_error)
        self.fs: FSNamesystem | None = None
        self.committer: AsyncCommitter | None = None
        self.blocks: store.BlockStore | None = None
        self.housekeeping: asyncio.Task | None = None
        self.extensions = extensions      # callables(namenode) run once the namespace is up
        self.lease_clock = lease_clock    # the lease table's (a test's own, to pass a limit)
        self.tasks: list[asyncio.Task] = []
        self.stop_requested = asyncio.Event()
        self.failure: Exception | None = None     # why the namenode stopped by itself
        self.ha: HAController | None = None
        self.replicator: Replicator | None = None     # an HA set's block copies
        self.rpc_port = rpc_port          # None: dfs.namenode.rpc-address's
        self.https_port = https_port      # None: dfs.namenode.https-address's (HTTPS served)
        self.ha_id = ""                   # this namenode's id in an HA set
        self.rpc: RpcServer | None = None
        # The built-in datanode whose blocks the RPC service names (set before start).
        self.datanode: Datanode | None = None
        self.datanode_server: DataNodeServer | None = None
        self.datanode_ipc: RpcServer | None = None

    async def start(self) -> int:
        name_dirs = [NameDir(p) for p in self.dirs]
        namedir.lock_formatted(name_dirs)
        try:
            await self._listen_http()
            await self._listen_rpc()
        except BaseException:
            namedir.unlock_all(name_dirs)
            raise
        loop = asyncio.get_running_loop()
        self.fs = await loop.run_in_executor(None, self._open, name_dirs)
        self.committer = self.fs.async_committer(loop)
        self.committer.on_journal_failure = self._journal_failed
        secret = load_secret(self.config.get("nnlite.checkpoint.secret"), self.dirs[0])
        # who may call the checkpoint and block endpoints: the secret, or service principals
        self.gate = services.gate(self.config, self.host, secret, self.security.enabled)
        transfer = Transfer(self.fs, self.gate)
        self.http.streams[("PUT", "checkpoint")] = self.app.counted(transfer.upload)
        lease_manager = leases.LeaseManager(
            self.config.float("nnlite.lease.soft-limit"),
            self.config.float("dfs.namenode.lease-hard-limit-sec"), self.lease_clock)
        self.fs.on_applied.append(lease_manager.follow)
        # After a reload (an HA namenode that stepped down or lost etcd) no upload under way
        # may complete: its file's opening may be among the dropped ops. On the loop, where
        # the uploads live.
        self.fs.on_reloaded.append(lambda: loop.call_soon_threadsafe(
            lease_manager.revoke_all, "the namenode reloaded its namespace"))
        # ... nor may it issue delegation tokens until it is the active again
        self.fs.on_reloaded.append(self.fs.stop_delegation_tokens)
        data = DataPath(*self._loaded(), lease_manager, host=self.host, port=self.port,
                        combine_mode=self.config.get("dfs.checksum.combine.mode"),
                        https_port=self.https_port)
        upload = self.app.counted(data.upload)
        self.http.streams[("PUT", "data")] = self.http.streams[("POST", "data")] = upload
        # The datanode first: from app.ready to the RPC protocol nothing may await, so that
        # WebHDFS and hdfs:// stop answering RetriableException at the same instant.
        tokens = await self._start_datanode_once(data, secret)
        self.app.ready(self.fs, self.committer, self.config, transfer, data)
        if self.config.nameservice():
            self.ha = self._join_ha_set(loop, secret, data)
        self._serve_rpc(lease_manager, data, tokens)
        self._check_resources()
        self.housekeeping = asyncio.ensure_future(self._keep_house(data))
        self.tasks.append(asyncio.ensure_future(self._watch_resources()))
        self.tasks.append(asyncio.ensure_future(self._settle_objects()))
        if self.security.enabled:
            self.tasks.append(asyncio.ensure_future(self._roll_delegation_keys()))
        for extension in self.extensions:
            extension(self)
        report = self.fs.report()
        log.info("namenode ready: txid %d, %d files, %d directories; safe mode %s",
                 report["lastWrittenTxid"], report["files"], report["directories"],
                 "ON (resources are low)" if self.fs.resources_low else "off")
        return self.port

    async def _listen_http(self) -> None:
        """Bind the web ports ``dfs.http.policy`` asks for (``HttpServer2`` as ``NameNode
        HttpServer`` builds it): HTTP on the http-address, HTTPS on ``dfs.namenode.
        https-address`` with ssl-server.xml's keystore (``security/tls.py``), one app behind
        both. Under HTTPS_ONLY ``port`` is the HTTPS one (the data step's redirects follow
        the scheme a request came in on)."""
        if self.security.http_enabled:
            self.port = await self.http.start(self.host, self.port)
            log.info("namenode listening on http://%s:%d (RetriableException while loading)",
                     self.host, self.port)
            announce_port("NNLITE_HTTP_PORT", self.port)
        if not self.security.https_enabled:
            return
        host, port = self.config.address(self.config.namenode_key(
            "dfs.namenode.https-address", self.config.get("dfs.ha.namenode.id")))
        port = port if self.https_port is None else self.https_port
        self.https_port = await self.http.start(self.host_given or host, port,
                                                ssl=tls.server_context(self.config))
        if not self.security.http_enabled:
            self.port = self.https_port
        log.info("namenode listening on https://%s:%d", self.host_given or host,
                 self.https_port)
        announce_port("NNLITE_HTTPS_PORT", self.https_port)

    async def _listen_rpc(self) -> None:
        """Bind Hadoop IPC (``hdfs://``) before the namespace loads, as the HTTP port is: until
        ``_serve_rpc`` hands it the protocol, every call is answered RetriableException
        (``RpcServer.starting``). The address: ``--rpc-port``, else
        ``dfs.namenode.rpc-address.<ns>.<id>`` in an HA set, else ``dfs.namenode.rpc-address``
        (0: a free port). When none was asked for and the default port (8020) is taken, the
        namenode serves WebHDFS only and says so."""
        self.ha_id = self._ha_id()
        key = self.config.namenode_key("dfs.namenode.rpc-address", self.ha_id)
        host, port = self.config.address(key)
        asked = self.rpc_port is not None or self.config.get(key) != DEFAULTS.get(key)
        port = port if self.rpc_port is None else self.rpc_port
        host = self.host_given or host
        server = RpcServer.starting(identity(self.config, self.security),
                                    ProxyUsers(self.config.proxy_users()),
                                    max_data_length=self.config.int("ipc.maximum.data.length"),
                                    security=self.security)
        try:
            self.rpc_port = await server.start(host, port)
        except AddressError as exc:
            if asked:
                raise
            log.warning("hdfs:// is not served: %s", exc)
            return
        self.rpc = server
        self.app.rpc_address = f"{host}:{self.rpc_port}"
        self.app.rpc_metrics = server.metrics
        log.info("namenode listening on hdfs://%s:%d (RetriableException while loading)",
                 host, self.rpc_port)
        announce_port("NNLITE_RPC_PORT", self.rpc_port)

    async def _start_datanode_once(self, data: DataPath,
                                   secret: str) -> BlockTokenSecretManager | None:
        """The built-in datanode (once: a reload keeps it) and the block tokens it checks; in
        an HA set it takes the writes the active signs with the set's secret."""
        _, _, blocks = self._loaded()
        tokens = self._block_tokens(block_pool_id(blocks.namespace_id), secret)
        if self.datanode is None:
            self.datanode = await self._start_datanode(blocks, tokens)
        data.datanode = self.datanode_server
        return tokens

    def _serve_rpc(self, lease_manager: leases.LeaseManager, data: DataPath,
                   tokens: BlockTokenSecretManager | None) -> None:
        """Serve Hadoop IPC on the port ``_listen_rpc`` bound, beside HTTP. In an HA set
        blocks run through a pipeline of the active's datanode and a standby's
        (``_pipeline``)."""
        fs, committer, blocks = self._loaded()
        server = self.rpc
        if server is None:          # WebHDFS only: the default port was taken
            return
        ha = self.ha
        writes = Writes(fs, committer, blocks, lease_manager, self.datanode)
        locator = Locator(self.datanode, self.port, blocks.capacity, block_tokens=tokens)
        if ha is not None and self.replicator is not None:
            self._pipeline(ha, self.replicator, writes, locator)
        server.serve(ClientProtocol(
            fs, writes, locator,
            ha_state=lambda: "ACTIVE" if ha is None else ha.state.state.name,
            truncator=data.truncator),
            fs, committer)
        log.info("namenode serving hdfs://%s (Hadoop IPC)", self.app.rpc_address)

    def _ha_id(self) -> str:
        """This namenode's id in its HA set: ``dfs.ha.namenode.id``, else the one whose
        ``dfs.namenode.http-address.<ns>.<id>`` has this HTTP port; "" without a set."""
        if not self.config.nameservice():
            return ""
        return self.config.get("dfs.ha.namenode.id") or next(
            (nn for nn, address in self.config.ha_namenodes().items()
             if address.endswith(f":{self.port}")), "")

    def _block_tokens(self, pool_id: str, secret: str) -> BlockTokenSecretManager | None:
        """The block tokens this namenode signs and its datanode checks, with keys derived
        from the set's ``secret`` (``datanode/tokens.py``): every mode with
        ``dfs.block.access.token.enable`` (or secure mode's data transfer protection);
        in an HA set otherwise, writes only -- the standby's datanode admits the active's
        pipelines by them -- as before; none for a lone namenode in simple mode."""
        settings = self.security
        if settings.block_tokens:
            issued: tuple[str, ...] = (READ, WRITE)
        elif self.config.nameservice():     # an HA set, known before it is joined
            issued = (WRITE,)
        else:
            return None
        keys = BlockKeys(secret, pool_id, settings.block_key_update_interval_ms,
                         settings.block_token_lifetime_ms)
        return BlockTokenSecretManager(keys, issued)

    def _pipeline(self, ha: HAController, replicator: Replicator, writes: Writes,
                  locator: Locator) -> None:
        """HDFS's pipeline in an HA set: this datanode is published with the standby's
        position (a reachable ``dfs.datanode.address`` on each host), the active names the
        live standbys' datanodes in pipelines and locations, with the WRITE token of each
        block it hands out (``Locator.block_tokens``: the standby's datanode was never told
        to expect it), and counts a block closed without a standby's copy as
        under-replicated."""
        datanode = self.datanode
        if datanode is None:
            return
        ha.positions.datanode = {"host": datanode.host, "xferPort": datanode.xfer_port,
                                 "ipcPort": datanode.ipc_port, "infoPort": self.port,
                                 "uuid": datanode.datanode_uuid}
        locator.peers = ha.standby_datanodes
        locator.lacking = replicator.lacks
        writes.wanted = 2
        writes.on_short = replicator.lacking

    async def _start_datanode(self, blocks: store.BlockStore,
                              tokens: BlockTokenSecretManager | None) -> DataNodeServer:
        """The built-in datanode on ``dfs.datanode.address`` and its IPC port
        (``ClientDatanodeProtocol``, on the RPC server code) on ``dfs.datanode.ipc.address``
        (port 0: a free one; clients learn both from the namenode's answers); with
        ``tokens`` it takes the writes the active signed, with block tokens enabled it
        wants one on every op, and in secure mode with ``dfs.data.transfer.protection``
        every connection opens with the SASL handshake (``SaslDataTransferServer``: as
        Hadoop's DataNode, none in simple mode, whose clients never start one)."""
        fs, committer, _ = self._loaded()
        host, port = self.config.address("dfs.datanode.address")
        protection = self.security.data_transfer_protection if self.security.enabled else ()
        server = DataNodeServer(
            blocks, tokens, require_tokens=self.security.block_tokens, protection=protection,
            cipher_suites=self.config.get("dfs.encrypt.data.transfer.cipher.suites").strip(),
            cipher_key_bits=self.config.int("dfs.encrypt.data.transfer.cipher.key.bitlength"))
        await server.start(self.host_given or host, port)
        self.datanode_server = server
        ipc_host, ipc_port = self.config.address("dfs.datanode.ipc.address")
        self.datanode_ipc = RpcServer(ClientDatanodeService(server, version()), fs, committer,
                                      ProxyUsers(self.config.proxy_users()))
        if self.security.enabled:       # SASL there too: a block token, or Kerberos
            self.datanode_ipc.secure(self.security, block_token_password(tokens),
                                     block_token_caller)
        server.ipc_port = await self.datanode_ipc.start(self.host_given or ipc_host, ipc_port)
        return server

    def _open(self, name_dirs: list[NameDir]) -> FSNamesystem:
        faults.hit("namenode.load")      # a long load, for the tests of what answers meanwhile
        fs = FSNamesystem.open(self.dirs, identity(self.config, self.security),
                               locked=name_dirs)
        # The loaded namespace lives as long as this process. Frozen out of the cyclic
        # collector's reach, it is no longer rescanned by every full collection (a quarter of
        # a second at 1 M inodes, one each time a quarter more objects have piled up);
        # only what is created later is. Deleted subtrees are still freed: Tree._detach
        # cuts their cycles.
        gc.collect()
        gc.freeze()
        try:
            fs.configure(self.config)
            root = self.config.get("nnlite.data.dir") or store.default_data_dir(self.dirs[0])
            self.blocks = store.BlockStore.open(root, fs.namespace_id, fs.last_block_id)
            if self.security.enabled:
                fs.enable_delegation_tokens(self.security, rules_of(self.security))
            if not self.config.nameservice():
                # in an HA set, each time it becomes active
                recover_uploads(fs, self._finalize, self.blocks.has)
                fs.durable(fs.start_delegation_tokens())
        except BaseException:
            fs.close()
            raise
        return fs

    def _finalize(self, block_id: int) -> int | None:
        """Lease recovery of a block being written when a write was cut off: the datanode's
        (a replica it holds, or one in ``rbw/``), or the store's before the datanode runs."""
        if self.datanode_server is not None:
            return self.datanode_server.recover(block_id)
        return None if self.blocks is None else rwr.finalize(self.blocks, block_id)

    def _loaded(self) -> tuple[FSNamesystem, AsyncCommitter, store.BlockStore]:
        """The namesystem, its committer and the block store, once ``start`` opened them."""
        if self.fs is None or self.committer is None or self.blocks is None:
            raise NamenodeError("the namenode has not loaded its namespace yet")
        return self.fs, self.committer, self.blocks

    def _join_ha_set(self, loop: asyncio.AbstractEventLoop, secret: str,
                     data: DataPath) -> HAController:
        """Start as a standby of the HA set the configuration names (``namenode/ha/``)."""
        config = self.config
        fs, committer, blocks = self._loaded()
        namenodes = config.ha_namenodes()
        me = self.ha_id
        if me not in namenodes:
            raise ConfigError(f"dfs.ha.namenode.id must be one of {', '.join(namenodes)} "
                              f"(this namenode's place in the HA set), not {me!r}")
        endpoints = config.etcd_endpoints()
        if not endpoints:
            raise ConfigError("an HA set needs nnlite.ha.etcd.endpoints: the etcd cluster "
                              "that holds its journal and its election")
        timeout = config.float("nnlite.ha.journal.timeout")
        # how this namenode authenticates to the others: the secret, or its keytab (secure);
        # and how it calls them: https at their https-addresses under HTTPS_ONLY
        peers = services.credentials(config, self.host, secret, self.security.enabled)
        scheme = config.http_scheme()
        self.app.peers = peers

        def on_active(first_block_id: int) -> None:
            blocks.advance(max(fs.last_block_id, first_block_id - 1))
            recover_uploads(fs, self._finalize, blocks.has)
            fs.start_delegation_tokens()        # a new master key, as startActiveServices

        ha = HAController(
            fs, Etcd(endpoints, timeout=min(2.0, timeout), tls=tls.etcd_context(config)),
            Layout.of(config.get("nnlite.ha.etcd.prefix"), config.nameservice()), me,
            f"{self.host}:{self.port}", ttl=config.int("nnlite.ha.lease.ttl"),
            tail_interval=config.float("nnlite.ha.tail.interval"), journal_timeout=timeout,
            edits_retained=config.int("nnlite.ha.edits.retained"), drain=committer.fail_all,
            on_active=on_active,
            auto_failover=config.bool("dfs.ha.automatic-failover.enabled"),
            checkpointer=StandbyCheckpointer(
                fs, peers, period=config.float("checkpoint.period"),
                txns=config.int("checkpoint.txns"),
                check_period=config.float("checkpoint.check.period"),
                timeout=config.int("dfs.image.transfer.timeout") / 1000, scheme=scheme),
            max_lag=config.float("nnlite.ha.standby.lag.max"), scheme=scheme)
        self.app.ha = ha
        # File contents on two hosts: blocks arrive here as a standby, leave as the active.
        replica = Replica(blocks, self.gate)
        self.http.streams[("PUT", "blocks")] = self.app.counted(replica.upload)
        self.app.mount(REPLICA_PREFIX, replica)
        replicator = Replicator(
            blocks, fs.blocks_in_use,
            lambda: [a for nn, a in namenodes.items() if nn != me], peers,
            lambda: ha.state.state is HAServiceState.ACTIVE,
            close_timeout=config.float("nnlite.ha.replication.timeout"),
            stale=lambda: stale_standbys(ha, namenodes), scheme=scheme)
        data.replicator = replicator
        self.replicator = replicator
        self.app.replicator = replicator
        resync = threading.Thread(
            target=replicator.run, args=(config.float("nnlite.ha.replication.interval"),
                                         ha.stopping), name="nnlite-resync", daemon=True)
        ha.start()
        resync.start()
        log.info("namenode %s joined HA set %s as a standby (etcd %s)", me,
                 config.nameservice(), ", ".join(endpoints))
        return ha

    async def _keep_house(self, data: DataPath) -> None:
        fs, _, blocks = self._loaded()
        interval = self.config.float("nnlite.blocks.sweep.interval")
        ha = self.ha
        open_writes = None if ha is None else OpenWrites(
            fs.files_under_construction, lambda: ha.state.state is not HAServiceState.ACTIVE,
            slack=interval + STANDBY_LAG_SLACK)
        sweeper = Sweeper(fs.referenced_blocks, blocks,
                          self.config.float("nnlite.blocks.sweep.grace"),
                          open_writes=open_writes)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval)
            try:
                data.leases.expire()
                await loop.run_in_executor(None, sweeper.sweep)
            except Exception:
                log.exception("housekeeping of the data path failed (retried next time)")

    async def _roll_delegation_keys(self) -> None:
        """Hadoop's ExpiredTokenRemover on the active: every few seconds (at most 5, as its
        loop) a new master key once the key-update interval has passed, and expired tokens
        removed; a standby's round does nothing."""
        fs, _, _ = self._loaded()
        interval = min(5.0, self.security.delegation_key_update_interval_ms / 1000)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval)
            try:
                await loop.run_in_executor(None, fs.delegation_housekeeping)
            except Exception:
                log.exception("delegation key roll failed (retried next time)")

    def _journal_failed(self, error: Exception) -> None:
        """Fail-stop, as Hadoop's FSEditLog.logSync terminates the NameNode when no journal
        can sync: the ops applied in memory but not synced must never be served, and
        nothing written later could be made durable. ``run`` raises ``error`` after the
        stop, so ``nnlite namenode`` exits with the storage code and says why."""
        log.critical("edits could not be synced to any name directory: stopping (%s)", error)
        self.failure = error
        self.stop_requested.set()

    def _check_resources(self) -> bool:
        return self._loaded()[0].check_resources(
            self.config.int("dfs.namenode.resource.du.reserved"),
            self.config.int("dfs.namenode.resource.checked.volumes.minimum"))

    async def _watch_resources(self) -> None:
        """NameNodeResourceMonitor: the free space of the name dirs, every
        ``dfs.namenode.resource.check.interval`` ms (safe mode below the reserve)."""
        while True:
            await asyncio.sleep(self.config.int("dfs.namenode.resource.check.interval") / 1000)
            try:
                self._check_resources()
            except Exception:
                log.exception("checking the name directories' free space failed")

    async def _settle_objects(self) -> None:
        """Keep full collections short: every ``nnlite.gc.freeze-interval`` seconds collect
        what is young (the objects made since the last pass: a few ms) and freeze what
        survived, as startup froze the loaded namespace. A full collection then never scans
        more than one interval's objects; left alone it rescanned every inode created since
        start, a 126-190 ms stall of every client once a few hundred thousand had piled up
        (bench/bench_checkpoint.py, the window after a checkpoint). Frozen objects are still
        freed by reference counting: deleted subtrees have their cycles cut (Tree._detach)."""
        interval = self.config.float("nnlite.gc.freeze-interval")
        if interval <= 0:
            return
        while True:
            await asyncio.sleep(interval)
            gc.collect()
            gc.freeze()

    def spawn(self, coroutine) -> asyncio.Task:
        """A background task of an extension, cancelled when the namenode stops."""
        task = asyncio.ensure_future(coroutine)
        self.tasks.append(task)
        return task

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.housekeeping is not None:
            self.housekeeping.cancel()
        if self.ha is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.ha.stop)
        if self.rpc is not None:
            await self.rpc.stop(self.config.float("nnlite.shutdown.grace"))
        await self.http.stop(self.config.float("nnlite.shutdown.grace"))
        if self.datanode_ipc is not None:
            await self.datanode_ipc.stop(self.config.float("nnlite.shutdown.grace"))
        if self.datanode_server is not None:
            await self.datanode_server.close()
        if self.blocks is not None:
            self.blocks.close()
        if self.committer is not None:
            self.committer.close()
        if self.fs is not None:
            self.fs.close()
            if self.failure is None:
                log.info("namenode stopped cleanly at txid %d", self.fs.last_written_txid)
            else:
                log.info("namenode stopped: txid %d is the last one synced",
                         self.fs.last_synced_txid)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop_requested.set)
        try:
            await self.start()
            await self.stop_requested.wait()
            if self.failure is None:
                log.info("stop requested: finishing in-flight requests")
        finally:
            await self.stop()
        if self.failure is not None:
            raise self.failure
