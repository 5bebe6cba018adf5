"""FSNamesystem: the namespace, the journal and the name dirs composed into one store.

Every mutation runs ``_mutate``: under the namesystem lock it checks that writes are allowed,
lets the namespace validate and apply the request, and logs the resulting ops (txids are
assigned in apply order because both happen under the same lock); after the lock is released
it waits for the journal to make those txids durable. Only then does it return, so a returned
call is an acknowledged op. Reads take the same lock, briefly.
"""

from __future__ import annotations

import getpass
import logging
import os
import threading
import time
from dataclasses import dataclass, field

from nnlite.formats import edits
from nnlite.namenode.errors import SafeModeError
from nnlite.namenode.image import columns, install, startup
from nnlite.namenode.journal.journal import Journal, restart_edits
from nnlite.namenode.namespace.namespace import Namespace, wall_clock_ms
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import NameDir

log = logging.getLogger(__name__)


CALLERS_KEPT, CALLER_NAME_MAX = 10_000, 256      # Identity's cache: at most ~2.5 MB of names


@dataclass
class Identity:
    """Who is a superuser, and which groups each user is in (Hadoop's static mapping)."""
    superuser: str = field(default_factory=getpass.getuser)
    supergroup: str = "supergroup"
    groups: dict[str, frozenset] = field(default_factory=dict)
    permissions_enabled: bool = True
    _callers: dict = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def parse_mapping(text: str) -> dict[str, frozenset]:
        """``user1=group1,group2;user2=`` as in hadoop.user.group.static.mapping.overrides."""
        mapping = {}
        for entry in filter(None, (e.strip() for e in text.split(";"))):
            user, _, groups = entry.partition("=")
            mapping[user.strip()] = frozenset(g.strip() for g in groups.split(",") if g.strip())
        return mapping

    def caller(self, user: str) -> Caller:
        """The Caller for ``user`` (cached: the mapping is fixed for the process lifetime;
        only names of at most CALLER_NAME_MAX characters, so the cache is bounded in bytes
        whatever names clients send)."""
        cached = self._callers.get(user)
        if cached is None:
            groups = self.groups.get(user, frozenset())
            superuser = (not self.permissions_enabled or user == self.superuser
                         or self.supergroup in groups)
            cached = Caller(user, groups, superuser)
            if len(self._callers) < CALLERS_KEPT and len(user) <= CALLER_NAME_MAX:
                self._callers[user] = cached
        return cached


def format_dirs(dirs: list[NameDir], *, force: bool = False, namespace_id: int | None = None,
                clock=None) -> int:
    """Create empty name dirs: VERSION, an image of the root at txid 0, an edits log at txid 1."""
    namespace_id = namespace_id or namedir.new_namespace_id()
    with namedir.locked(dirs):
        for d in dirs:
            namedir.prepare_for_format(d, force)
        tree = Tree(owner=getpass.getuser(), mtime=(clock or wall_clock_ms)())
        install.install(dirs, lambda path: columns.save(tree, path, namespace_id, 0))
        for d in dirs:
            restart_edits(d, 1)
            d.write_version(namespace_id, int(time.time() * 1000))
    log.info("formatted %s with namespace id %d", ", ".join(str(d.root) for d in dirs),
             namespace_id)
    return namespace_id


