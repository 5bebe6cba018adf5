"""The namenode's HTTP service: one asyncio server, routed by path.

* ``server.py``: ``HttpServer``: HTTP/1.1 on kept-alive connections, pipelining, body streams, file
  downloads
* ``wire.py``: ``Request`` parsed from bytes and ``Response`` encoded to them
* ``stream.py``: request bodies too large to hold in memory, fed to a sink as they arrive
* ``app.py``: the application: routes to WebHDFS, the data path, transfer, admin, ``/jmx``,
  ``/metrics``, the status page
* ``authentication.py``: secure mode's door: a delegation token, the ``hadoop.auth`` cookie or
  SPNEGO before any handler, then ``JspHelper.getUGI``'s caller
* ``webhdfs.py``: the WebHDFS REST API for namespace metadata, identity (``user.name``, ``doas``, or
  in secure mode what the request proved; settled by ``namenode/security/``)
* ``params.py``: WebHDFS query parameters, read as Hadoop's ``*Param`` classes read them
* ``webhdfs_json.py``: Hadoop's ``JsonUtil`` shapes (FileStatus, listings, content summary)
* ``remote.py``: errors to ``RemoteException`` answers, in one table
* ``data.py``: the data path: CREATE, APPEND and OPEN in two steps, and the ops on file contents
* ``upload.py``: the body sink of the data step's CREATE and APPEND (``BlockUpload``)
* ``transfer.py``: image transfer with the secondary: status, image and edits downloads, the upload
* ``status.py``: the status page at ``/``
"""
