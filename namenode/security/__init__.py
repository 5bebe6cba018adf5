"""Who a request acts as, settled the same way for every transport (WebHDFS's ``user.name``
and ``doas``, the IPC connection context's effective and real user); secure mode (Kerberos,
delegation tokens) extends it.

| module | what |
|---|---|
| ``proxy_users.py`` | ``ProxyUsers``: Hadoop's ``hadoop.proxyuser.*`` rules (``DefaultImpersonationProvider``), ``ImpersonationError`` |
| ``identity.py`` | ``Caller`` (the effective user and the client's address) and ``effective_user``: the real user, the user it asks to act as, the proxy-user check |
"""
