package io.macfleet.node.bench;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WeightMatrix;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.LlamaConfig;
import io.macfleet.node.model.Architectures;
import io.macfleet.node.model.DecoderModel;
import io.macfleet.node.model.LayerRange;
import io.macfleet.node.model.LlamaModel;
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
 * (also as a fraction of the bandwidth bound: bytes of weights and KV cache read per token / bandwidth) and peak RSS.
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

    /**
     * Best-of-runs streaming read bandwidth over a freshly allocated off-heap buffer of {@code bytes}, all workers
     * reading their share. The buffer must be at least four times the last-level cache ({@link #streamRuleBytes}),
     * as the STREAM benchmark requires, or the figure includes cache hits.
     */
    public static double bandwidth(WorkerPool pool, long bytes, int runs) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(bytes, 4096);
            buffer.fill((byte) 1);
            return bandwidth(pool, List.of(buffer), runs);
        }
    }

    /**
     * Best-of-runs streaming read bandwidth over {@code segments} read in order as one stream: the bytes are split
     * into one contiguous share per worker (no barrier between segments), each read with 64-byte vector loads.
     */
    public static double bandwidth(WorkerPool pool, List<MemorySegment> segments, int runs) {
        int parts = pool.size();
        long[] starts = new long[segments.size() + 1];
        for (int i = 0; i < segments.size(); i++) {
            starts[i + 1] = starts[i] + (segments.get(i).byteSize() & ~255L);
        }
        long total = starts[segments.size()];
        double best = 0;
        for (int run = 0; run < runs; run++) {
            DoubleAdder sink = new DoubleAdder();
            long start = System.nanoTime();
            pool.parallelFor(parts, (first, end, worker) -> {
                for (int part = first; part < end; part++) {
                    long from = total * part / parts & ~255L, to = total * (part + 1) / parts & ~255L;
                    for (int i = 0; i < segments.size(); i++) {
                        long a = Math.max(from, starts[i]), b = Math.min(to, starts[i + 1]);
                        if (a < b) {
                            sink.add(streamSum(segments.get(i), a - starts[i], b - starts[i]));
                        }
                    }
                }
            });
            long elapsed = System.nanoTime() - start;
            best = Math.max(best, total / (elapsed / 1e9));
            if (sink.sum() == 42) {
                System.out.print(""); // keeps the sum observable
            }
        }
        return best;
    }

    /** Sum of the floats in [from, to) (a multiple of 256 bytes long), four independent streams of vector adds. */
    private static float streamSum(MemorySegment segment, long from, long to) {
        FloatVector a = FloatVector.zero(F), b = FloatVector.zero(F), c = FloatVector.zero(F), d = FloatVector.zero(F);
        long step = F.vectorByteSize(); // 64 bytes with AVX-512; 4 * step divides 256 for every width
        for (long offset = from; offset < to; offset += 4 * step) {
            a = a.add(FloatVector.fromMemorySegment(F, segment, offset, ByteOrder.LITTLE_ENDIAN));
            b = b.add(FloatVector.fromMemorySegment(F, segment, offset + step, ByteOrder.LITTLE_ENDIAN));
            c = c.add(FloatVector.fromMemorySegment(F, segment, offset + 2 * step, ByteOrder.LITTLE_ENDIAN));
            d = d.add(FloatVector.fromMemorySegment(F, segment, offset + 3 * step, ByteOrder.LITTLE_ENDIAN));
        }
        return a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD);
    }

    /** Floor of the default bandwidth buffer, and its size when the last-level cache size is unknown. */
    private static final long MIN_BUFFER = 512L << 20, UNKNOWN_CACHE_BUFFER = 2048L << 20;

    /**
     * The default bandwidth buffer: at least four times the last-level cache (STREAM's rule: "each array must be at
     * least 4 times the size of the sum of all the last-level caches", else part of what it reads comes from cache),
     * rounded up to 64 MB, at least 512 MB, 2 GB when the cache size is unknown; capped at half the available memory.
     */
    public static long streamRuleBytes(long lastLevelCacheBytes, long availableMemoryBytes) {
        long bytes = lastLevelCacheBytes > 0 ? 4 * lastLevelCacheBytes : UNKNOWN_CACHE_BUFFER;
        bytes = Math.max(MIN_BUFFER, (bytes + (64L << 20) - 1) & -(64L << 20));
        if (availableMemoryBytes > 0) {
            bytes = Math.min(bytes, Math.max(64L << 20, availableMemoryBytes / 2 & -(64L << 20)));
        }
        return bytes;
    }

    /**
     * Total last-level cache in bytes, -1 if unknown: on Linux the largest data or unified cache level of
     * /sys/devices/system/cpu/cpu*&#47;cache, summed over its distinct instances ({@code shared_cpu_list}); on macOS
     * {@code sysctl hw.l3cachesize} or else {@code hw.l2cachesize}.
     */
    public static long lastLevelCacheBytes() {
        Path cpus = Path.of("/sys/devices/system/cpu");
        if (Files.isDirectory(cpus)) {
            try (var stream = Files.list(cpus)) {
                int bestLevel = 0;
                java.util.Map<String, Long> instances = new java.util.HashMap<>();
                for (Path cpu : stream.filter(p -> p.getFileName().toString().matches("cpu[0-9]+")).toList()) {
                    Path caches = cpu.resolve("cache");
                    if (!Files.isDirectory(caches)) {
                        continue;
                    }
                    try (var indexes = Files.list(caches)) {
                        for (Path index : indexes.filter(p -> p.getFileName().toString().startsWith("index")).toList()) {
                            String type = read(index.resolve("type"));
                            if (type == null || type.equals("Instruction")) {
                                continue;
                            }
                            int level = Integer.parseInt(read(index.resolve("level")));
                            long size = cacheSize(read(index.resolve("size")));
                            String shared = read(index.resolve("shared_cpu_list"));
                            if (level > bestLevel) {
                                bestLevel = level;
                                instances.clear();
                            }
                            if (level == bestLevel && size > 0) {
                                instances.put(shared == null ? cpu.toString() : shared, size);
                            }
                        }
                    }
                }
                long total = instances.values().stream().mapToLong(Long::longValue).sum();
                if (total > 0) {
                    return total;
                }
            } catch (IOException | RuntimeException e) {
                // fall through to the other sources
            }
        }
        for (String key : new String[] {"hw.l3cachesize", "hw.l2cachesize"}) {
            try {
                Process process = new ProcessBuilder("sysctl", "-n", key).redirectErrorStream(true).start();
                String text = new String(process.getInputStream().readAllBytes()).trim();
                if (process.waitFor() == 0 && text.matches("[0-9]+") && Long.parseLong(text) > 0) {
                    return Long.parseLong(text);
                }
            } catch (IOException | RuntimeException e) {
                return -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
        return -1;
    }

    /** "491520K", "2048K", "32M" or plain bytes. */
    static long cacheSize(String text) {
        if (text == null || text.isEmpty()) {
            return -1;
        }
        char unit = Character.toUpperCase(text.charAt(text.length() - 1));
        long factor = unit == 'K' ? 1L << 10 : unit == 'M' ? 1L << 20 : unit == 'G' ? 1L << 30 : 1;
        String digits = factor == 1 ? text : text.substring(0, text.length() - 1);
        return Long.parseLong(digits.trim()) * factor;
    }

    /** MemAvailable from /proc/meminfo, -1 where unknown. */
    public static long availableMemoryBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            return null;
        }
    }

    public static Result run(Path modelPath, int promptTokens, int decodeTokens, int threads, long bandwidthBytes,
                             PrintStream log) throws IOException {
        try (WorkerPool pool = new WorkerPool(threads > 0 ? threads : Runtime.getRuntime().availableProcessors());
             GgufFile file = GgufFile.open(modelPath)) {
            log.printf("threads: %d, vector species: %s%n", pool.size(), F);
            long llc = lastLevelCacheBytes();
            long buffer = bandwidthBytes > 0 ? bandwidthBytes : streamRuleBytes(llc, availableMemoryBytes());
            log.printf("last-level cache: %s; bandwidth buffer: %d MB (%s)%n",
                    llc > 0 ? (llc >> 20) + " MB" : "unknown", buffer >> 20,
                    bandwidthBytes > 0 ? "--bandwidth-mb" : llc > 0 && buffer < 4 * llc
                            ? "capped by available memory, BELOW 4x the last-level cache: the figure may include cache hits"
                            : "default: at least 4x the last-level cache, STREAM's rule");
            double bandwidth = bandwidth(pool, buffer, 5);
            log.printf("memory bandwidth (best of 5 streaming reads of %d MB, %d threads): %.2f GB/s%n", buffer >> 20,
                    pool.size(), bandwidth / 1e9);
            resetPeakRss();
            LlamaConfig config = LlamaConfig.from(file);
            DecoderModel model = Architectures.of(file, config).load(file, config, new LayerRange(0, config.layers()), pool);
            DecoderModel weights = model; // bytes per token and the decode's weight stream
            Tokenizer tokenizer = Tokenizer.from(file);
            int context = promptTokens + decodeTokens + 8;
            KvCache cache = model.allocateCache(context);
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
            long majorFaultsStart = majorPageFaults();
            int phaseCount = LlamaModel.Phase.values().length;
            long[] phases = new long[2 * phaseCount];
            model.profile(phases);
            long decodeStart = System.nanoTime();
            for (int i = 0; i < decodeTokens; i++) {
                long tokenStart = System.nanoTime();
                single[0] = token;
                token = argmax(model.forward(single, 0, 1, promptTokens + i, cache));
                tokenNanos[i] = System.nanoTime() - tokenStart;
            }
            long decodeNanos = System.nanoTime() - decodeStart;
            double decodeSpeed = decodeTokens / (decodeNanos / 1e9);
            double decodeCpuSeconds = (os.getProcessCpuTime() - decodeCpuStart) / 1e9;
            long majorFaults = majorFaultsStart < 0 ? -1 : majorPageFaults() - majorFaultsStart;
            model.profile(null);
            long timed = 0;
            for (int i = 0; i < phaseCount; i++) {
                timed += phases[i];
            }
            // CPU time is less skewed than wall time when other processes share the cores: waiting for a core, or a
            // blocked wait for the workers, costs no CPU time.
            log.printf("decode CPU time: %.1f CPU-ms per token = %.2f GB of weights per CPU-second%n",
                    1e3 * decodeCpuSeconds / decodeTokens, decodeTokens * (double) weights.bytesPerToken() / decodeCpuSeconds / 1e9);
            if (majorFaults >= 0) {
                // Each is a read from disk: a page of the mapped model file that was not in the page cache (the first
                // touch of an embedding row, or weights the system dropped from the cache).
                log.printf("major page faults during decode: %d (%.1f per token)%n", majorFaults, majorFaults / (double) decodeTokens);
            }
            log.printf("decode step by part, per token: wall ms, share of wall time, CPU ms of the calling thread"
                    + " (with --threads 1 the whole CPU time)%n");
            for (LlamaModel.Phase phase : LlamaModel.Phase.values()) {
                log.printf("  %-38s %7.3f ms %5.1f%%  CPU %7.3f ms%n", phase.label(),
                        phases[phase.ordinal()] / 1e6 / decodeTokens, 100.0 * phases[phase.ordinal()] / decodeNanos,
                        phases[phaseCount + phase.ordinal()] / 1e6 / decodeTokens);
            }
            log.printf("  %-38s %7.3f ms %5.1f%%%n", "other (argmax, loop)", (decodeNanos - timed) / 1e6 / decodeTokens,
                    100.0 * (decodeNanos - timed) / decodeNanos);
            java.util.Arrays.sort(tokenNanos);
            double medianSpeed = 1e9 / tokenNanos[decodeTokens / 2];
            long rss = peakRss();
            // Other processes share this machine: measure the bandwidth again right after decoding and keep the
            // higher figure, so the fraction of the bound is never flattered by a bandwidth run that was slowed.
            double bandwidthAfter = bandwidth(pool, buffer, 5);
            log.printf("memory bandwidth again after decode: %.2f GB/s%n", bandwidthAfter / 1e9);
            // The decode's own traffic: the same weight bytes in the same order, as a plain streaming read. Were part
            // of them served from cache on every token (the same 1 GB is read in the same order each time), this
            // would read faster than the buffer, and the bound must then be this figure.
            double weightStream = bandwidth(pool, weights.decodeWeights(), 5);
            log.printf("streaming read of the decode's weights (%d MB in decode order, best of 5): %.2f GB/s%n",
                    weights.bytesPerToken() >> 20, weightStream / 1e9);
            bandwidth = Math.max(Math.max(bandwidth, bandwidthAfter), weightStream);
            log.printf("decode: median token %.1f ms = %.2f tokens/s%n", tokenNanos[decodeTokens / 2] / 1e6, medianSpeed);
            // Each decode step also reads every cached key and value of the positions so far (F32, or F16 with
            // -Dinference.kvCache=f16): the mean over the decode's positions, added to the weights, so that long
            // contexts do not flatter the fraction of the bound.
            // Per position: 2 x KV heads x head width (grouped-query attention) or kv_lora_rank + qk_rope_head_dim
            // (multi-head latent attention) values per layer, F32 (or F16), as the model's cache holds them.
            int element = cache.half() ? 2 : Float.BYTES;
            long kvPerPosition = model.kvValuesPerPosition() * element;
            long multiHeadPerPosition = model.multiHeadKvValuesPerPosition() * element;
            log.printf("KV cache per token: %d bytes (%d values x %d bytes over %d layers); plain multi-head attention"
                            + " of the same model: %d bytes (%.1fx)%n", kvPerPosition, model.kvValuesPerPosition(), element,
                    config.layers(), multiHeadPerPosition, multiHeadPerPosition / (double) kvPerPosition);
            long kvBytes = 0;
            for (int i = 0; i < decodeTokens; i++) {
                kvBytes += kvPerPosition * (promptTokens + i + 1);
            }
            long kvBytesPerToken = kvBytes / decodeTokens;
            long bytesPerToken = weights.bytesPerToken() + kvBytesPerToken;
            Result result = new Result(bandwidth, promptSpeed, ttft, decodeSpeed, bytesPerToken, rss,
                    Files.size(modelPath), cache.byteSize());
            log.printf("decode: %d tokens at %.2f tokens/s (mean); read per token %.1f MB (weights %.1f MB, of a mixture"
                            + " of experts the active ones, + KV cache %.1f MB); bandwidth bound"
                            + " %.2f tokens/s at %.2f GB/s; decode = %.0f%% of the bound (median token: %.0f%%)%n",
                    decodeTokens, decodeSpeed, bytesPerToken / 1e6, weights.bytesPerToken() / 1e6, kvBytesPerToken / 1e6,
                    result.boundTokensPerSecond(), bandwidth / 1e9,
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

    /** Major page faults of this process so far (field 12 of /proc/self/stat), -1 where that file does not exist. */
    static long majorPageFaults() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[9]);
        } catch (IOException | RuntimeException e) {
            return -1;
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
