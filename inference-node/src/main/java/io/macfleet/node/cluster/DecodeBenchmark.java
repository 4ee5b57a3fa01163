package io.macfleet.node.cluster;

import io.macfleet.node.json.Json;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Decode speed of a model on loopback clusters of separate processes (one thread each): one process, tensor
 * parallelism over 2, pipeline over 2 (one request, then several at once), with the bytes each rank sends per
 * token against the 2 all-reduces x layers x hidden size that tensor parallelism needs per peer.
 */
public final class DecodeBenchmark {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private DecodeBenchmark() {
    }

    /** Measured figures of one configuration. */
    public record Figures(String label, double medianTokensPerSecond, double bytesPerTokenPerRank, double concurrentTokensPerSecond,
                          double busiestRankCpuMillisPerToken, double weightBytesPerToken, double promptTokensPerSecond) {
    }

    /** Words of the prompt-processing request (a few hundred tokens; the ranks' context is 512). */
    private static final int PROMPT_WORDS = 120;
    private static final String[] WORDS = {"the", "cluster", "reads", "weights", "from", "memory", "while", "stages",
            "pass", "hidden", "states", "along", "a", "ring", "of", "machines"};

    /** Streaming read bandwidth of this host in bytes/s: one thread, and as many threads as the cluster has ranks. */
    public record HostBandwidth(double oneThread, double allThreads, int threads) {
    }

    public static List<Figures> run(Path model, int tokens, int repeats, int layers, int hidden, double allReduceSeconds,
                                    HostBandwidth bandwidth, PrintStream out) throws IOException, InterruptedException {
        List<Figures> figures = new ArrayList<>();
        figures.add(measure(model, 1, 1, ClusterFile.Parallelism.TENSOR, tokens, repeats, false, out));
        figures.add(measure(model, 1, 2, ClusterFile.Parallelism.TENSOR, tokens, repeats, false, out));
        figures.add(measure(model, 2, 1, ClusterFile.Parallelism.TENSOR, tokens, repeats, false, out));
        figures.add(measure(model, 2, 1, ClusterFile.Parallelism.PIPELINE, tokens, repeats, true, out));
        Figures single = figures.get(0), twoThreads = figures.get(1), tensor = figures.get(2), pipeline = figures.get(3);
        out.printf("tensor 2: theoretical all-reduce payload per token per rank 2 x %d layers x %d hidden x 4 bytes = %d%n",
                layers, hidden, 2L * layers * hidden * Float.BYTES);
        out.printf("tensor 2 x 1 thread against 1 process x 1 thread: %.2fx (by the busiest rank's CPU time per token: %.2fx);"
                        + " 1 process x 2 threads: %.2fx%n",
                tensor.medianTokensPerSecond() / single.medianTokensPerSecond(),
                single.busiestRankCpuMillisPerToken() / tensor.busiestRankCpuMillisPerToken(),
                twoThreads.medianTokensPerSecond() / single.medianTokensPerSecond());
        out.printf("pipeline 2: hop cost per token %.2f ms (1/pipeline - 1/single); prompt processing %.2fx of 1 process"
                        + " (micro-batches of %d overlap the stages)%n",
                1000 / pipeline.medianTokensPerSecond() - 1000 / single.medianTokensPerSecond(),
                pipeline.promptTokensPerSecond() / single.promptTokensPerSecond(), ClusterNode.MICRO_BATCH);
        if (allReduceSeconds > 0 && bandwidth != null) {
            printModelCheck(single, twoThreads, tensor, pipeline, layers, hidden, allReduceSeconds, bandwidth, out);
        }
        PerformanceModel.printExoCheck(out);
        PerformanceModel.printM3UltraTable(out);
        return figures;
    }

