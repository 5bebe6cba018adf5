"""nnlite: an HDFS-style metadata store. This folder is the ``nnlite`` import package.

Every name is imported from the module that defines it, as ``nnlite.<folder>.<module>``; the
folders below are the requested top level, mapped into one package by ``setup.cfg``
(``package_dir``), so nothing generic lands in a user's ``site-packages``.

Layers, top to bottom (a module imports only from its own folder and those below it;
``tests/test_package.py`` checks it):

* ``cli.py``: the ``nnlite`` command: one click group that gathers ``commands/``
* ``commands/``: every command (daemons, dfs, dfsadmin, offline tools, catalog), their options,
  and the one error-to-exit-code table
* ``analytics/``: ``nnlite analyze``: namespace analytics as a PySpark job
* ``catalog/``: the Spark checkpoint catalog: layouts, validation, retention, rollback, jobs,
  watcher
* ``tools/``: offline viewers and verifiers of images and edits (``oiv``, ``oev``, ``verify``)
* ``secondary/``: the checkpointer daemon: trigger, fetch over HTTP, replay, upload
* ``namenode/``: the namespace, the journal, the image, the name dirs (``storage/``), recovery,
  blocks, the HTTP service
* ``client/``: the one HTTP client stack: WebHDFS operations, the shell's semantics, the etcd v3
  client, typed errors
* ``durability/``: how bytes become durable (fsync, atomic publish) and the named fault points
* ``formats/``: byte layouts only: edits records, the Parquet fsimage, digests, the mode word
  (permission bits)

``tests/`` mirrors these folders; ``bench/`` holds the benchmarks behind ``BENCHMARKS.md``.
"""
