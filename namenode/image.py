"""The namespace <-> fsimage columns: turning the tree into rows and rows back into a tree.

Rows are written parents before children (a pre-order walk), so loading can attach every row
to a parent it has already built. Loading goes column by column (no per-row dicts), shares
equal strings and common integers between inodes, and keeps a directory index only while it
loads: the loaded tree holds nothing per inode beyond the inode objects and their names.
"""

from __future__ import annotations

import logging
import time

from formats import fsimage as F
from namenode.errors import ReplayError
from namenode.inode import NO_QUOTA, INodeDirectory, INodeFile, Quota, usage
from namenode.namespace import Namespace

log = logging.getLogger(__name__)

PROGRESS_EVERY = 250_000


def tree_columns(ns: Namespace) -> dict[str, list]:
    """Every inode as one row per column, parents before children."""
    cols = {name: [] for name in F.COLUMNS}
    c = [cols[name] for name in F.COLUMNS]
    (ids, parents, names, types, perms, owners, groups, mtimes, atimes, reps, bsizes, lengths,
     blocks, checksums, xattrs, nsq, ssq, clients, machines) = c
    stack = [ns.root]
    while stack:
        node = stack.pop()
        ids.append(node.id)
        parents.append(node.parent.id if node.parent is not None else 0)
        names.append(node.name)
        perms.append(node.permission)
        owners.append(node.owner)
        groups.append(node.group)
        mtimes.append(node.mtime)
        atimes.append(node.atime)
        xattrs.append(list(node.xattrs.items()) if node.xattrs else None)
        if node.is_dir:
            types.append(F.TYPE_DIRECTORY)
            reps.append(0)
            bsizes.append(0)
            lengths.append(0)
            blocks.append([])
            checksums.append(None)
            q = node.quota
            nsq.append(q.ns_quota if q else NO_QUOTA)
            ssq.append(q.ss_quota if q else NO_QUOTA)
            clients.append(None)
            machines.append(None)
            stack.extend(node.children.values())
        else:
            types.append(F.TYPE_FILE)
            reps.append(node.replication)
            bsizes.append(node.block_size)
            lengths.append(node.length)
            blocks.append([{"block_id": b[0], "num_bytes": b[1], "genstamp": b[2]}
                           for b in node.blocks])
            checksums.append(node.checksum)
            nsq.append(NO_QUOTA)
            ssq.append(NO_QUOTA)
            clients.append(node.client_name)
            machines.append(node.client_machine)
    return cols


def image_meta(ns: Namespace, namespace_id: int, last_txid: int) -> F.ImageMeta:
    return F.ImageMeta(layout_version=F.LAYOUT_VERSION, namespace_id=namespace_id,
                       last_txid=last_txid, inode_count=ns.files + ns.dirs,
                       creation_time=int(time.time() * 1000),
                       extra={"last_inode_id": ns.last_inode_id,
                              "last_block_id": ns.last_block_id})


def save(ns: Namespace, path: str, namespace_id: int, last_txid: int) -> F.ImageInfo:
    """Write the tree to ``path`` (the caller publishes it). Returns digest and size."""
    start = time.perf_counter()
    cols = tree_columns(ns)
    info = F.write_image(path, cols, image_meta(ns, namespace_id, last_txid))
    log.info("saved image of %d inodes at txid %d: %d bytes in %.2f s", len(cols["id"]),
             last_txid, info.size, time.perf_counter() - start)
    return info


def load(path: str, expected_md5: str | None, **ns_kw) -> tuple[Namespace, F.ImageMeta]:
    """Build a namespace from an image (its MD5 is checked before anything is parsed)."""
    start = time.perf_counter()
    table, meta = F.read_image(path, expected_md5=expected_md5)
    ns = Namespace(**ns_kw)
    _build(ns, table, meta, path)
    ns.last_inode_id = max(ns.last_inode_id, meta.extra.get("last_inode_id", 0))
    ns.last_block_id = max(ns.last_block_id, meta.extra.get("last_block_id", 0))
    log.info("loaded image %s: %d inodes at txid %d in %.2f s", path, meta.inode_count,
             meta.last_txid, time.perf_counter() - start)
    return ns, meta