    /**
     * The performance model on this host against the measured figures, two ways.
     * <ul>
     * <li>Wall clock (meaningful on a quiet machine): one rank's bandwidth is what the one-process, one-thread run
     * streamed (its weight bytes x its tokens/s); the host's is what the one-process, two-thread run streamed (the
     * engine with every core reading at once). With STREAM's figure instead, scaled by the engine's fraction of the
     * one-thread streaming read, for comparison.</li>
     * <li>CPU time (what a token costs with a core per rank, whatever else runs on the machine): the same with each
     * run's CPU time per token; the two-thread run's threads each spent half its process CPU time.</li>
     * </ul>
     * The all-reduce latency is the measured p50 in both.
     */
    static void printModelCheck(Figures single, Figures twoThreads, Figures tensor, Figures pipeline, int layers, int hidden,
                                double allReduceSeconds, HostBandwidth bandwidth, PrintStream out) {
        double bytes = single.weightBytesPerToken();
        double loopback = Double.POSITIVE_INFINITY; // the measured all-reduce p50 already includes moving the bytes
        double rankBandwidth = bytes * single.medianTokensPerSecond();
        double hostBandwidth = Math.max(rankBandwidth, bytes * twoThreads.medianTokensPerSecond());
        double efficiency = rankBandwidth / bandwidth.oneThread();
        double streamHost = Math.max(rankBandwidth, bandwidth.allThreads() * efficiency);
        out.printf("performance model here: %.0f MB per token; one rank streams %.2f GB/s, the host %.2f GB/s (1 process x 2 threads);"
                        + " streaming reads: %.2f GB/s with 1 thread, %.2f GB/s with %d (the engine reaches %.0f%% of the 1-thread"
                        + " figure, so STREAM's host figure is %.2f GB/s); all-reduce %.1f us%n",
                bytes / 1e6, rankBandwidth / 1e9, hostBandwidth / 1e9, bandwidth.oneThread() / 1e9, bandwidth.allThreads() / 1e9,
                bandwidth.threads(), 100 * efficiency, streamHost / 1e9, allReduceSeconds * 1e6);
        PerformanceModel model = new PerformanceModel(bytes, rankBandwidth, hostBandwidth, layers, hidden, 0);
        compare(out, "tensor 2, ranks share the host", model.tensor(2, 2, allReduceSeconds, loopback), tensor.medianTokensPerSecond());
        compare(out, "tensor 2, as if on two hosts", model.tensor(2, 1, allReduceSeconds, loopback), tensor.medianTokensPerSecond());
        compare(out, "pipeline 2", model.pipeline(2, allReduceSeconds, loopback), pipeline.medianTokensPerSecond());
        PerformanceModel stream = new PerformanceModel(bytes, rankBandwidth, streamHost, layers, hidden, 0);
        compare(out, "tensor 2, host from STREAM", stream.tensor(2, 2, allReduceSeconds, loopback), tensor.medianTokensPerSecond());
        // CPU time: seconds of CPU per token instead of wall seconds (the busiest rank's, for the clusters)
        double rankCpuBandwidth = bytes / (single.busiestRankCpuMillisPerToken() / 1e3);
        double hostCpuBandwidth = Math.max(rankCpuBandwidth, 2 * bytes / (twoThreads.busiestRankCpuMillisPerToken() / 1e3));
        out.printf("performance model in CPU time (a core per rank): one rank streams %.2f GB/s per CPU-second, the host %.2f%n",
                rankCpuBandwidth / 1e9, hostCpuBandwidth / 1e9);
        PerformanceModel cpu = new PerformanceModel(bytes, rankCpuBandwidth, hostCpuBandwidth, layers, hidden, 0);
        compare(out, "tensor 2 (CPU), ranks share the host", cpu.tensor(2, 2, allReduceSeconds, loopback),
                1e3 / tensor.busiestRankCpuMillisPerToken());
        compare(out, "tensor 2 (CPU), as if on two hosts", cpu.tensor(2, 1, allReduceSeconds, loopback),
                1e3 / tensor.busiestRankCpuMillisPerToken());
    }

