"""Who a request acts as, settled the same way for every transport (WebHDFS's ``user.name``
and ``doas``, the IPC connection context's effective and real user); secure mode (Kerberos,
delegation tokens) extends it.

* ``proxy_users.py``: ``ProxyUsers``: Hadoop's ``hadoop.proxyuser.*`` rules
  (``DefaultImpersonationProvider``), ``ImpersonationError``
* ``identity.py``: ``Caller`` (the effective user, the client's address, how it authenticated, the
  real user) and ``effective_user``; in secure mode ``kerberos_caller`` (a principal mapped by
  auth_to_local, then the doas check) and ``token_caller`` (a token's owner and real user)
* ``auth_to_local.py``: ``AuthToLocal``: ``hadoop.security.auth_to_local``'s rules, as
  ``KerberosName``; ``NoMatchingRule``
* ``tokens.py``: delegation tokens: ``Token`` (the Writable, ``encode_url``),
  ``DelegationTokenIdentifier``, ``TokenStore`` (the namespace's keys and tokens, changed by
  records) and ``DelegationTokenSecretManager`` (Hadoop's rules over it)
* ``sasl.py``: SASL on the IPC connection (``SaslRpcServer``, ``Server.Connection``'s negotiation):
  NEGOTIATE, TOKEN and KERBEROS, the GSSAPI mechanism (RFC 4752 over PyPI's gssapi)
* ``digest_md5.py``: DIGEST-MD5's server side (RFC 2831) for tokens, on the IPC and the data port:
  the exchange, auth-int and auth-conf (3DES)
"""
