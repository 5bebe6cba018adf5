"""Hadoop's ``hdfs.proto`` (protobuf package ``hadoop.hdfs``): the types every HDFS protocol
shares -- blocks, datanodes, file status, listings, located blocks, server defaults,
snapshots, erasure coding policies.

Hadoop nests some enums in messages; here they are top level, named after their message:
``DatanodeInfoProto.AdminState`` is ``DatanodeInfoAdminState``,
``DatanodeStorageProto.StorageState`` is ``DatanodeStorageStorageState``,
``HdfsFileStatusProto.FileType`` is ``HdfsFileStatusFileType`` and
``HdfsFileStatusProto.Flags`` is ``HdfsFileStatusFlags``. Field numbers and types are those
of Hadoop 3.3/3.4 (``HdfsFileStatusProto`` with ``ecPolicy`` = 17, ``flags`` = 18 and
``namespace`` = 19; ``LocatedBlockProto`` with ``blockIndices`` and ``blockTokens``);
``RouterFederatedStateProto`` (a router-only map) is left out.

Conventions the clients rely on (``PBHelperClient``): ``HdfsFileStatusProto.path`` is the
entry's local name in UTF-8 (empty for the status of the path asked about),
``modification_time``/``access_time`` are milliseconds since the epoch, a directory's
``length`` is 0 and ``childrenNum`` its number of children.
"""

from __future__ import annotations

from nnlite.formats.hadoop.acl import S as ACL
from nnlite.formats.hadoop.proto import Schema
from nnlite.formats.hadoop.security import S as SECURITY

S = Schema("nnlite.hadoop.hdfs", uses=[SECURITY, ACL])

S.message("ExtendedBlockProto",
          "required string poolId = 1",
          "required uint64 blockId = 2",
          "required uint64 generationStamp = 3",
          "optional uint64 numBytes = 4 [default = 0]")
S.message("ProvidedStorageLocationProto",
          "required string path = 1",
          "required int64 offset = 2",
          "required int64 length = 3",
          "required bytes nonce = 4")
S.message("DatanodeIDProto",
          "required string ipAddr = 1",
          "required string hostName = 2",
          "required string datanodeUuid = 3",
          "required uint32 xferPort = 4",
          "required uint32 infoPort = 5",
          "required uint32 ipcPort = 6",
          "optional uint32 infoSecurePort = 7 [default = 0]")
S.message("DatanodeLocalInfoProto",
          "required string softwareVersion = 1",
          "required string configVersion = 2",
          "required uint64 uptime = 3")
S.message("DatanodeVolumeInfoProto",
          "required string path = 1",
          "required StorageTypeProto storageType = 2",
          "required uint64 usedSpace = 3",
          "required uint64 freeSpace = 4",
          "required uint64 reservedSpace = 5",
          "required uint64 reservedSpaceForReplicas = 6",
          "required uint64 numBlocks = 7")
S.message("DatanodeInfosProto",
          "repeated DatanodeInfoProto datanodes = 1")
DatanodeInfoAdminState = S.enum("DatanodeInfoAdminState", NORMAL=0, DECOMMISSION_INPROGRESS=1,
                                DECOMMISSIONED=2, ENTERING_MAINTENANCE=3, IN_MAINTENANCE=4)
S.message("DatanodeInfoProto",
          "required DatanodeIDProto id = 1",
          "optional uint64 capacity = 2 [default = 0]",
          "optional uint64 dfsUsed = 3 [default = 0]",
          "optional uint64 remaining = 4 [default = 0]",
          "optional uint64 blockPoolUsed = 5 [default = 0]",
          "optional uint64 lastUpdate = 6 [default = 0]",
          "optional uint32 xceiverCount = 7 [default = 0]",
          "optional string location = 8",
          "optional uint64 nonDfsUsed = 9",
          "optional DatanodeInfoAdminState adminState = 10 [default = NORMAL]",
          "optional uint64 cacheCapacity = 11 [default = 0]",
          "optional uint64 cacheUsed = 12 [default = 0]",
          "optional uint64 lastUpdateMonotonic = 13 [default = 0]",
          "optional string upgradeDomain = 14",
          "optional uint64 lastBlockReportTime = 15 [default = 0]",
          "optional uint64 lastBlockReportMonotonic = 16 [default = 0]",
          "optional uint32 numBlocks = 17 [default = 0]")