    private static void compare(PrintStream out, String label, PerformanceModel.Prediction predicted, double measured) {
        double error = measured / predicted.tokensPerSecond() - 1;
        out.printf("%-38s predicted %6.2f tokens/s (weights %.1f ms + collectives %.2f ms), measured %6.2f (%+.0f%%%s)%n",
                label, predicted.tokensPerSecond(), predicted.weightSeconds() * 1e3, predicted.collectiveSeconds() * 1e3,
                measured, 100 * error, Math.abs(error) <= 0.2 ? ", within 20%" : ", NOT within 20%");
    }

    @SuppressWarnings("unchecked")
    static Figures measure(Path model, int ranks, int threads, ClusterFile.Parallelism parallelism, int tokens, int repeats,
                           boolean concurrent, PrintStream out) throws IOException, InterruptedException {
        Path directory = Files.createTempDirectory("decode-bench");
        Path clusterFile = LaunchLocal.writeClusterFile(ranks, parallelism, 0, directory);
        ClusterFile cluster = ClusterFile.read(clusterFile);
        List<Process> processes = new ArrayList<>();
        try {
            for (int rank = 0; rank < ranks; rank++) {
                processes.add(new ProcessBuilder(LaunchLocal.rankCommand(model, clusterFile, rank, threads, 512, List.of()))
                        .redirectErrorStream(true).redirectOutput(directory.resolve("rank-" + rank + ".log").toFile()).start());
            }
            awaitHealthy(cluster, processes);
            // The same prompt every time: after the first request only its last token is computed again (prompt
            // cache), so each request forwards exactly its completion tokens and bytes per token are exact.
            String prompt = "the benchmark prompt";
            complete(cluster, prompt, tokens); // warm-up: the JIT compiles the kernels in every process first
            long[] before = bytesSent(cluster);
            double waitBefore = metric(cluster, 0, "inference_node_cluster_wait_microseconds");
            double[] cpuBefore = new double[ranks];
            for (int r = 0; r < ranks; r++) {
                cpuBefore[r] = metric(cluster, r, "inference_node_process_cpu_microseconds");
            }
            long startNanos = System.nanoTime();
            double[] speeds = new double[repeats];
            long forwarded = 0;
            for (int i = 0; i < repeats; i++) {
                Map<String, Object> usage = complete(cluster, prompt, tokens);
                speeds[i] = metric(cluster, 0, "inference_node_decode_tokens_per_second");
                forwarded += ((Number) usage.get("completion_tokens")).longValue();
            }
            long[] after = bytesSent(cluster);
            double waitMillisPerToken = (metric(cluster, 0, "inference_node_cluster_wait_microseconds") - waitBefore) / 1000.0 / forwarded;
            double wallMillisPerToken = (System.nanoTime() - startNanos) / 1e6 / forwarded;
            // CPU time per token of the busiest rank: what decoding would cost with a core per rank and no one else
            double cpuMillisPerToken = 0;
            double[] rankCpu = new double[ranks];
            for (int r = 0; r < ranks; r++) {
                rankCpu[r] = (metric(cluster, r, "inference_node_process_cpu_microseconds") - cpuBefore[r]) / 1000.0 / forwarded;
                cpuMillisPerToken = Math.max(cpuMillisPerToken, rankCpu[r]);
            }
            Arrays.sort(speeds);
            double median = speeds[repeats / 2];
            double bytesPerToken = 0;
            for (int r = 0; r < ranks; r++) {
                bytesPerToken = Math.max(bytesPerToken, (after[r] - before[r]) / (double) forwarded);
            }
            // Prompt processing: a long prompt nothing is cached for, one completion token (pipeline micro-batches overlap here)
            StringBuilder longPrompt = new StringBuilder("prompt processing:");
            for (int i = 0; i < PROMPT_WORDS; i++) {
                longPrompt.append(' ').append(WORDS[i % WORDS.length]);
            }
            long promptStart = System.nanoTime();
            Map<String, Object> promptUsage = complete(cluster, longPrompt.toString(), 1);
            double promptSeconds = (System.nanoTime() - promptStart) / 1e9;
            double promptTokens = ((Number) promptUsage.get("prompt_tokens")).doubleValue();
            double promptSpeed = promptTokens / promptSeconds;
            double concurrentSpeed = 0;
            if (concurrent) {
                int requests = 4;
                long start = System.nanoTime();
                List<CompletableFuture<Map<String, Object>>> futures = new ArrayList<>();
                for (int i = 0; i < requests; i++) {
                    int n = i;
                    futures.add(CompletableFuture.supplyAsync(() -> {
                        try {
                            return complete(cluster, "concurrent request " + n, tokens);
                        } catch (IOException | InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }));
                }
                long generated = 0;
                for (CompletableFuture<Map<String, Object>> future : futures) {
                    generated += ((Number) future.join().get("completion_tokens")).longValue();
                }
                concurrentSpeed = generated / ((System.nanoTime() - start) / 1e9);
            }
            double weightBytes = 0;
            for (int r = 0; r < ranks; r++) {
                weightBytes += metric(cluster, r, "inference_node_shard_weight_bytes");
            }
            String label = (ranks == 1 ? "1 process" : parallelism.label() + " " + ranks) + " x " + threads
                    + (threads == 1 ? " thread" : " threads");
            out.printf("%-22s decode %6.2f tokens/s (median of %d x %d tokens; runs %s); bytes sent per token per rank %.0f;"
                            + " rank 0 waits for peers %.1f of %.1f ms per token; busiest rank's CPU %.1f ms per token%s;"
                            + " prompt of %.0f tokens at %.1f tokens/s%s%n",
                    label, median, repeats, tokens, Arrays.toString(speeds), bytesPerToken, waitMillisPerToken, wallMillisPerToken,
                    cpuMillisPerToken, ranks == 1 ? "" : " (ranks " + Arrays.stream(rankCpu).mapToObj(c -> String.format("%.1f", c))
                            .collect(java.util.stream.Collectors.joining(", ")) + ")", promptTokens, promptSpeed,
                    concurrent ? String.format("; 4 concurrent requests: %.2f tokens/s in total", concurrentSpeed) : "");
            return new Figures(label, median, bytesPerToken, concurrentSpeed, cpuMillisPerToken, weightBytes, promptSpeed);
        } finally {
            processes.forEach(Process::destroyForcibly);
            for (Process process : processes) {
                process.waitFor();
            }
        }
    }

    private static void awaitHealthy(ClusterFile cluster, List<Process> processes) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 300_000_000_000L;
        while (System.nanoTime() < deadline) {
            try {
                if (get(cluster, 0, "/health").statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            for (Process process : processes) {
                if (!process.isAlive()) {
                    throw new IOException("a rank ended with status " + process.exitValue());
                }
            }
            Thread.sleep(200);
        }
        throw new IOException("the cluster did not become healthy in 300 s");
    }

    private static HttpResponse<String> get(ClusterFile cluster, int rank, String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cluster.rank(rank).httpPort() + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> complete(ClusterFile cluster, String prompt, int tokens) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + cluster.rank(0).httpPort() + "/v1/completions")).timeout(Duration.ofSeconds(900))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(Map.of("prompt", prompt, "max_tokens", tokens,
                        "temperature", 0, "stop", List.of())))).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("completion failed: " + response.statusCode() + " " + response.body());
        }
        return (Map<String, Object>) ((Map<String, Object>) Json.parse(response.body())).get("usage");
    }

    private static long[] bytesSent(ClusterFile cluster) throws IOException, InterruptedException {
        long[] bytes = new long[cluster.size()];
        for (int r = 0; r < cluster.size(); r++) {
            bytes[r] = (long) metric(cluster, r, "inference_node_cluster_bytes_sent");
        }
        return bytes;
    }

    private static double metric(ClusterFile cluster, int rank, String name) throws IOException, InterruptedException {
        for (String line : get(cluster, rank, "/metrics").body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        throw new IOException("rank " + rank + " /metrics has no " + name);
    }
}
