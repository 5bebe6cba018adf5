"""Hadoop's wire formats, as bytes: the messages of its IPC, ClientNamenodeProtocol and data
transfer protocols, declared from the field numbers of Hadoop's ``.proto`` files.

* ``proto.py``: ``Schema``: protobuf message classes from ``.proto``-like field tables;
  varint-delimited framing
* ``security.py``: ``Security.proto``: ``TokenProto``, the delegation-token calls' messages
* ``acl.py``: ``acl.proto``: ``FsPermissionProto``, ACL entries and the ACL calls' messages
* ``hdfs.py``: ``hdfs.proto``: blocks, datanodes, file status, located blocks, server defaults
* ``ipc.py``: Hadoop IPC: the ``hrpc`` preamble, RPC headers, connection context, call and response
  frames
* ``client_namenode.py``: ``ClientNamenodeProtocol``: every call's request and response, ``METHODS``
* ``client_datanode.py``: ``ClientDatanodeProtocol``: the calls a client makes on a DataNode's IPC
  port, ``METHODS``
* ``datatransfer.py``: ``datatransfer.proto`` and its framing: op requests, packets, acks (a
  DataNode's transfer port)
"""
