"""Operations on file contents that every transport serves the same way (WebHDFS's data path,
``ClientNamenodeProtocol``), through ``FSNamesystem`` and the block store.

| module | what |
|---|---|
| ``writers.py`` | a writer admitted to a file under a lease (``start_file``, ``append_file``), the checksum its close records (``close_checksum``), concat while no writer holds its files (``concat_files``) |
| ``truncate.py`` | ``Truncator``: a file cut to a length under a TRUNCATE lease, the kept part of the cut block copied into a new block |
"""
