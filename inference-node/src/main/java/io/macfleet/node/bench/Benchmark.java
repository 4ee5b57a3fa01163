package io.macfleet.node.bench;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.LlamaConfig;
import io.macfleet.node.model.LlamaModel;
import io.macfleet.node.model.LlamaWeights;
import io.macfleet.node.tokenizer.Tokenizer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.DoubleAdder;

/**
 * Measures this machine's memory bandwidth and the engine's prompt processing, time to first token, decode speed
 * (also as a fraction of the bandwidth bound: bytes of weights per token / bandwidth) and peak RSS.
 */
public final class Benchmark {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    /** Figures of one run. */
    public record Result(double bandwidthBytesPerSecond, double promptTokensPerSecond, double timeToFirstTokenSeconds,
                         double decodeTokensPerSecond, long bytesPerToken, long peakRssBytes, long modelFileBytes,
                         long kvCacheBytes) {
        public double boundTokensPerSecond() {
            return bandwidthBytesPerSecond / bytesPerToken;
        }

        public double fractionOfBound() {
            return decodeTokensPerSecond / boundTokensPerSecond();
        }
    }

    private Benchmark() {
    }

    /** Best-of-runs streaming read bandwidth over an off-heap buffer, all workers summing their share. */
    public static double bandwidth(WorkerPool pool, long bytes, int runs) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(bytes, 64);
            buffer.fill((byte) 1);
            long chunk = 1 << 20;
            int chunks = (int) (bytes / chunk);
            double best = 0;
            for (int run = 0; run < runs; run++) {
                DoubleAdder sink = new DoubleAdder();
                long start = System.nanoTime();
                pool.parallelFor(chunks, (from, to, worker) -> {
                    FloatVector a = FloatVector.zero(F), b = FloatVector.zero(F), c = FloatVector.zero(F), d = FloatVector.zero(F);
                    int step = F.vectorByteSize();
                    for (int i = from; i < to; i++) {
                        long base = i * chunk;
                        for (long offset = 0; offset < chunk; offset += 4L * step) {
                            a = a.add(FloatVector.fromMemorySegment(F, buffer, base + offset, ByteOrder.LITTLE_ENDIAN));
                            b = b.add(FloatVector.fromMemorySegment(F, buffer, base + offset + step, ByteOrder.LITTLE_ENDIAN));
                            c = c.add(FloatVector.fromMemorySegment(F, buffer, base + offset + 2L * step, ByteOrder.LITTLE_ENDIAN));
                            d = d.add(FloatVector.fromMemorySegment(F, buffer, base + offset + 3L * step, ByteOrder.LITTLE_ENDIAN));
                        }
                    }
                    sink.add(a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD));
                });
                long elapsed = System.nanoTime() - start;
                best = Math.max(best, (double) chunks * chunk / (elapsed / 1e9));
                if (sink.sum() == 42) {
                    System.out.print(""); // keeps the sum observable
                }
            }
            return best;
        }
    }

    public static Result run(Path modelPath, int promptTokens, int decodeTokens, int threads, long bandwidthBytes,
                             PrintStream log) throws IOException {
        try (WorkerPool pool = new WorkerPool(threads > 0 ? threads : Runtime.getRuntime().availableProcessors());
             GgufFile file = GgufFile.open(modelPath)) {
            log.printf("threads: %d, vector species: %s%n", pool.size(), F);
            double bandwidth = bandwidth(pool, bandwidthBytes, 5);
            log.printf("memory bandwidth (best of 5, %d MB streaming read): %.2f GB/s%n", bandwidthBytes >> 20, bandwidth / 1e9);
            resetPeakRss();
            LlamaConfig config = LlamaConfig.from(file);
            LlamaWeights weights = LlamaWeights.load(file, config);
            Tokenizer tokenizer = Tokenizer.from(file);
            LlamaModel model = new LlamaModel(weights, pool);
            int context = promptTokens + decodeTokens + 8;
            KvCache cache = KvCache.allocate(config, context);
            int[] prompt = promptTokens(tokenizer, promptTokens);
            // Warm up the JIT on a short prompt and a few decode steps so the figures measure compiled kernels.
            model.forward(prompt, 0, Math.min(8, promptTokens), 0, cache);
            for (int i = 0; i < 3; i++) {
                model.forward(prompt, i, 1, 8 + i, cache);
            }
            long start = System.nanoTime();
            float[] logits = model.forward(prompt, 0, promptTokens, 0, cache);
            int token = argmax(logits);
            double ttft = (System.nanoTime() - start) / 1e9;
            double promptSpeed = promptTokens / ttft;
            log.printf("prompt processing: %d tokens in %.2f s = %.1f tokens/s (time to first token %.2f s)%n",
                    promptTokens, ttft, promptSpeed, ttft);
            int[] single = new int[1];
            long[] tokenNanos = new long[decodeTokens];
            var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long decodeCpuStart = os.getProcessCpuTime();
            long decodeStart = System.nanoTime();
            for (int i = 0; i < decodeTokens; i++) {
                long tokenStart = System.nanoTime();
                single[0] = token;
                token = argmax(model.forward(single, 0, 1, promptTokens + i, cache));
                tokenNanos[i] = System.nanoTime() - tokenStart;
            }
            double decodeSpeed = decodeTokens / ((System.nanoTime() - decodeStart) / 1e9);
            double decodeCpuSeconds = (os.getProcessCpuTime() - decodeCpuStart) / 1e9;
            // CPU time is less skewed than wall time when other processes share the cores: waiting for a core, or a
            // blocked wait for the workers, costs no CPU time.
            log.printf("decode CPU time: %.1f CPU-ms per token = %.2f GB of weights per CPU-second%n",
                    1e3 * decodeCpuSeconds / decodeTokens, decodeTokens * (double) weights.bytesPerToken() / decodeCpuSeconds / 1e9);
            java.util.Arrays.sort(tokenNanos);
            double medianSpeed = 1e9 / tokenNanos[decodeTokens / 2];
            long rss = peakRss();
            // Other processes share this machine: measure the bandwidth again right after decoding and keep the
            // higher figure, so the fraction of the bound is never flattered by a bandwidth run that was slowed.
            double bandwidthAfter = bandwidth(pool, bandwidthBytes, 5);
            log.printf("memory bandwidth again after decode: %.2f GB/s%n", bandwidthAfter / 1e9);
            bandwidth = Math.max(bandwidth, bandwidthAfter);
            log.printf("decode: median token %.1f ms = %.2f tokens/s%n", tokenNanos[decodeTokens / 2] / 1e6, medianSpeed);
            long bytesPerToken = weights.bytesPerToken();
            Result result = new Result(bandwidth, promptSpeed, ttft, decodeSpeed, bytesPerToken, rss,
                    Files.size(modelPath), cache.byteSize());
            log.printf("decode: %d tokens at %.2f tokens/s (mean); weights read per token %.1f MB; bandwidth bound"
                            + " %.2f tokens/s at %.2f GB/s; decode = %.0f%% of the bound (median token: %.0f%%)%n",
                    decodeTokens, decodeSpeed, bytesPerToken / 1e6, result.boundTokensPerSecond(), bandwidth / 1e9,
                    100 * result.fractionOfBound(), 100 * medianSpeed / result.boundTokensPerSecond());
            long budget = result.modelFileBytes + result.kvCacheBytes + 300L * 1024 * 1024;
            log.printf("peak RSS (VmHWM): %d MB; model file %d MB + KV cache %d MB + 300 MB = %d MB budget (%s)%n",
                    result.peakRssBytes >> 20, result.modelFileBytes >> 20, result.kvCacheBytes >> 20, budget >> 20,
                    result.peakRssBytes <= budget ? "within" : "OVER");
            return result;
        }
    }

    private static int[] promptTokens(Tokenizer tokenizer, int count) {
        List<Integer> tokens = new ArrayList<>();
        String text = "Once upon a time there was a small robot that lived in a quiet workshop and learned to paint. ";
        while (tokens.size() < count) {
            tokens.addAll(tokenizer.encode(text, false));
        }
        return tokens.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
    }

    private static int argmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) {
            if (values[i] > values[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Resets VmHWM (Linux: writing 5 to clear_refs) so the bandwidth buffer does not count as model memory. */
    private static void resetPeakRss() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (IOException | RuntimeException e) {
            // not Linux, or not permitted: the peak then includes the bandwidth buffer
        }
    }

    /** Peak resident set size from /proc/self/status (VmHWM), or -1 where that file does not exist. */
    public static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
