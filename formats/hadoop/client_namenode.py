"""Hadoop's ``ClientNamenodeProtocol`` (``org.apache.hadoop.hdfs.protocol.ClientProtocol``
over protobuf): the request and response message of every call, and ``METHODS``, the
service's table from method name to (request class, response class).

The messages are those of ``ClientNamenodeProtocol.proto`` and of the files it imports for
its calls (``xattr.proto``, ``encryption.proto``, ``erasurecoding.proto``), in one schema;
the delegation-token calls use ``Security.proto``'s messages (``security.py``).
``getEditsFromTxid`` (inotify) is left out. Nested enums are top level:
``HAServiceStateProto`` (from ``HAServiceProtocol.proto``), ``CreateFlagProto`` (bits of
``CreateRequestProto.createFlag``: CREATE 1, OVERWRITE 2, APPEND 4, ...), ``XAttrSetFlagProto``
and ``XAttrNamespaceProto`` (``XAttrProto.XAttrNamespaceProto`` in Hadoop).

Conventions of the calls (``ClientNamenodeProtocolTranslatorPB``): paths are absolute
strings; ``getListing``'s ``startAfter`` is the last name of the previous page as bytes;
``CreateRequestProto.masked`` is the mode after the client's umask, ``unmasked`` the mode as
asked; ``getFileInfo`` answers an empty response (no ``fs`` field) for a missing path.
Field numbers are Hadoop 3.3/3.4's.
"""

from __future__ import annotations

from nnlite.formats.hadoop import acl, security
from nnlite.formats.hadoop.acl import S as ACL
from nnlite.formats.hadoop.hdfs import S as HDFS
from nnlite.formats.hadoop.proto import Schema
from nnlite.formats.hadoop.security import S as SECURITY

PROTOCOL = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
VERSION = 1

S = Schema("nnlite.hadoop.hdfs.client", uses=[SECURITY, ACL, HDFS])

HAServiceStateProto = S.enum("HAServiceStateProto", INITIALIZING=0, ACTIVE=1, STANDBY=2,
                             OBSERVER=3)
XAttrNamespaceProto = S.enum("XAttrNamespaceProto", USER=0, TRUSTED=1, SECURITY=2, SYSTEM=3, RAW=4)
S.message("XAttrProto",
          "required XAttrNamespaceProto namespace = 1",
          "required string name = 2",
          "optional bytes value = 3")
XAttrSetFlagProto = S.enum("XAttrSetFlagProto", XATTR_CREATE=1, XATTR_REPLACE=2)
S.message("SetXAttrRequestProto",
          "required string src = 1",
          "optional XAttrProto xAttr = 2",
          "optional uint32 flag = 3")
S.message("SetXAttrResponseProto")
S.message("GetXAttrsRequestProto",
          "required string src = 1",
          "repeated XAttrProto xAttrs = 2")
S.message("GetXAttrsResponseProto",
          "repeated XAttrProto xAttrs = 1")
S.message("ListXAttrsRequestProto",
          "required string src = 1")
S.message("ListXAttrsResponseProto",
          "repeated XAttrProto xAttrs = 1")
S.message("RemoveXAttrRequestProto",
          "required string src = 1",
          "optional XAttrProto xAttr = 2")
S.message("RemoveXAttrResponseProto")
S.message("CreateEncryptionZoneRequestProto",
          "required string src = 1",
          "optional string keyName = 2")
S.message("CreateEncryptionZoneResponseProto")
S.message("ListEncryptionZonesRequestProto",
          "required int64 id = 1")
S.message("EncryptionZoneProto",
          "required int64 id = 1",
          "required string path = 2",
          "required CipherSuiteProto suite = 3",
          "required CryptoProtocolVersionProto cryptoProtocolVersion = 4",
          "required string keyName = 5")
S.message("ListEncryptionZonesResponseProto",
          "repeated EncryptionZoneProto zones = 1",
          "required bool hasMore = 2")
ReencryptActionProto = S.enum("ReencryptActionProto", CANCEL_REENCRYPT=1, START_REENCRYPT=2)
S.message("ReencryptEncryptionZoneRequestProto",
          "required ReencryptActionProto action = 1",
          "required string zone = 2")
S.message("ReencryptEncryptionZoneResponseProto")
S.message("ListReencryptionStatusRequestProto",
          "required int64 id = 1")
ReencryptionStateProto = S.enum("ReencryptionStateProto", SUBMITTED=1, PROCESSING=2, COMPLETED=3)
S.message("ZoneReencryptionStatusProto",
          "required int64 id = 1",
          "required string path = 2",
          "required ReencryptionStateProto state = 3",
          "required string ezKeyVersionName = 4",
          "required int64 submissionTime = 5",
          "required bool canceled = 6",
          "required int64 numReencrypted = 7",
          "required int64 numFailures = 8",
          "optional int64 completionTime = 9",
          "optional string lastFile = 10")
S.message("ListReencryptionStatusResponseProto",
          "repeated ZoneReencryptionStatusProto statuses = 1",
          "required bool hasMore = 2")
S.message("GetEZForPathRequestProto",
          "required string src = 1")
S.message("GetEZForPathResponseProto",
          "optional EncryptionZoneProto zone = 1")
S.message("SetErasureCodingPolicyRequestProto",
          "required string src = 1",
          "optional string ecPolicyName = 2")
S.message("SetErasureCodingPolicyResponseProto")
S.message("GetErasureCodingPoliciesRequestProto")
S.message("GetErasureCodingPoliciesResponseProto",
          "repeated ErasureCodingPolicyProto ecPolicies = 1")
S.message("GetErasureCodingCodecsRequestProto")
S.message("GetErasureCodingCodecsResponseProto",
          "repeated CodecProto codec = 1")
S.message("GetErasureCodingPolicyRequestProto",
          "required string src = 1")
S.message("GetErasureCodingPolicyResponseProto",
          "optional ErasureCodingPolicyProto ecPolicy = 1")
S.message("AddErasureCodingPoliciesRequestProto",
          "repeated ErasureCodingPolicyProto ecPolicies = 1")
S.message("AddErasureCodingPoliciesResponseProto",
          "repeated AddErasureCodingPolicyResponseProto responses = 1")
S.message("RemoveErasureCodingPolicyRequestProto",
          "required string ecPolicyName = 1")
S.message("RemoveErasureCodingPolicyResponseProto")
S.message("EnableErasureCodingPolicyRequestProto",
          "required string ecPolicyName = 1")
S.message("EnableErasureCodingPolicyResponseProto")
S.message("DisableErasureCodingPolicyRequestProto",
          "required string ecPolicyName = 1")
S.message("DisableErasureCodingPolicyResponseProto")
S.message("UnsetErasureCodingPolicyRequestProto",
          "required string src = 1")
S.message("UnsetErasureCodingPolicyResponseProto")
S.message("GetECTopologyResultForPoliciesRequestProto",
          "repeated string policies = 1")
S.message("GetECTopologyResultForPoliciesResponseProto",
          "required ECTopologyVerifierResultProto response = 1")
S.message("BlockECReconstructionInfoProto",
          "required ExtendedBlockProto block = 1",
          "required DatanodeInfosProto sourceDnInfos = 2",
          "required DatanodeInfosProto targetDnInfos = 3",
          "required StorageUuidsProto targetStorageUuids = 4",
          "required StorageTypesProto targetStorageTypes = 5",
          "required bytes liveBlockIndices = 6",
          "required ErasureCodingPolicyProto ecPolicy = 7",
          "optional bytes excludeReconstructedIndices = 8")
S.message("CodecProto",
          "required string codec = 1",
          "required string coders = 2")
