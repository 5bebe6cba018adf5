"""The edits journal and group commit.

| module | what |
|---|---|
| ``journal.py`` | ``Journal``: txids, the open edits files of every healthy name dir, ``roll``, one ``sync`` |
| ``committer.py`` | ``AsyncCommitter``: ops applied on the event loop, synced in a thread, acknowledged as ``Durable`` |
"""
