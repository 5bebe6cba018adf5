"""A Spark driver, logged in from a keytab, whose own delegation-token machinery obtains the
HDFS tokens and which writes them to a Hadoop token file, then stops: what a cluster's driver
ships to its executors.

    python token_obtainer.py FS_URI PRINCIPAL KEYTAB KRB5_CONF TOKEN_FILE

Spark 4's ``LocalSchedulerBackend`` is a ``SupportsDelegationToken``: with security on it
starts a ``HadoopDelegationTokenManager`` (a keytab: a login of its own and renewal), whose
``HadoopFSDelegationTokenProvider`` fetches a token from the default FS and from each of
``spark.kerberos.access.hadoopFileSystems``, and hands them to the driver's UGI
(``updateDelegationTokens``). The script writes what that UGI holds (``Credentials``'
token storage file, as ``HADOOP_TOKEN_FILE_LOCATION`` reads it) and prints the tokens' kinds
and services as one JSON line.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    fs_uri, principal, keytab, krb5_conf, token_file = sys.argv[1:6]
    spark = (SparkSession.builder.master("local[1]").appName("nnlite-tokens")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.extraJavaOptions", f"-Djava.security.krb5.conf={krb5_conf}")
             .config("spark.kerberos.principal", principal)
             .config("spark.kerberos.keytab", keytab)
             .config("spark.kerberos.access.hadoopFileSystems", fs_uri)
             .getOrCreate())
    try:
        jvm = spark.sparkContext._jvm
        credentials = jvm.org.apache.hadoop.security.UserGroupInformation.getCurrentUser() \
            .getCredentials()
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        credentials.writeTokenStorageFile(jvm.org.apache.hadoop.fs.Path(f"file://{token_file}"),
                                          conf)
        tokens = [{"kind": str(t.getKind()), "service": str(t.getService()),
                   "owner": str(t.decodeIdentifier().getOwner())}
                  for t in credentials.getAllTokens().toArray()]
        print(json.dumps({"tokens": tokens}), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
