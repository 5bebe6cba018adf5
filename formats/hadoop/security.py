"""Hadoop's ``Security.proto`` (protobuf package ``hadoop.common``): the token a client
shows for a block or a delegation, and the delegation-token calls.

``TokenProto`` is the wire form of ``org.apache.hadoop.security.token.Token``: an opaque
identifier and password, a kind (``HDFS_DELEGATION_TOKEN``, ``HDFS_BLOCK_TOKEN``) and the
service it is for. Under simple authentication (nnlite's) block tokens are empty
(``identifier``, ``password`` of zero bytes, empty ``kind`` and ``service``), as
``BlockTokenSecretManager``-less namenodes send them. Field numbers are Hadoop 3's.
"""

from __future__ import annotations

from nnlite.formats.hadoop.proto import Schema

S = Schema("nnlite.hadoop.common.security")

S.message("TokenProto",
          "required bytes identifier = 1",
          "required bytes password = 2",
          "required string kind = 3",
          "required string service = 4")
S.message("CredentialsKVProto",
          "required string alias = 1",
          "optional TokenProto token = 2",
          "optional bytes secret = 3")
S.message("CredentialsProto",
          "repeated CredentialsKVProto tokens = 1",
          "repeated CredentialsKVProto secrets = 2")
S.message("GetDelegationTokenRequestProto",
          "required string renewer = 1")
S.message("GetDelegationTokenResponseProto",
          "optional TokenProto token = 1")
S.message("RenewDelegationTokenRequestProto",
          "required TokenProto token = 1")
S.message("RenewDelegationTokenResponseProto",
          "required uint64 newExpiryTime = 1")
S.message("CancelDelegationTokenRequestProto",
          "required TokenProto token = 1")
S.message("CancelDelegationTokenResponseProto")

_CLASSES = S.build()
TokenProto = _CLASSES["TokenProto"]
CredentialsKVProto = _CLASSES["CredentialsKVProto"]
CredentialsProto = _CLASSES["CredentialsProto"]
GetDelegationTokenRequestProto = _CLASSES["GetDelegationTokenRequestProto"]
GetDelegationTokenResponseProto = _CLASSES["GetDelegationTokenResponseProto"]
RenewDelegationTokenRequestProto = _CLASSES["RenewDelegationTokenRequestProto"]
RenewDelegationTokenResponseProto = _CLASSES["RenewDelegationTokenResponseProto"]
CancelDelegationTokenRequestProto = _CLASSES["CancelDelegationTokenRequestProto"]
CancelDelegationTokenResponseProto = _CLASSES["CancelDelegationTokenResponseProto"]