S.message("GetBlockLocationsRequestProto",
          "required string src = 1",
          "required uint64 offset = 2",
          "required uint64 length = 3")
S.message("GetBlockLocationsResponseProto",
          "optional LocatedBlocksProto locations = 1")
S.message("GetServerDefaultsRequestProto")
S.message("GetServerDefaultsResponseProto",
          "required FsServerDefaultsProto serverDefaults = 1")
CreateFlagProto = S.enum("CreateFlagProto", CREATE=1, OVERWRITE=2, APPEND=4, LAZY_PERSIST=16,
                         NEW_BLOCK=32, SHOULD_REPLICATE=128)
S.message("CreateRequestProto",
          "required string src = 1",
          "required FsPermissionProto masked = 2",
          "required string clientName = 3",
          "required uint32 createFlag = 4",
          "required bool createParent = 5",
          "required uint32 replication = 6",
          "required uint64 blockSize = 7",
          "repeated CryptoProtocolVersionProto cryptoProtocolVersion = 8",
          "optional FsPermissionProto unmasked = 9",
          "optional string ecPolicyName = 10",
          "optional string storagePolicy = 11")
S.message("CreateResponseProto",
          "optional HdfsFileStatusProto fs = 1")
S.message("AppendRequestProto",
          "required string src = 1",
          "required string clientName = 2",
          "optional uint32 flag = 3")
S.message("AppendResponseProto",
          "optional LocatedBlockProto block = 1",
          "optional HdfsFileStatusProto stat = 2")
S.message("SetReplicationRequestProto",
          "required string src = 1",
          "required uint32 replication = 2")
S.message("SetReplicationResponseProto",
          "required bool result = 1")
S.message("SetStoragePolicyRequestProto",
          "required string src = 1",
          "required string policyName = 2")
S.message("SetStoragePolicyResponseProto")
S.message("UnsetStoragePolicyRequestProto",
          "required string src = 1")
S.message("UnsetStoragePolicyResponseProto")
S.message("GetStoragePolicyRequestProto",
          "required string path = 1")
S.message("GetStoragePolicyResponseProto",
          "required BlockStoragePolicyProto storagePolicy = 1")
S.message("GetStoragePoliciesRequestProto")
S.message("GetStoragePoliciesResponseProto",
          "repeated BlockStoragePolicyProto policies = 1")
S.message("SetPermissionRequestProto",
          "required string src = 1",
          "required FsPermissionProto permission = 2")
S.message("SetPermissionResponseProto")
S.message("SetOwnerRequestProto",
          "required string src = 1",
          "optional string username = 2",
          "optional string groupname = 3")
S.message("SetOwnerResponseProto")
S.message("AbandonBlockRequestProto",
          "required ExtendedBlockProto b = 1",
          "required string src = 2",
          "required string holder = 3",
          "optional uint64 fileId = 4 [default = 0]")
S.message("AbandonBlockResponseProto")
AddBlockFlagProto = S.enum("AddBlockFlagProto", NO_LOCAL_WRITE=1, IGNORE_CLIENT_LOCALITY=2)
S.message("AddBlockRequestProto",
          "required string src = 1",
          "required string clientName = 2",
          "optional ExtendedBlockProto previous = 3",
          "repeated DatanodeInfoProto excludeNodes = 4",
          "optional uint64 fileId = 5 [default = 0]",
          "repeated string favoredNodes = 6",
          "repeated AddBlockFlagProto flags = 7")
S.message("AddBlockResponseProto",
          "required LocatedBlockProto block = 1")
S.message("GetAdditionalDatanodeRequestProto",
          "required string src = 1",
          "required ExtendedBlockProto blk = 2",
          "repeated DatanodeInfoProto existings = 3",
          "repeated DatanodeInfoProto excludes = 4",
          "required uint32 numAdditionalNodes = 5",
          "required string clientName = 6",
          "repeated string existingStorageUuids = 7",
          "optional uint64 fileId = 8 [default = 0]")
S.message("GetAdditionalDatanodeResponseProto",
          "required LocatedBlockProto block = 1")
S.message("CompleteRequestProto",
          "required string src = 1",
          "required string clientName = 2",
          "optional ExtendedBlockProto last = 3",
          "optional uint64 fileId = 4 [default = 0]")
S.message("CompleteResponseProto",
          "required bool result = 1")
S.message("ReportBadBlocksRequestProto",
          "repeated LocatedBlockProto blocks = 1")
S.message("ReportBadBlocksResponseProto")
S.message("ConcatRequestProto",
          "required string trg = 1",
          "repeated string srcs = 2")
S.message("ConcatResponseProto")
S.message("TruncateRequestProto",
          "required string src = 1",
          "required uint64 newLength = 2",
          "required string clientName = 3")
S.message("TruncateResponseProto",
          "required bool result = 1")
S.message("RenameRequestProto",
          "required string src = 1",
          "required string dst = 2")
S.message("RenameResponseProto",
          "required bool result = 1")
S.message("Rename2RequestProto",
          "required string src = 1",
          "required string dst = 2",
          "required bool overwriteDest = 3",
          "optional bool moveToTrash = 4")
S.message("Rename2ResponseProto")
S.message("DeleteRequestProto",
          "required string src = 1",
          "required bool recursive = 2")
S.message("DeleteResponseProto",
          "required bool result = 1")
S.message("MkdirsRequestProto",
          "required string src = 1",
          "required FsPermissionProto masked = 2",
          "required bool createParent = 3",
          "optional FsPermissionProto unmasked = 4")
S.message("MkdirsResponseProto",
          "required bool result = 1")
S.message("GetListingRequestProto",
          "required string src = 1",
          "required bytes startAfter = 2",
          "required bool needLocation = 3")
S.message("GetListingResponseProto",
          "optional DirectoryListingProto dirList = 1")
S.message("GetBatchedListingRequestProto",
          "repeated string paths = 1",
          "required bytes startAfter = 2",
          "required bool needLocation = 3")
S.message("GetBatchedListingResponseProto",
          "repeated BatchedDirectoryListingProto listings = 1",
          "required bool hasMore = 2",
          "required bytes startAfter = 3")
S.message("GetSnapshottableDirListingRequestProto")
S.message("GetSnapshottableDirListingResponseProto",
          "optional SnapshottableDirectoryListingProto snapshottableDirList = 1")
S.message("GetSnapshotListingRequestProto",
          "required string snapshotRoot = 1")
S.message("GetSnapshotListingResponseProto",
          "optional SnapshotListingProto snapshotList = 1")
S.message("GetSnapshotDiffReportRequestProto",
          "required string snapshotRoot = 1",
          "required string fromSnapshot = 2",
          "required string toSnapshot = 3")
S.message("GetSnapshotDiffReportResponseProto",
          "required SnapshotDiffReportProto diffReport = 1")
S.message("GetSnapshotDiffReportListingRequestProto",
          "required string snapshotRoot = 1",
          "required string fromSnapshot = 2",
          "required string toSnapshot = 3",
          "optional SnapshotDiffReportCursorProto cursor = 4")
S.message("GetSnapshotDiffReportListingResponseProto",
          "required SnapshotDiffReportListingProto diffReport = 1")
S.message("RenewLeaseRequestProto",
          "required string clientName = 1",
          "repeated string namespaces = 2")
S.message("RenewLeaseResponseProto")
S.message("RecoverLeaseRequestProto",
          "required string src = 1",
          "required string clientName = 2")
S.message("RecoverLeaseResponseProto",
          "required bool result = 1")
