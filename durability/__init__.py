"""Durability helpers every layer may use; they import nothing else of nnlite.

* ``durable.py``: the durability policy in one place: fsync of files and directories, and publishing
  a file atomically (temp, fsync, rename, fsync the directory)
* ``faults.py``: named fault points (as Hadoop's ``CheckpointFaultInjector``), off unless
  ``NNLITE_FAULTS`` names them
"""