DatanodeStorageStorageState = S.enum("DatanodeStorageStorageState", NORMAL=0, READ_ONLY_SHARED=1)
S.message("DatanodeStorageProto",
          "required string storageUuid = 1",
          "optional DatanodeStorageStorageState state = 2 [default = NORMAL]",
          "optional StorageTypeProto storageType = 3 [default = DISK]")
S.message("StorageReportProto",
          "required string storageUuid = 1",
          "optional bool failed = 2 [default = false]",
          "optional uint64 capacity = 3 [default = 0]",
          "optional uint64 dfsUsed = 4 [default = 0]",
          "optional uint64 remaining = 5 [default = 0]",
          "optional uint64 blockPoolUsed = 6 [default = 0]",
          "optional DatanodeStorageProto storage = 7",
          "optional uint64 nonDfsUsed = 8",
          "optional string mount = 9")
S.message("ContentSummaryProto",
          "required uint64 length = 1",
          "required uint64 fileCount = 2",
          "required uint64 directoryCount = 3",
          "required uint64 quota = 4",
          "required uint64 spaceConsumed = 5",
          "required uint64 spaceQuota = 6",
          "optional StorageTypeQuotaInfosProto typeQuotaInfos = 7",
          "optional uint64 snapshotLength = 8",
          "optional uint64 snapshotFileCount = 9",
          "optional uint64 snapshotDirectoryCount = 10",
          "optional uint64 snapshotSpaceConsumed = 11",
          "optional string erasureCodingPolicy = 12")
S.message("QuotaUsageProto",
          "required uint64 fileAndDirectoryCount = 1",
          "required uint64 quota = 2",
          "required uint64 spaceConsumed = 3",
          "required uint64 spaceQuota = 4",
          "optional StorageTypeQuotaInfosProto typeQuotaInfos = 5")
S.message("StorageTypeQuotaInfosProto",
          "repeated StorageTypeQuotaInfoProto typeQuotaInfo = 1")
S.message("StorageTypeQuotaInfoProto",
          "optional StorageTypeProto type = 1 [default = DISK]",
          "required uint64 quota = 2",
          "required uint64 consumed = 3")
S.message("CorruptFileBlocksProto",
          "repeated string files = 1",
          "required string cookie = 2")
StorageTypeProto = S.enum("StorageTypeProto", DISK=1, SSD=2, ARCHIVE=3, RAM_DISK=4, PROVIDED=5,
                          NVDIMM=6)
BlockTypeProto = S.enum("BlockTypeProto", CONTIGUOUS=0, STRIPED=1)
S.message("StorageTypesProto",
          "repeated StorageTypeProto storageTypes = 1")
S.message("BlockStoragePolicyProto",
          "required uint32 policyId = 1",
          "required string name = 2",
          "required StorageTypesProto creationPolicy = 3",
          "optional StorageTypesProto creationFallbackPolicy = 4",
          "optional StorageTypesProto replicationFallbackPolicy = 5")
S.message("LocatedBlockProto",
          "required ExtendedBlockProto b = 1",
          "required uint64 offset = 2",
          "repeated DatanodeInfoProto locs = 3",
          "required bool corrupt = 4",
          "required TokenProto blockToken = 5",
          "repeated bool isCached = 6 [packed = true]",
          "repeated StorageTypeProto storageTypes = 7",
          "repeated string storageIDs = 8",
          "optional bytes blockIndices = 9",
          "repeated TokenProto blockTokens = 10")
S.message("BatchedListingKeyProto",
          "required bytes checksum = 1",
          "required uint32 pathIndex = 2",
          "required bytes startAfter = 3")
S.message("DataEncryptionKeyProto",
          "required uint32 keyId = 1",
          "required string blockPoolId = 2",
          "required bytes nonce = 3",
          "required bytes encryptionKey = 4",
          "required uint64 expiryDate = 5",
          "optional string encryptionAlgorithm = 6")
CipherSuiteProto = S.enum("CipherSuiteProto", UNKNOWN=1, AES_CTR_NOPADDING=2, SM4_CTR_NOPADDING=3)
CryptoProtocolVersionProto = S.enum("CryptoProtocolVersionProto", UNKNOWN_PROTOCOL_VERSION=1,
                                    ENCRYPTION_ZONES=2)
S.message("FileEncryptionInfoProto",
          "required CipherSuiteProto suite = 1",
          "required CryptoProtocolVersionProto cryptoProtocolVersion = 2",
          "required bytes key = 3",
          "required bytes iv = 4",
          "required string keyName = 5",
          "required string ezKeyVersionName = 6")