S.message("GetFsStatusRequestProto")
S.message("GetFsStatsResponseProto",
          "required uint64 capacity = 1",
          "required uint64 used = 2",
          "required uint64 remaining = 3",
          "required uint64 under_replicated = 4",
          "required uint64 corrupt_blocks = 5",
          "required uint64 missing_blocks = 6",
          "optional uint64 missing_repl_one_blocks = 7",
          "optional uint64 blocks_in_future = 8",
          "optional uint64 pending_deletion_blocks = 9")
S.message("GetFsReplicatedBlockStatsRequestProto")
S.message("GetFsReplicatedBlockStatsResponseProto",
          "required uint64 low_redundancy = 1",
          "required uint64 corrupt_blocks = 2",
          "required uint64 missing_blocks = 3",
          "required uint64 missing_repl_one_blocks = 4",
          "required uint64 blocks_in_future = 5",
          "required uint64 pending_deletion_blocks = 6",
          "optional uint64 highest_prio_low_redundancy_blocks = 7")
S.message("GetFsECBlockGroupStatsRequestProto")
S.message("GetFsECBlockGroupStatsResponseProto",
          "required uint64 low_redundancy = 1",
          "required uint64 corrupt_blocks = 2",
          "required uint64 missing_blocks = 3",
          "required uint64 blocks_in_future = 4",
          "required uint64 pending_deletion_blocks = 5",
          "optional uint64 highest_prio_low_redundancy_blocks = 6")
DatanodeReportTypeProto = S.enum("DatanodeReportTypeProto", ALL=1, LIVE=2, DEAD=3,
                                 DECOMMISSIONING=4, ENTERING_MAINTENANCE=5, IN_MAINTENANCE=6)
S.message("GetDatanodeReportRequestProto",
          "required DatanodeReportTypeProto type = 1")
S.message("GetDatanodeReportResponseProto",
          "repeated DatanodeInfoProto di = 1")
S.message("GetDatanodeStorageReportRequestProto",
          "required DatanodeReportTypeProto type = 1")
S.message("DatanodeStorageReportProto",
          "required DatanodeInfoProto datanodeInfo = 1",
          "repeated StorageReportProto storageReports = 2")
S.message("GetDatanodeStorageReportResponseProto",
          "repeated DatanodeStorageReportProto datanodeStorageReports = 1")
S.message("GetPreferredBlockSizeRequestProto",
          "required string filename = 1")
S.message("GetPreferredBlockSizeResponseProto",
          "required uint64 bsize = 1")
S.message("GetSlowDatanodeReportRequestProto")
S.message("GetSlowDatanodeReportResponseProto",
          "repeated DatanodeInfoProto datanodeInfoProto = 1")
SafeModeActionProto = S.enum("SafeModeActionProto", SAFEMODE_LEAVE=1, SAFEMODE_ENTER=2,
                             SAFEMODE_GET=3, SAFEMODE_FORCE_EXIT=4)
S.message("SetSafeModeRequestProto",
          "required SafeModeActionProto action = 1",
          "optional bool checked = 2 [default = false]")
S.message("SetSafeModeResponseProto",
          "required bool result = 1")
S.message("SaveNamespaceRequestProto",
          "optional uint64 timeWindow = 1 [default = 0]",
          "optional uint64 txGap = 2 [default = 0]")
S.message("SaveNamespaceResponseProto",
          "optional bool saved = 1 [default = true]")
S.message("RollEditsRequestProto")
S.message("RollEditsResponseProto",
          "required uint64 newSegmentTxId = 1")
S.message("RestoreFailedStorageRequestProto",
          "required string arg = 1")
S.message("RestoreFailedStorageResponseProto",
          "required bool result = 1")
S.message("RefreshNodesRequestProto")
S.message("RefreshNodesResponseProto")
S.message("FinalizeUpgradeRequestProto")
S.message("FinalizeUpgradeResponseProto")
S.message("UpgradeStatusRequestProto")
S.message("UpgradeStatusResponseProto",
          "required bool upgradeFinalized = 1")
RollingUpgradeActionProto = S.enum("RollingUpgradeActionProto", QUERY=1, START=2, FINALIZE=3)
S.message("RollingUpgradeRequestProto",
          "required RollingUpgradeActionProto action = 1")
S.message("RollingUpgradeInfoProto",
          "required RollingUpgradeStatusProto status = 1",
          "required uint64 startTime = 2",
          "required uint64 finalizeTime = 3",
          "required bool createdRollbackImages = 4")
S.message("RollingUpgradeResponseProto",
          "optional RollingUpgradeInfoProto rollingUpgradeInfo = 1")
S.message("ListCorruptFileBlocksRequestProto",
          "required string path = 1",
          "optional string cookie = 2")
S.message("ListCorruptFileBlocksResponseProto",
          "required CorruptFileBlocksProto corrupt = 1")
S.message("MetaSaveRequestProto",
          "required string filename = 1")
S.message("MetaSaveResponseProto")
S.message("GetFileInfoRequestProto",
          "required string src = 1")
S.message("GetFileInfoResponseProto",
          "optional HdfsFileStatusProto fs = 1")
S.message("GetLocatedFileInfoRequestProto",
          "optional string src = 1",
          "optional bool needBlockToken = 2 [default = false]")
S.message("GetLocatedFileInfoResponseProto",
          "optional HdfsFileStatusProto fs = 1")
S.message("IsFileClosedRequestProto",
          "required string src = 1")
S.message("IsFileClosedResponseProto",
          "required bool result = 1")
S.message("CacheDirectiveInfoProto",
          "optional int64 id = 1",
          "optional string path = 2",
          "optional uint32 replication = 3",
          "optional string pool = 4",
          "optional CacheDirectiveInfoExpirationProto expiration = 5")
S.message("CacheDirectiveInfoExpirationProto",
          "required int64 millis = 1",
          "required bool isRelative = 2")
S.message("CacheDirectiveStatsProto",
          "required int64 bytesNeeded = 1",
          "required int64 bytesCached = 2",
          "required int64 filesNeeded = 3",
          "required int64 filesCached = 4",
          "required bool hasExpired = 5")
CacheFlagProto = S.enum("CacheFlagProto", FORCE=1)
S.message("AddCacheDirectiveRequestProto",
          "required CacheDirectiveInfoProto info = 1",
          "optional uint32 cacheFlags = 2")
S.message("AddCacheDirectiveResponseProto",
          "required int64 id = 1")
S.message("ModifyCacheDirectiveRequestProto",
          "required CacheDirectiveInfoProto info = 1",
          "optional uint32 cacheFlags = 2")
S.message("ModifyCacheDirectiveResponseProto")
S.message("RemoveCacheDirectiveRequestProto",
          "required int64 id = 1")
S.message("RemoveCacheDirectiveResponseProto")
S.message("ListCacheDirectivesRequestProto",
          "required int64 prevId = 1",
          "required CacheDirectiveInfoProto filter = 2")
S.message("CacheDirectiveEntryProto",
          "required CacheDirectiveInfoProto info = 1",
          "required CacheDirectiveStatsProto stats = 2")
S.message("ListCacheDirectivesResponseProto",
          "repeated CacheDirectiveEntryProto elements = 1",
          "required bool hasMore = 2")
S.message("CachePoolInfoProto",
          "optional string poolName = 1",
          "optional string ownerName = 2",
          "optional string groupName = 3",
          "optional int32 mode = 4",
          "optional int64 limit = 5",
          "optional int64 maxRelativeExpiry = 6",
          "optional uint32 defaultReplication = 7 [default = 1]")
