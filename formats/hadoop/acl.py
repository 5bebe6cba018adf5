"""Hadoop's ``acl.proto`` (protobuf package ``hadoop.hdfs``): permissions, ACL entries and
the ACL calls of ``ClientNamenodeProtocol``.

``FsPermissionProto.perm`` carries the 16-bit mode of ``FsPermission.toShort()`` (the nine
rwx bits, the sticky bit 01000). The enums nested in ``AclEntryProto`` are top level here:
``AclEntryScopeProto`` (ACCESS, DEFAULT), ``AclEntryTypeProto`` (USER, GROUP, MASK, OTHER)
and ``AclEntryFsActionProto`` (``FsAction``'s eight values, the rwx bits). Field numbers are
Hadoop 3's.
"""

from __future__ import annotations

from nnlite.formats.hadoop.proto import Schema

S = Schema("nnlite.hadoop.hdfs.acl")

S.message("FsPermissionProto",
          "required uint32 perm = 1")
AclEntryScopeProto = S.enum("AclEntryScopeProto", ACCESS=0, DEFAULT=1)
AclEntryTypeProto = S.enum("AclEntryTypeProto", USER=0, GROUP=1, MASK=2, OTHER=3)
AclEntryFsActionProto = S.enum("AclEntryFsActionProto", NONE=0, EXECUTE=1, WRITE=2,
                               WRITE_EXECUTE=3, READ=4, READ_EXECUTE=5, READ_WRITE=6, PERM_ALL=7)
S.message("AclEntryProto",
          "required AclEntryTypeProto type = 1",
          "required AclEntryScopeProto scope = 2",
          "required AclEntryFsActionProto permissions = 3",
          "optional string name = 4")
S.message("AclStatusProto",
          "required string owner = 1",
          "required string group = 2",
          "required bool sticky = 3",
          "repeated AclEntryProto entries = 4",
          "optional FsPermissionProto permission = 5")
S.message("ModifyAclEntriesRequestProto",
          "required string src = 1",
          "repeated AclEntryProto aclSpec = 2")
S.message("ModifyAclEntriesResponseProto")
S.message("RemoveAclRequestProto",
          "required string src = 1")
S.message("RemoveAclResponseProto")
S.message("RemoveAclEntriesRequestProto",
          "required string src = 1",
          "repeated AclEntryProto aclSpec = 2")
S.message("RemoveAclEntriesResponseProto")
S.message("RemoveDefaultAclRequestProto",
          "required string src = 1")
S.message("RemoveDefaultAclResponseProto")
S.message("SetAclRequestProto",
          "required string src = 1",
          "repeated AclEntryProto aclSpec = 2")
S.message("SetAclResponseProto")
S.message("GetAclStatusRequestProto",
          "required string src = 1")
S.message("GetAclStatusResponseProto",
          "required AclStatusProto result = 1")

_CLASSES = S.build()
FsPermissionProto = _CLASSES["FsPermissionProto"]
AclEntryProto = _CLASSES["AclEntryProto"]
AclStatusProto = _CLASSES["AclStatusProto"]
ModifyAclEntriesRequestProto = _CLASSES["ModifyAclEntriesRequestProto"]
ModifyAclEntriesResponseProto = _CLASSES["ModifyAclEntriesResponseProto"]
RemoveAclRequestProto = _CLASSES["RemoveAclRequestProto"]
RemoveAclResponseProto = _CLASSES["RemoveAclResponseProto"]
RemoveAclEntriesRequestProto = _CLASSES["RemoveAclEntriesRequestProto"]
RemoveAclEntriesResponseProto = _CLASSES["RemoveAclEntriesResponseProto"]
RemoveDefaultAclRequestProto = _CLASSES["RemoveDefaultAclRequestProto"]
RemoveDefaultAclResponseProto = _CLASSES["RemoveDefaultAclResponseProto"]
SetAclRequestProto = _CLASSES["SetAclRequestProto"]
SetAclResponseProto = _CLASSES["SetAclResponseProto"]
GetAclStatusRequestProto = _CLASSES["GetAclStatusRequestProto"]
GetAclStatusResponseProto = _CLASSES["GetAclStatusResponseProto"]
