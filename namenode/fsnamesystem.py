"""FSNamesystem: the one door to the namespace, composing the namespace, the journal and the
name dirs into one store.

Everything above it -- the WebHDFS handlers, the data path, the catalog, the checkpoint
endpoints, the lease recovery and the block sweep -- calls its public, typed operations;
none reaches the namespace, the lock or the journal behind it (``tests/namenode/test_door.py``
checks that). Each operation runs as Hadoop's ``FSNamesystem`` runs one:

1. under the namesystem lock, ``check_operation(category)`` decides once whether an op of
   its kind may run now (``OperationCategory``: READ, WRITE, CHECKPOINT, UNCHECKED; today
   safe mode, low resources and a failed journal refuse writes, and a standby state will
   extend this one method);
2. the namespace validates and applies it (``Namespace``, on its ``Tree``; FSDirectory's
   part);
3. the journal logs its ops (FSEditLog's ``logEdit``): txids follow apply order, as both
   happen under the same lock.

A write returns ``Logged(value, txid)`` as soon as it is logged; it is acknowledged only once
its txid is durable, which its caller waits for after the lock is released (``logSync``):
``durable(logged)`` in a thread, or on the event loop ``async_committer``'s group commit.
Reads take the same lock, briefly, and build what they answer inside it (``render``), as
Hadoop builds an ``HdfsFileStatus`` under its read lock.

The image side is its ``image`` (``image/fsimage.py``, Hadoop's ``FSImage``): the last
checkpoint, save and roll, the status the checkpoint endpoints serve and the install of an
uploaded image. The namesystem keeps the doors that decide whether they may run:
``save_namespace``, ``roll_edits`` (``rollEditLog``) and ``checkpoint_standby``.
"""

from __future__ import annotations

import asyncio
import enum
import getpass
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, TypeVarTuple, overload

from nnlite.formats import edits
from nnlite.formats.fsimage.write import ImageInfo
from nnlite.namenode.blocks.sweep import ReferencedBlocks, referenced
from nnlite.namenode.config import Config
from nnlite.namenode.errors import (
    IllegalArgumentError,
    InvalidTokenError,
    NameDirError,
    NamenodeError,
    ReplayError,
    SafeModeError,
    SharedJournalError,
    UnsupportedActionError,
)
from nnlite.namenode.image import columns, install, startup
from nnlite.namenode.image.checkpoint import FileInfo
from nnlite.namenode.image.fsimage import FSImage
from nnlite.namenode.journal.committer import AsyncCommitter
from nnlite.namenode.journal.journal import Journal, Logged, SharedLog, restart_edits
from nnlite.namenode.namespace import (
    acl_ops,
    attributes,
    delete,
    erasure_coding,
    paths,
    permission,
    rename,
    snapshot_ops,
    storage_policy,
    xattrs,
)
from nnlite.namenode.namespace.catalog_view import CatalogView
from nnlite.namenode.namespace.inode import INode, INodeFile, walk
from nnlite.namenode.namespace.namespace import Applied, Namespace, wall_clock_ms
from nnlite.namenode.namespace.permission import Caller
from nnlite.namenode.namespace.snapshot import Listing as DiffListing
from nnlite.namenode.namespace.snapshot import Report, Root, Snapshot
from nnlite.namenode.namespace.storage_policy import Policy
from nnlite.namenode.namespace.tree import Tree
from nnlite.namenode.security import tokens
from nnlite.namenode.security.auth_to_local import AuthToLocal
from nnlite.namenode.security.identity import Caller as Authenticated
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.tokens import Token
from nnlite.namenode.storage import namedir
from nnlite.namenode.storage.namedir import EDITS, EDITS_NEW, NameDir, copy_file

log = logging.getLogger(__name__)

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
# What a read builds from an inode under the lock: (inode, path suffix, snapshot enabled) ->
# the caller's answer (WebHDFS: Hadoop's FileStatus JSON, ``webhdfs_json.file_status_json``).
Render = Callable[[INode, str, bool], T]


QUOTA_DONT_SET = (1 << 63) - 1          # HdfsConstants.QUOTA_DONT_SET (Long.MAX_VALUE)
QUOTA_BY_STORAGE_TYPE_OFF = (
    "Failed to set quota by storage type because either dfs.quota.by.storage.type.enabled is "
    "set to false or the layout version does not support quota by storage type.")
CALLERS_KEPT, CALLER_NAME_MAX = 10_000, 256      # Identity's cache: at most ~2.5 MB of names


@dataclass
class Identity:
    """Who is a superuser, and which groups each user is in (Hadoop's static mapping)."""
    superuser: str = field(default_factory=getpass.getuser)
    supergroup: str = "supergroup"
    groups: dict[str, frozenset[str]] = field(default_factory=dict)
    permissions_enabled: bool = True
    _callers: dict[str, Caller] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def parse_mapping(text: str) -> dict[str, frozenset[str]]:
        """``user1=group1,group2;user2=`` as in hadoop.user.group.static.mapping.overrides."""
        mapping: dict[str, frozenset[str]] = {}
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
                clock: Callable[[], int] | None = None) -> int:
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


class OperationCategory(enum.Enum):
    """The kinds of op ``check_operation`` decides on, as Hadoop's
    ``NameNode.OperationCategory``."""
    UNCHECKED = "unchecked"     # runs in every state (admin, metrics, startup recovery)
    READ = "read"               # reads the namespace
    WRITE = "write"             # changes the namespace: logged and synced
    CHECKPOINT = "checkpoint"   # rolls the edits for a checkpoint
    # a write the namenode makes itself while it becomes active (lease recovery of cut-off
    # uploads), before clients may write: Hadoop runs it in startActiveServices
    RECOVERY = "recovery"


class HAGate(Protocol):
    """What an HA set adds to ``check_operation`` (``namenode/ha/state.py``): a standby
    refuses the op with StandbyError, a namenode that cannot serve it yet with RetriableError."""

    def check_operation(self, category: OperationCategory) -> None: ...


@dataclass(frozen=True, slots=True)
class FileBlocks:
    """A file's contents as the namespace records them, read under the lock (Hadoop's
    ``LocatedBlocks`` without the locations: every block is on this server)."""
    inode_id: int
    length: int
    blocks: tuple[edits.Block, ...]
    checksum: bytes | None
    block_size: int
    under_construction: bool

    @classmethod
    def of(cls, node: INodeFile) -> FileBlocks:
        return cls(node.id, node.length, node.blocks, node.checksum, node.block_size,
                   node.client_name is not None)