S.message("CachePoolStatsProto",
          "required int64 bytesNeeded = 1",
          "required int64 bytesCached = 2",
          "required int64 bytesOverlimit = 3",
          "required int64 filesNeeded = 4",
          "required int64 filesCached = 5")
S.message("AddCachePoolRequestProto",
          "required CachePoolInfoProto info = 1")
S.message("AddCachePoolResponseProto")
S.message("ModifyCachePoolRequestProto",
          "required CachePoolInfoProto info = 1")
S.message("ModifyCachePoolResponseProto")
S.message("RemoveCachePoolRequestProto",
          "required string poolName = 1")
S.message("RemoveCachePoolResponseProto")
S.message("ListCachePoolsRequestProto",
          "required string prevPoolName = 1")
S.message("ListCachePoolsResponseProto",
          "repeated CachePoolEntryProto entries = 1",
          "required bool hasMore = 2")
S.message("CachePoolEntryProto",
          "required CachePoolInfoProto info = 1",
          "required CachePoolStatsProto stats = 2")
S.message("GetFileLinkInfoRequestProto",
          "required string src = 1")
S.message("GetFileLinkInfoResponseProto",
          "optional HdfsFileStatusProto fs = 1")
S.message("GetContentSummaryRequestProto",
          "required string path = 1")
S.message("GetContentSummaryResponseProto",
          "required ContentSummaryProto summary = 1")
S.message("GetQuotaUsageRequestProto",
          "required string path = 1")
S.message("GetQuotaUsageResponseProto",
          "required QuotaUsageProto usage = 1")
S.message("SetQuotaRequestProto",
          "required string path = 1",
          "required uint64 namespaceQuota = 2",
          "required uint64 storagespaceQuota = 3",
          "optional StorageTypeProto storageType = 4")
S.message("SetQuotaResponseProto")
S.message("FsyncRequestProto",
          "required string src = 1",
          "required string client = 2",
          "optional sint64 lastBlockLength = 3 [default = -1]",
          "optional uint64 fileId = 4 [default = 0]")
S.message("FsyncResponseProto")
S.message("SetTimesRequestProto",
          "required string src = 1",
          "required uint64 mtime = 2",
          "required uint64 atime = 3")
S.message("SetTimesResponseProto")
S.message("CreateSymlinkRequestProto",
          "required string target = 1",
          "required string link = 2",
          "required FsPermissionProto dirPerm = 3",
          "required bool createParent = 4")
S.message("CreateSymlinkResponseProto")
S.message("GetLinkTargetRequestProto",
          "required string path = 1")
S.message("GetLinkTargetResponseProto",
          "optional string targetPath = 1")
S.message("UpdateBlockForPipelineRequestProto",
          "required ExtendedBlockProto block = 1",
          "required string clientName = 2")
S.message("UpdateBlockForPipelineResponseProto",
          "required LocatedBlockProto block = 1")
S.message("UpdatePipelineRequestProto",
          "required string clientName = 1",
          "required ExtendedBlockProto oldBlock = 2",
          "required ExtendedBlockProto newBlock = 3",
          "repeated DatanodeIDProto newNodes = 4",
          "repeated string storageIDs = 5")
S.message("UpdatePipelineResponseProto")
S.message("SetBalancerBandwidthRequestProto",
          "required int64 bandwidth = 1")
S.message("SetBalancerBandwidthResponseProto")
S.message("GetDataEncryptionKeyRequestProto")
S.message("GetDataEncryptionKeyResponseProto",
          "optional DataEncryptionKeyProto dataEncryptionKey = 1")
S.message("CreateSnapshotRequestProto",
          "required string snapshotRoot = 1",
          "optional string snapshotName = 2")
S.message("CreateSnapshotResponseProto",
          "required string snapshotPath = 1")
S.message("RenameSnapshotRequestProto",
          "required string snapshotRoot = 1",
          "required string snapshotOldName = 2",
          "required string snapshotNewName = 3")
S.message("RenameSnapshotResponseProto")
S.message("AllowSnapshotRequestProto",
          "required string snapshotRoot = 1")
S.message("AllowSnapshotResponseProto")
S.message("DisallowSnapshotRequestProto",
          "required string snapshotRoot = 1")
S.message("DisallowSnapshotResponseProto")
S.message("DeleteSnapshotRequestProto",
          "required string snapshotRoot = 1",
          "required string snapshotName = 2")
S.message("DeleteSnapshotResponseProto")
S.message("CheckAccessRequestProto",
          "required string path = 1",
          "required AclEntryFsActionProto mode = 2")
S.message("CheckAccessResponseProto")
S.message("GetCurrentEditLogTxidRequestProto")
S.message("GetCurrentEditLogTxidResponseProto",
          "required int64 txid = 1")
OpenFilesTypeProto = S.enum("OpenFilesTypeProto", ALL_OPEN_FILES=1, BLOCKING_DECOMMISSION=2)
S.message("ListOpenFilesRequestProto",
          "required int64 id = 1",
          "repeated OpenFilesTypeProto types = 2",
          "optional string path = 3")
S.message("OpenFilesBatchResponseProto",
          "required int64 id = 1",
          "required string path = 2",
          "required string clientName = 3",
          "required string clientMachine = 4")
S.message("ListOpenFilesResponseProto",
          "repeated OpenFilesBatchResponseProto entries = 1",
          "required bool hasMore = 2",
          "repeated OpenFilesTypeProto types = 3")
S.message("MsyncRequestProto")
S.message("MsyncResponseProto")
S.message("SatisfyStoragePolicyRequestProto",
          "required string src = 1")
S.message("SatisfyStoragePolicyResponseProto")
S.message("HAServiceStateRequestProto")
S.message("HAServiceStateResponseProto",
          "required HAServiceStateProto state = 1")

