"""The Java exceptions a WebHDFS ``RemoteException`` names (its ``javaClassName``), in one table
both sides of the wire use: the namenode's errors take their ``JAVA_CLASS`` from it
(``namenode/errors.py``) and its HTTP layer answers with them (``namenode/http/remote.py``);
the client picks the class it raises by them (``errors.py``'s ``REGISTRY``). A name spelled
here once cannot drift between what the namenode answers and what the client recognises.

Pure data, no imports. Each is the fully qualified name of the exception Hadoop's NameNode
raises in that situation, exactly, since a Java client re-raises the class it names.
"""

# ------------------------------------------------------------------ java.*

IO_EXCEPTION = "java.io.IOException"                    # the catch-all
FILE_NOT_FOUND = "java.io.FileNotFoundException"
ILLEGAL_ARGUMENT = "java.lang.IllegalArgumentException"
UNSUPPORTED_OPERATION = "java.lang.UnsupportedOperationException"
SECURITY = "java.lang.SecurityException"                # a doas the caller may not use
RUNTIME = "java.lang.RuntimeException"                  # a 500: unexpected on the server

# ------------------------------------------------------------------ org.apache.hadoop.*

HADOOP_ILLEGAL_ARGUMENT = "org.apache.hadoop.HadoopIllegalArgumentException"
ACCESS_CONTROL = "org.apache.hadoop.security.AccessControlException"
INVALID_TOKEN = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

INVALID_PATH = "org.apache.hadoop.fs.InvalidPathException"
FILE_ALREADY_EXISTS = "org.apache.hadoop.fs.FileAlreadyExistsException"
PARENT_NOT_DIRECTORY = "org.apache.hadoop.fs.ParentNotDirectoryException"
PATH_IS_DIRECTORY = "org.apache.hadoop.fs.PathIsDirectoryException"
PATH_IS_NOT_DIRECTORY = "org.apache.hadoop.fs.PathIsNotDirectoryException"
PATH_IS_NOT_EMPTY_DIRECTORY = "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"

SAFE_MODE = "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
UNSUPPORTED_ACTION = "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"
LEASE_EXPIRED = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"

QUOTA_EXCEEDED = "org.apache.hadoop.hdfs.protocol.QuotaExceededException"
NS_QUOTA_EXCEEDED = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"
DS_QUOTA_EXCEEDED = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException"
ALREADY_BEING_CREATED = "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
ACL = "org.apache.hadoop.hdfs.protocol.AclException"
SNAPSHOT = "org.apache.hadoop.hdfs.protocol.SnapshotException"
SNAPSHOT_ACCESS_CONTROL = "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException"
NO_EC_POLICY_SET = "org.apache.hadoop.hdfs.protocol.NoECPolicySetException"

STANDBY = "org.apache.hadoop.ipc.StandbyException"      # fail over to another namenode
RETRIABLE = "org.apache.hadoop.ipc.RetriableException"  # ask the same one again, later
