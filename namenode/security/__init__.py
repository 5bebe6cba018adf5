"""Who a request acts as, settled the same way for every transport (WebHDFS's ``user.name``
and ``doas``, the IPC connection context's effective and real user); secure mode (Kerberos,
delegation tokens) extends it.

| module | what |
|---|---|
| ``proxy_users.py`` | ``ProxyUsers``: Hadoop's ``hadoop.proxyuser.*`` rules (``DefaultImpersonationProvider``), ``ImpersonationError`` |
| ``identity.py`` | ``Caller`` (the effective user and the client's address) and ``effective_user``: the real user, the user it asks to act as, the proxy-user check |
| ``sasl.py`` | SASL on the IPC connection (``SaslRpcServer``, ``Server.Connection``'s negotiation): NEGOTIATE, TOKEN and KERBEROS, the GSSAPI mechanism (RFC 4752 over PyPI's gssapi) |
| ``digest_md5.py`` | DIGEST-MD5's server side (RFC 2831) for tokens, on the IPC and the data port: the exchange, auth-int and auth-conf (3DES) |
"""
