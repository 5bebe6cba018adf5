"""The built-in DataNode: Hadoop's data transfer protocol on the namenode's transfer port,
over the namenode's own block store (``namenode.blocks``), so ``hdfs://`` clients read and
write the blocks that WebHDFS's data path reads and writes, with the same checksums.

* ``server.py``: ``DataNodeServer``: the port, the ops of a connection, its identity (uuid, block
  pool), the blocks the namenode expects, BLOCK_CHECKSUM
* ``replicas.py``: ``ReplicaMap``: the blocks expected, being written, parked for a pipeline
  recovery, finalized
* ``receiver.py``: ``BlockReceiver``: WRITE_BLOCK's packets, forwarded, verified, written and
  acknowledged
* ``mirror.py``: ``Mirror``: the next datanode of a write pipeline, its setup, forwarded packets and
  acks
* ``stream.py``: the protocol's frames read from an asyncio stream: delimited messages, packets
* ``replica.py``: ``ReplicaWriter``: a block being written in ``rbw/`` (kept across restarts), its
  chunk CRCs, publishing
* ``sender.py``: ``BlockSender``: READ_BLOCK's packets with the stored chunk CRCs; the same ranges,
  verified, for WebHDFS's OPEN (``VerifiedRange``)
* ``ipc.py``: ``ClientDatanodeService``: ClientDatanodeProtocol's calls (the visible length of a
  replica) for an IPC server
* ``tokens.py``: ``BlockTokenSecretManager``: Hadoop's block access tokens, signed and checked with
  block keys derived from the set's secret
* ``sasl.py``: ``DataTransferSasl``: the data port's SASL handshake (DIGEST-MD5 with a block token)
  and the wrapped streams after it
* ``errors.py``: ``DataTransferError``: a refusal and the ``Status`` the client is answered with

The bytes of the protocol are ``formats/hadoop/datatransfer.py``'s.
"""
