package io.macfleet.node;

import io.macfleet.node.bench.Benchmark;
import io.macfleet.node.cluster.ClusterBenchmark;
import io.macfleet.node.cluster.ClusterFile;
import io.macfleet.node.cluster.ClusterKey;
import io.macfleet.node.cluster.ClusterNode;
import io.macfleet.node.cluster.DecodeBenchmark;
import io.macfleet.node.cluster.LaunchLocal;
import io.macfleet.node.cluster.WorkerServer;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.LlamaConfig;
import io.macfleet.node.server.NodeConfig;
import io.macfleet.node.server.NodeServer;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ExecutionException;

/** The cluster commands: serve --cluster --rank, launch-local, cluster-bench. */
final class ClusterCommands {
    private ClusterCommands() {
    }

    static int serve(Map<String, String> options, PrintStream err) throws IOException {
        ClusterFile cluster = ClusterFile.read(Path.of(options.get("cluster")));
        if (!options.containsKey("rank")) {
            throw new IllegalArgumentException("--cluster needs --rank N (0.." + (cluster.size() - 1) + ")");
        }
        int rank = (int) Main.number(options, "rank", 0);
        ClusterFile.Rank me = cluster.rank(rank);
        if (!options.containsKey("port")) {
            options.put("port", Integer.toString(me.httpPort()));
        }
        NodeConfig config = Main.serveConfig(options);
        io.macfleet.node.server.NodeSecurity security = Main.security(options);
        if (Boolean.parseBoolean(options.getOrDefault("exit-with-stdin", "false"))) {
            // launch-local: the parent holds our standard input; when it ends (even by kill -9), so do we
            Thread.ofPlatform().daemon().name("parent-watch").start(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // keep reading until end of input
                    }
                } catch (IOException ignored) {
                    // the parent is gone either way
                }
                System.exit(0);
            });
        }
        ClusterKey key = options.containsKey("cluster-key") ? ClusterKey.read(Path.of(options.get("cluster-key"))) : ClusterKey.none();
        ClusterNode node = new ClusterNode(cluster, rank, key);
        if (rank == 0) {
            NodeServer server = new NodeServer(config, node, security);
            server.start();
            err.println("inference-node: rank 0 of " + cluster.size() + " serving the API on http://"
                    + server.address().getHostString() + ":" + server.address().getPort());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                node.close();
            }));
            return waitForRefusal(node, err);
        }
        WorkerServer server = new WorkerServer(config.host(), config.port(), node);
        server.start();
        err.println("inference-node: rank " + rank + " of " + cluster.size() + " (health and metrics on http://"
                + server.address().getHostString() + ":" + server.address().getPort() + ")");
        security.checkModel(config.model());
        GgufFile file = GgufFile.open(config.model());
        LlamaConfig model = LlamaConfig.from(file);
        int context = config.contextLength() > 0 ? config.contextLength() : Math.min(model.contextLength(), 4096);
        WorkerPool pool = new WorkerPool(config.threads() > 0 ? config.threads() : Runtime.getRuntime().availableProcessors());
        node.place(file, model, context, pool);
        server.loaded();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            node.close();
        }));
        Thread.ofPlatform().name("rank-" + rank).start(node::serveWorker);
        return waitForRefusal(node, err);
    }

    private static int waitForRefusal(ClusterNode node, PrintStream err) {
        try {
            node.refusal().get();
            return Main.OK;
        } catch (ExecutionException e) {
            err.println("inference-node: " + e.getCause().getMessage());
            return Main.USAGE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Main.OK;
        }
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return String.format("%.2f", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    /**
     * Streaming read bandwidth with one thread and with {@code threads}, over a buffer of STREAM's size (at least 4x
     * the last-level cache) unless {@code bytes} is given: what ranks on this one host share.
     */
    private static DecodeBenchmark.HostBandwidth hostBandwidth(int threads, long bytes, PrintStream out) {
        long buffer = bytes > 0 ? bytes : Benchmark.streamRuleBytes(Benchmark.lastLevelCacheBytes(), Benchmark.availableMemoryBytes());
        double one, all;
        try (WorkerPool single = new WorkerPool(1); WorkerPool pool = new WorkerPool(threads)) {
            one = Benchmark.bandwidth(single, buffer, 5);
            all = Benchmark.bandwidth(pool, buffer, 5);
        }
        out.printf("memory bandwidth (best of 5 streaming reads of %d MB): %.2f GB/s with 1 thread, %.2f GB/s with %d threads%n",
                buffer >> 20, one / 1e9, all / 1e9, threads);
        return new DecodeBenchmark.HostBandwidth(one, all, threads);
    }

    static int launchLocal(Map<String, String> options, PrintStream err) throws IOException {
        String parallelism = options.getOrDefault("parallelism", "tensor");
        if (!parallelism.equals("tensor") && !parallelism.equals("pipeline")) {
            throw new IllegalArgumentException("--parallelism must be tensor or pipeline, got '" + parallelism + "'");
        }
        try {
            return LaunchLocal.run(Path.of(Main.required(options, "model")), (int) Main.number(options, "ranks", 2),
                    ClusterFile.Parallelism.valueOf(parallelism.toUpperCase()), (int) Main.number(options, "port", 8080),
                    (int) Main.number(options, "threads-per-rank", 1), (int) Main.number(options, "context", 0), err);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Main.FAILED;
        }
    }

    static int bench(Map<String, String> options, PrintStream out) throws IOException {
        out.printf("%s, %d processors, load average %s%n", java.time.Instant.now(), Runtime.getRuntime().availableProcessors(),
                loadAverage());
        if (options.containsKey("model")) {
            try {
                Path model = Path.of(options.get("model"));
                int layers;
                int hidden;
                try (GgufFile file = GgufFile.open(model)) {
                    LlamaConfig config = LlamaConfig.from(file);
                    layers = config.layers();
                    hidden = config.dimension();
                }
                double allReduce = ClusterBenchmark.allReduce(new int[] {2}, new int[] {hidden * Float.BYTES / 1024}, 2000, out);
                DecodeBenchmark.HostBandwidth bandwidth = hostBandwidth(2, (long) Main.number(options, "bandwidth-mb", 0) << 20, out);
                DecodeBenchmark.run(model, (int) Main.number(options, "tokens", 32), (int) Main.number(options, "repeats", 3),
                        layers, hidden, allReduce, bandwidth, out);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Main.FAILED;
            }
            return Main.OK;
        }
        int[] ranks = Arrays.stream(options.getOrDefault("ranks", "2,4").split(",")).mapToInt(Integer::parseInt).toArray();
        int[] sizes = Arrays.stream(options.getOrDefault("sizes-kb", "8,32,64").split(",")).mapToInt(Integer::parseInt).toArray();
        ClusterBenchmark.allReduce(ranks, sizes, (int) Main.number(options, "iterations", 2000), out);
        return Main.OK;
    }
}
