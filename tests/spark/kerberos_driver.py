"""A Spark driver in a process of its own, logged in from a keytab, that runs the stateful
query of ``test_streaming_checkpoint.py`` on a checkpoint in a secure namenode over hdfs://
until the input in SRC is processed, then prints its result as one JSON line and stops.

    python kerberos_driver.py SRC CHECKPOINT PRINCIPAL KEYTAB KRB5_CONF QUERY_NAME

PRINCIPAL and KEYTAB ``-``: no login of Spark's; the JVM holds only the delegation tokens of
the Hadoop token file ``HADOOP_TOKEN_FILE_LOCATION`` names (as a YARN container does), and
Spark's HDFS token provider is off (a process with tokens only cannot fetch more).

Its own process because Hadoop's ``UserGroupInformation`` keeps one global configuration per
JVM: the tests' shared SparkSession stays in simple mode. Secure mode comes from the
core-site.xml in ``HADOOP_CONF_DIR``, the keytab login is SparkSubmit's
(``spark.kerberos.principal`` / ``spark.kerberos.keytab``, as ``spark-submit --principal
--keytab``), and the JVM finds the realm through ``-Djava.security.krb5.conf``.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

SCHEMA = "key STRING, value LONG"


def main() -> None:
    src, checkpoint, principal, keytab, krb5_conf, name = sys.argv[1:7]
    builder = (SparkSession.builder.master("local[2]").appName("nnlite-kerberos")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.extraJavaOptions",
                       f"-Djava.security.krb5.conf={krb5_conf}"))
    if principal == "-":
        builder = builder.config("spark.security.credentials.hadoopfs.enabled", "false")
    else:
        builder = (builder.config("spark.kerberos.principal", principal)
                   .config("spark.kerberos.keytab", keytab))
    spark = builder.getOrCreate()
    ugi = spark.sparkContext._jvm.org.apache.hadoop.security.UserGroupInformation
    login = ugi.getCurrentUser()
    tokens = sorted(str(t.getKind()) for t in login.getCredentials().getAllTokens().toArray())
    counts = (spark.readStream.schema(SCHEMA).json(src)
              .groupBy("key").agg(F.count("*").alias("n"), F.sum("value").alias("total")))
    query = (counts.writeStream.format("memory").queryName(name).outputMode("complete")
             .option("checkpointLocation", checkpoint).start())
    try:
        query.processAllAvailable()
        rows = {r["key"]: [r["n"], r["total"]] for r in spark.table(name).collect()}
        print(json.dumps({"user": login.getUserName(), "auth": str(login.getAuthenticationMethod()),
                          "kerberos": login.hasKerberosCredentials(), "tokens": tokens,
                          "id": query.id, "batch": query.lastProgress["batchId"],
                          "result": rows}), flush=True)
    finally:
        query.stop()
        spark.stop()


if __name__ == "__main__":
    main()
