"""The namenode: the namespace in memory, its journal and image on disk, and the HTTP service.

Top to bottom (a module imports only from its own sub-package and those below it;
``tests/test_package.py`` checks it):

* ``daemon.py``: ``Namenode``: the store, the block store and the HTTP service composed into a
  process
* ``rpc/``: Hadoop IPC for ``hdfs://`` clients: ``ClientNamenodeProtocol`` beside WebHDFS, through
  the same door; RPC writes and their leases (never imports ``http/``)
* ``http/``: the HTTP service: server and wire, WebHDFS, the data path, image transfer, admin,
  status page (never imports ``rpc/``)
* ``ops.py``: the parity table: every WebHDFS op, its ``ClientNamenodeProtocol`` twin, the
  namesystem call both make, its ``OperationCategory``
* ``files/``: operations on file contents both transports serve the same way: truncate
* ``ha/``: high availability: the HA state, the quorum journal in etcd, the election, the controller
  that follows, takes over, leads and steps down
* ``fsnamesystem.py``: ``FSNamesystem``, the one door to the namespace: namespace, journal, name
  dirs and checkpoint bookkeeping composed into one store; every op checked (``check_operation``),
  applied and logged there
* ``recovery/``: offline recovery of damaged edits (``nnlite namenode --recover``)
* ``image/``: the image: tree <-> fsimage columns, installing an image, startup (load and replay),
  the checkpoint swap, import and fetch
* ``journal/``: the edits journal (txids, the open edits files, roll, sync, the one way a segment
  starts) and group commit on the event loop
* ``blocks/``: file contents: the block store, block streams, the sweep, checksums, startup lease
  recovery of cut-off uploads
* ``namespace/``: the pure in-memory namespace: inodes, paths, permissions and identity, the tree
  and its op appliers, the requests, the lease table (no I/O)
* ``storage/``: the name directories: layout, ownership lock, ``VERSION``, health
* ``security/``: who a request acts as, for every transport: proxy users (``doas``, the IPC real
  user), the caller
* ``listen.py``: binding a service's port: the one error for a port that cannot be listened on
* ``config.py``: configuration keys, defaults, files and ``-D`` overrides
* ``errors.py``: the typed errors of the namenode
"""
