"""The ``nnlite`` command line: one module per group of commands, each a thin click layer.

* ``support.py``: what every command shares: the exit codes, the one error-to-exit-code table and
  the one error line (``CommandGroup``), the generic options (``--user``, ``--namenode``,
  ``--conf``/``-D``, before or after a subcommand), what ``--namenode`` names (a URL or a
  nameservice), the default name dir
* ``daemons.py``: ``format``, ``namenode`` (``--bootstrap-standby`` too), ``secondary``, ``run``,
  ``run-ha``, ``run-secure``
* ``supervisor.py``: ``run``'s supervisor of the namenode and secondary child processes;
  ``run-ha``'s children, their restart policy and ordered stop
* ``haset.py``: ``run-ha``'s local HA set: its base dir and configuration, the etcd members and
  namenodes it starts, the summary
* ``secureset.py``: ``run-secure``'s local secure set: its base dir and secure.conf, the realm's
  principals, the lines to paste
* ``realm.py``: a Kerberos realm on loopback from MIT's KDC (``kdb5_util``, ``kadmin.local``,
  ``krb5kdc``): principals, keytabs, the KDC as a child
* ``errors.py``: the commands' own errors (``ChildDied``, ``ProgramMissing``, ``StartTimeout``)
* ``dfs.py``: ``dfs`` and ``dfsadmin``, over the WebHDFS client
* ``haadmin.py``: ``haadmin``: an HA set's namenodes by id (``getServiceState``,
  ``transitionToActive``, ``transitionToStandby``, ``failover``)
* ``tools.py``: ``oiv``, ``oev``, ``edits verify``, ``fsimage verify``, ``analyze``
* ``catalog.py``: ``catalog ...``

``cli.py`` at the top gathers them into the ``nnlite`` group and lets every group take the
generic options of the commands under it.
"""
