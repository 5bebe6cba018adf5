"""Byte layouts and nothing else: no namespace, no policy of when or where to write.

* ``edits.py``: the edits log: header, length-and-CRC framed msgpack records, op codes and fields,
  frame scanning for verification and recovery
* ``fsimage/``: the fsimage as Parquet: ``layout.py`` (schema, names, metadata), ``write.py``,
  ``read.py``, ``md5.py`` (the digest sidecar); ``__init__.py`` is the spec
* ``flink_metadata.py``: Flink's checkpoint ``_metadata``: which checkpoint it is and every state
  file it references
* ``mode.py``: the mode word: permission bits (sticky, user/group/other ``rwx``) and their ``rwx``
  text, for the client and the namenode alike
* ``errors.py``: typed errors of the formats (corrupt, truncated, unsupported version)
"""
