"""The namenode's storage: the name directories that hold its image and edits.

* ``namedir.py``: ``NameDir``: layout, the ownership lock, ``VERSION``, health and restore, the
  files each holds; locking a set of dirs, preparing one for ``format``, copying a file into one
  durably

Below the journal, the image, recovery and the secondary, which all keep their files here.
"""
