"""The image: save and load, install, startup, checkpoint, import. Its files live in the name
directories of ``namenode/storage/``.

| module | what |
|---|---|
| ``columns.py`` | the namespace <-> fsimage columns: ``save`` and ``load`` |
| ``snapshots.py`` | the snapshot column and the rows of inodes only snapshots keep |
| ``install.py`` | installing a new image into name dirs so that a crash at any instant leaves a loadable dir |
| ``startup.py`` | startup: the newest valid image, then every later record of ``edits`` and ``edits.new`` |
| ``checkpoint.py`` | a checkpoint's files on the namenode: the image and rolled edits served, an upload verified, the swap, retention (``FSNamesystem`` rolls and keeps the bookkeeping) |
| ``importer.py`` | an image from elsewhere: ``--import-checkpoint`` and ``dfsadmin fetch-image`` |
"""
