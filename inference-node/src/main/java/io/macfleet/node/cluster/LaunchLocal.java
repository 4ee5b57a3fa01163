package io.macfleet.node.cluster;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code launch-local}: N ranks as separate processes of this same JVM on loopback (like {@code mlx.launch} on one
 * host). Rank 0's API is on the given port; the ranks die with the launcher (shutdown hook on Ctrl-C, and each
 * child watches its standard input, which ends when the parent ends even by kill -9).
 */
public final class LaunchLocal {
    private LaunchLocal() {
    }

    /** Free TCP ports on loopback (also used for UDP heartbeats: same number). */
    public static int[] freePorts(int count) throws IOException {
        int[] ports = new int[count];
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0);
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
        return ports;
    }

    /** Writes a loopback cluster file for {@code ranks} ranks with rank 0's HTTP on {@code port} (0: free port). */
    public static Path writeClusterFile(int ranks, ClusterFile.Parallelism parallelism, int port, Path directory) throws IOException {
        int[] clusterPorts = freePorts(ranks);
        int[] httpPorts = freePorts(ranks);
        if (port > 0) {
            httpPorts[0] = port;
        }
        Path file = directory.resolve("cluster.json");
        Files.writeString(file, ClusterFile.loopback(ranks, parallelism, clusterPorts, httpPorts));
        return file;
    }

    /** The command line starting one rank as a child of this JVM. */
    public static List<String> rankCommand(Path model, Path clusterFile, int rank, int threads, int context, List<String> jvmOptions) {
        return rankCommand(System.getProperty("java.class.path"), model, clusterFile, rank, threads, context, jvmOptions);
    }

    public static List<String> rankCommand(String classPath, Path model, Path clusterFile, int rank, int threads, int context,
                                           List<String> jvmOptions) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--add-modules");
        command.add("jdk.incubator.vector");
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-XX:+UseSerialGC"); // as the inference-node launcher: no collector threads competing with the rank's
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath);
        command.add("io.macfleet.node.Main");
        command.addAll(List.of("serve", "--model", model.toString(), "--cluster", clusterFile.toString(),
                "--rank", Integer.toString(rank), "--threads", Integer.toString(threads), "--exit-with-stdin", "true"));
        if (context > 0) {
            command.addAll(List.of("--context", Integer.toString(context)));
        }
        return command;
    }

    /** The launcher's wait overrides ({@link WaitPolicy}), passed on to the ranks. */
    static List<String> waitOptions() {
        List<String> options = new ArrayList<>();
        for (String property : List.of(WaitPolicy.PROPERTY, WaitPolicy.SPIN_MICROS_PROPERTY)) {
            String value = System.getProperty(property);
            if (value != null) {
                options.add("-D" + property + "=" + value);
            }
        }
        return options;
    }

    /** Starts the ranks and waits until they end (or this JVM is stopped, which stops them). */
    public static int run(Path model, int ranks, ClusterFile.Parallelism parallelism, int port, int threads, int context,
                          PrintStream err) throws IOException, InterruptedException {
        if (ranks < 1 || ranks > 16) {
            throw new IllegalArgumentException("--ranks must be 1..16, got " + ranks);
        }
        if (!Files.isReadable(model)) {
            throw new IllegalArgumentException("model file " + model + " is not readable");
        }
        Path directory = Files.createTempDirectory("inference-node-cluster");
        Path clusterFile = writeClusterFile(ranks, parallelism, port, directory);
        ClusterFile cluster = ClusterFile.read(clusterFile);
        List<Process> processes = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> processes.forEach(Process::destroy)));
        for (int rank = 0; rank < ranks; rank++) {
            ProcessBuilder builder = new ProcessBuilder(rankCommand(model, clusterFile, rank, threads, context, waitOptions()));
            builder.redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT);
            processes.add(builder.start());
        }
        err.println("inference-node: launched " + ranks + " ranks (" + parallelism.label() + "), cluster file " + clusterFile
                + "; API on http://127.0.0.1:" + cluster.rank(0).httpPort() + " (Ctrl-C stops all)");
        int status = 0;
        for (Process process : processes) {
            status = Math.max(status, process.waitFor());
        }
        return status;
    }
}
