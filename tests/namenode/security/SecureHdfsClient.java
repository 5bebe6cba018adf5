// Hadoop's own DistributedFileSystem against a secure namenode, in a JVM of its own (the
// tests' shared Spark JVM stays in simple mode: UserGroupInformation's configuration is
// global). Run by tests/namenode/security/test_sasl_jvm.py with Java's single-file source
// launcher and PySpark's jars:
//
//   java -cp 'jars/*' -Djava.security.krb5.conf=... SecureHdfsClient.java \
//        URI PROTECTION PRINCIPAL KEYTAB DIR
//
// Logs in from the keytab (UserGroupInformation.loginUserFromKeytabAndReturnUGI), makes DIR,
// writes DIR/f, lists and reads it back, reads what a writer of DIR/open hflushed (through
// the datanode's IPC port), fetches a delegation token (renewer: the user
// itself); then, as a UGI holding only that token (no Kerberos credentials), reads DIR/f,
// tries to renew the token and to get another (Hadoop refuses both on a token connection);
// renews it as the Kerberos user, cancels it, and tries to read with it once more. Prints one "key=value" line per step, "error=<class>:
// <message>" for a step that threw.

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;

public class SecureHdfsClient {
    public static void main(String[] args) throws Exception {
        String uri = args[0], protection = args[1], principal = args[2], keytab = args[3];
        Path dir = new Path(args[4]);
        Configuration conf = new Configuration();
        conf.set("fs.defaultFS", uri);
        conf.set("hadoop.security.authentication", "kerberos");
        conf.set("dfs.namenode.kerberos.principal", "nn/_HOST@NNLITE.TEST");
        conf.set("hadoop.rpc.protection", protection);
        conf.setBoolean("fs.hdfs.impl.disable.cache", true);
        conf.setInt("ipc.client.connect.max.retries", 1);
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation ugi =
            UserGroupInformation.loginUserFromKeytabAndReturnUGI(principal, keytab);
        System.out.println("login=" + ugi.getUserName() + " short=" + ugi.getShortUserName());
        Path file = new Path(dir, "f");
        Token<?> token = ugi.doAs((PrivilegedExceptionAction<Token<?>>) () -> {
            try (FileSystem fs = FileSystem.newInstance(conf)) {
                fs.mkdirs(dir);
                try (FSDataOutputStream out = fs.create(file)) {
                    out.write("hello, secure".getBytes(StandardCharsets.UTF_8));
                }
                for (FileStatus status : fs.listStatus(dir)) {
                    System.out.println("ls=" + status.getPath().getName() + " owner="
                        + status.getOwner() + " len=" + status.getLen());
                }
                System.out.println("cat=" + read(fs, file));
                // a file being written: its reader asks the datanode's IPC port for the
                // visible length (DFSInputStream.readBlockLength), with the block token
                Path open = new Path(dir, "open");
                try (FSDataOutputStream out = fs.create(open);
                     FileSystem reader = FileSystem.newInstance(conf)) {
                    out.write("flushed".getBytes(StandardCharsets.UTF_8));
                    out.hflush();
                    step("hflushed", () -> read(reader, open));
                }
                Token<?> t = fs.getDelegationToken(ugi.getShortUserName());
                System.out.println("token=" + (t == null ? "null" : t.getKind() + " service="
                    + t.getService()));
                return t;
            }
        });
        if (token == null) {
            return;
        }
        UserGroupInformation holder = UserGroupInformation.createRemoteUser("token-holder");
        holder.addToken(token);
        holder.doAs((PrivilegedExceptionAction<Void>) () -> {
            try (FileSystem fs = FileSystem.newInstance(conf)) {
                step("token-cat", () -> read(fs, file));
                step("token-owner", () -> fs.getFileStatus(file).getOwner());
                step("token-renew", () -> String.valueOf(token.renew(conf) > 0));
                step("token-get", () -> String.valueOf(fs.getDelegationToken("x")));
            }
            return null;
        });
        ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
            step("renew", () -> String.valueOf(token.renew(conf) > System.currentTimeMillis()));
            token.cancel(conf);
            System.out.println("cancelled=true");
            return null;
        });
        // another UGI: Hadoop's client would reuse the first holder's open connection, which
        // a cancel does not close (nor does HDFS's)
        UserGroupInformation later = UserGroupInformation.createRemoteUser("token-holder");
        later.addToken(token);
        later.doAs((PrivilegedExceptionAction<Void>) () -> {
            try (FileSystem fs = FileSystem.newInstance(conf)) {
                step("cancelled-cat", () -> read(fs, file));
            }
            return null;
        });
    }

    interface Step {
        String run() throws Exception;
    }

    static void step(String name, Step step) {
        try {
            System.out.println(name + "=" + step.run());
        } catch (Exception e) {
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof
                    org.apache.hadoop.ipc.RemoteException)) {
                cause = cause.getCause();
            }
            String text = cause.getMessage() == null ? "" : cause.getMessage().split("\n")[0];
            String type = cause instanceof org.apache.hadoop.ipc.RemoteException
                ? ((org.apache.hadoop.ipc.RemoteException) cause).getClassName()
                : cause.getClass().getName();
            System.out.println(name + "-error=" + type + ":" + text);
        }
    }

    static String read(FileSystem fs, Path file) throws Exception {
        try (InputStream in = fs.open(file)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toString(StandardCharsets.UTF_8);
        }
    }
}
