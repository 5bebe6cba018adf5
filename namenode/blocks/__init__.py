"""File contents: immutable block files on the namenode's own disk.

* ``store.py``: ``BlockStore``: the directory, block names and ids, publishing
* ``streams.py``: bytes in and out of block files for one request: ``BlockWriter``, ``segments``
* ``sweep.py``: removal of block files no file of the namespace refers to
* ``checksum.py``: file checksums as HDFS computes them (``MD5MD5CRC32GzipFileChecksum``)
* ``lease_recovery.py``: startup lease recovery: the writes a stop cut off, closed with the blocks
  they have
* ``rwr.py``: replicas being written that a restart left in ``rbw/``, finalized at the length their
  CRCs vouch for

The lease table itself (who is writing which path) follows paths, so it lives with the
namespace (``namenode/namespace/leases.py``).
"""
