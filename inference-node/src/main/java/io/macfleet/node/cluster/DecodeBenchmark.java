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
        // The model's inputs come before the optional parts, and a failure of an optional part (a rank dropped on an
        // overloaded machine) is printed without losing the rest.
        Concurrent concurrent = measureConcurrent(model, tokens, repeats, out);
        Figures pipeline = attempt("pipeline 2", out, () -> measure(model, 2, 1, ClusterFile.Parallelism.PIPELINE, tokens,
                repeats, true, out));
        figures.add(pipeline);
        // The ranks wait as users get them by default (WaitPolicy: ranks with a core per thread, as here, spin through
        // their waits). Each is measured again parking, to show what spinning buys and costs. Optional: the model's
        // check is against the defaults.
        Figures tensorParked = attempt("tensor 2, parking", out, () -> measure(model, 2, 1, ClusterFile.Parallelism.TENSOR,
                tokens, repeats, false, out, PARKED));
        Figures pipelineParked = attempt("pipeline 2, parking", out, () -> measure(model, 2, 1, ClusterFile.Parallelism.PIPELINE,
                tokens, repeats, false, out, PARKED));
        Figures single = figures.get(0), twoThreads = figures.get(1), tensor = figures.get(2);
        out.printf("tensor 2: theoretical all-reduce payload per token per rank 2 x %d layers x %d hidden x 4 bytes = %d"
                        + " (plus rank 1's vocabulary rows of the logits, sent to rank 0)%n",
                layers, hidden, 2L * layers * hidden * Float.BYTES);
        if (pipeline != null) {
            out.printf("pipeline 2: hop cost per token %.2f ms (1/pipeline - 1/single); prompt processing %.2fx of 1 process"
                            + " (micro-batches of %d overlap the stages)%n",
                    1000 / pipeline.medianTokensPerSecond() - 1000 / single.medianTokensPerSecond(),
                    pipeline.promptTokensPerSecond() / single.promptTokensPerSecond(), ClusterNode.MICRO_BATCH);
        }
        if (bandwidth != null) {
            out.printf("streaming reads (STREAM-like, for reference, not a model input): %.2f GB/s with 1 thread, %.2f GB/s with %d;"
                            + " the engine streams %.2f GB/s in 1 process x 1 thread%n", bandwidth.oneThread() / 1e9,
                    bandwidth.allThreads() / 1e9, bandwidth.threads(), single.weightBytesPerToken() * single.medianTokensPerSecond() / 1e9);
        }
        PerformanceModel.Prediction predicted = null;
        if (allReduceSeconds > 0) {
            predicted = printModelCheck(single, concurrent, tensor, pipeline, pipelineParked, layers, hidden, allReduceSeconds, out);
        }
        PerformanceModel.printExoCheck(out);
        PerformanceModel.printM3UltraTable(out);
        PerformanceModel.printDeepSeekV31Prediction(out);
        out.printf("SUMMARY decode tokens/s: 1 process x 1 thread %.2f, 1 process x 2 threads %.2f (%.2fx), tensor 2 x 1 thread"
                        + " %.2f (%.2fx; by the busiest rank's CPU per token %.2fx; target 1.6x), pipeline 2 %s; model for"
                        + " tensor 2 %s%n",
                single.medianTokensPerSecond(), twoThreads.medianTokensPerSecond(),
                twoThreads.medianTokensPerSecond() / single.medianTokensPerSecond(), tensor.medianTokensPerSecond(),
                tensor.medianTokensPerSecond() / single.medianTokensPerSecond(),
                single.busiestRankCpuMillisPerToken() / tensor.busiestRankCpuMillisPerToken(),
                pipeline == null ? "failed" : String.format("%.2f", pipeline.medianTokensPerSecond()),
                predicted == null ? "not computed" : String.format("%.2f (error %+.0f%%)", predicted.tokensPerSecond(),
                        100 * (tensor.medianTokensPerSecond() / predicted.tokensPerSecond() - 1)));
        if (tensorParked != null) {
            out.printf("SUMMARY tensor 2: %.2f tokens/s (%.2fx) spinning through the all-reduces (the default here), %.2f (%.2fx)"
                            + " parking (-D%s=park); busiest rank's CPU %.1f against %.1f ms per token (a spinning rank's CPU"
                            + " includes its spin)%n", tensor.medianTokensPerSecond(), tensor.medianTokensPerSecond() / single.medianTokensPerSecond(),
                    tensorParked.medianTokensPerSecond(), tensorParked.medianTokensPerSecond() / single.medianTokensPerSecond(),
                    WaitPolicy.PROPERTY, tensor.busiestRankCpuMillisPerToken(), tensorParked.busiestRankCpuMillisPerToken());
        }
        if (pipeline != null && pipelineParked != null) {
            out.printf("SUMMARY pipeline 2: %.2f tokens/s spinning (the default here), %.2f parking (-D%s=park); busiest rank's CPU"
                            + " %.1f against %.1f ms per token (a spinning rank's CPU includes its spin)%n", pipeline.medianTokensPerSecond(), pipelineParked.medianTokensPerSecond(),
                    WaitPolicy.PROPERTY, pipeline.busiestRankCpuMillisPerToken(), pipelineParked.busiestRankCpuMillisPerToken());
        }
        return figures;
    }

    private interface Measurement {
        Figures run() throws IOException, InterruptedException;
    }

    /** Runs an optional part of the bench; on a failure prints it and returns null. */
    private static Figures attempt(String label, PrintStream out, Measurement measurement) throws InterruptedException {
        try {
            return measurement.run();
        } catch (IOException | RuntimeException e) {
            out.println(label + ": failed (" + e.getMessage() + "); the other figures stand");
            return null;
        }
    }

    /**
     * The performance model on this host against the measured figures. Its inputs, all measured by this command:
     * <ul>
     * <li>weight bytes per token: the sum of the ranks' {@code inference_node_shard_weight_bytes} in the one-process run;</li>
     * <li>a rank's streaming rate when the ranks share this host: weight bytes x the decode tokens/s of each of two
     * independent one-thread processes decoding at the same time ({@link #measureConcurrent}), so the competition
     * for the one memory system is measured, not assumed; alone (for separate hosts): the one-process, one-thread run;</li>
     * <li>the link latency: the all-reduce benchmark's p50 for a hidden-size vector between 2 ranks over loopback,
     * charged for each of the 2 x layers all-reduces (the logits gather, one more message, is not charged).</li>
     * </ul>
     * In CPU time too (what a token costs with a core per rank, whatever else runs): the two processes' CPU per token.
     */
    static PerformanceModel.Prediction printModelCheck(Figures single, Concurrent concurrent, Figures tensor, Figures pipeline,
                                                       Figures pipelineParked, int layers, int hidden, double allReduceSeconds, PrintStream out) {
        double bytes = single.weightBytesPerToken();
        double loopback = Double.POSITIVE_INFINITY; // the measured all-reduce p50 already includes moving the bytes
        double alone = bytes * single.medianTokensPerSecond();
        double shared = Math.min(alone, bytes * concurrent.tokensPerSecond());
        out.printf("performance model inputs (measured here): %.0f MB of weights per token; one process streams %.2f GB/s alone,"
                        + " %.2f GB/s while a second process streams too (%.2f tokens/s each); all-reduce p50 %.1f us x %d"
                        + " collectives per token%n", bytes / 1e6, alone / 1e9, shared / 1e9, concurrent.tokensPerSecond(),
                allReduceSeconds * 1e6, PerformanceModel.collectivesPerToken(layers));
        PerformanceModel model = new PerformanceModel(bytes, alone, 2 * shared, layers, hidden, 0);
        PerformanceModel.Prediction predicted = model.tensor(2, 2, allReduceSeconds, loopback);
        compare(out, "tensor 2, ranks share the host", predicted, tensor.medianTokensPerSecond());
        compare(out, "tensor 2, as if on two hosts", model.tensor(2, 1, allReduceSeconds, loopback), tensor.medianTokensPerSecond());
        if (pipeline != null) {
            compare(out, "pipeline 2 (default waits)", model.pipeline(2, allReduceSeconds, loopback), pipeline.medianTokensPerSecond());
        }
        if (pipelineParked != null) {
            compare(out, "pipeline 2, parking while waiting", model.pipeline(2, allReduceSeconds, loopback), pipelineParked.medianTokensPerSecond());
        }
        double sharedCpu = Math.min(bytes / (single.busiestRankCpuMillisPerToken() / 1e3), bytes / (concurrent.cpuMillisPerToken() / 1e3));
        PerformanceModel cpu = new PerformanceModel(bytes, sharedCpu, 2 * sharedCpu, layers, hidden, 0);
        compare(out, "tensor 2 (CPU), ranks share the host", cpu.tensor(2, 2, allReduceSeconds, loopback),
                1e3 / tensor.busiestRankCpuMillisPerToken());
        return predicted;
    }

    private static void compare(PrintStream out, String label, PerformanceModel.Prediction predicted, double measured) {
        double error = measured / predicted.tokensPerSecond() - 1;
        out.printf("%-38s predicted %6.2f tokens/s (weights %.1f ms + collectives %.2f ms), measured %6.2f (%+.0f%%%s)%n",
                label, predicted.tokensPerSecond(), predicted.weightSeconds() * 1e3, predicted.collectiveSeconds() * 1e3,
                measured, 100 * error, Math.abs(error) <= 0.2 ? ", within 20%" : ", NOT within 20%");
    }

    /**
     * Two processes of one thread each decoding the whole model at the same time, each its own request (no
     * collectives between them): how fast one process streams weights while another streams too, which is what each
     * tensor rank on this one host gets. Medians over the repeats of each process's decode tokens/s and CPU per token.
     */
    public record Concurrent(double tokensPerSecond, double cpuMillisPerToken) {
    }

    static Concurrent measureConcurrent(Path model, int tokens, int repeats, PrintStream out) throws IOException, InterruptedException {
        List<Process> processes = new ArrayList<>();
        List<ClusterFile> clusters = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Path directory = Files.createTempDirectory("decode-bench");
                Path clusterFile = LaunchLocal.writeClusterFile(1, ClusterFile.Parallelism.TENSOR, 0, directory);
                clusters.add(ClusterFile.read(clusterFile));
                processes.add(new ProcessBuilder(LaunchLocal.rankCommand(model, clusterFile, 0, 1, 512, List.of()))
                        .redirectErrorStream(true).redirectOutput(directory.resolve("rank-0.log").toFile()).start());
            }
            for (ClusterFile cluster : clusters) {
                awaitHealthy(cluster, processes);
            }
            String prompt = "the benchmark prompt";
            bothAtOnce(clusters, prompt, tokens); // warm-up
            double[] speeds = new double[2 * repeats];
            double[] cpu = new double[2 * repeats];
            for (int i = 0; i < repeats; i++) {
                double[] cpuBefore = new double[2];
                for (int p = 0; p < 2; p++) {
                    cpuBefore[p] = metric(clusters.get(p), 0, "inference_node_process_cpu_microseconds");
                }
                long[] generated = bothAtOnce(clusters, prompt, tokens);
                for (int p = 0; p < 2; p++) {
                    speeds[2 * i + p] = metric(clusters.get(p), 0, "inference_node_decode_tokens_per_second");
                    cpu[2 * i + p] = (metric(clusters.get(p), 0, "inference_node_process_cpu_microseconds") - cpuBefore[p])
                            / 1000.0 / generated[p];
                }
            }
            out.printf("2 processes x 1 thread at once (each the whole model, its own request): decode %s tokens/s each;"
                            + " CPU %s ms per token%n", Arrays.toString(speeds),
                    Arrays.stream(cpu).mapToObj(c -> String.format("%.1f", c)).collect(java.util.stream.Collectors.joining(", ")));
            Arrays.sort(speeds);
            Arrays.sort(cpu);
            return new Concurrent((speeds[repeats - 1] + speeds[repeats]) / 2, (cpu[repeats - 1] + cpu[repeats]) / 2);
        } finally {
            processes.forEach(Process::destroyForcibly);
            for (Process process : processes) {
                process.waitFor();
            }
        }
    }

    /** One completion on each cluster at the same time; the completion tokens of each. */
    @SuppressWarnings("unchecked")
    private static long[] bothAtOnce(List<ClusterFile> clusters, String prompt, int tokens) {
        List<CompletableFuture<Map<String, Object>>> futures = new ArrayList<>();
        for (ClusterFile cluster : clusters) {
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return complete(cluster, prompt, tokens);
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, Thread::startVirtualThread));
        }
        long[] generated = new long[clusters.size()];
        for (int i = 0; i < generated.length; i++) {
            generated[i] = ((Number) futures.get(i).join().get("completion_tokens")).longValue();
        }
        return generated;
    }

    @SuppressWarnings("unchecked")
    static Figures measure(Path model, int ranks, int threads, ClusterFile.Parallelism parallelism, int tokens, int repeats,
                           boolean concurrent, PrintStream out) throws IOException, InterruptedException {
        return measure(model, ranks, threads, parallelism, tokens, repeats, concurrent, out, List.of());
    }

    /** The options with per-phase timing turned on (a few hundred clock reads per token: well under 1%). */
    private static List<String> profiled(List<String> jvmOptions) {
        List<String> options = new ArrayList<>(jvmOptions);
        options.add("-D" + ClusterNode.PHASE_PROFILE_PROPERTY + "=true");
        return options;
    }

    /** The JVM options of the runs whose ranks park while they wait instead of spinning. */
    static final List<String> PARKED = List.of("-D" + WaitPolicy.PROPERTY + "=park");

    static Figures measure(Path model, int ranks, int threads, ClusterFile.Parallelism parallelism, int tokens, int repeats,
                           boolean concurrent, PrintStream out, List<String> jvmOptions) throws IOException, InterruptedException {
        Path directory = Files.createTempDirectory("decode-bench");
        Path clusterFile = LaunchLocal.writeClusterFile(ranks, parallelism, 0, directory);
        ClusterFile cluster = ClusterFile.read(clusterFile);
        List<Process> processes = new ArrayList<>();
        try {
            for (int rank = 0; rank < ranks; rank++) {
                processes.add(new ProcessBuilder(LaunchLocal.rankCommand(model, clusterFile, rank, threads, 512, profiled(jvmOptions)))
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
            double[][] phasesBefore = new double[ranks][];
            double[][] partsBefore = new double[ranks][];
            for (int r = 0; r < ranks; r++) {
                cpuBefore[r] = metric(cluster, r, "inference_node_process_cpu_microseconds");
                phasesBefore[r] = forwardTimes(cluster, r);
                partsBefore[r] = phaseTimes(cluster, r);
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
            StringBuilder breakdown = new StringBuilder();
            for (int r = 0; r < ranks; r++) {
                rankCpu[r] = (metric(cluster, r, "inference_node_process_cpu_microseconds") - cpuBefore[r]) / 1000.0 / forwarded;
                cpuMillisPerToken = Math.max(cpuMillisPerToken, rankCpu[r]);
                double[] phases = forwardTimes(cluster, r);
                double[] perToken = new double[phases.length];
                for (int i = 0; i < phases.length; i++) {
                    perToken[i] = (phases[i] - phasesBefore[r][i]) / 1000.0 / forwarded;
                }
                if (parallelism == ClusterFile.Parallelism.TENSOR) {
                    double[] parts = phaseTimes(cluster, r);
                    StringBuilder line = new StringBuilder();
                    for (io.macfleet.node.model.LlamaModel.Phase phase : io.macfleet.node.model.LlamaModel.Phase.values()) {
                        double millis = (parts[phase.ordinal()] - partsBefore[r][phase.ordinal()]) / 1000.0 / forwarded;
                        if (millis >= 0.05) {
                            line.append(String.format(", %s %.1f", phase.name().toLowerCase(), millis));
                        }
                    }
                    if (!line.isEmpty()) {
                        breakdown.append(String.format("%n    rank %d wall ms per token by part: %s", r, line.substring(2)));
                    }
                }
                if (ranks > 1 && parallelism == ClusterFile.Parallelism.TENSOR) {
                    breakdown.append(String.format("%n    rank %d per token: forward pass %.1f ms = compute %.1f + waiting in all-reduces"
                                    + " %.1f + logits gather %.1f; CPU of the process %.1f ms",
                            r, perToken[0], perToken[0] - perToken[1] - perToken[2], perToken[1], perToken[2], rankCpu[r]));
                }
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
                    + (threads == 1 ? " thread" : " threads") + (jvmOptions.isEmpty() ? "" : ", " + String.join(" ", jvmOptions));
            out.printf("%-22s decode %6.2f tokens/s (median of %d x %d tokens; runs %s); bytes sent per token per rank %.0f;"
                            + " rank 0 waits for peers %.1f of %.1f ms per token; busiest rank's CPU %.1f ms per token%s;"
                            + " prompt of %.0f tokens at %.1f tokens/s%s%n",
                    label, median, repeats, tokens, Arrays.toString(speeds), bytesPerToken, waitMillisPerToken, wallMillisPerToken,
                    cpuMillisPerToken, ranks == 1 ? "" : " (ranks " + Arrays.stream(rankCpu).mapToObj(c -> String.format("%.1f", c))
                            .collect(java.util.stream.Collectors.joining(", ")) + ")", promptTokens, promptSpeed,
                    concurrent ? String.format("; 4 concurrent requests: %.2f tokens/s in total", concurrentSpeed) : "");
            out.print(breakdown.isEmpty() ? "" : breakdown.substring(1) + System.lineSeparator());
            if (ranks > 1) {
                out.println("    resident memory: " + residentMemory(processes));
                StringBuilder preempted = new StringBuilder();
                for (int r = 0; r < ranks; r++) {
                    preempted.append(r == 0 ? "" : ", ").append((long) metric(cluster, r, "inference_node_cluster_spins_preempted"));
                }
                out.println("    waits: spin " + (long) metric(cluster, 0, "inference_node_cluster_wait_spin_microseconds")
                        + " us before parking; long spins cut short because the rank lost its core, per rank: " + preempted);
            }
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

    /**
     * Each rank process's resident memory from /proc (Linux): anonymous (heap, KV cache), file-backed (the mapped
     * model pages it touched, shared with the page cache) and shared memory (the packed column slices' scratch file
     * counts as file-backed). Empty where /proc is not there.
     */
    private static String residentMemory(List<Process> processes) {
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < processes.size(); r++) {
            try {
                Map<String, String> fields = new java.util.HashMap<>();
                for (String line : Files.readAllLines(Path.of("/proc", Long.toString(processes.get(r).pid()), "status"))) {
                    int colon = line.indexOf(':');
                    if (colon > 0) {
                        fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
                    }
                }
                out.append(String.format("rank %d RSS %s (anonymous %s, file %s, shared memory %s); ", r, fields.get("VmRSS"),
                        fields.get("RssAnon"), fields.get("RssFile"), fields.get("RssShmem")));
            } catch (IOException e) {
                return "not available (" + e.getMessage() + ")";
            }
        }
        return out.toString();
    }

    /** A rank's wall microseconds per forward-pass part ({@code inference_node_phase_microseconds}), by phase ordinal. */
    private static double[] phaseTimes(ClusterFile cluster, int rank) throws IOException, InterruptedException {
        double[] values = new double[io.macfleet.node.model.LlamaModel.Phase.values().length];
        String prefix = "inference_node_phase_microseconds{phase=\"";
        for (String line : get(cluster, rank, "/metrics").body().split("\n")) {
            if (line.startsWith(prefix)) {
                int end = line.indexOf('"', prefix.length());
                values[io.macfleet.node.model.LlamaModel.Phase.valueOf(line.substring(prefix.length(), end)).ordinal()] =
                        Double.parseDouble(line.substring(line.indexOf("} ") + 2));
            }
        }
        return values;
    }

    /** A rank's forward pass counters: wall, all-reduce waits, gather waits (microseconds). */
    private static double[] forwardTimes(ClusterFile cluster, int rank) throws IOException, InterruptedException {
        String[] names = {"forward", "allreduce_wait", "gather_wait"};
        double[] values = new double[names.length];
        for (int i = 0; i < names.length; i++) {
            values[i] = metric(cluster, rank, "inference_node_cluster_" + names[i] + "_microseconds");
        }
        return values;
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