class FSNamesystem:
    """The store. Construct with ``open``; ``close`` releases the dirs."""

    def __init__(self, dirs: list[NameDir], loaded: startup.Loaded, journal: Journal,
                 identity: Identity, lock: threading.Lock, clock=None):
        self.dirs = dirs
        self.ns = Namespace(loaded.tree, clock=clock) if clock else Namespace(loaded.tree)
        self.namespace_id = loaded.namespace_id
        self.loaded = loaded
        self.journal = journal
        self.identity = identity
        self.lock = lock
        self.manual_safe_mode = False
        self.resources_low: str | None = None     # why, while below the reserved space
        self.last_checkpoint_txid = loaded.image_txid
        # The image's own creation time: a restart must not reset the checkpoint.period clock.
        self.last_checkpoint_time = loaded.image_time or time.time()
        self.started = time.time()
        self.list_limit = 1000
        self.restore_dirs = True
        self.default_replication = 1
        self.block_size = 128 << 20
        # Called with each request's ops, under the lock, as they are applied: what keeps
        # state of its own keyed by path (the lease table) follows renames and deletes there.
        self.on_applied: list = []

    def configure(self, config) -> None:
        """Apply the namespace settings of a namenode.config.Config."""
        self.list_limit = config.int("dfs.ls.limit")
        self.restore_dirs = config.bool("dfs.namenode.name.dir.restore")
        self.default_replication = config.int("dfs.replication")
        self.block_size = config.int("dfs.blocksize")
        self.ns.tree.max_xattrs = config.int("dfs.namenode.fs-limits.max-xattrs-per-inode")
        self.ns.tree.max_xattr_size = config.int("dfs.namenode.fs-limits.max-xattr-size")
        self.ns.acls_enabled = config.bool("dfs.namenode.acls.enabled")

    def server_defaults(self) -> dict:
        """Hadoop's FsServerDefaults, as GETSERVERDEFAULTS returns them."""
        return {"blockSize": self.block_size, "bytesPerChecksum": 512,
                "writePacketSize": 65536, "replication": self.default_replication,
                "fileBufferSize": 4096, "encryptDataTransfer": False, "trashInterval": 0,
                "checksumType": "CRC32C", "keyProviderUri": "", "defaultStoragePolicyId": 7}

    @classmethod
    def open(cls, dirs: list[str], identity: Identity | None = None, clock=None,
             locked: list[NameDir] | None = None) -> "FSNamesystem":
        """Load the store from ``dirs``; ``locked``: the same dirs, already locked by the caller
        (the daemon locks them before it binds its port), else they are locked here. On a
        failure every lock is released."""
        name_dirs = locked or [NameDir(p) for p in dirs]
        if locked is None:
            namedir.lock_formatted(name_dirs)
        try:
            loaded = startup.load(name_dirs)
            lock = threading.Lock()
            streams = {d: edits.EditsWriter.open_append(str(d.file(loaded.segment)),
                                                    loaded.valid_lengths.get(loaded.segment))
                       for d in name_dirs if d.healthy}
            journal = Journal(streams, loaded.last_txid, lock)
        except BaseException:
            namedir.unlock_all(name_dirs)
            raise
        return cls(name_dirs, loaded, journal, identity or Identity(), lock, clock)

    def close(self) -> None:
        with self.lock:
            if self.journal.writable:
                self.journal.sync_all_locked()
            self.journal.close()
        for d in self.dirs:
            d.unlock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ core paths

    def caller(self, user: str) -> Caller:
        return self.identity.caller(user)

    def _mutate(self, method, *args):
        result, txid = self.apply_and_log(method, *args)
        if txid:
            self.journal.sync(txid)
        return result

    def apply_and_log(self, method, *args) -> tuple[object, int]:
        """Validate, apply and log one request under the lock; returns ``(result, txid)``
        with txid 0 when nothing was logged. The op is acknowledged only once
        ``journal.sync(txid)`` has returned (``_mutate``, or the async committer)."""
        with self.lock:
            self._check_writable()
            result, ops = method(*args)
            if not ops:
                return result, 0
            for observer in self.on_applied:
                observer(ops)
            return result, self.journal.log(ops)

    @property
    def safe_mode(self) -> bool:
        return self.manual_safe_mode or self.resources_low is not None

    def _check_writable(self) -> None:
        if self.resources_low is not None:
            # FSNamesystem's tip for NameNodeResourceChecker's safe mode, with the numbers
            raise SafeModeError(f"Cannot change the namespace. Name node is in safe mode. "
                                f"Resources are low on NN: {self.resources_low}. Free up "
                                f"space; the name node leaves safe mode by itself once there "
                                f"is enough again.")
        if self.manual_safe_mode:
            raise SafeModeError("Cannot change the namespace: the name node is in safe mode. "
                                "It was turned on manually; use `nnlite dfsadmin safemode "
                                "leave` to turn it off.")
        self.journal.check_writable()

    def check_resources(self, reserved: int, minimum: int = 1) -> bool:
        """NameNodeResourceChecker: enter safe mode when fewer than ``minimum`` healthy name
        dirs have ``reserved`` bytes free (name dirs are redundant volumes), leave it when
        enough have again. Returns whether resources are low. One log line per change."""
        free = {}
        for d in self.dirs:
            if d.healthy:
                try:
                    st = os.statvfs(d.root)
                    free[d.root] = st.f_bavail * st.f_frsize
                except OSError:
                    free[d.root] = 0
        enough = [root for root, n in free.items() if n >= reserved]
        if len(enough) >= min(minimum, max(len(free), 1)) and free:
            if self.resources_low is not None:
                log.warning("name directories have space again: leaving safe mode")
                self.resources_low = None
            return False
        low = ", ".join(f"{root} has {n} bytes free" for root, n in free.items()) or \
            "no healthy name directory"
        reason = f"{low}, below dfs.namenode.resource.du.reserved ({reserved})"
        if self.resources_low is None:
            log.warning("NameNode low on available disk space (%s): entering safe mode", reason)
        self.resources_low = reason
        return True

    def read(self, fn, *args, **kw):
        """Run a read of the namespace under the lock (results are built inside it)."""
        with self.lock:
            return fn(*args, **kw)

    # ------------------------------------------------------------------ requests

    def mkdirs(self, path: str, permission: int, user: str) -> bool:
        return self._mutate(self.ns.mkdirs, path, permission, self.caller(user))

    def create(self, path: str, user: str, **kw) -> bool:
        return self._mutate(lambda: self.ns.create(path, self.caller(user), **kw))

    def delete(self, path: str, recursive: bool, user: str) -> bool:
        return self._mutate(self.ns.delete, path, recursive, self.caller(user))

    def rename_legacy(self, src: str, dst: str, user: str) -> bool:
        return self._mutate(self.ns.rename_legacy, src, dst, self.caller(user))

    def rename(self, src: str, dst: str, overwrite: bool, user: str) -> bool:
        return self._mutate(self.ns.rename, src, dst, overwrite, self.caller(user))

    def set_permission(self, path: str, permission: int, user: str) -> bool:
        return self._mutate(self.ns.set_permission, path, permission, self.caller(user))

    def set_owner(self, path: str, owner, group, user: str) -> bool:
        return self._mutate(self.ns.set_owner, path, owner, group, self.caller(user))

    def set_times(self, path: str, mtime: int, atime: int, user: str) -> bool:
        return self._mutate(self.ns.set_times, path, mtime, atime, self.caller(user))

    def set_replication(self, path: str, replication: int, user: str) -> bool:
        return self._mutate(self.ns.set_replication, path, replication, self.caller(user))

    def set_quota(self, path: str, ns_quota, ss_quota, user: str) -> bool:
        return self._mutate(self.ns.set_quota, path, ns_quota, ss_quota, self.caller(user))

    def set_xattr(self, path: str, name: str, value: bytes, flag: int, user: str) -> bool:
        return self._mutate(self.ns.set_xattr, path, name, value, flag, self.caller(user))

    def remove_xattr(self, path: str, name: str, user: str) -> bool:
        return self._mutate(self.ns.remove_xattr, path, name, self.caller(user))

    def concat(self, target: str, srcs: list[str], user: str) -> bool:
        return self._mutate(self.ns.concat, target, srcs, self.caller(user))

    def truncate(self, path: str, new_length: int, user: str) -> bool:
        return self._mutate(self.ns.truncate, path, new_length, self.caller(user))

    # ------------------------------------------------------------------ admin

    def set_safe_mode(self, on: bool) -> None:
        with self.lock:
            if on != self.manual_safe_mode:
                log.info("safe mode is %s", "ON" if on else "OFF")
            self.manual_safe_mode = on

    def save_namespace(self) -> int:
        """Write a fresh image of everything logged and start an empty ``edits``.
        Requires safe mode (as in HDFS), so the namespace cannot change meanwhile."""
        with self.lock:
            if not self.safe_mode:
                raise SafeModeError("Safe mode should be turned ON in order to create "
                                    "namespace image.")
            self.journal.sync_all_locked()
            txid = self.journal.txid
            healthy = [d for d in self.dirs if d.healthy]
            install.install(healthy, lambda p: columns.save(self.ns.tree, p, self.namespace_id,
                                                             txid))
            self.journal.restart_segment()
            self.last_checkpoint_txid = txid
            self.last_checkpoint_time = time.time()
            log.info("saved namespace at txid %d", txid)
            return txid

    def roll_edits(self) -> int:
        with self.lock:
            self.journal.check_writable()
            return self.journal.roll(self.failed_dirs())

    def failed_dirs(self) -> list:
        """The name dirs an edits roll tries to bring back (``dfs.namenode.name.dir.restore``)."""
        return [d for d in self.dirs if not d.healthy] if self.restore_dirs else []

    def report(self) -> dict:
        with self.lock:
            j = self.journal
            return {
                "namespaceId": self.namespace_id,
                "safeMode": self.safe_mode,
                "resourcesLow": self.resources_low,
                "lastWrittenTxid": j.txid,
                "lastSyncedTxid": j.synced_txid,
                "lastCheckpointTxid": self.last_checkpoint_txid,
                "lastCheckpointTime": int(self.last_checkpoint_time * 1000),
                "transactionsSinceLastCheckpoint": j.txid - self.last_checkpoint_txid,
                "segment": j.segment_name,
                "editsSize": {str(d.root): w.size for d, w in j.streams.items()},
                "files": self.ns.tree.files,
                "blocks": self.ns.tree.block_count,
                "directories": self.ns.tree.dirs,
                "nameDirs": [{"path": str(d.root), "healthy": d.healthy,
                              "failure": d.failure} for d in self.dirs],
                "syncs": j.metrics.syncs,
                "syncSeconds": j.metrics.sync_seconds,
                "txnsBatched": j.metrics.batched,
            }
