"""A small WebHDFS client of the namenode, the ``hdfs dfs``-style shell the CLI runs on it, and
the etcd client of high availability.

Standard library only, importing nothing of the namenode, so a program can use the client
alone:

* ``connection.py`` -- one keep-alive HTTP connection: streaming bodies, ``Expect:
  100-continue``, reopening a stale connection once, network errors as typed errors naming the
  URL. The one HTTP client stack of nnlite (the CLI, the secondary's transfers, the catalog
  client and its watcher all ride on it).
* ``webhdfs.py`` -- the WebHDFS operations over it (``user.name``, relative paths under
  ``/user/<user>``, the 307 redirects of CREATE/APPEND/OPEN, the admin endpoints).
* ``failover.py`` -- the namenodes of an HA nameservice behind ``Connection``'s interface:
  following the active one as Hadoop's ``WebHdfsFileSystem`` does (a refused connection or a
  StandbyException moves on, a RetriableException backs off, a lost answer is asked again
  only when idempotent); ``--namenode ns1`` and ``webhdfs://ns1`` resolved to them.
* ``peer.py`` -- the client between namenodes (and the secondary): is-active and the HA
  pulse, cede, roll, image download and upload, block push, report and fetch; the one table
  of the header names the server side (``namenode/http/transfer.py``, ``replica.py``) reads.
* ``replies.py`` -- what an answer means: JSON fields, a ``RemoteException`` as its typed error.
* ``errors.py`` -- those errors, one class per Hadoop exception the namenode answers.
* ``java_classes.py`` -- the one table of those exceptions' Java class names: the namenode's
  errors take their ``JAVA_CLASS`` from it, the client's ``REGISTRY`` reads them back by it.
* ``shell.py`` -- FsShell: the ``hdfs dfs`` commands' semantics (``ls``, ``rm -r``,
  ``setfacl -R``, ``createSnapshot``, ...).
* ``modes.py`` -- ``chmod`` modes (octal and symbolic) and a FileStatus's permission bits;
  the mode word and its ``rwx`` string are ``formats/mode.py``, shared with the namenode.
* ``acls.py`` -- ACL entries: ``setfacl``'s spec and flags, ``getfacl``'s whole ACL and what
  the mask leaves of each entry.
* ``display.py`` -- the commands' text output.
* ``etcd/`` -- a client of etcd's v3 API over its JSON gateway, on ``connection.py``: its
  messages, their JSON encoding, and the client (keys, txns, leases, watches, failover
  between members); the store of the namenodes' HA. Its ``__init__.py`` is its map.

The click commands on top are ``commands/dfs.py``.
"""