_CLASSES = S.build()
XAttrProto = _CLASSES["XAttrProto"]
SetXAttrRequestProto = _CLASSES["SetXAttrRequestProto"]
SetXAttrResponseProto = _CLASSES["SetXAttrResponseProto"]
GetXAttrsRequestProto = _CLASSES["GetXAttrsRequestProto"]
GetXAttrsResponseProto = _CLASSES["GetXAttrsResponseProto"]
ListXAttrsRequestProto = _CLASSES["ListXAttrsRequestProto"]
ListXAttrsResponseProto = _CLASSES["ListXAttrsResponseProto"]
RemoveXAttrRequestProto = _CLASSES["RemoveXAttrRequestProto"]
RemoveXAttrResponseProto = _CLASSES["RemoveXAttrResponseProto"]
CreateEncryptionZoneRequestProto = _CLASSES["CreateEncryptionZoneRequestProto"]
CreateEncryptionZoneResponseProto = _CLASSES["CreateEncryptionZoneResponseProto"]
ListEncryptionZonesRequestProto = _CLASSES["ListEncryptionZonesRequestProto"]
EncryptionZoneProto = _CLASSES["EncryptionZoneProto"]
ListEncryptionZonesResponseProto = _CLASSES["ListEncryptionZonesResponseProto"]
ReencryptEncryptionZoneRequestProto = _CLASSES["ReencryptEncryptionZoneRequestProto"]
ReencryptEncryptionZoneResponseProto = _CLASSES["ReencryptEncryptionZoneResponseProto"]
ListReencryptionStatusRequestProto = _CLASSES["ListReencryptionStatusRequestProto"]
ZoneReencryptionStatusProto = _CLASSES["ZoneReencryptionStatusProto"]
ListReencryptionStatusResponseProto = _CLASSES["ListReencryptionStatusResponseProto"]
GetEZForPathRequestProto = _CLASSES["GetEZForPathRequestProto"]
GetEZForPathResponseProto = _CLASSES["GetEZForPathResponseProto"]
SetErasureCodingPolicyRequestProto = _CLASSES["SetErasureCodingPolicyRequestProto"]
SetErasureCodingPolicyResponseProto = _CLASSES["SetErasureCodingPolicyResponseProto"]
GetErasureCodingPoliciesRequestProto = _CLASSES["GetErasureCodingPoliciesRequestProto"]
GetErasureCodingPoliciesResponseProto = _CLASSES["GetErasureCodingPoliciesResponseProto"]
GetErasureCodingCodecsRequestProto = _CLASSES["GetErasureCodingCodecsRequestProto"]
GetErasureCodingCodecsResponseProto = _CLASSES["GetErasureCodingCodecsResponseProto"]
GetErasureCodingPolicyRequestProto = _CLASSES["GetErasureCodingPolicyRequestProto"]
GetErasureCodingPolicyResponseProto = _CLASSES["GetErasureCodingPolicyResponseProto"]
AddErasureCodingPoliciesRequestProto = _CLASSES["AddErasureCodingPoliciesRequestProto"]
AddErasureCodingPoliciesResponseProto = _CLASSES["AddErasureCodingPoliciesResponseProto"]
RemoveErasureCodingPolicyRequestProto = _CLASSES["RemoveErasureCodingPolicyRequestProto"]
RemoveErasureCodingPolicyResponseProto = _CLASSES["RemoveErasureCodingPolicyResponseProto"]
EnableErasureCodingPolicyRequestProto = _CLASSES["EnableErasureCodingPolicyRequestProto"]
EnableErasureCodingPolicyResponseProto = _CLASSES["EnableErasureCodingPolicyResponseProto"]
DisableErasureCodingPolicyRequestProto = _CLASSES["DisableErasureCodingPolicyRequestProto"]
DisableErasureCodingPolicyResponseProto = _CLASSES["DisableErasureCodingPolicyResponseProto"]
UnsetErasureCodingPolicyRequestProto = _CLASSES["UnsetErasureCodingPolicyRequestProto"]
UnsetErasureCodingPolicyResponseProto = _CLASSES["UnsetErasureCodingPolicyResponseProto"]
GetECTopologyResultForPoliciesRequestProto = _CLASSES["GetECTopologyResultForPoliciesRequestProto"]
GetECTopologyResultForPoliciesResponseProto = (
    _CLASSES["GetECTopologyResultForPoliciesResponseProto"])
