import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A checkpoint file as a job writes it through Hadoop's own FileSystem classes, with no
 * py4j between (bench/bench_data.py jvm-files): create a temp file, write BYTES, close,
 * rename it to its final name; once per URI per round, the URIs and the floor in an order
 * rotating from round to round, after WARMUP files of each. The floor is what such a file
 * needs with nothing else: SYNCS serial fdatasyncs (FileChannel.force(false)) of a 1.5 KB
 * append to a file in FLOOR_DIR, then TRIPS round trips of 100 bytes to an echo thread over
 * loopback TCP (TCP_NODELAY).
 *
 * Then each URI's files alone, FILES of them, for the CPU a file costs this JVM (all its
 * threads: the caller, DataStreamer and its ResponseProcessor, the IPC connection's reader):
 * "cpu-start KIND" before, "cpu KIND cpu_ms wall_ms" (per file) after, so that the caller can
 * read the namenode's CPU between the two lines.
 *
 * java CheckpointFiles FILES BYTES WARMUP FLOOR_DIR SYNCS TRIPS URI...
 * prints one line per kind: "KIND p50_ms p90_ms mean_ms", then the CPU lines.
 */
public class CheckpointFiles {
    public static void main(String[] args) throws Exception {
        int files = Integer.parseInt(args[0]);
        byte[] data = new byte[Integer.parseInt(args[1])];
        Arrays.fill(data, (byte) 'x');
        int warmup = Integer.parseInt(args[2]);
        Floor floor = new Floor(new File(args[3]), Integer.parseInt(args[4]),
                                Integer.parseInt(args[5]));
        List<String> uris = Arrays.asList(args).subList(6, args.length);
        List<FileSystem> systems = new ArrayList<>();
        Configuration conf = new Configuration();
        for (String uri : uris) {
            FileSystem fs = FileSystem.newInstance(new URI(uri), conf, "bench");
            fs.mkdirs(new Path(dir(uri)));
            systems.add(fs);
            for (int i = 0; i < warmup; i++) {
                write(fs, uri, "warm-" + i, data);
            }
        }
        int kinds = uris.size() + 1;
        long[][] nanos = new long[kinds][files];
        for (int i = 0; i < files; i++) {
            for (int k = 0; k < kinds; k++) {
                int kind = (k + i) % kinds;
                long start = System.nanoTime();
                if (kind == uris.size()) {
                    floor.once();
                } else {
                    write(systems.get(kind), uris.get(kind), String.valueOf(i), data);
                }
                nanos[kind][i] = System.nanoTime() - start;
            }
        }
        for (int kind = 0; kind < kinds; kind++) {
            long[] t = nanos[kind].clone();
            Arrays.sort(t);
            double mean = Arrays.stream(t).average().orElse(0) / 1e6;
            String name = kind == uris.size() ? "floor" : uris.get(kind).split(":")[0];
            System.out.printf("%s %.3f %.3f %.3f%n", name, t[files / 2] / 1e6,
                              t[(int) Math.round(0.9 * (files - 1))] / 1e6, mean);
        }
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int kind = 0; kind < uris.size(); kind++) {
            String name = uris.get(kind).split(":")[0];
            System.out.println("cpu-start " + name);
            System.out.flush();
            long cpu = os.getProcessCpuTime();
            long start = System.nanoTime();
            for (int i = 0; i < files; i++) {
                write(systems.get(kind), uris.get(kind), "cpu-" + i, data);
            }
            double wall = (System.nanoTime() - start) / 1e6 / files;
            System.out.printf("cpu %s %.3f %.3f%n", name,
                              (os.getProcessCpuTime() - cpu) / 1e6 / files, wall);
            System.out.flush();
        }
        for (FileSystem fs : systems) {
            fs.close();
        }
        floor.close();
    }

    /** The directory of one URI's files (the URIs may name one namenode). */
    static String dir(String uri) {
        return uri + "/bench/jvm-files-" + uri.split(":")[0];
    }

    static void write(FileSystem fs, String uri, String name, byte[] data) throws Exception {
        Path tmp = new Path(dir(uri) + "/." + name + ".tmp");
        try (FSDataOutputStream out = fs.create(tmp, true)) {
            out.write(data);
        }
        if (!fs.rename(tmp, new Path(dir(uri) + "/" + name))) {
            throw new IllegalStateException("rename of " + tmp + " refused");
        }
    }

    /** The floor's syncs and round trips (class comment). */
    static final class Floor {
        final int syncs;
        final int trips;
        final RandomAccessFile log;
        final FileChannel channel;
        final ServerSocket server;
        final Socket client;
        final Socket peer;
        final Thread echo;

        Floor(File dir, int syncs, int trips) throws Exception {
            this.syncs = syncs;
            this.trips = trips;
            log = new RandomAccessFile(new File(dir, "jvm-floor.log"), "rw");
            channel = log.getChannel();
            server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
            peer = server.accept();
            client.setTcpNoDelay(true);
            peer.setTcpNoDelay(true);
            echo = new Thread(() -> {
                byte[] buf = new byte[4096];
                try (InputStream in = peer.getInputStream();
                     OutputStream out = peer.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        out.write(buf, 0, n);
                    }
                } catch (Exception e) {
                    // the client closed: the floor is done
                }
            });
            echo.setDaemon(true);
            echo.start();
        }

        void once() throws Exception {
            byte[] record = new byte[1500];
            for (int i = 0; i < syncs; i++) {
                channel.write(ByteBuffer.wrap(record), channel.size());
                channel.force(false);
            }
            byte[] payload = new byte[100];
            byte[] back = new byte[4096];
            OutputStream out = client.getOutputStream();
            InputStream in = client.getInputStream();
            for (int i = 0; i < trips; i++) {
                out.write(payload);
                int got = 0;
                while (got < payload.length) {
                    got += in.read(back);
                }
            }
        }

        void close() throws Exception {
            client.close();
            echo.join(10_000);
            peer.close();
            server.close();
            log.close();
        }
    }
}
