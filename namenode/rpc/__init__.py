"""Hadoop IPC for ``hdfs://`` clients: ``ClientNamenodeProtocol`` on the namenode's event
loop, beside WebHDFS and through the same door (``FSNamesystem``).

* ``server.py``: ``RpcServer``: the listening socket, connections (preamble, context, proxy users by
  ``namenode/security/``), frames, answers once durable
* ``client_protocol.py``: ``ClientProtocol``: one handler per call served, through ``FSNamesystem``
* ``writes.py``: ``Writes``: files being written over RPC (create/append, addBlock, complete), their
  leases and block ids
* ``status.py``: the namespace as ``hdfs.proto`` messages: file status, located blocks, the built-in
  datanode
* ``errors.py``: the IPC layer's own refusals (no such method or protocol, FATAL frames)
"""
