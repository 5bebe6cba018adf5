// Hadoop's DistributedFileSystem writing and reading a file through a secure namenode's
// built-in datanode with block tokens and the data port's SASL handshake, in a JVM of its own
// (UserGroupInformation's configuration is global). Run by
// tests/namenode/datanode/test_sasl_clients.py with Java's single-file source launcher and
// PySpark's jars:
//
//   java -cp 'jars/*' -Djava.security.krb5.conf=... SecureBlockClient.java \
//        URI DATA_PROTECTION PRINCIPAL KEYTAB PATH SIZE [CIPHER_SUITES]
//
// Logs in from the keytab, writes SIZE pseudo-random bytes to PATH with 1 MiB blocks
// (DataStreamer: SaslDataTransferClient with the WRITE token addBlock hands out), reading
// the open file after an hflush of its first 1000 bytes, then reads them
// back (DFSInputStream: the READ tokens of getBlockLocations), asks the file checksum
// (BLOCK_CHECKSUM with READ tokens) and prints one "key=value" line per step.

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.PrivilegedExceptionAction;
import java.util.HexFormat;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;

public class SecureBlockClient {
    public static void main(String[] args) throws Exception {
        String uri = args[0], protection = args[1], principal = args[2], keytab = args[3];
        Path file = new Path(args[4]);
        int size = Integer.parseInt(args[5]);
        Configuration conf = new Configuration();
        conf.set("fs.defaultFS", uri);
        conf.set("hadoop.security.authentication", "kerberos");
        conf.set("dfs.namenode.kerberos.principal", "nn/_HOST@NNLITE.TEST");
        conf.set("dfs.data.transfer.protection", protection);
        if (args.length > 6) {       // offer AES/CTR under privacy (negotiateCipherOption)
            conf.set("dfs.encrypt.data.transfer.cipher.suites", args[6]);
        }
        conf.set("dfs.blocksize", "1048576");
        conf.setBoolean("fs.hdfs.impl.disable.cache", true);
        conf.setInt("ipc.client.connect.max.retries", 1);
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation ugi =
            UserGroupInformation.loginUserFromKeytabAndReturnUGI(principal, keytab);
        byte[] data = new byte[size];
        new Random(size).nextBytes(data);
        ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
            try (FileSystem fs = FileSystem.newInstance(conf)) {
                try (FSDataOutputStream out = fs.create(file)) {
                    out.write(data, 0, 1000);
                    out.hflush();
                    // a reader of the open file asks the datanode's IPC port how much of
                    // the last block is visible (getReplicaVisibleLength, with the block
                    // token as its credentials)
                    try (FileSystem other = FileSystem.newInstance(conf);
                         InputStream in = other.open(file)) {
                        System.out.println("open-read=" + in.readAllBytes().length);
                    }
                    out.write(data, 1000, size - 1000);
                }
                System.out.println("written=" + fs.getFileStatus(file).getLen());
                try (InputStream in = fs.open(file)) {
                    ByteArrayOutputStream back = new ByteArrayOutputStream();
                    in.transferTo(back);
                    System.out.println("read-equal=" + java.util.Arrays.equals(
                        back.toByteArray(), data));
                }
                System.out.println("checksum=" + fs.getFileChecksum(file).getAlgorithmName());
                System.out.println("sha256=" + HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(data)));
            }
            return null;
        });
    }
}
