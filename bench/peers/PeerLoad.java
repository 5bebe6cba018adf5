// The load generator of bench/peers: one JVM per system under test, driven over stdin by
// bench/peers/load.py. Every system gets the same closed loop: N threads, one connection or
// session each, one request in flight per thread, a shared op budget and a deadline.
//
//   java PeerLoad TARGET ADDRESS
//     TARGET  webhdfs | hdfs | webhdfs-fs | etcd | zookeeper | fsync-append | fsync-inplace
//             (webhdfs: a lean HTTP/1.1 client of its own; hdfs and webhdfs-fs: Hadoop's
//             DistributedFileSystem and WebHdfsFileSystem)
//     ADDRESS 127.0.0.1:PORT (hdfs: the namenode's RPC port; fsync-*: a directory on the disk
//             under test)
//
// Commands, one per line:
//   row KIND THREADS OPS SECONDS WARMUP BASE VALUE_BYTES [KEYS_FILE]
//       KIND is write or read. Opens THREADS clients, makes each writer's parent, runs WARMUP
//       untimed ops, answers "ready". Writes create BASE/tN/0, BASE/tN/1, ...; reads pick keys
//       at random from KEYS_FILE ("PREFIX COUNT" lines: PREFIX/0 .. PREFIX/COUNT-1 exist).
//   go  runs the timed phase and answers one JSON line; the clients stay open until the next
//       command, so that closing them is not in the caller's samples.
//   quit
//
// Compiled on first use against ZooKeeper's own client jar (Debian's zookeeper package) and
// Hadoop's client jars (PySpark's hadoop-client-api and hadoop-client-runtime), by load.py:
//   javac -cp /usr/share/java/zookeeper.jar:$JARS/hadoop-client-api-*.jar \
//       -d bench/out/classes bench/peers/PeerLoad.java
// A JVM gets the jars of its own target only (load.py's runtime_jars): Hadoop's client never
// meets ZooKeeper's slf4j, nor the other way round.

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public final class PeerLoad {
    /** One connection or session, used by one thread. */
    interface Client extends AutoCloseable {
        /** Untimed: make the parent under which this client's writes create keys. */
        void makeParent(String dir) throws Exception;

        /** One durable create of a new key: returns once the server acknowledged it. */
        void create(String key, byte[] value) throws Exception;

        /** One lookup of an existing key: throws if the server does not find it. */
        void stat(String key) throws Exception;

        @Override
        void close();
    }

    // --------------------------------------------------------------- HTTP/1.1, kept alive

    /** A blocking HTTP/1.1 connection: one request, then its whole response, then the next. */
    static final class HttpConnection {
        private final String host;
        private final int port;
        private Socket socket;
        private OutputStream out;
        private InputStream in;
        private final byte[] buf = new byte[16384];
        private int pos, end;
        byte[] body = new byte[0];

        HttpConnection(String host, int port) throws IOException {
            this.host = host;
            this.port = port;
            connect();
        }

        private void connect() throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), 5000);
            socket.setSoTimeout(30000);
            out = socket.getOutputStream();
            in = socket.getInputStream();
            pos = end = 0;
        }

        /** Sends one request (head and body in one write) and reads the response; the status. */
        int exchange(String method, String target, byte[] payload, String contentType)
                throws IOException {
            StringBuilder head = new StringBuilder(160).append(method).append(' ').append(target)
                    .append(" HTTP/1.1\r\nHost: ").append(host).append(':').append(port)
                    .append("\r\n");
            if (contentType != null) head.append("Content-Type: ").append(contentType).append("\r\n");
            int length = payload == null ? 0 : payload.length;
            if (payload != null || !method.equals("GET")) {
                head.append("Content-Length: ").append(length).append("\r\n");
            }
            byte[] h = head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
            byte[] request = Arrays.copyOf(h, h.length + length);
            if (length > 0) System.arraycopy(payload, 0, request, h.length, length);
            try {
                out.write(request);
                return readResponse();
            } catch (IOException e) {
                reconnect();
                throw e;
            }
        }

        private void reconnect() {
            try {
                socket.close();
                connect();
            } catch (IOException ignored) {
                // the next exchange fails and is counted
            }
        }

        private int readResponse() throws IOException {
            String status = line();
            int code = Integer.parseInt(status.substring(9, 12));
            int length = -1;
            boolean chunked = false, close = false;
            for (String l = line(); !l.isEmpty(); l = line()) {
                int colon = l.indexOf(':');
                if (colon < 0) continue;
                String name = l.substring(0, colon).trim(), value = l.substring(colon + 1).trim();
                if (name.equalsIgnoreCase("Content-Length")) length = Integer.parseInt(value);
                else if (name.equalsIgnoreCase("Transfer-Encoding")) chunked = value.contains("chunked");
                else if (name.equalsIgnoreCase("Connection")) close = value.equalsIgnoreCase("close");
            }
            body = chunked ? chunkedBody() : bytes(Math.max(length, 0));
            if (close) reconnect();
            return code;
        }

        private byte[] chunkedBody() throws IOException {
            byte[] all = new byte[0];
            for (int n; (n = Integer.parseInt(line().split(";")[0].trim(), 16)) > 0; line()) {
                byte[] chunk = bytes(n);
                all = Arrays.copyOf(all, all.length + n);
                System.arraycopy(chunk, 0, all, all.length - n, n);
            }
            while (!line().isEmpty()) { }  // trailers
            return all;
        }

        private void fill() throws IOException {
            if (pos < end) return;
            pos = 0;
            end = in.read(buf, 0, buf.length);
            if (end <= 0) {
                end = 0;
                throw new EOFException("connection closed by the server");
            }
        }

        private String line() throws IOException {
            StringBuilder s = new StringBuilder(64);
            while (true) {
                fill();
                byte b = buf[pos++];
                if (b == '\n') break;
                if (b != '\r') s.append((char) b);
            }
            return s.toString();
        }

        private byte[] bytes(int n) throws IOException {
            byte[] r = new byte[n];
            for (int off = 0; off < n; ) {
                fill();
                int k = Math.min(end - pos, n - off);
                System.arraycopy(buf, pos, r, off, k);
                pos += k;
                off += k;
            }
            return r;
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) if (haystack[i + j] != needle[j]) continue outer;
            return true;
        }
        return false;
    }

    static IOException refused(String what, int status, byte[] body) {
        String text = new String(body, 0, Math.min(body.length, 160), StandardCharsets.UTF_8);
        return new IOException(what + " " + status + " " + text);
    }

    // --------------------------------------------------------------- the servers

    /** nnlite: MKDIRS and GETFILESTATUS over WebHDFS, as an ordinary user. */
    static final class WebHdfs implements Client {
        private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
        private final HttpConnection http;

        WebHdfs(String host, int port) throws IOException {
            http = new HttpConnection(host, port);
        }

        private static String target(String path, String op) {
            return "/webhdfs/v1" + path + "?op=" + op + "&user.name=bench";
        }

        public void makeParent(String dir) throws IOException {
            create(dir, null);
        }

        public void create(String key, byte[] value) throws IOException {
            int status = http.exchange("PUT", target(key, "MKDIRS"), null, null);
            if (status != 200 || !contains(http.body, TRUE)) throw refused("MKDIRS", status, http.body);
        }

        public void stat(String key) throws IOException {
            int status = http.exchange("GET", target(key, "GETFILESTATUS"), null, null);
            if (status != 200) throw refused("GETFILESTATUS", status, http.body);
        }

        public void close() {
            http.close();
        }
    }

    /**
     * nnlite through one of Hadoop's own FileSystem clients, as the ordinary user bench: mkdirs
     * (answered once the namenode's edits log is synced) and getFileStatus, one call each.
     * Target hdfs: DistributedFileSystem over Hadoop IPC (hdfs://, the namenode's RPC port);
     * target webhdfs-fs: WebHdfsFileSystem over WebHDFS (webhdfs://, its HTTP port), the
     * client a Spark or Flink job uses when its paths say webhdfs://.
     *
     * <p>One FileSystem per client thread, never a shared one. Hadoop's IPC client keeps one
     * TCP connection per ConnectionId (address, protocol, user ticket, timeouts) and multiplexes
     * every call of that key over it; a UserGroupInformation is equal only to itself (the same
     * Subject), and FileSystem.newInstance(uri, conf, user) makes a new one each time. So each
     * thread's instance has a connection of its own, as each WebHDFS client has here: 32
     * clients are 32 connections, each with one call in flight (checked by the harness on the
     * server's port). A shared instance would put all 32 threads' calls on one connection, a
     * different load (pipelined calls on one socket) from the other systems'. WebHdfsFileSystem
     * goes through HttpURLConnection, whose KeepAliveCache keeps at most http.maxConnections
     * idle connections per server (5 by default): main raises it for this target, so that each
     * thread keeps its connection as the others' clients do.
     */
    static final class HadoopFs implements Client {
        private final FileSystem fs;

        HadoopFs(String scheme, String expected, String host, int port)
                throws IOException, InterruptedException {
            Configuration conf = new Configuration();
            // no idle close between the untimed warm-up and the timed phase
            conf.setInt("ipc.client.connection.maxidletime", 600_000);
            URI uri = URI.create(scheme + "://" + host + ":" + port);
            FileSystem opened = FileSystem.newInstance(uri, conf, "bench");
            if (!opened.getClass().getName().equals(expected)) {
                opened.close();
                throw new IOException(scheme + ":// is " + opened.getClass().getName()
                        + ", not " + expected);
            }
            fs = opened;
        }

        public void makeParent(String dir) throws IOException {
            create(dir, null);
        }

        public void create(String key, byte[] value) throws IOException {
            if (!fs.mkdirs(new org.apache.hadoop.fs.Path(key))) {
                throw new IOException("mkdirs " + key + " answered false");
            }
        }

        public void stat(String key) throws IOException {
            fs.getFileStatus(new org.apache.hadoop.fs.Path(key));  // FileNotFoundException if absent
        }

        public void close() {
            try {
                fs.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** etcd v3 through its HTTP/JSON gateway: put, and a serializable range of one key. */
    static final class Etcd implements Client {
        private static final Base64.Encoder B64 = Base64.getEncoder();
        private static final byte[] KVS = "\"kvs\"".getBytes(StandardCharsets.US_ASCII);
        private final HttpConnection http;

        Etcd(String host, int port) throws IOException {
            http = new HttpConnection(host, port);
        }

        private static String b64(String s) {
            return B64.encodeToString(s.getBytes(StandardCharsets.UTF_8));
        }

        public void makeParent(String dir) { }  // flat keys: nothing to make

        public void create(String key, byte[] value) throws IOException {
            String json = "{\"key\":\"" + b64(key) + "\",\"value\":\"" + B64.encodeToString(value) + "\"}";
            int status = http.exchange("POST", "/v3/kv/put",
                    json.getBytes(StandardCharsets.US_ASCII), "application/json");
            if (status != 200) throw refused("put", status, http.body);
        }

        public void stat(String key) throws IOException {
            String json = "{\"key\":\"" + b64(key) + "\",\"serializable\":true}";
            int status = http.exchange("POST", "/v3/kv/range",
                    json.getBytes(StandardCharsets.US_ASCII), "application/json");
            if (status != 200 || !contains(http.body, KVS)) throw refused("range", status, http.body);
        }

        public void close() {
            http.close();
        }
    }

    /** ZooKeeper through its own Java client: create a persistent znode, exists of one. */
    static final class ZooKeeperSession implements Client {
        private final ZooKeeper zk;

        ZooKeeperSession(String address) throws Exception {
            CountDownLatch connected = new CountDownLatch(1);
            zk = new ZooKeeper(address, 30000, event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
            });
            if (!connected.await(30, TimeUnit.SECONDS)) throw new IOException("no session in 30 s");
        }

        public void makeParent(String dir) throws Exception {
            StringBuilder path = new StringBuilder();
            for (String part : dir.substring(1).split("/")) {
                path.append('/').append(part);
                try {
                    zk.create(path.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                } catch (KeeperException.NodeExistsException ignored) {
                    // made by another thread or an earlier row
                }
            }
        }

        public void create(String key, byte[] value) throws Exception {
            zk.create(key, value, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }

        public void stat(String key) throws Exception {
            if (zk.exists(key, false) == null) throw new IOException("no znode " + key);
        }

        public void close() {
            try {
                zk.close();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The disk's floor: VALUE_BYTES written to a file of this client's own, then fdatasync. Either
     * appended, so the file grows on every sync as nnlite's edits log does, or written in place
     * through a 1 MiB file of zeros synced beforehand (wrapping at its end), so a sync changes no
     * size, as the logs of etcd and ZooKeeper, preallocated in 64 MB segments, mostly do.
     */
    static final class FsyncFloor implements Client {
        private static final int PREALLOCATED = 1 << 20;
        private final Path dir;
        private final boolean inPlace;
        private FileChannel file;
        private long position;

        FsyncFloor(String dir, boolean inPlace) {
            this.dir = Path.of(dir);
            this.inPlace = inPlace;
        }

        public void makeParent(String parent) throws IOException {
            close();
            Path path = dir.resolve(parent.substring(1).replace('/', '-') + ".log");
            file = inPlace
                    ? FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)
                    : FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                            StandardOpenOption.APPEND);
            if (inPlace) {
                file.write(ByteBuffer.allocate(PREALLOCATED), 0);
                file.force(true);
            }
            position = 0;
        }

        public void create(String key, byte[] value) throws IOException {
            if (inPlace) {
                if (position + value.length > PREALLOCATED) position = 0;
                position += file.write(ByteBuffer.wrap(value), position);
            } else {
                file.write(ByteBuffer.wrap(value));
            }
            file.force(false);  // fdatasync
        }

        public void stat(String key) {
            throw new UnsupportedOperationException("the fsync floor has no reads");
        }

        public void close() {
            try {
                if (file != null) file.close();
            } catch (IOException ignored) {
                // closing
            }
            file = null;
        }
    }

    static Client open(String target, String address) throws Exception {
        if (target.startsWith("fsync-")) return new FsyncFloor(address, target.equals("fsync-inplace"));
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        if (!host.equals("127.0.0.1") && !host.equals("localhost")) {
            throw new IllegalArgumentException("loopback targets only: " + address);
        }
        switch (target) {
            case "webhdfs": return new WebHdfs(host, port);
            case "hdfs": return new HadoopFs("hdfs", "org.apache.hadoop.hdfs.DistributedFileSystem",
                                             host, port);
            case "webhdfs-fs": return new HadoopFs("webhdfs",
                    "org.apache.hadoop.hdfs.web.WebHdfsFileSystem", host, port);
            case "etcd": return new Etcd(host, port);
            case "zookeeper": return new ZooKeeperSession(address);
            default: throw new IllegalArgumentException("unknown target " + target);
        }
    }

    // --------------------------------------------------------------- keys to read

    /** Keys that exist: PREFIX/0 .. PREFIX/COUNT-1 for each line of a keys file. */
    static final class KeySet {
        private final List<String> prefixes = new ArrayList<>();
        private long[] cumulative = new long[0];

        KeySet(String file) throws IOException {
            long total = 0;
            for (String line : Files.readAllLines(Path.of(file))) {
                String[] f = line.trim().split(" ");
                if (f.length != 2 || Long.parseLong(f[1]) <= 0) continue;
                prefixes.add(f[0]);
                cumulative = Arrays.copyOf(cumulative, cumulative.length + 1);
                cumulative[cumulative.length - 1] = total += Long.parseLong(f[1]);
            }
            if (total == 0) throw new IOException("no keys to read in " + file);
        }

        String pick(SplittableRandom random) {
            long x = random.nextLong(cumulative[cumulative.length - 1]);
            int i = Arrays.binarySearch(cumulative, x + 1);
            if (i < 0) i = -i - 1;
            return prefixes.get(i) + "/" + (x - (i == 0 ? 0 : cumulative[i - 1]));
        }
    }

    // --------------------------------------------------------------- one row

    /** One workload: its clients, an untimed warm-up, then the timed phase. */
    static final class Row {
        final boolean write;
        final int threads;
        final long ops;
        final double seconds;
        final String base;
        final byte[] value;
        final KeySet keys;
        final Client[] clients;
        long[][] latencies;
        int[] done, errors, written;
        String firstError;

        final long warmup;

        Row(String[] f) throws IOException {
            write = f[1].equals("write");
            threads = Integer.parseInt(f[2]);
            ops = Long.parseLong(f[3]);
            seconds = Double.parseDouble(f[4]);
            warmup = Long.parseLong(f[5]);
            base = f[6];
            value = new byte[Integer.parseInt(f[7])];
            Arrays.fill(value, (byte) 'v');
            keys = write ? null : new KeySet(f[8]);
            clients = new Client[threads];
        }

        /** Opens the clients, runs the untimed warm-up, makes the writers' parents. */
        void prepare(String target, String address) throws Exception {
            for (int t = 0; t < threads; t++) clients[t] = open(target, address);
            if (warmup > 0) {
                if (write) makeParents(base + "-warm");
                run(warmup, 60, write ? base + "-warm" : base);
            }
            if (write) makeParents(base);
        }

        private void makeParents(String parent) throws Exception {
            for (int t = 0; t < threads; t++) clients[t].makeParent(parent + "/t" + t);
        }

        void close() {
            for (Client c : clients) if (c != null) c.close();
        }

        /** Runs every thread until the shared budget or the deadline; returns the wall seconds. */
        double run(long budget, double limit, String parent) throws InterruptedException {
            latencies = new long[threads][];
            done = new int[threads];
            errors = new int[threads];
            written = new int[threads];
            firstError = null;
            AtomicLong claimed = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            Thread[] workers = new Thread[threads];
            long[] finished = new long[threads];
            for (int t = 0; t < threads; t++) {
                final int id = t;
                workers[t] = new Thread(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    loop(id, claimed, budget, parent);
                    finished[id] = System.nanoTime();
                }, "load-" + t);
                workers[t].start();
            }
            long began = System.nanoTime();
            deadline = began + (long) (limit * 1e9);
            start.countDown();
            for (Thread w : workers) w.join();
            return (Arrays.stream(finished).max().orElse(began) - began) / 1e9;
        }

        private volatile long deadline;

        private void loop(int id, AtomicLong claimed, long budget, String parent) {
            Client client = clients[id];
            SplittableRandom random = new SplittableRandom(id * 7919L + 1);
            String prefix = parent + "/t" + id + "/";
            long[] lat = new long[1024];
            int n = 0, seq = 0, failures = 0;
            boolean intact = true;
            while (claimed.getAndIncrement() < budget && System.nanoTime() < deadline) {
                String key = write ? prefix + seq++ : keys.pick(random);
                long t0 = System.nanoTime();
                try {
                    if (write) client.create(key, value); else client.stat(key);
                } catch (Exception e) {
                    intact = false;
                    noteError(e);
                    if (++failures > 20) break;
                    continue;
                }
                if (n == lat.length) lat = Arrays.copyOf(lat, n * 2);
                lat[n++] = System.nanoTime() - t0;
                if (intact && write) written[id]++;
            }
            latencies[id] = lat;
            done[id] = n;
            errors[id] = failures;
        }

        private synchronized void noteError(Exception e) {
            if (firstError == null) firstError = e.toString();
        }

        String measure() throws InterruptedException {
            long cpu0 = processCpuNanos();
            double wall = run(ops, seconds, base);
            return result(wall, processCpuNanos() - cpu0);
        }

        private String result(double wall, long cpuNanos) {
            int total = Arrays.stream(done).sum();
            long[] all = new long[total];
            for (int t = 0, off = 0; t < threads; off += done[t], t++) {
                System.arraycopy(latencies[t], 0, all, off, done[t]);
            }
            Arrays.sort(all);
            double mean = total == 0 ? 0 : Arrays.stream(all).average().orElse(0) / 1e6;
            return "{\"ops\":" + total + ",\"errors\":" + Arrays.stream(errors).sum()
                    + ",\"seconds\":" + wall + ",\"cpu_seconds\":" + cpuNanos / 1e9
                    + ",\"p50_ms\":" + quantile(all, 0.50) + ",\"p90_ms\":" + quantile(all, 0.90)
                    + ",\"p99_ms\":" + quantile(all, 0.99) + ",\"max_ms\":" + quantile(all, 1.0)
                    + ",\"mean_ms\":" + mean + ",\"written\":" + Arrays.toString(written)
                    + ",\"first_error\":" + jsonString(firstError) + "}";
        }
    }

    static double quantile(long[] sorted, double q) {
        if (sorted.length == 0) return -1;
        return sorted[(int) Math.round(q * (sorted.length - 1))] / 1e6;
    }

    static String jsonString(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(' ');
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    public static void main(String[] args) throws Exception {
        String target = args[0], address = args[1];
        if (target.equals("webhdfs-fs")) System.setProperty("http.maxConnections", "256");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Row row = null;
        for (String line; (line = commands.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                if (f[0].equals("row") || f[0].equals("quit")) {
                    // the last row's clients close only now, after the caller took its samples
                    if (row != null) row.close();
                    row = null;
                    if (f[0].equals("quit")) break;
                    row = new Row(f);
                    row.prepare(target, address);
                    reply("ready");
                } else if (f[0].equals("go") && row != null) {
                    reply(row.measure());
                } else {
                    reply("error unknown command: " + line);
                }
            } catch (Exception e) {
                reply("error " + e);
            }
        }
        if (row != null) row.close();
        System.exit(0);
    }

    static void reply(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
