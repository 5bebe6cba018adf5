"""A small WebHDFS client of the namenode, and the ``hdfs dfs``-style shell the CLI runs on it.

``webhdfs.py`` speaks the protocol (the operations, ``user.name``, redirects) over
``connection.py`` (one keep-alive connection, network errors) and reads answers with
``replies.py`` (JSON, RemoteException to typed errors); ``errors.py`` holds those errors, ``shell.py`` the commands' semantics
(``ls``, ``rm -r``, ``chmod -R``, ...), ``modes.py`` permission bits and ``chmod`` modes,
``format.py`` the text output. Those are standard library only and import nothing of the
namenode, so a program can use the client alone. The command line on top of them is here too:
``cli_dfs.py`` (``nnlite dfs`` and ``dfsadmin``) and ``cli_support.py`` (exit codes and typed
errors of every command); they use click and the namenode's error classes.
"""

from nnlite.client.errors import ClientError
from nnlite.client.shell import FsShell
from nnlite.client.webhdfs import DEFAULT_URL, WebHdfsClient

__all__ = ["DEFAULT_URL", "ClientError", "FsShell", "WebHdfsClient"]
