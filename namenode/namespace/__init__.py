"""The namespace, a pure in-memory tree with an injected clock; nothing here does I/O.

The requests are cut as Hadoop's: ``Namespace`` holds the tree as ``FSDirectory`` does, and
each op family is a module of functions taking it, as the ``FSDir*Op`` classes are static
helpers over ``FSDirectory``.

* ``inode.py``: slotted inodes (directories, files), quotas, usage, ``walk``
* ``paths.py``: path validation: every path that enters the namespace passes ``split``
* ``reserved.py``: ``/.reserved``: inode paths (``.inodes/<id>``) and raw paths resolved as
  FSDirectory.resolvePath, ``/.reserved`` itself
* ``permission.py``: HDFS's permission model: the ``Caller``, owner/group/other bits, superuser,
  sticky bit
* ``acl.py``: POSIX ACLs: entries, the spec syntax, AclTransformation, AclStorage, inheritance,
  enforcement
* ``snapshot.py``: snapshots: the registry, copy-on-write diffs, views of a snapshot, the diff
  report
* ``checks.py``: values the edits log and the fsimage can hold
* ``tree.py``: ``Tree`` and ``apply(op)``: the one code path that changes the namespace, live or
  replayed
* ``namespace.py``: ``Namespace``: path resolution, the reads, mkdirs, create, concat, truncate and
  the data path's requests on the ``Tree`` it holds (Hadoop's ``FSDirectory``), and ``apply`` for
  every request
* ``attributes.py``: permission, owner, times, replication, quotas, storage policies
  (``FSDirAttrOp``)
* ``delete.py``: delete, delete of several subtrees in one op (``FSDirDeleteOp``)
* ``rename.py``: rename and rename2 (``FSDirRenameOp``)
* ``xattrs.py``: get, set and remove xattrs, who sees and changes which (``FSDirXAttrOp``,
  ``XAttrPermissionFilter``)
* ``acl_ops.py``: ACL status and the five ACL changes (``FSDirAclOp``)
* ``snapshot_ops.py``: allow, take, delete, rename, list and diff snapshots; no deleting a subtree
  holding some (``FSDirSnapshotOp``)
* ``catalog_view.py``: ``CatalogView``: the few lookups and requests the checkpoint catalog makes,
  all it sees of the namespace
* ``leases.py``: the lease table: a file being written belongs to its writer, keyed by path and
  following renames and deletes
"""