S.message("PerFileEncryptionInfoProto",
          "required bytes key = 1",
          "required bytes iv = 2",
          "required string ezKeyVersionName = 3")
S.message("ZoneEncryptionInfoProto",
          "required CipherSuiteProto suite = 1",
          "required CryptoProtocolVersionProto cryptoProtocolVersion = 2",
          "required string keyName = 3",
          "optional ReencryptionInfoProto reencryptionProto = 4")
S.message("ReencryptionInfoProto",
          "required string ezKeyVersionName = 1",
          "required uint64 submissionTime = 2",
          "required bool canceled = 3",
          "required int64 numReencrypted = 4",
          "required int64 numFailures = 5",
          "optional uint64 completionTime = 6",
          "optional string lastFile = 7")
S.message("CipherOptionProto",
          "required CipherSuiteProto suite = 1",
          "optional bytes inKey = 2",
          "optional bytes inIv = 3",
          "optional bytes outKey = 4",
          "optional bytes outIv = 5")
S.message("LocatedBlocksProto",
          "required uint64 fileLength = 1",
          "repeated LocatedBlockProto blocks = 2",
          "required bool underConstruction = 3",
          "optional LocatedBlockProto lastBlock = 4",
          "required bool isLastBlockComplete = 5",
          "optional FileEncryptionInfoProto fileEncryptionInfo = 6",
          "optional ErasureCodingPolicyProto ecPolicy = 7")
S.message("ECSchemaOptionEntryProto",
          "required string key = 1",
          "required string value = 2")
S.message("ECSchemaProto",
          "required string codecName = 1",
          "required uint32 dataUnits = 2",
          "required uint32 parityUnits = 3",
          "repeated ECSchemaOptionEntryProto options = 4")
ErasureCodingPolicyState = S.enum("ErasureCodingPolicyState", DISABLED=1, ENABLED=2, REMOVED=3)
S.message("ErasureCodingPolicyProto",
          "optional string name = 1",
          "optional ECSchemaProto schema = 2",
          "optional uint32 cellSize = 3",
          "required uint32 id = 4",
          "optional ErasureCodingPolicyState state = 5 [default = ENABLED]")
S.message("AddErasureCodingPolicyResponseProto",
          "required ErasureCodingPolicyProto policy = 1",
          "required bool succeed = 2",
          "optional string errorMsg = 3")
S.message("ECTopologyVerifierResultProto",
          "required string resultMessage = 1",
          "required bool isSupported = 2")
S.message("HdfsPathHandleProto",
          "optional uint64 inodeId = 1",
          "optional uint64 mtime = 2",
          "optional string path = 3")
HdfsFileStatusFileType = S.enum("HdfsFileStatusFileType", IS_DIR=1, IS_FILE=2, IS_SYMLINK=3)
HdfsFileStatusFlags = S.enum("HdfsFileStatusFlags", HAS_ACL=1, HAS_CRYPT=2, HAS_EC=4,
                             SNAPSHOT_ENABLED=8)
S.message("HdfsFileStatusProto",
          "required HdfsFileStatusFileType fileType = 1",
          "required bytes path = 2",
          "required uint64 length = 3",
          "required FsPermissionProto permission = 4",
          "required string owner = 5",
          "required string group = 6",
          "required uint64 modification_time = 7",
          "required uint64 access_time = 8",
          "optional bytes symlink = 9",
          "optional uint32 block_replication = 10 [default = 0]",
          "optional uint64 blocksize = 11 [default = 0]",
          "optional LocatedBlocksProto locations = 12",
          "optional uint64 fileId = 13 [default = 0]",
          "optional int32 childrenNum = 14 [default = -1]",
          "optional FileEncryptionInfoProto fileEncryptionInfo = 15",
          "optional uint32 storagePolicy = 16 [default = 0]",
          "optional ErasureCodingPolicyProto ecPolicy = 17",
          "optional uint32 flags = 18 [default = 0]",
          "optional string namespace = 19")
ChecksumTypeProto = S.enum("ChecksumTypeProto", CHECKSUM_NULL=0, CHECKSUM_CRC32=1,
                           CHECKSUM_CRC32C=2)
