"""Offline recovery of damaged edits (``nnlite namenode --recover [--force]``, as Hadoop's
``namenode -recover``).

* ``recover.py``: the entry point: pick the image, run the scan, then the repair
* ``dialog.py``: each ``Problem`` explained to the operator, a ``Choice`` answered, the ``Outcome``
* ``scan.py``: phase 1, which changes nothing: replay frame by frame, put every problem to
  ``decide``
* ``repair.py``: phase 2, the only one that writes: keep copies, install the recovered image,
  restart the logs
"""
