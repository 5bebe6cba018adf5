"""The edits journal and group commit.

* ``journal.py``: ``Journal``: txids, the open edits files of every healthy name dir, ``roll``, one
  ``sync``; ``start_segment``, the one way an edits segment starts (``format``, recovery and an
  imported checkpoint too, through ``restart_edits``); ``Logged``: a request logged, acknowledged
  once its txid is durable
* ``committer.py``: ``AsyncCommitter``: ops applied on the event loop, synced in a thread,
  acknowledged as ``Durable``
"""
