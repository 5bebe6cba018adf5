"""The checkpoint catalog (Spark and Flink): what state each job's checkpoints are in, and safe
actions on them.

Layers (imports point down):

    layout.py     what Spark leaves in a checkpoint directory, read from namespace inodes;
                  ``classify``, the one rule of what kind a directory holds
    streaming.py  Structured Streaming structure: batches, state chains, restorable batch, ls
    changelog.py  a format v2 RocksDB changelog: the lineage its head records, and the
                  whole stream read as Spark's read reads it where it has no .crc sidecar
                  (lz4's frame checksums; snappy and zstd decoded, their records parsed)
    report.py     validate and show: the log files parsed, every problem named
    checksums.py  Spark's .crc sidecars checked with a CRC32C composed from the block
                  store's chunk CRCs (Hadoop's CrcUtil composition)
    retention.py  which files retention and rollback remove (pure planning, no I/O)
    verdicts.py   one verdict per checkpoint, and the ls health, latest and validate answers
                  made of them, for the kinds that keep whole checkpoints side by side
    jobs.py       batch-job checkpoints with a Flink-style lifecycle (begin/complete/abort),
                  each checked against the manifest recorded when it completed
    others.py     RDD and DStream checkpoints (which read), and what gc removes
    flink.py      Flink job checkpoints and savepoints: what each _metadata references,
                  which restore, what retention may remove
    errors.py     the catalog's typed errors
    service.py    runs the above inside the namenode: snapshots under the lock, one edits op
                  per change, the background retention policy
    http.py       ``/catalog/v1/<path>?op=...`` on the namenode's HTTP server
    client.py     the Python API over that HTTP endpoint (what the CLI and Spark drivers use)
    spark.py      the only module that imports pyspark (lazily): job checkpoints around writes
    mirror.py     one reconciliation pass of a local checkpoint dir into nnlite
    watch.py      the watcher daemon: watchdog events and rescans drive mirror.py
    display.py    how ``nnlite catalog`` prints answers for people

Everything the catalog changes goes through the namenode's request layer, so each change is
permission-checked, logged as one edits op and durable before it is acknowledged.
"""