BlockChecksumTypeProto = S.enum("BlockChecksumTypeProto", MD5CRC=1, COMPOSITE_CRC=2)
S.message("BlockChecksumOptionsProto",
          "optional BlockChecksumTypeProto blockChecksumType = 1 [default = MD5CRC]",
          "optional uint64 stripeLength = 2")
S.message("FsServerDefaultsProto",
          "required uint64 blockSize = 1",
          "required uint32 bytesPerChecksum = 2",
          "required uint32 writePacketSize = 3",
          "required uint32 replication = 4",
          "required uint32 fileBufferSize = 5",
          "optional bool encryptDataTransfer = 6 [default = false]",
          "optional uint64 trashInterval = 7 [default = 0]",
          "optional ChecksumTypeProto checksumType = 8 [default = CHECKSUM_CRC32]",
          "optional string keyProviderUri = 9",
          "optional uint32 policyId = 10 [default = 0]",
          "optional bool snapshotTrashRootEnabled = 11 [default = false]")
S.message("DirectoryListingProto",
          "repeated HdfsFileStatusProto partialListing = 1",
          "required uint32 remainingEntries = 2")
S.message("RemoteExceptionProto",
          "required string className = 1",
          "optional string message = 2")
S.message("BatchedDirectoryListingProto",
          "repeated HdfsFileStatusProto partialListing = 1",
          "required uint32 parentIdx = 2",
          "optional RemoteExceptionProto exception = 3")
S.message("SnapshottableDirectoryStatusProto",
          "required HdfsFileStatusProto dirStatus = 1",
          "required uint32 snapshot_quota = 2",
          "required uint32 snapshot_number = 3",
          "required bytes parent_fullpath = 4")
S.message("SnapshotStatusProto",
          "required HdfsFileStatusProto dirStatus = 1",
          "required uint32 snapshotID = 2",
          "required bytes parent_fullpath = 3",
          "required bool isDeleted = 4")
S.message("SnapshottableDirectoryListingProto",
          "repeated SnapshottableDirectoryStatusProto snapshottableDirListing = 1")
S.message("SnapshotListingProto",
          "repeated SnapshotStatusProto snapshotListing = 1")
S.message("SnapshotDiffReportEntryProto",
          "required bytes fullpath = 1",
          "required string modificationLabel = 2",
          "optional bytes targetPath = 3")
S.message("SnapshotDiffReportProto",
          "required string snapshotRoot = 1",
          "required string fromSnapshot = 2",
          "required string toSnapshot = 3",
          "repeated SnapshotDiffReportEntryProto diffReportEntries = 4")
S.message("SnapshotDiffReportListingEntryProto",
          "required bytes fullpath = 1",
          "required uint64 dirId = 2",
          "required bool isReference = 3",
          "optional bytes targetPath = 4",
          "optional uint64 fileId = 5")
S.message("SnapshotDiffReportCursorProto",
          "required bytes startPath = 1",
          "required int32 index = 2 [default = -1]")
S.message("SnapshotDiffReportListingProto",
          "repeated SnapshotDiffReportListingEntryProto modifiedEntries = 1",
          "repeated SnapshotDiffReportListingEntryProto createdEntries = 2",
          "repeated SnapshotDiffReportListingEntryProto deletedEntries = 3",
          "required bool isFromEarlier = 4",
          "optional SnapshotDiffReportCursorProto cursor = 5")
S.message("BlockProto",
          "required uint64 blockId = 1",
          "required uint64 genStamp = 2",
          "optional uint64 numBytes = 3 [default = 0]")
S.message("SnapshotInfoProto",
          "required string snapshotName = 1",
          "required string snapshotRoot = 2",
          "required FsPermissionProto permission = 3",
          "required string owner = 4",
          "required string group = 5",
          "required string createTime = 6")
S.message("RollingUpgradeStatusProto",
          "required string blockPoolId = 1",
          "optional bool finalized = 2 [default = false]")
S.message("StorageUuidsProto",
          "repeated string storageUuids = 1")
AccessModeProto = S.enum("AccessModeProto", READ=1, WRITE=2, COPY=3, REPLACE=4)
S.message("BlockTokenSecretProto",
          "optional uint64 expiryDate = 1",
          "optional uint32 keyId = 2",
          "optional string userId = 3",
          "optional string blockPoolId = 4",
          "optional uint64 blockId = 5",
          "repeated AccessModeProto modes = 6",
          "repeated StorageTypeProto storageTypes = 7",
          "repeated string storageIds = 8",
          "optional bytes handshakeSecret = 9")