def _strings(column) -> list:
    """A string column as a list in which equal values are one shared object."""
    arr = column.combine_chunks()
    if hasattr(arr, "dictionary"):
        values = arr.dictionary.to_pylist()
        return [None if i is None else values[i] for i in arr.indices.to_pylist()]
    cache = {}
    return [cache.setdefault(v, v) for v in arr.to_pylist()]


def _blocks(column) -> list:
    arr = column.combine_chunks()
    offsets = arr.offsets.to_pylist()
    if offsets[-1] == 0:
        return [()] * len(arr)
    flat = arr.flatten()
    triples = list(zip(*(flat.field(n).to_pylist() for n in ("block_id", "num_bytes",
                                                              "genstamp"))))
    return [tuple(triples[offsets[i]:offsets[i + 1]]) for i in range(len(arr))]


def _xattrs(value):
    if value is None:
        return None
    if value and isinstance(value[0], dict):
        return {d["name"]: d["value"] for d in value} or None
    return dict(value) or None


def _build(ns: Namespace, table, meta, path: str) -> None:
    n = table.num_rows
    col = {name: table.column(name) for name in F.COLUMNS}
    ids = col["id"].to_pylist()
    parents = col["parent_id"].to_pylist()
    names = col["name"].to_pylist()
    types = col["type"].to_pylist()
    perms = col["permission"].to_pylist()
    owners, groups = _strings(col["owner"]), _strings(col["group"])
    mtimes, atimes = col["mtime"].to_pylist(), col["atime"].to_pylist()
    reps, lengths = col["replication"].to_pylist(), col["length"].to_pylist()
    ints = {}
    bsizes = [ints.setdefault(v, v) for v in col["block_size"].to_pylist()]
    blocks = _blocks(col["blocks"])
    checksums = col["checksum"].to_pylist()
    xattrs = col["xattrs"].to_pylist() if col["xattrs"].null_count < n else None
    nsq, ssq = col["ns_quota"].to_pylist(), col["ss_quota"].to_pylist()
    clients = col["client_name"].to_pylist()
    machines = _strings(col["client_machine"])
    if n == 0 or parents[0] != 0 or types[0] != F.TYPE_DIRECTORY:
        raise ReplayError(f"image {path} does not start with the root directory", path=path)
    root = ns.root
    root.id, root.permission, root.owner, root.group = ids[0], perms[0], owners[0], groups[0]
    root.mtime, root.atime = mtimes[0], atimes[0]
    if xattrs is not None and xattrs[0] is not None:
        root.xattrs = _xattrs(xattrs[0])
    dirs = {ids[0]: root}
    files = 0
    for i in range(1, n):
        parent = dirs.get(parents[i])
        if parent is None:
            raise ReplayError(f"image {path}: row {i} (inode {ids[i]}) names parent "
                              f"{parents[i]}, which is not a directory listed before it",
                              path=path)
        mtime = mtimes[i]
        atime = mtime if atimes[i] == mtime else atimes[i]
        name = names[i]
        if types[i] == F.TYPE_DIRECTORY:
            node = INodeDirectory(ids[i], parent, name, perms[i], owners[i], groups[i], mtime,
                                  atime)
            dirs[ids[i]] = node
        else:
            node = INodeFile(ids[i], parent, name, perms[i], owners[i], groups[i], mtime, atime,
                             reps[i], bsizes[i], lengths[i], blocks[i], checksums[i],
                             clients[i], machines[i])
            files += 1
        parent.children[name] = node
        if xattrs is not None and xattrs[i] is not None:
            node.xattrs = _xattrs(xattrs[i])
        if i % PROGRESS_EVERY == 0:
            log.info("loading image %s: %d of %d inodes", path, i, n)
    ns.files, ns.dirs = files, len(dirs)
    ns.last_inode_id = max(ids)
    _restore_quotas(ns, dirs, ids, nsq, ssq)
    ns.last_block_id = max((b[0] for bl in blocks for b in bl), default=0)


def _restore_quotas(ns, dirs, ids, nsq, ssq) -> None:
    for i, inode_id in enumerate(ids):
        if (nsq[i] != NO_QUOTA or ssq[i] != NO_QUOTA) and inode_id in dirs:
            node = dirs[inode_id]
            node.quota = Quota(nsq[i], ssq[i], *usage(node))
            ns.quota_dirs += 1