BlockECReconstructionInfoProto = _CLASSES["BlockECReconstructionInfoProto"]
CodecProto = _CLASSES["CodecProto"]
GetBlockLocationsRequestProto = _CLASSES["GetBlockLocationsRequestProto"]
GetBlockLocationsResponseProto = _CLASSES["GetBlockLocationsResponseProto"]
GetServerDefaultsRequestProto = _CLASSES["GetServerDefaultsRequestProto"]
GetServerDefaultsResponseProto = _CLASSES["GetServerDefaultsResponseProto"]
CreateRequestProto = _CLASSES["CreateRequestProto"]
CreateResponseProto = _CLASSES["CreateResponseProto"]
AppendRequestProto = _CLASSES["AppendRequestProto"]
AppendResponseProto = _CLASSES["AppendResponseProto"]
SetReplicationRequestProto = _CLASSES["SetReplicationRequestProto"]
SetReplicationResponseProto = _CLASSES["SetReplicationResponseProto"]
SetStoragePolicyRequestProto = _CLASSES["SetStoragePolicyRequestProto"]
SetStoragePolicyResponseProto = _CLASSES["SetStoragePolicyResponseProto"]
UnsetStoragePolicyRequestProto = _CLASSES["UnsetStoragePolicyRequestProto"]
UnsetStoragePolicyResponseProto = _CLASSES["UnsetStoragePolicyResponseProto"]
GetStoragePolicyRequestProto = _CLASSES["GetStoragePolicyRequestProto"]
GetStoragePolicyResponseProto = _CLASSES["GetStoragePolicyResponseProto"]
GetStoragePoliciesRequestProto = _CLASSES["GetStoragePoliciesRequestProto"]
GetStoragePoliciesResponseProto = _CLASSES["GetStoragePoliciesResponseProto"]
SetPermissionRequestProto = _CLASSES["SetPermissionRequestProto"]
SetPermissionResponseProto = _CLASSES["SetPermissionResponseProto"]
SetOwnerRequestProto = _CLASSES["SetOwnerRequestProto"]
SetOwnerResponseProto = _CLASSES["SetOwnerResponseProto"]
AbandonBlockRequestProto = _CLASSES["AbandonBlockRequestProto"]
AbandonBlockResponseProto = _CLASSES["AbandonBlockResponseProto"]
AddBlockRequestProto = _CLASSES["AddBlockRequestProto"]
AddBlockResponseProto = _CLASSES["AddBlockResponseProto"]
GetAdditionalDatanodeRequestProto = _CLASSES["GetAdditionalDatanodeRequestProto"]
GetAdditionalDatanodeResponseProto = _CLASSES["GetAdditionalDatanodeResponseProto"]
CompleteRequestProto = _CLASSES["CompleteRequestProto"]
CompleteResponseProto = _CLASSES["CompleteResponseProto"]
ReportBadBlocksRequestProto = _CLASSES["ReportBadBlocksRequestProto"]
ReportBadBlocksResponseProto = _CLASSES["ReportBadBlocksResponseProto"]
ConcatRequestProto = _CLASSES["ConcatRequestProto"]
ConcatResponseProto = _CLASSES["ConcatResponseProto"]
TruncateRequestProto = _CLASSES["TruncateRequestProto"]
TruncateResponseProto = _CLASSES["TruncateResponseProto"]
RenameRequestProto = _CLASSES["RenameRequestProto"]
RenameResponseProto = _CLASSES["RenameResponseProto"]
Rename2RequestProto = _CLASSES["Rename2RequestProto"]
Rename2ResponseProto = _CLASSES["Rename2ResponseProto"]
DeleteRequestProto = _CLASSES["DeleteRequestProto"]
DeleteResponseProto = _CLASSES["DeleteResponseProto"]
MkdirsRequestProto = _CLASSES["MkdirsRequestProto"]
MkdirsResponseProto = _CLASSES["MkdirsResponseProto"]
GetListingRequestProto = _CLASSES["GetListingRequestProto"]
GetListingResponseProto = _CLASSES["GetListingResponseProto"]
GetBatchedListingRequestProto = _CLASSES["GetBatchedListingRequestProto"]
GetBatchedListingResponseProto = _CLASSES["GetBatchedListingResponseProto"]
GetSnapshottableDirListingRequestProto = _CLASSES["GetSnapshottableDirListingRequestProto"]
GetSnapshottableDirListingResponseProto = _CLASSES["GetSnapshottableDirListingResponseProto"]
GetSnapshotListingRequestProto = _CLASSES["GetSnapshotListingRequestProto"]
GetSnapshotListingResponseProto = _CLASSES["GetSnapshotListingResponseProto"]
GetSnapshotDiffReportRequestProto = _CLASSES["GetSnapshotDiffReportRequestProto"]
GetSnapshotDiffReportResponseProto = _CLASSES["GetSnapshotDiffReportResponseProto"]
GetSnapshotDiffReportListingRequestProto = _CLASSES["GetSnapshotDiffReportListingRequestProto"]
GetSnapshotDiffReportListingResponseProto = _CLASSES["GetSnapshotDiffReportListingResponseProto"]
RenewLeaseRequestProto = _CLASSES["RenewLeaseRequestProto"]
RenewLeaseResponseProto = _CLASSES["RenewLeaseResponseProto"]
RecoverLeaseRequestProto = _CLASSES["RecoverLeaseRequestProto"]
RecoverLeaseResponseProto = _CLASSES["RecoverLeaseResponseProto"]
GetFsStatusRequestProto = _CLASSES["GetFsStatusRequestProto"]
GetFsStatsResponseProto = _CLASSES["GetFsStatsResponseProto"]
GetFsReplicatedBlockStatsRequestProto = _CLASSES["GetFsReplicatedBlockStatsRequestProto"]
GetFsReplicatedBlockStatsResponseProto = _CLASSES["GetFsReplicatedBlockStatsResponseProto"]
GetFsECBlockGroupStatsRequestProto = _CLASSES["GetFsECBlockGroupStatsRequestProto"]
GetFsECBlockGroupStatsResponseProto = _CLASSES["GetFsECBlockGroupStatsResponseProto"]
GetDatanodeReportRequestProto = _CLASSES["GetDatanodeReportRequestProto"]
GetDatanodeReportResponseProto = _CLASSES["GetDatanodeReportResponseProto"]
GetDatanodeStorageReportRequestProto = _CLASSES["GetDatanodeStorageReportRequestProto"]
DatanodeStorageReportProto = _CLASSES["DatanodeStorageReportProto"]
GetDatanodeStorageReportResponseProto = _CLASSES["GetDatanodeStorageReportResponseProto"]
GetPreferredBlockSizeRequestProto = _CLASSES["GetPreferredBlockSizeRequestProto"]
GetPreferredBlockSizeResponseProto = _CLASSES["GetPreferredBlockSizeResponseProto"]
GetSlowDatanodeReportRequestProto = _CLASSES["GetSlowDatanodeReportRequestProto"]
GetSlowDatanodeReportResponseProto = _CLASSES["GetSlowDatanodeReportResponseProto"]
SetSafeModeRequestProto = _CLASSES["SetSafeModeRequestProto"]
SetSafeModeResponseProto = _CLASSES["SetSafeModeResponseProto"]
SaveNamespaceRequestProto = _CLASSES["SaveNamespaceRequestProto"]
SaveNamespaceResponseProto = _CLASSES["SaveNamespaceResponseProto"]
RollEditsRequestProto = _CLASSES["RollEditsRequestProto"]
RollEditsResponseProto = _CLASSES["RollEditsResponseProto"]
RestoreFailedStorageRequestProto = _CLASSES["RestoreFailedStorageRequestProto"]
RestoreFailedStorageResponseProto = _CLASSES["RestoreFailedStorageResponseProto"]
RefreshNodesRequestProto = _CLASSES["RefreshNodesRequestProto"]
RefreshNodesResponseProto = _CLASSES["RefreshNodesResponseProto"]
FinalizeUpgradeRequestProto = _CLASSES["FinalizeUpgradeRequestProto"]
FinalizeUpgradeResponseProto = _CLASSES["FinalizeUpgradeResponseProto"]
UpgradeStatusRequestProto = _CLASSES["UpgradeStatusRequestProto"]
UpgradeStatusResponseProto = _CLASSES["UpgradeStatusResponseProto"]
RollingUpgradeRequestProto = _CLASSES["RollingUpgradeRequestProto"]
RollingUpgradeInfoProto = _CLASSES["RollingUpgradeInfoProto"]
RollingUpgradeResponseProto = _CLASSES["RollingUpgradeResponseProto"]
ListCorruptFileBlocksRequestProto = _CLASSES["ListCorruptFileBlocksRequestProto"]
ListCorruptFileBlocksResponseProto = _CLASSES["ListCorruptFileBlocksResponseProto"]
MetaSaveRequestProto = _CLASSES["MetaSaveRequestProto"]
MetaSaveResponseProto = _CLASSES["MetaSaveResponseProto"]
GetFileInfoRequestProto = _CLASSES["GetFileInfoRequestProto"]
GetFileInfoResponseProto = _CLASSES["GetFileInfoResponseProto"]
GetLocatedFileInfoRequestProto = _CLASSES["GetLocatedFileInfoRequestProto"]
GetLocatedFileInfoResponseProto = _CLASSES["GetLocatedFileInfoResponseProto"]
IsFileClosedRequestProto = _CLASSES["IsFileClosedRequestProto"]
IsFileClosedResponseProto = _CLASSES["IsFileClosedResponseProto"]
CacheDirectiveInfoProto = _CLASSES["CacheDirectiveInfoProto"]
CacheDirectiveInfoExpirationProto = _CLASSES["CacheDirectiveInfoExpirationProto"]
CacheDirectiveStatsProto = _CLASSES["CacheDirectiveStatsProto"]
AddCacheDirectiveRequestProto = _CLASSES["AddCacheDirectiveRequestProto"]
AddCacheDirectiveResponseProto = _CLASSES["AddCacheDirectiveResponseProto"]
ModifyCacheDirectiveRequestProto = _CLASSES["ModifyCacheDirectiveRequestProto"]
ModifyCacheDirectiveResponseProto = _CLASSES["ModifyCacheDirectiveResponseProto"]
RemoveCacheDirectiveRequestProto = _CLASSES["RemoveCacheDirectiveRequestProto"]
RemoveCacheDirectiveResponseProto = _CLASSES["RemoveCacheDirectiveResponseProto"]
ListCacheDirectivesRequestProto = _CLASSES["ListCacheDirectivesRequestProto"]
CacheDirectiveEntryProto = _CLASSES["CacheDirectiveEntryProto"]
ListCacheDirectivesResponseProto = _CLASSES["ListCacheDirectivesResponseProto"]
CachePoolInfoProto = _CLASSES["CachePoolInfoProto"]
CachePoolStatsProto = _CLASSES["CachePoolStatsProto"]
AddCachePoolRequestProto = _CLASSES["AddCachePoolRequestProto"]
AddCachePoolResponseProto = _CLASSES["AddCachePoolResponseProto"]
ModifyCachePoolRequestProto = _CLASSES["ModifyCachePoolRequestProto"]
ModifyCachePoolResponseProto = _CLASSES["ModifyCachePoolResponseProto"]
RemoveCachePoolRequestProto = _CLASSES["RemoveCachePoolRequestProto"]
RemoveCachePoolResponseProto = _CLASSES["RemoveCachePoolResponseProto"]
ListCachePoolsRequestProto = _CLASSES["ListCachePoolsRequestProto"]
ListCachePoolsResponseProto = _CLASSES["ListCachePoolsResponseProto"]
CachePoolEntryProto = _CLASSES["CachePoolEntryProto"]
GetFileLinkInfoRequestProto = _CLASSES["GetFileLinkInfoRequestProto"]
GetFileLinkInfoResponseProto = _CLASSES["GetFileLinkInfoResponseProto"]
GetContentSummaryRequestProto = _CLASSES["GetContentSummaryRequestProto"]
GetContentSummaryResponseProto = _CLASSES["GetContentSummaryResponseProto"]
GetQuotaUsageRequestProto = _CLASSES["GetQuotaUsageRequestProto"]
GetQuotaUsageResponseProto = _CLASSES["GetQuotaUsageResponseProto"]
SetQuotaRequestProto = _CLASSES["SetQuotaRequestProto"]
SetQuotaResponseProto = _CLASSES["SetQuotaResponseProto"]
FsyncRequestProto = _CLASSES["FsyncRequestProto"]
FsyncResponseProto = _CLASSES["FsyncResponseProto"]
SetTimesRequestProto = _CLASSES["SetTimesRequestProto"]
SetTimesResponseProto = _CLASSES["SetTimesResponseProto"]
CreateSymlinkRequestProto = _CLASSES["CreateSymlinkRequestProto"]
CreateSymlinkResponseProto = _CLASSES["CreateSymlinkResponseProto"]
GetLinkTargetRequestProto = _CLASSES["GetLinkTargetRequestProto"]
GetLinkTargetResponseProto = _CLASSES["GetLinkTargetResponseProto"]
UpdateBlockForPipelineRequestProto = _CLASSES["UpdateBlockForPipelineRequestProto"]
UpdateBlockForPipelineResponseProto = _CLASSES["UpdateBlockForPipelineResponseProto"]
UpdatePipelineRequestProto = _CLASSES["UpdatePipelineRequestProto"]
UpdatePipelineResponseProto = _CLASSES["UpdatePipelineResponseProto"]
SetBalancerBandwidthRequestProto = _CLASSES["SetBalancerBandwidthRequestProto"]
SetBalancerBandwidthResponseProto = _CLASSES["SetBalancerBandwidthResponseProto"]
GetDataEncryptionKeyRequestProto = _CLASSES["GetDataEncryptionKeyRequestProto"]
GetDataEncryptionKeyResponseProto = _CLASSES["GetDataEncryptionKeyResponseProto"]
CreateSnapshotRequestProto = _CLASSES["CreateSnapshotRequestProto"]
CreateSnapshotResponseProto = _CLASSES["CreateSnapshotResponseProto"]
RenameSnapshotRequestProto = _CLASSES["RenameSnapshotRequestProto"]
RenameSnapshotResponseProto = _CLASSES["RenameSnapshotResponseProto"]
AllowSnapshotRequestProto = _CLASSES["AllowSnapshotRequestProto"]
AllowSnapshotResponseProto = _CLASSES["AllowSnapshotResponseProto"]
DisallowSnapshotRequestProto = _CLASSES["DisallowSnapshotRequestProto"]
DisallowSnapshotResponseProto = _CLASSES["DisallowSnapshotResponseProto"]
DeleteSnapshotRequestProto = _CLASSES["DeleteSnapshotRequestProto"]
DeleteSnapshotResponseProto = _CLASSES["DeleteSnapshotResponseProto"]
CheckAccessRequestProto = _CLASSES["CheckAccessRequestProto"]
CheckAccessResponseProto = _CLASSES["CheckAccessResponseProto"]
GetCurrentEditLogTxidRequestProto = _CLASSES["GetCurrentEditLogTxidRequestProto"]
GetCurrentEditLogTxidResponseProto = _CLASSES["GetCurrentEditLogTxidResponseProto"]
ListOpenFilesRequestProto = _CLASSES["ListOpenFilesRequestProto"]
OpenFilesBatchResponseProto = _CLASSES["OpenFilesBatchResponseProto"]
ListOpenFilesResponseProto = _CLASSES["ListOpenFilesResponseProto"]
MsyncRequestProto = _CLASSES["MsyncRequestProto"]
MsyncResponseProto = _CLASSES["MsyncResponseProto"]
SatisfyStoragePolicyRequestProto = _CLASSES["SatisfyStoragePolicyRequestProto"]
SatisfyStoragePolicyResponseProto = _CLASSES["SatisfyStoragePolicyResponseProto"]
HAServiceStateRequestProto = _CLASSES["HAServiceStateRequestProto"]
HAServiceStateResponseProto = _CLASSES["HAServiceStateResponseProto"]