_CLASSES = S.build()
ExtendedBlockProto = _CLASSES["ExtendedBlockProto"]
ProvidedStorageLocationProto = _CLASSES["ProvidedStorageLocationProto"]
DatanodeIDProto = _CLASSES["DatanodeIDProto"]
DatanodeLocalInfoProto = _CLASSES["DatanodeLocalInfoProto"]
DatanodeVolumeInfoProto = _CLASSES["DatanodeVolumeInfoProto"]
DatanodeInfosProto = _CLASSES["DatanodeInfosProto"]
DatanodeInfoProto = _CLASSES["DatanodeInfoProto"]
DatanodeStorageProto = _CLASSES["DatanodeStorageProto"]
StorageReportProto = _CLASSES["StorageReportProto"]
ContentSummaryProto = _CLASSES["ContentSummaryProto"]
QuotaUsageProto = _CLASSES["QuotaUsageProto"]
StorageTypeQuotaInfosProto = _CLASSES["StorageTypeQuotaInfosProto"]
StorageTypeQuotaInfoProto = _CLASSES["StorageTypeQuotaInfoProto"]
CorruptFileBlocksProto = _CLASSES["CorruptFileBlocksProto"]
StorageTypesProto = _CLASSES["StorageTypesProto"]
BlockStoragePolicyProto = _CLASSES["BlockStoragePolicyProto"]
LocatedBlockProto = _CLASSES["LocatedBlockProto"]
BatchedListingKeyProto = _CLASSES["BatchedListingKeyProto"]
DataEncryptionKeyProto = _CLASSES["DataEncryptionKeyProto"]
FileEncryptionInfoProto = _CLASSES["FileEncryptionInfoProto"]
PerFileEncryptionInfoProto = _CLASSES["PerFileEncryptionInfoProto"]
ZoneEncryptionInfoProto = _CLASSES["ZoneEncryptionInfoProto"]
ReencryptionInfoProto = _CLASSES["ReencryptionInfoProto"]
CipherOptionProto = _CLASSES["CipherOptionProto"]
LocatedBlocksProto = _CLASSES["LocatedBlocksProto"]
ECSchemaOptionEntryProto = _CLASSES["ECSchemaOptionEntryProto"]
ECSchemaProto = _CLASSES["ECSchemaProto"]
ErasureCodingPolicyProto = _CLASSES["ErasureCodingPolicyProto"]
AddErasureCodingPolicyResponseProto = _CLASSES["AddErasureCodingPolicyResponseProto"]
ECTopologyVerifierResultProto = _CLASSES["ECTopologyVerifierResultProto"]
HdfsPathHandleProto = _CLASSES["HdfsPathHandleProto"]
HdfsFileStatusProto = _CLASSES["HdfsFileStatusProto"]
BlockChecksumOptionsProto = _CLASSES["BlockChecksumOptionsProto"]
FsServerDefaultsProto = _CLASSES["FsServerDefaultsProto"]
DirectoryListingProto = _CLASSES["DirectoryListingProto"]
RemoteExceptionProto = _CLASSES["RemoteExceptionProto"]
BatchedDirectoryListingProto = _CLASSES["BatchedDirectoryListingProto"]
SnapshottableDirectoryStatusProto = _CLASSES["SnapshottableDirectoryStatusProto"]
SnapshotStatusProto = _CLASSES["SnapshotStatusProto"]
SnapshottableDirectoryListingProto = _CLASSES["SnapshottableDirectoryListingProto"]
SnapshotListingProto = _CLASSES["SnapshotListingProto"]
SnapshotDiffReportEntryProto = _CLASSES["SnapshotDiffReportEntryProto"]
SnapshotDiffReportProto = _CLASSES["SnapshotDiffReportProto"]
SnapshotDiffReportListingEntryProto = _CLASSES["SnapshotDiffReportListingEntryProto"]
SnapshotDiffReportCursorProto = _CLASSES["SnapshotDiffReportCursorProto"]
SnapshotDiffReportListingProto = _CLASSES["SnapshotDiffReportListingProto"]
BlockProto = _CLASSES["BlockProto"]
SnapshotInfoProto = _CLASSES["SnapshotInfoProto"]
RollingUpgradeStatusProto = _CLASSES["RollingUpgradeStatusProto"]
StorageUuidsProto = _CLASSES["StorageUuidsProto"]
BlockTokenSecretProto = _CLASSES["BlockTokenSecretProto"]