@dataclass(frozen=True, slots=True)
class Listing:
    """A LISTSTATUS begun (``list_status``): ``entries``, rendered, when the directory holds
    at most the page limit; else the names it held then, which ``listing_page`` renders a
    slice of at a time (names created since are not in it)."""
    path: str
    user: str
    node: INode
    names: list[str]
    entries: list[Any] | None       # what the caller's render made of each entry


READ, WRITE, CHECKPOINT = (OperationCategory.READ, OperationCategory.WRITE,
                           OperationCategory.CHECKPOINT)
_new_tuple = tuple.__new__


class FSNamesystem:
    """The store and the door to it. Construct with ``open``; ``close`` releases the dirs."""

    def __init__(self, dirs: list[NameDir], loaded: startup.Loaded, journal: Journal,
                 identity: Identity, lock: threading.Lock,
                 clock: Callable[[], int] | None = None) -> None:
        self.dirs = dirs
        self.ns = Namespace(loaded.tree, clock=clock) if clock else Namespace(loaded.tree)
        self._blocks_in_use = ReferencedBlocks()
        self.namespace_id = loaded.namespace_id
        self.loaded = loaded
        self.journal = journal
        self.identity = identity
        self.lock = lock
        self.manual_safe_mode = False
        self.resources_low: str | None = None     # why, while below the reserved space
        # The image side (Hadoop's FSImage): the last checkpoint, save, roll, and what the
        # checkpoint endpoints serve and accept.
        self.image = FSImage(dirs, journal, loaded, lock,
                             check=lambda: self.check_operation(OperationCategory.UNCHECKED))
        self.started = time.time()
        self.list_limit = 1000
        self.restore_dirs = True
        self.default_replication = 1
        self.block_size = 128 << 20
        self.trash_interval = 0             # minutes; advertised to clients, which keep trash
        # Called with each request's ops, under the lock, as they are applied: what keeps
        # state of its own keyed by path (the lease table) follows renames and deletes there.
        self.on_applied: list[Callable[[list[edits.Op]], None]] = []
        # Called after ``reload`` (lock released): what followed the dropped ops forgets them.
        self.on_reloaded: list[Callable[[], object]] = []
        self.clock = clock
        self.config: Config | None = None
        # In an HA set: the state's own check, asked first by check_operation.
        self.ha: HAGate | None = None
        # Secure mode: the delegation token secret manager (enable_delegation_tokens).
        self.tokens: tokens.DelegationTokenSecretManager | None = None
        self._token_ops: list[edits.Op] = []

    def configure(self, config: Config) -> None:
        """Apply the namespace settings of a namenode.config.Config."""
        self.config = config
        self.list_limit = config.int("dfs.ls.limit")
        self.restore_dirs = config.bool("dfs.namenode.name.dir.restore")
        self.default_replication = config.int("dfs.replication")
        self.block_size = config.int("dfs.blocksize")
        self.trash_interval = config.int("fs.trash.interval")
        self.image.checkpoints.retained = config.int("checkpoints.retained")
        self._configure_namespace()

    def _configure_namespace(self) -> None:
        config = self.config
        if config is None:
            return
        self.ns.tree.max_xattrs = config.int("dfs.namenode.fs-limits.max-xattrs-per-inode")
        self.ns.tree.max_xattr_size = config.int("dfs.namenode.fs-limits.max-xattr-size")
        self.ns.acls_enabled = config.bool("dfs.namenode.acls.enabled")
        self.ns.supergroup = self.identity.supergroup

    def server_defaults(self) -> dict:
        """Hadoop's FsServerDefaults, as GETSERVERDEFAULTS returns them."""
        return {"blockSize": self.block_size, "bytesPerChecksum": 512,
                "writePacketSize": 65536, "replication": self.default_replication,
                "fileBufferSize": 4096, "encryptDataTransfer": False,
                "trashInterval": self.trash_interval,
                "checksumType": "CRC32C", "keyProviderUri": "", "defaultStoragePolicyId": 7}

    @classmethod
    def open(cls, dirs: list[str], identity: Identity | None = None,
             clock: Callable[[], int] | None = None,
             locked: list[NameDir] | None = None) -> FSNamesystem:
        """Load the store from ``dirs``; ``locked``: the same dirs, already locked by the caller
        (the daemon locks them before it binds its port), else they are locked here. On a
        failure every lock is released."""
        name_dirs = locked or [NameDir(p) for p in dirs]
        if locked is None:
            namedir.lock_formatted(name_dirs)
        try:
            loaded = startup.load(name_dirs)
            lock = threading.Lock()
            valid_length = loaded.valid_lengths.get(loaded.segment)
            if valid_length is None:        # startup replayed no such file: none to append to
                raise NameDirError(f"No {loaded.segment} to append to in " +
                                   ", ".join(str(d.current) for d in name_dirs if d.healthy))
            streams = {d: edits.EditsWriter.open_append(str(d.file(loaded.segment)),
                                                        valid_length)
                       for d in name_dirs if d.healthy}
            journal = Journal(streams, loaded.last_txid, lock)
        except BaseException:
            namedir.unlock_all(name_dirs)
            raise
        return cls(name_dirs, loaded, journal, identity or Identity(), lock, clock)

    def close(self) -> None:
        with self.lock:
            if self.journal.writable and self.journal.shared_failure is None:
                self.journal.sync_all_locked()
            self.journal.close()
        for d in self.dirs:
            d.unlock()

    def __enter__(self) -> FSNamesystem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the door

    def caller(self, user: str) -> Caller:
        return self.identity.caller(user)

    def check_operation(self, category: OperationCategory) -> None:
        """May an op of ``category`` run now? (Hadoop's ``FSNamesystem.checkOperation``,
        with ``checkNameNodeSafeMode`` for writes.) Called once per op, under the lock. Writes
        are refused in safe mode (entered by hand, or while the name dirs are low on space)
        and, like a checkpoint's roll, once no name dir can take edits; reads always run. An
        HA state (active, standby) extends this method: ``ha`` is asked first."""
        if self.ha is not None:
            self.ha.check_operation(category)
        if category is WRITE or category is OperationCategory.RECOVERY:
            if self.resources_low is not None or self.manual_safe_mode:
                self._refuse_in_safe_mode()
            self.journal.check_writable()
            if self.journal.shared_failure is not None:
                raise self.journal.shared_failure
        elif category is CHECKPOINT:
            self.journal.check_writable()

    def _refuse_in_safe_mode(self) -> None:
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

    def read(self, reader: Callable[[CatalogView], T]) -> T:
        """Run ``reader`` on the catalog's view of the namespace under the lock (READ): what
        several reads must see at one instant, such as the catalog's scan of a checkpoint. It
        builds its answer inside (inodes change once the lock is released) and changes
        nothing."""
        with self.lock:
            self.check_operation(OperationCategory.READ)
            return reader(CatalogView(self.ns))

    def write(self, request: Callable[[CatalogView], Applied[T]]) -> Logged[T]:
        """Run one request on the catalog's view of the namespace under the lock (WRITE):
        ``request`` validates and applies, returning ``(value, ops)``; its ops are logged. For
        requests made of several namespace requests planned together (the catalog's retain,
        rollback, pin, gc and job lifecycle); a request that raises must have applied
        nothing."""
        return self._write(request, CatalogView(self.ns))

    def _write(self, request: Callable[[*Ts], Applied[T]], *args: *Ts,
               category: OperationCategory = WRITE) -> Logged[T]:
        with self.lock:
            self.check_operation(category)
            value, ops = request(*args)
            if not ops:
                return Logged(value, 0)
            for observer in self.on_applied:
                observer(ops)
            # Logged(value, txid) without the Python frame of its __new__: the write path's
            # every op makes one
            return _new_tuple(Logged, (value, self.journal.log(ops)))

    def durable(self, logged: Logged[T]) -> T:
        """``logged``'s value once its txid is durable in every healthy name dir (FSEditLog's
        ``logSync``; the lock is not held): the op is acknowledged. Blocks the calling thread;
        on the event loop wait with ``async_committer`` instead."""
        if logged.txid:
            self.journal.sync(logged.txid)
        return logged.value

    def async_committer(self, loop: asyncio.AbstractEventLoop | None = None) -> AsyncCommitter:
        """Group commit on an event loop (the HTTP service's): ops logged there are synced in
        one thread, many per fsync, and their answers released once durable."""
        committer = AsyncCommitter(self.journal, loop)
        self.on_reloaded.append(committer.reloaded)
        return committer

    @property
    def last_written_txid(self) -> int:
        """The last txid logged (not necessarily durable yet)."""
        return self.journal.txid

    @property
    def last_synced_txid(self) -> int:
        """The last txid durable in every healthy name dir."""
        return self.journal.synced_txid

    @property
    def generation(self) -> int:
        """How many times ops logged but not durable were dropped (``reload``): an answer
        produced at another generation saw ops that no longer exist."""
        return self.journal.generation

    @property
    def shared_journal_failure(self) -> SharedJournalError | None:
        """Why the shared journal refused the last batch (HA), until ``reload``."""
        return self.journal.shared_failure

    @property
    def journal_writable(self) -> bool:
        """Whether a name dir can still take edits (else every write fails, and the namenode
        stops serving)."""
        return self.journal.writable

    # ------------------------------------------------------------------ high availability

    def join_ha_set(self, gate: HAGate) -> None:
        """Become a namenode of an HA set: ``gate`` (the HA state) is asked first by every
        op's check, and every record this namenode logs needs the shared journal
        (``Journal.requires_shared``)."""
        with self.lock:
            self.ha = gate
            self.journal.requires_shared = True

    def share_journal(self, shared: SharedLog | None,
                      on_failure: Callable[[], None] | None = None) -> None:
        """Write every later batch to ``shared`` before the local dirs (the active of an HA
        set), or stop (None: a standby, or no HA); ``on_failure`` is called, from the syncing
        thread, when ``shared`` refuses a batch."""
        with self.lock:
            self.journal.shared = shared
            self.journal.on_shared_failure = on_failure if shared is not None else None

    def apply_replicated(self, data: bytes, first_txid: int, last_txid: int,
                         upto: int | None = None) -> int:
        """A standby's step: apply the active's framed records ``data`` (txids
        ``first_txid..last_txid``) with the replay appliers, the very code startup replays
        with, and log them as they are; returns the last txid now durable locally. Records
        this namesystem already holds are skipped; a gap before the first new one raises
        ReplayError (the caller must load a newer image first)."""
        source = f"shared journal txids {first_txid}-{last_txid}"
        records = edits.payloads_in(data, first_txid, source=source)
        if upto is not None and upto < last_txid:      # stop at ``upto`` (a checkpoint's end)
            cut = next(off for off, items in records if items[1] > upto)
            records = [(off, items) for off, items in records if items[1] <= upto]
            data, last_txid = data[:cut], upto
        with self.lock:
            have = self.journal.txid
            if last_txid <= have:
                return have
            if first_txid > have + 1:
                raise ReplayError(f"{source}: txids {have + 1}-{first_txid - 1} are missing "
                                  f"here (this namenode holds up to {have})")
            keep = [(off, items) for off, items in records if items[1] > have]
            appliers = self.ns.tree.appliers
            for _, items in keep:
                try:
                    appliers[items[0]](items)
                except Exception as exc:
                    raise ReplayError(f"cannot apply txid {items[1]} of {source}: {exc}") \
                        from exc
            self.journal.append_records(data[keep[0][0]:], last_txid)
        self.journal.sync(last_txid)
        return last_txid

    def reload(self) -> int:
        """Drop every op logged but not durable and load the tree again from the local dirs
        (an active whose batch the shared journal refused: its tree held ops that nothing
        made durable). Returns the number of ops dropped."""
        with self.lock:
            dropped = self.journal.discard_unsynced()
            loaded = self._load_locked()
            if loaded.last_txid != self.journal.synced_txid:
                raise ReplayError(f"the name dirs hold txid {loaded.last_txid} but "
                                  f"{self.journal.synced_txid} was synced")
            log.warning("reloaded the namespace from the name dirs at txid %d (%d ops that "
                        "were not durable dropped)", loaded.last_txid, dropped)
        for forget in self.on_reloaded:
            forget()
        return dropped

    def _load_locked(self) -> startup.Loaded:
        """Load the tree from the healthy dirs (startup's rule) and serve it (lock held)."""
        loaded = startup.load([d for d in self.dirs if d.healthy])
        self.loaded = loaded
        self.ns = Namespace(loaded.tree, clock=self.clock) if self.clock \
            else Namespace(loaded.tree)
        self._configure_namespace()
        return loaded

    def _reopen_journal_locked(self) -> startup.Loaded:
        """After the edits files were changed under the journal (truncated, replaced): load
        the tree again and reopen the journal's files where startup says appending resumes."""
        for writer in self.journal.streams.values():
            writer.close()
        loaded = self._load_locked()
        streams = {d: edits.EditsWriter.open_append(str(d.file(loaded.segment)),
                                                    loaded.valid_lengths[loaded.segment])
                   for d in self.dirs if d.healthy}
        self.journal.reopen(streams, loaded.last_txid)
        self.image.last_checkpoint_txid = loaded.image_txid
        return loaded

    def local_records(self, after_txid: int) -> list[tuple[int, bytes]]:
        """The framed records of this namenode's edits with txid > ``after_txid``, in order,
        as its first healthy dir holds them (read under the lock: nothing is appended
        meanwhile). What an HA namenode compares with the shared journal."""
        with self.lock:
            self.journal.sync_all_locked()
            source = next(d for d in self.dirs if d.healthy)
            found: list[tuple[int, bytes]] = []
            for name in (EDITS, EDITS_NEW):
                path = source.file(name)
                if path.exists():
                    found.extend(r for r in edits.framed_records(str(path))
                                 if r[0] > after_txid)
            return found

    def truncate_edits(self, last_txid: int) -> int:
        """Cut this namenode's edits after ``last_txid`` and load the tree again (an HA
        namenode whose edits run past or beside the shared journal, as a JournalNode's
        segment recovery cuts a replica to the recovered length). Refused below the image,
        which would keep the ops being cut. Returns how many records were cut."""
        with self.lock:
            self.journal.discard_unsynced()
            if last_txid < self.loaded.image_txid:
                raise ReplayError(f"cannot cut the edits at txid {last_txid}: the image "
                                  f"already holds txids up to {self.loaded.image_txid}")
            cut = self.journal.synced_txid - last_txid
            for d in [d for d in self.dirs if d.healthy]:
                startup.truncate_segments(d, last_txid)
            loaded = self._reopen_journal_locked()
            log.warning("cut the edits after txid %d (%d records that the shared journal "
                        "does not hold) and reloaded the namespace at txid %d", last_txid,
                        cut, loaded.last_txid)
        for forget in self.on_reloaded:
            forget()
        return cut

    def reset_to_image(self, path: str, md5: str, txid: int) -> None:
        """Replace this namenode's image and edits with another namenode's image at ``txid``
        (verified by the caller) and an empty edits after it, then serve that namespace: an
        HA standby that cannot follow the shared journal from its own state starts again
        from the active's, as ``-bootstrapStandby`` does, without a restart."""
        with self.lock:
            self.journal.discard_unsynced()
            healthy = [d for d in self.dirs if d.healthy]

            def write(target: str) -> ImageInfo:
                copy_file(Path(path), Path(target))
                return ImageInfo(md5, Path(target).stat().st_size)

            install.install(healthy, write)
            for d in healthy:
                restart_edits(d, txid + 1, empty=True)
            loaded = self._reopen_journal_locked()
            self.image.last_checkpoint_time = time.time()
            log.warning("replaced the namespace with an image at txid %d; edits start after "
                        "it", loaded.image_txid)
        for forget in self.on_reloaded:
            forget()

    # ------------------------------------------------------------------ safe mode

    @property
    def safe_mode(self) -> bool:
        return self.manual_safe_mode or self.resources_low is not None

    def set_safe_mode(self, on: bool) -> None:
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            if on != self.manual_safe_mode:
                log.info("safe mode is %s", "ON" if on else "OFF")
            self.manual_safe_mode = on

    def check_resources(self, reserved: int, minimum: int = 1) -> bool:
        """NameNodeResourceChecker: enter safe mode when fewer than ``minimum`` healthy name
        dirs have ``reserved`` bytes free (name dirs are redundant volumes), leave it when
        enough have again. Returns whether resources are low. One log line per change."""
        free: dict[Path, int] = {}
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

    # ------------------------------------------------------------------ reads

    def _snapshottable(self, node: INode) -> bool:
        roots = self.ns.tree.snapshots.roots
        return bool(roots) and node.is_dir and roots.get(node.id, (None,))[0] is node

    def get_file_info(self, path: str, user: str, render: Render[T]) -> T:
        """GETFILESTATUS (``getFileInfo``): ``render`` of the inode at ``path``."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            node = self.ns.status(path, caller, reserved_dir=True)
            return render(node, "", self._snapshottable(node))

    def resolve_path(self, path: str, user: str, write: bool = True) -> str:
        """``path`` with a ``/.reserved`` prefix resolved (``Namespace.resolve``), for the
        requests that key something else by path before the namespace sees it (leases)."""
        caller = self.caller(user)
        with self.lock:
            return self.ns.resolve(path, caller, write)

    def check_exists(self, path: str, user: str) -> None:
        """The traverse of ``path`` and that it exists, as ``getFileInfo`` checks them."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            self.ns.status(path, caller)

    def list_status(self, path: str, user: str, render: Render[Any], limit: int) -> Listing:
        """LISTSTATUS (``getListing``): the directory's entries rendered at once when it holds
        at most ``limit``, else the names to read a page at a time (``listing_page``)."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            node, names = self.ns.listing_names(path, caller)
            if len(names) > limit:
                return Listing(path, user, node, names, None)
            nodes: list[INode] = (self.ns.listing_page(path, caller, node, names)
                                  if node.is_dir else [node])
            return Listing(path, user, node, names, self._listed(nodes, path, caller, render))

    def listing_page(self, listing: Listing, names: list[str],
                     render: Render[T]) -> tuple[list[T], int]:
        """The entries among ``names`` that the listed directory still holds, rendered, and
        the last txid logged when they were read (the page may show no op that is not
        durable: wait for it). A listing whose directory changed or may no longer be listed
        raises what a new listing would."""
        caller = self.caller(listing.user)
        with self.lock:
            self.check_operation(READ)
            nodes = self.ns.listing_page(listing.path, caller, listing.node, names)
            return ([render(n, n.name, self._snapshottable(n)) for n in nodes],
                    self.journal.txid)

    def get_listing(self, path: str, user: str, render: Render[T], start_after: str = "",
                    limit: int | None = None) -> tuple[list[T], int]:
        """LISTSTATUS_BATCH: up to ``limit`` entries after ``start_after``, rendered, and how
        many remain after them."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            nodes, remaining = self.ns.listing(path, caller, start_after, limit)
            return self._listed(nodes, path, caller, render), remaining

    def _listed(self, nodes: list[INode], path: str, caller: Caller,
                render: Render[T]) -> list[T]:
        """A file lists as itself with an empty path suffix (Hadoop's getListing); a directory
        lists its children by name, a file named as the directory included."""
        if len(nodes) == 1 and not nodes[0].is_dir and self.ns.status(path, caller) is nodes[0]:
            return [render(nodes[0], "", False)]
        return [render(n, n.name, self._snapshottable(n)) for n in nodes]

    def get_content_summary(self, path: str, user: str) -> dict:
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return self.ns.content_summary(path, caller)

    def get_quota_usage(self, path: str, user: str) -> dict:
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return self.ns.quota_usage(path, caller)

    def check_access(self, path: str, user: str, wanted: int) -> None:
        """CHECKACCESS: the traverse, then ``wanted`` on the inode itself."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            self.ns.check_access(path, caller, wanted)

    def check_target(self, path: str, user: str, access: int = 0) -> None:
        """The checks of a change of the inode at ``path`` that this namenode refuses later on
        (erasure coding, quotas by storage type): it is not in a snapshot, and the caller has
        ``access`` on it."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            node = self.ns.target(path, caller)
            if access:
                permission.check(caller, node, access, path)

    def get_trash_roots(self, user: str, all_users: bool,
                        render: Callable[[str, INode], T]) -> list[T]:
        """GETTRASHROOTS: ``render(trash path, inode)`` of each trash root the caller finds
        (``all_users``: of every user whose home it can list)."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            found = self.ns.trash_roots(caller, None if all_users else user)
            return [render(where, node) for where, node in found]

    def get_storage_policy(self, path: str, user: str) -> Policy:
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return attributes.storage_policy(self.ns, path, caller)

    def get_xattrs(self, path: str, user: str, names: list[str] | None = None, *,
                   names_only: bool = False) -> dict[str, bytes]:
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return xattrs.get_xattrs(self.ns, path, caller, names, names_only=names_only)

    def get_acl_status(self, path: str, user: str, render: Callable[[INode], T]) -> T:
        """GETACLSTATUS: ``render`` of the inode whose owner, group, mode and ACL it shows."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return render(acl_ops.acl_status(self.ns, path, caller))

    @overload
    def get_snapshot_diff(self, path: str, older: str, newer: str, user: str, *,
                          listing: Literal[False] = False) -> Report: ...

    @overload
    def get_snapshot_diff(self, path: str, older: str, newer: str, user: str, *,
                          listing: Literal[True]) -> DiffListing: ...

    def get_snapshot_diff(self, path: str, older: str, newer: str, user: str, *,
                          listing: bool = False) -> Report | DiffListing:
        """GETSNAPSHOTDIFF (``listing``: GETSNAPSHOTDIFFLISTING) of ``path``."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return snapshot_ops.snapshot_diff(self.ns, path, older, newer, caller, listing=listing)

    def get_snapshottable_dirs(self, user: str,
                               render: Callable[[str, INode, Root], T]) -> list[T]:
        """GETSNAPSHOTTABLEDIRECTORYLIST: ``render(path, directory, its snapshots)`` of each
        snapshottable directory the caller may see, by path."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return [render(*found) for found in snapshot_ops.snapshottable_dirs(self.ns, caller)]

    def get_snapshot_list(self, path: str, user: str,
                          render: Callable[[Snapshot, INode], T]) -> list[T]:
        """GETSNAPSHOTLIST: ``render(snapshot, its root as it was)`` of each snapshot of the
        directory at ``path``, in id order."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            _, snaps = snapshot_ops.snapshot_list(self.ns, path, caller)
            where = paths.normalize(path).rstrip("/")
            return [render(snap, self.ns.status(f"{where}/.snapshot/{snap.name}", caller))
                    for snap in snaps]

    # ------------------------------------------------------------------ writes

    def mkdirs(self, path: str, permission: int, user: str,
               unmasked: int | None = None) -> Logged[bool]:
        return self._write(self.ns.mkdirs, path, permission, self.caller(user), unmasked)

    def create(self, path: str, user: str, **kw: Any) -> Logged[bool]:
        """A complete, empty file (``Namespace.create``'s keywords)."""
        if not kw:
            return self._write(self.ns.create, path, self.caller(user))
        return self._write(lambda: self.ns.create(path, self.caller(user), **kw))

    def delete(self, path: str, recursive: bool, user: str) -> Logged[bool]:
        return self._write(delete.delete, self.ns, path, recursive, self.caller(user))

    def rename_legacy(self, src: str, dst: str, user: str) -> Logged[bool]:
        return self._write(rename.rename_legacy, self.ns, src, dst, self.caller(user))

    def rename(self, src: str, dst: str, overwrite: bool, user: str) -> Logged[bool]:
        return self._write(rename.rename, self.ns, src, dst, overwrite, self.caller(user))

    def set_permission(self, path: str, permission: int, user: str) -> Logged[bool]:
        return self._write(attributes.set_permission, self.ns, path, permission, self.caller(user))

    def set_owner(self, path: str, owner: str | None, group: str | None,
                  user: str) -> Logged[bool]:
        """SETOWNER and ``setOwner``: an owner, a group, or both; a change naming neither is
        refused, whichever transport sent it."""
        if not owner and not group:
            raise IllegalArgumentError("Both owner and group are empty.")
        return self._write(attributes.set_owner, self.ns, path, owner, group, self.caller(user))

    def set_times(self, path: str, mtime: int, atime: int, user: str) -> Logged[bool]:
        return self._write(attributes.set_times, self.ns, path, mtime, atime, self.caller(user))

    def set_replication(self, path: str, replication: int, user: str) -> Logged[bool]:
        return self._write(attributes.set_replication, self.ns, path, replication,
                           self.caller(user))

    def set_quota(self, path: str, ns_quota: int | None, ss_quota: int | None,
                  user: str, storage_type: object = None) -> Logged[bool]:
        """SETQUOTA and ``setQuota``: a quota that is None or ``QUOTA_DONT_SET`` stays as it
        is. Every block is on one DISK volume, so a quota by storage type is refused, as with
        dfs.quota.by.storage.type.enabled=false (``FSDirAttrOp.setQuota``), after the
        superuser check and the target's."""
        if storage_type is not None:
            permission.check_superuser(self.caller(user), f"set the quota of {path}")
            self.check_target(path, user)
            raise UnsupportedActionError(QUOTA_BY_STORAGE_TYPE_OFF, path=path)
        return self._write(attributes.set_quota, self.ns, path, _quota(ns_quota),
                           _quota(ss_quota), self.caller(user))

    def set_xattr(self, path: str, name: str, value: bytes, flag: int,
                  user: str) -> Logged[bool]:
        return self._write(xattrs.set_xattr, self.ns, path, name, value, flag, self.caller(user))

    def remove_xattr(self, path: str, name: str, user: str) -> Logged[bool]:
        return self._write(xattrs.remove_xattr, self.ns, path, name, self.caller(user))

    def change_acl(self, path: str, change: str, spec: list, user: str) -> Logged[bool]:
        """SETACL, MODIFYACLENTRIES, REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL
        (``Namespace.change_acl``)."""
        return self._write(acl_ops.change_acl, self.ns, path, change, spec, self.caller(user))

    def satisfy_storage_policy(self, path: str, user: str) -> None:
        """The storage policy satisfier is off, as by default (dfs.storage.policy.satisfier
        .mode=none): ``FSNamesystem.satisfyStoragePolicy`` refuses, once the path exists."""
        self.check_exists(path, user)
        raise UnsupportedActionError(storage_policy.SATISFIER_OFF, path=path)

    # ------------------------------- erasure coding: every policy disabled (FSDirErasureCodingOp)

    def set_ec_policy(self, path: str, name: str, user: str) -> None:
        """WRITE on the path, then the policy must be enabled; none is (a call without a name
        asks for the default policy, which is none)."""
        self.check_target(path, user, permission.WRITE)
        raise erasure_coding.not_enabled(name, path)

    def unset_ec_policy(self, path: str, user: str) -> None:
        self.check_target(path, user, permission.WRITE)
        raise erasure_coding.none_set(paths.normalize(path))

    def enable_ec_policy(self, name: str, user: str) -> None:
        permission.check_superuser(self.caller(user), "enable an erasure coding policy")
        raise erasure_coding.enabling_refused(erasure_coding.known(name).name)

    def disable_ec_policy(self, name: str, user: str) -> None:
        """Every policy is disabled already: nothing changes, as HDFS answers then."""
        permission.check_superuser(self.caller(user), "disable an erasure coding policy")
        erasure_coding.known(name)

    # ------------------------------------------------------------------ delegation tokens

    def enable_delegation_tokens(self, settings: SecuritySettings, rules: AuthToLocal) -> None:
        """Secure mode: a secret manager (``security/tokens.py``) over the namespace's token
        store, whose changes are logged and applied as ops like any other (HDFS's
        ``DelegationTokenSecretManager`` logging through FSEditLog). It issues nothing until
        ``start_delegation_tokens`` (the active)."""
        self.tokens = tokens.DelegationTokenSecretManager(
            settings.delegation_key_update_interval_ms,
            settings.delegation_token_renew_interval_ms,
            settings.delegation_token_max_lifetime_ms,
            store=lambda: self.ns.tree.secrets, short_name=rules.short_name,
            journal=self._token_record, clock=self.clock or wall_clock_ms)

    def start_delegation_tokens(self) -> Logged[None]:
        """The active begins issuing (``startActiveServices``): a new current master key,
        logged. Nothing under simple authentication."""
        manager = self.tokens
        if manager is None:
            return Logged(None, 0)
        return self._token_write(manager.start, category=OperationCategory.RECOVERY)

    def stop_delegation_tokens(self) -> None:
        """Leaving the active state: no more tokens are issued here; all stay valid."""
        if self.tokens is not None:
            self.tokens.stop()

    def delegation_housekeeping(self) -> Logged[int] | None:
        """The active's ``ExpiredTokenRemover`` round: a new master key once the key-update
        interval has passed, and expired tokens removed (logged as cancels). None when this
        namenode issues no tokens or may not write now."""
        manager = self.tokens
        if manager is None or not manager.running:
            return None

        def round_() -> int:
            manager.roll_if_due()
            return manager.remove_expired()
        try:
            return self._token_write(round_)
        except NamenodeError as exc:            # safe mode, a standby, a failed journal
            log.debug("delegation token housekeeping skipped: %s", exc)
            return None

    def get_delegation_token(self, user: str, renewer: str = "",
                             caller: Authenticated | None = None) -> Logged[Token] | None:
        """``FSNamesystem.getDelegationToken``: a token for the Kerberos-authenticated
        ``caller`` (owner: its full name; real user: a proxy's), renewable by ``renewer``,
        logged (answer it once durable). None under simple authentication and while no
        secret manager runs here (Hadoop returns null then)."""
        manager = self.tokens
        if manager is None or caller is None:
            return None
        if not caller.may_handle_tokens:
            raise NamenodeError("Delegation Token can be issued only with kerberos or web "
                                "authentication")
        with self.lock:
            self.check_operation(WRITE)         # a standby says so: the client fails over
            if not manager.running:
                log.warning("trying to get DT with no secret manager running")
                return None
        return self._token_write(manager.create, caller.name, renewer, caller.real_name)

    def renew_delegation_token(self, user: str, token: Token | None = None,
                               caller: Authenticated | None = None) -> Logged[int]:
        """``renewDelegationToken``: by the token's renewer (the caller's short name), as
        Kerberos proved it; the new expiry (ms), logged."""
        manager = self.tokens
        if manager is None or caller is None or token is None or not caller.may_handle_tokens:
            raise NamenodeError(
                "Delegation Token can be renewed only with kerberos or web authentication")
        return self._token_write(manager.renew, token, caller.user)

    def cancel_delegation_token(self, user: str, token: Token | None = None,
                                caller: Authenticated | None = None) -> Logged[None]:
        """``cancelDelegationToken``: by its owner (the caller's full name) or its renewer."""
        manager = self.tokens
        if manager is None or caller is None or token is None:
            raise InvalidTokenError("Token not found")

        def cancel() -> None:
            manager.cancel(token, caller.name)
        return self._token_write(cancel)

    def verify_delegation_token(self, token: Token) -> tokens.DelegationTokenIdentifier:
        """The identifier of a live token whose password matches (``verifyToken``):
        ``InvalidTokenError`` with Hadoop's messages otherwise; on a standby StandbyError (a
        standby may not know every token yet, as HDFS's ``retrievePassword`` refuses). HDFS
        wraps that StandbyException in an ``InvalidToken("StandbyException")`` only to pass it
        through the callback's signature, and its transports unwrap it again
        (``Server.getTrueCause``, WebHDFS's ``ExceptionHandler.toCause``, HDFS-6475), so both
        doors send it as itself: FATAL_UNAUTHORIZED StandbyException, 403 StandbyException,
        and the client fails over; becoming active it is RetriableException."""
        manager = self._token_checker()
        with self.lock:
            self.check_operation(OperationCategory.READ)
            return manager.verify(token)

    def delegation_token_password(self, identifier: bytes) -> bytes:
        """``retrievePassword``: the password of a live token's identifier, for DIGEST-MD5."""
        manager = self._token_checker()
        with self.lock:
            self.check_operation(OperationCategory.READ)
            return manager.verify_identifier_password(identifier)

    def _token_checker(self) -> tokens.DelegationTokenSecretManager:
        if self.tokens is None:
            raise InvalidTokenError("Delegation tokens are not issued under simple "
                                    "authentication")
        return self.tokens

    def _token_write(self, change: Callable[[*Ts], T], *args: *Ts,
                     category: OperationCategory = WRITE) -> Logged[T]:
        """Run one secret manager change under the lock as a write: its records become ops,
        applied to the tree (``Tree.apply``, the one path replay takes) and logged."""
        def request() -> Applied[T]:
            self._token_ops = []
            value = change(*args)
            return value, self._token_ops
        return self._write(request, category=category)

    def _token_record(self, record: tokens.Record) -> None:
        """The secret manager's journal: the record's op, applied now and logged with the
        request (``_token_write``)."""
        op = tokens.to_op(record)
        self.ns.tree.apply(op)
        self._token_ops.append(op)

    def set_storage_policy(self, path: str, name: str, user: str) -> Logged[bool]:
        return self._write(attributes.set_storage_policy, self.ns, path, name, self.caller(user))

    def unset_storage_policy(self, path: str, user: str) -> Logged[bool]:
        return self._write(attributes.unset_storage_policy, self.ns, path, self.caller(user))

    def allow_snapshot(self, path: str, user: str) -> Logged[bool]:
        return self._write(snapshot_ops.allow_snapshot, self.ns, path, self.caller(user))

    def disallow_snapshot(self, path: str, user: str) -> Logged[bool]:
        return self._write(snapshot_ops.disallow_snapshot, self.ns, path, self.caller(user))

    def create_snapshot(self, path: str, name: str | None, user: str) -> Logged[str]:
        """The snapshot's path."""
        return self._write(snapshot_ops.create_snapshot, self.ns, path, name, self.caller(user))

    def delete_snapshot(self, path: str, name: str, user: str) -> Logged[bool]:
        return self._write(snapshot_ops.delete_snapshot, self.ns, path, name, self.caller(user))

    def rename_snapshot(self, path: str, old: str, new: str, user: str) -> Logged[bool]:
        return self._write(snapshot_ops.rename_snapshot, self.ns, path, old, new,
                           self.caller(user))

    def concat(self, target: str, srcs: list[str], user: str) -> Logged[bool]:
        return self._write(self.ns.concat, target, srcs, self.caller(user))

    def truncate(self, path: str, new_length: int, user: str) -> Logged[bool]:
        return self._write(self.ns.truncate, path, new_length, self.caller(user))

    # ------------------------------------------------------------------ the data path

    def check_create(self, path: str, user: str, *, overwrite: bool = False,
                     create_parent: bool = True) -> None:
        """What creating the file at ``path`` would be refused for (WRITE), changing
        nothing: the data path's step 1 (``startFile``'s checks)."""
        with self.lock:
            self.check_operation(OperationCategory.WRITE)
            self.ns.check_create(path, self.caller(user), overwrite=overwrite,
                                 create_parent=create_parent)

    def get_writable_file(self, path: str, user: str, action: str) -> FileBlocks:
        """The complete file at ``path`` that the caller may write (WRITE: an APPEND's or a
        TRUNCATE's checks), as it is now; changes nothing."""
        with self.lock:
            self.check_operation(OperationCategory.WRITE)
            return FileBlocks.of(self.ns.writable_file(path, self.caller(user), action))

    def get_readable_file(self, path: str, user: str) -> FileBlocks:
        """The file at ``path`` that the caller may read (OPEN, checksums, block locations)."""
        caller = self.caller(user)
        with self.lock:
            self.check_operation(READ)
            return FileBlocks.of(self.ns.readable_file(path, caller))

    def start_upload(self, path: str, user: str, client_name: str, client_machine: str,
                     **create_kw: Any) -> Logged[INodeFile]:
        """Create the file an upload writes, under construction by ``client_name`` (its
        lease); the value is its inode, which the upload closes by (``complete_upload``)."""
        def start() -> Applied[INodeFile]:
            _, ops = self.ns.create(path, self.caller(user), client_name=client_name,
                                    client_machine=client_machine, **create_kw)
            return self.ns.tree.get_file(paths.normalize(path)), ops
        return self._write(start)

    def reopen_for_append(self, path: str, user: str, client_name: str,
                          client_machine: str) -> Logged[INodeFile]:
        """Reopen the complete file at ``path`` for an upload that appends (AppendOp); the
        value is its inode, as reopened."""
        def reopen() -> Applied[INodeFile]:
            _, ops = self.ns.append(path, self.caller(user), client_name, client_machine)
            return self.ns.tree.get_file(paths.normalize(path)), ops
        return self._write(reopen)

    def complete_upload(self, node: INodeFile, holder: str, *, blocks: tuple, length: int,
                        checksum: bytes, appended: bool) -> Logged[bool]:
        """Close an upload's file with its blocks (CloseFileOp), by inode: wherever a rename
        took it; refused once it was removed or someone else holds it."""
        return self._write(lambda: self.ns.upload_close(
            node, holder, blocks=blocks, length=length, checksum=checksum, appended=appended))

    def record_upload_blocks(self, node: INodeFile, holder: str,
                             blocks: tuple) -> Logged[bool]:
        """Record the blocks of a file being written (``Namespace.upload_blocks``)."""
        return self._write(self.ns.upload_blocks, node, holder, blocks)

    def abandon_upload(self, node: INodeFile, holder: str) -> Logged[bool]:
        """Close an upload's file with the blocks it had (lease recovery)."""
        return self._write(self.ns.upload_abandon, node, holder)

    def truncate_blocks(self, path: str, user: str, new_length: int,
                        **kw: Any) -> Logged[bool]:
        """TRUNCATE with the copy of the cut block (``Namespace.truncate_blocks``)."""
        return self._write(lambda: self.ns.truncate_blocks(path, self.caller(user), new_length,
                                                           **kw))

    def refers_to_blocks(self, path: str, ids: set[int]) -> bool:
        """Whether the file at ``path`` refers to any of the block ``ids`` (a request that
        failed after its batch was applied must keep them)."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            node = self.ns.tree.lookup(paths.split(path))
            return node is not None and not node.is_dir and \
                any(block[0] in ids for block in node.blocks)

    def files_under_construction(self) -> list[tuple[str, int, str]]:
        """``(path, inode id, client name)`` of every file being written (the leases the
        startup recovery looks at)."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            return [(node.path(), node.id, node.client_name) for node in walk(self.ns.tree.root)
                    if not node.is_dir and node.client_name is not None]

    def recover_upload(self, path: str, inode_id: int,
                       blocks: tuple | None = None) -> Logged[bool]:
        """Close a file whose upload a stop cut off with the blocks it has, or with
        ``blocks``, those the block store kept of them (startup lease recovery,
        ``internalReleaseLease``)."""
        return self._write(self.ns.recover_upload, path, inode_id, blocks,
                           category=OperationCategory.RECOVERY)

    def blocks_under_construction(self, path: str, inode_id: int) -> tuple[edits.Block, ...]:
        """The blocks the namespace records of a file being written (its lease recovery
        finalizes the last ones)."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            return self.ns.tree.get_file(path, inode_id).blocks

    def referenced_blocks(self) -> set[int]:
        """Every block id a file refers to or a snapshot keeps (the block sweep's list)."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            return referenced(self.ns.tree)

    def blocks_in_use(self) -> frozenset[int]:
        """``referenced_blocks``, walked again only after a change of blocks
        (``ReferencedBlocks``): the HA active's resync asks every few seconds."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            return self._blocks_in_use.of(self.ns.tree)

    @property
    def last_block_id(self) -> int:
        return self.ns.tree.last_block_id

    # ------------------------------------------------------------------ admin

    def save_namespace(self) -> int:
        """Write a fresh image of everything logged and start an empty ``edits``
        (``saveNamespace``). Requires safe mode (as in HDFS), so the namespace cannot change
        meanwhile. An HA standby starts its fresh ``edits`` with no record: the next txid,
        the segment's first included, is the shared journal's to give."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            if not self.safe_mode:
                raise SafeModeError("Safe mode should be turned ON in order to create "
                                    "namespace image.")
            return self.image.save_locked(self.ns.tree, empty=self._follows_a_shared_journal())

    def _follows_a_shared_journal(self) -> bool:
        """An HA standby: its records come from the shared journal, none is its own."""
        return self.ha is not None and self.journal.shared is None

    def checkpoint_standby(self) -> FileInfo:
        """A standby's checkpoint (Hadoop's ``StandbyCheckpointer``): save the tree as an
        image at the last applied txid, which the caller made the end of the active's rolled
        segment, and start a fresh ``edits`` after it; returns the image, which the caller
        uploads to the active. The tree does not change meanwhile: only the HA loop applies
        ops to a standby, and it is the caller."""
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            return self.image.save_standby_locked(self.ns.tree)

    def roll_edits(self) -> int:
        """End the current edits segment and continue in ``edits.new`` (``rollEditLog``:
        ``dfsadmin -rollEdits`` and a checkpoint's first step); returns the last txid of the
        closed segment (``FSImage.roll_locked``). Failed name dirs are brought back first
        where they can be (``dfs.namenode.name.dir.restore``)."""
        with self.lock:
            self.check_operation(OperationCategory.CHECKPOINT)
            return self.image.roll_locked(self.failed_dirs())

    @property
    def last_checkpoint_txid(self) -> int:
        """The txid the newest image holds (the HA loops read it)."""
        return self.image.last_checkpoint_txid

    @property
    def last_checkpoint_time(self) -> float:
        """When the newest image was made, in seconds since the epoch."""
        return self.image.last_checkpoint_time

    def failed_dirs(self) -> list[NameDir]:
        """The name dirs an edits roll tries to bring back (``dfs.namenode.name.dir.restore``)."""
        return [d for d in self.dirs if not d.healthy] if self.restore_dirs else []

    def report(self) -> dict:
        with self.lock:
            self.check_operation(OperationCategory.UNCHECKED)
            j = self.journal
            tree = self.ns.tree
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
                "files": tree.files,
                "blocks": tree.block_count,
                "directories": tree.dirs,
                "nameDirs": [{"path": str(d.root), "healthy": d.healthy,
                              "failure": d.failure} for d in self.dirs],
                "syncs": j.metrics.syncs,
                "syncSeconds": j.metrics.sync_seconds,
                "txnsBatched": j.metrics.batched,
            }

    def metrics(self) -> dict:
        """The FSNamesystem figures of ``/jmx`` and ``/metrics``, read without the lock (a
        long save must not stall them)."""
        j, tree = self.journal, self.ns.tree
        m = j.metrics
        return {
            "SafeMode": int(self.safe_mode),
            "LastWrittenTransactionId": j.txid,
            "LastSyncedTransactionId": j.synced_txid,
            "TransactionsSinceLastCheckpoint": j.txid - self.last_checkpoint_txid,
            "LastCheckpointTime": int(self.last_checkpoint_time * 1000),
            "FilesTotal": tree.files + tree.dirs,
            "DirectoriesTotal": tree.dirs,
            "BlocksTotal": tree.block_count,
            "Syncs": m.syncs,
            "SyncsAvgTime": (m.sync_seconds / m.syncs * 1000) if m.syncs else 0.0,
            "TransactionsNumOps": m.txns,
            "TransactionsBatchedInSync": m.batched,
            "EditsBytesWritten": m.bytes,
            "HealthyNameDirs": sum(d.healthy for d in self.dirs),
            "FailedNameDirs": sum(not d.healthy for d in self.dirs),
        }


def _quota(value: int | None) -> int | None:
    """None for a quota left as it is (``HdfsConstants.QUOTA_DONT_SET``)."""
    return None if value == QUOTA_DONT_SET else value
