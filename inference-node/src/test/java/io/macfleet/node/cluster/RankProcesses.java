package io.macfleet.node.cluster;

import io.macfleet.node.json.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Ranks of a loopback cluster as separate JVM processes (what launch-local starts), for tests. */
final class RankProcesses implements AutoCloseable {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final Path model;
    final Path directory;
    final Path clusterFile;
    final ClusterFile cluster;
    final int context;
    final Process[] processes;
    /** Options every rank gets after the usual ones (for example --cluster-key FILE). */
    private final List<String> rankArguments;

    RankProcesses(Path model, int ranks, ClusterFile.Parallelism parallelism, int context) throws IOException {
        this(model, ranks, parallelism, context, List.of());
    }

    /** Ranks started with extra JVM options (for example a wait policy). */
    RankProcesses(Path model, int ranks, ClusterFile.Parallelism parallelism, int context, List<String> jvmOptions) throws IOException {
        this(model, null, ranks, parallelism, context, jvmOptions, List.of());
    }

    /** Ranks of a given cluster file (null: a loopback one), each started with {@code rankArguments} added. */
    RankProcesses(Path model, Path givenClusterFile, int ranks, ClusterFile.Parallelism parallelism, int context,
                  List<String> jvmOptions, List<String> rankArguments) throws IOException {
        this.model = model;
        this.context = context;
        this.rankArguments = rankArguments;
        directory = Files.createTempDirectory("rank-processes");
        clusterFile = givenClusterFile != null ? givenClusterFile : LaunchLocal.writeClusterFile(ranks, parallelism, 0, directory);
        cluster = ClusterFile.read(clusterFile);
        processes = new Process[ranks];
        for (int rank = 0; rank < ranks; rank++) {
            start(rank, model, jvmOptions);
        }
    }

    static String classPath() {
        try {
            return Path.of(ClusterNode.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    Process start(int rank, Path rankModel, List<String> jvmOptions) throws IOException {
        List<String> command = new ArrayList<>(List.of());
        command.addAll(LaunchLocal.rankCommand(classPath(), rankModel, clusterFile, rank, 1, context,
                concat(List.of("-Xmx512m"), jvmOptions)));
        command.addAll(rankArguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log(rank).toFile()));
        Process process = builder.start();
        processes[rank] = process;
        return process;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    Path log(int rank) {
        return directory.resolve("rank-" + rank + ".log");
    }

    String logText(int rank) throws IOException {
        return Files.exists(log(rank)) ? Files.readString(log(rank)) : "";
    }

    URI uri(int rank, String path) {
        return URI.create("http://127.0.0.1:" + cluster.rank(rank).httpPort() + path);
    }

    HttpResponse<String> get(int rank, String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri(rank, path)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, Map<String, Object> body, Duration timeout) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(uri(0, path)).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Waits until rank 0's /health is 200 (every rank loaded and connected). */
    void awaitHealthy(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> health = get(0, "/health");
                if (health.statusCode() == 200) {
                    return;
                }
                last = health.body();
            } catch (IOException e) {
                last = e.toString();
            }
            for (int r = 0; r < processes.length; r++) {
                if (processes[r] != null && !processes[r].isAlive() && processes[r].exitValue() != 0 && processes[r].exitValue() != 137) {
                    throw new IllegalStateException("rank " + r + " ended with " + processes[r].exitValue() + ":\n" + logText(r));
                }
            }
            Thread.sleep(100);
        }
        StringBuilder logs = new StringBuilder();
        for (int r = 0; r < processes.length; r++) {
            logs.append("--- rank ").append(r).append('\n').append(logText(r));
        }
        throw new IllegalStateException("cluster not healthy after " + timeout + ": " + last + "\n" + logs);
    }

    @SuppressWarnings("unchecked")
    String complete(String prompt, int maxTokens) throws IOException, InterruptedException {
        HttpResponse<String> response = post("/v1/completions", Map.of("prompt", prompt, "max_tokens", maxTokens,
                "temperature", 0), Duration.ofSeconds(300));
        if (response.statusCode() != 200) {
            throw new IllegalStateException("completion failed: " + response.statusCode() + " " + response.body());
        }
        Map<String, Object> body = (Map<String, Object>) Json.parse(response.body());
        return (String) ((Map<String, Object>) ((List<Object>) body.get("choices")).getFirst()).get("text");
    }

    @Override
    public void close() {
        for (Process process : processes) {
            if (process != null) {
                process.destroyForcibly();
            }
        }
        for (Process process : processes) {
            if (process != null) {
                try {
                    process.waitFor();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
