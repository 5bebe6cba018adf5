"""Operations on file contents that every transport serves the same way (WebHDFS's data path,
``ClientNamenodeProtocol``), through ``FSNamesystem`` and the block store.

* ``writers.py``: a writer admitted to a file under a lease (``start_file``, ``append_file``), its
  close with the checksum it records (``close_file``; ``release_file`` for lease recovery), concat
  while no writer holds its files (``concat_files``)
* ``readers.py``: ``FileReader``: what a reader sees of a file (the block being written at its
  visible length), its bytes read with every chunk checked
* ``truncate.py``: ``Truncator``: a file cut to a length under a TRUNCATE lease, the kept part of
  the cut block copied into a new block
"""
