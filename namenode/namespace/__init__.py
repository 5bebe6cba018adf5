"""The namespace, a pure in-memory tree with an injected clock; nothing here does I/O.

| module | what |
|---|---|
| ``inode.py`` | slotted inodes (directories, files), quotas, usage, ``walk`` |
| ``paths.py`` | path validation: every path that enters the namespace passes ``split`` |
| ``reserved.py`` | ``/.reserved``: inode paths (``.inodes/<id>``) and raw paths resolved as FSDirectory.resolvePath, ``/.reserved`` itself |
| ``permission.py`` | HDFS's permission model: the ``Caller``, owner/group/other bits, superuser, sticky bit |
| ``acl.py`` | POSIX ACLs: entries, the spec syntax, AclTransformation, AclStorage, inheritance, enforcement |
| ``snapshot.py`` | snapshots: the registry, copy-on-write diffs, views of a snapshot, the diff report |
| ``checks.py`` | values the edits log and the fsimage can hold |
| ``tree.py`` | ``Tree`` and ``apply(op)``: the one code path that changes the namespace, live or replayed |
| ``namespace.py`` | ``Namespace``: the requests (permission checks, op building, HDFS's answers) on the ``Tree`` it holds |
| ``leases.py`` | the lease table: a file being written belongs to its writer, keyed by path and following renames and deletes |
"""
