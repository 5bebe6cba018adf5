"""The image: save and load, install, startup, checkpoint, import. Its files live in the name
directories of ``namenode/storage/``.

* ``columns.py``: the namespace <-> fsimage columns: ``save`` and ``load``
* ``snapshots.py``: the snapshot column and the rows of inodes only snapshots keep
* ``secrets.py``: the ``secret_manager`` section: delegation keys and tokens (secure mode)
* ``install.py``: installing a new image into name dirs so that a crash at any instant leaves a
  loadable dir
* ``startup.py``: startup: the newest valid image, then every later record of ``edits`` and
  ``edits.new``
* ``fsimage.py``: ``FSImage``, the namesystem's image side (Hadoop's ``FSImage``): the last
  checkpoint, save, roll, the checkpoint endpoints' status, downloads and the install of an upload
* ``checkpoint.py``: a checkpoint's files on the namenode: the image and rolled edits served, an
  upload verified, the swap, retention (``fsimage.py`` rolls and keeps the bookkeeping)
* ``importer.py``: an image from elsewhere: ``--import-checkpoint`` and ``dfsadmin fetch-image``
"""
