"""The secondary: fetches the image and edits over HTTP, replays them with the namenode's own
code into a new image, and uploads it for the namenode to verify and swap in.

* ``daemon.py``: ``nnlite secondary``: the check loop and the status endpoint
* ``checkpointer.py``: when to checkpoint (``TriggerPolicy``) and what a finished or failed one
  leaves behind
* ``merge.py``: the steps of one checkpoint (``Merger``): roll, download, load, replay, save, upload
* ``outcome.py``: what a checkpoint reports: ``CheckpointResult``, ``Failure``, counters, phases
* ``storage.py``: the checkpoint directory, laid out as a name directory (``--import-checkpoint``
  reads it)
* ``client.py``: ``TransferClient``: the namenode's transfer endpoints over ``client/connection.py``
* ``errors.py``: the secondary's typed errors, and the failures a transfer and a checkpoint retry
"""
