"""Hadoop's wire formats, as bytes: the messages of its IPC, ClientNamenodeProtocol and data
transfer protocols, declared from the field numbers of Hadoop's ``.proto`` files.

| module | what |
|---|---|
| ``proto.py`` | ``Schema``: protobuf message classes from ``.proto``-like field tables; varint-delimited framing |
"""