METHODS = {
    "getBlockLocations": (GetBlockLocationsRequestProto, GetBlockLocationsResponseProto),
    "getServerDefaults": (GetServerDefaultsRequestProto, GetServerDefaultsResponseProto),
    "create": (CreateRequestProto, CreateResponseProto),
    "append": (AppendRequestProto, AppendResponseProto),
    "setReplication": (SetReplicationRequestProto, SetReplicationResponseProto),
    "setStoragePolicy": (SetStoragePolicyRequestProto, SetStoragePolicyResponseProto),
    "unsetStoragePolicy": (UnsetStoragePolicyRequestProto, UnsetStoragePolicyResponseProto),
    "getStoragePolicy": (GetStoragePolicyRequestProto, GetStoragePolicyResponseProto),
    "getStoragePolicies": (GetStoragePoliciesRequestProto, GetStoragePoliciesResponseProto),
    "setPermission": (SetPermissionRequestProto, SetPermissionResponseProto),
    "setOwner": (SetOwnerRequestProto, SetOwnerResponseProto),
    "abandonBlock": (AbandonBlockRequestProto, AbandonBlockResponseProto),
    "addBlock": (AddBlockRequestProto, AddBlockResponseProto),
    "getAdditionalDatanode": (GetAdditionalDatanodeRequestProto,
                              GetAdditionalDatanodeResponseProto),
    "complete": (CompleteRequestProto, CompleteResponseProto),
    "reportBadBlocks": (ReportBadBlocksRequestProto, ReportBadBlocksResponseProto),
    "concat": (ConcatRequestProto, ConcatResponseProto),
    "truncate": (TruncateRequestProto, TruncateResponseProto),
    "rename": (RenameRequestProto, RenameResponseProto),
    "rename2": (Rename2RequestProto, Rename2ResponseProto),
    "delete": (DeleteRequestProto, DeleteResponseProto),
    "mkdirs": (MkdirsRequestProto, MkdirsResponseProto),
    "getListing": (GetListingRequestProto, GetListingResponseProto),
    "getBatchedListing": (GetBatchedListingRequestProto, GetBatchedListingResponseProto),
    "renewLease": (RenewLeaseRequestProto, RenewLeaseResponseProto),
    "recoverLease": (RecoverLeaseRequestProto, RecoverLeaseResponseProto),
    "getFsStats": (GetFsStatusRequestProto, GetFsStatsResponseProto),
    "getFsReplicatedBlockStats": (GetFsReplicatedBlockStatsRequestProto,
                                  GetFsReplicatedBlockStatsResponseProto),
    "getFsECBlockGroupStats": (GetFsECBlockGroupStatsRequestProto,
                               GetFsECBlockGroupStatsResponseProto),
    "getDatanodeReport": (GetDatanodeReportRequestProto, GetDatanodeReportResponseProto),
    "getDatanodeStorageReport": (GetDatanodeStorageReportRequestProto,
                                 GetDatanodeStorageReportResponseProto),
    "getPreferredBlockSize": (GetPreferredBlockSizeRequestProto,
                              GetPreferredBlockSizeResponseProto),
    "setSafeMode": (SetSafeModeRequestProto, SetSafeModeResponseProto),
    "saveNamespace": (SaveNamespaceRequestProto, SaveNamespaceResponseProto),
    "rollEdits": (RollEditsRequestProto, RollEditsResponseProto),
    "restoreFailedStorage": (RestoreFailedStorageRequestProto, RestoreFailedStorageResponseProto),
    "refreshNodes": (RefreshNodesRequestProto, RefreshNodesResponseProto),
    "finalizeUpgrade": (FinalizeUpgradeRequestProto, FinalizeUpgradeResponseProto),
    "upgradeStatus": (UpgradeStatusRequestProto, UpgradeStatusResponseProto),
    "rollingUpgrade": (RollingUpgradeRequestProto, RollingUpgradeResponseProto),
    "listCorruptFileBlocks": (ListCorruptFileBlocksRequestProto,
                              ListCorruptFileBlocksResponseProto),
    "metaSave": (MetaSaveRequestProto, MetaSaveResponseProto),
    "getFileInfo": (GetFileInfoRequestProto, GetFileInfoResponseProto),
    "getLocatedFileInfo": (GetLocatedFileInfoRequestProto, GetLocatedFileInfoResponseProto),
    "addCacheDirective": (AddCacheDirectiveRequestProto, AddCacheDirectiveResponseProto),
    "modifyCacheDirective": (ModifyCacheDirectiveRequestProto, ModifyCacheDirectiveResponseProto),
    "removeCacheDirective": (RemoveCacheDirectiveRequestProto, RemoveCacheDirectiveResponseProto),
    "listCacheDirectives": (ListCacheDirectivesRequestProto, ListCacheDirectivesResponseProto),
    "addCachePool": (AddCachePoolRequestProto, AddCachePoolResponseProto),
    "modifyCachePool": (ModifyCachePoolRequestProto, ModifyCachePoolResponseProto),
    "removeCachePool": (RemoveCachePoolRequestProto, RemoveCachePoolResponseProto),
    "listCachePools": (ListCachePoolsRequestProto, ListCachePoolsResponseProto),
    "getFileLinkInfo": (GetFileLinkInfoRequestProto, GetFileLinkInfoResponseProto),
    "getContentSummary": (GetContentSummaryRequestProto, GetContentSummaryResponseProto),
    "setQuota": (SetQuotaRequestProto, SetQuotaResponseProto),
    "fsync": (FsyncRequestProto, FsyncResponseProto),
    "setTimes": (SetTimesRequestProto, SetTimesResponseProto),
    "createSymlink": (CreateSymlinkRequestProto, CreateSymlinkResponseProto),
    "getLinkTarget": (GetLinkTargetRequestProto, GetLinkTargetResponseProto),
    "updateBlockForPipeline": (UpdateBlockForPipelineRequestProto,
                               UpdateBlockForPipelineResponseProto),
    "updatePipeline": (UpdatePipelineRequestProto, UpdatePipelineResponseProto),
    "getDelegationToken": (security.GetDelegationTokenRequestProto,
                           security.GetDelegationTokenResponseProto),
    "renewDelegationToken": (security.RenewDelegationTokenRequestProto,
                             security.RenewDelegationTokenResponseProto),
    "cancelDelegationToken": (security.CancelDelegationTokenRequestProto,
                              security.CancelDelegationTokenResponseProto),
    "setBalancerBandwidth": (SetBalancerBandwidthRequestProto, SetBalancerBandwidthResponseProto),
    "getDataEncryptionKey": (GetDataEncryptionKeyRequestProto, GetDataEncryptionKeyResponseProto),
    "createSnapshot": (CreateSnapshotRequestProto, CreateSnapshotResponseProto),
    "renameSnapshot": (RenameSnapshotRequestProto, RenameSnapshotResponseProto),
    "allowSnapshot": (AllowSnapshotRequestProto, AllowSnapshotResponseProto),
    "disallowSnapshot": (DisallowSnapshotRequestProto, DisallowSnapshotResponseProto),
    "getSnapshottableDirListing": (GetSnapshottableDirListingRequestProto,
                                   GetSnapshottableDirListingResponseProto),
    "getSnapshotListing": (GetSnapshotListingRequestProto, GetSnapshotListingResponseProto),
    "deleteSnapshot": (DeleteSnapshotRequestProto, DeleteSnapshotResponseProto),
    "getSnapshotDiffReport": (GetSnapshotDiffReportRequestProto,
                              GetSnapshotDiffReportResponseProto),
    "getSnapshotDiffReportListing": (GetSnapshotDiffReportListingRequestProto,
                                     GetSnapshotDiffReportListingResponseProto),
    "isFileClosed": (IsFileClosedRequestProto, IsFileClosedResponseProto),
    "modifyAclEntries": (acl.ModifyAclEntriesRequestProto, acl.ModifyAclEntriesResponseProto),
    "removeAclEntries": (acl.RemoveAclEntriesRequestProto, acl.RemoveAclEntriesResponseProto),
    "removeDefaultAcl": (acl.RemoveDefaultAclRequestProto, acl.RemoveDefaultAclResponseProto),
    "removeAcl": (acl.RemoveAclRequestProto, acl.RemoveAclResponseProto),
    "setAcl": (acl.SetAclRequestProto, acl.SetAclResponseProto),
    "getAclStatus": (acl.GetAclStatusRequestProto, acl.GetAclStatusResponseProto),
    "setXAttr": (SetXAttrRequestProto, SetXAttrResponseProto),
    "getXAttrs": (GetXAttrsRequestProto, GetXAttrsResponseProto),
    "listXAttrs": (ListXAttrsRequestProto, ListXAttrsResponseProto),
    "removeXAttr": (RemoveXAttrRequestProto, RemoveXAttrResponseProto),
    "checkAccess": (CheckAccessRequestProto, CheckAccessResponseProto),
    "createEncryptionZone": (CreateEncryptionZoneRequestProto, CreateEncryptionZoneResponseProto),
    "listEncryptionZones": (ListEncryptionZonesRequestProto, ListEncryptionZonesResponseProto),
    "reencryptEncryptionZone": (ReencryptEncryptionZoneRequestProto,
                                ReencryptEncryptionZoneResponseProto),
    "listReencryptionStatus": (ListReencryptionStatusRequestProto,
                               ListReencryptionStatusResponseProto),
    "getEZForPath": (GetEZForPathRequestProto, GetEZForPathResponseProto),
    "setErasureCodingPolicy": (SetErasureCodingPolicyRequestProto,
                               SetErasureCodingPolicyResponseProto),
    "unsetErasureCodingPolicy": (UnsetErasureCodingPolicyRequestProto,
                                 UnsetErasureCodingPolicyResponseProto),
    "getECTopologyResultForPolicies": (GetECTopologyResultForPoliciesRequestProto,
                                       GetECTopologyResultForPoliciesResponseProto),
    "getCurrentEditLogTxid": (GetCurrentEditLogTxidRequestProto,
                              GetCurrentEditLogTxidResponseProto),
    "getErasureCodingPolicies": (GetErasureCodingPoliciesRequestProto,
                                 GetErasureCodingPoliciesResponseProto),
    "addErasureCodingPolicies": (AddErasureCodingPoliciesRequestProto,
                                 AddErasureCodingPoliciesResponseProto),
    "removeErasureCodingPolicy": (RemoveErasureCodingPolicyRequestProto,
                                  RemoveErasureCodingPolicyResponseProto),
    "enableErasureCodingPolicy": (EnableErasureCodingPolicyRequestProto,
                                  EnableErasureCodingPolicyResponseProto),
    "disableErasureCodingPolicy": (DisableErasureCodingPolicyRequestProto,
                                   DisableErasureCodingPolicyResponseProto),
    "getErasureCodingPolicy": (GetErasureCodingPolicyRequestProto,
                               GetErasureCodingPolicyResponseProto),
    "getErasureCodingCodecs": (GetErasureCodingCodecsRequestProto,
                               GetErasureCodingCodecsResponseProto),
    "getQuotaUsage": (GetQuotaUsageRequestProto, GetQuotaUsageResponseProto),
    "listOpenFiles": (ListOpenFilesRequestProto, ListOpenFilesResponseProto),
    "msync": (MsyncRequestProto, MsyncResponseProto),
    "satisfyStoragePolicy": (SatisfyStoragePolicyRequestProto, SatisfyStoragePolicyResponseProto),
    "getHAServiceState": (HAServiceStateRequestProto, HAServiceStateResponseProto),
    "getSlowDatanodeReport": (GetSlowDatanodeReportRequestProto,
                              GetSlowDatanodeReportResponseProto),
}
