package io.macfleet.node.kernel;

import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

/**
 * Q8_0 matrix-vector kernels alone ("streams" is the engine's, "float four-row" the previous one with touch-ahead,
 * "strided" the streams pattern with a fixed span, -Dbench.span=N, "strided touch" with touch loads
 * -Dbench.ahead=N rows ahead in each stream), in GB of weights per CPU-second (CPU time, so other load on a shared machine
 * skews it less than wall time) and per wall second. Not a test; run after {@code mvn test-compile}:
 * {@code java --add-modules jdk.incubator.vector -cp inference-node/target/classes:inference-node/target/test-classes
 * io.macfleet.node.kernel.KernelBenchmark [threads]}.
 */
public final class KernelBenchmark {
    static int sink;

    // Species must be static final constants: a species captured by a lambda is a field of the lambda object, not a
    // constant, so C2 cannot intrinsify the vector operations and boxes every vector (these two diagnostics ran at
    // 1.9 GB per CPU-second that way, with a young collection every few milliseconds).
    private static final jdk.incubator.vector.VectorSpecies<Byte> b256 = jdk.incubator.vector.ByteVector.SPECIES_256;
    private static final jdk.incubator.vector.VectorSpecies<Byte> b512 = jdk.incubator.vector.ByteVector.SPECIES_512;

    /** The four-row access pattern with no arithmetic beyond one add per load: the memory ceiling of the pattern. */
    private static void loadsOnly(WorkerPool pool, WeightMatrix w) {
        int rows = w.rows(), blocks = w.columns() / 32;
        long stride = w.rowStride();
        MemorySegment data = w.data();
        pool.parallelFor(rows / 4, (start, end, worker) -> {
            var acc = jdk.incubator.vector.ByteVector.zero(b256);
            for (int g = start; g < end; g++) {
                long base = g * 4L * stride;
                for (int b = 0; b < blocks; b++) {
                    long k0 = base + b * 34L + 2;
                    acc = acc.add(jdk.incubator.vector.ByteVector.fromMemorySegment(b256, data, k0, java.nio.ByteOrder.LITTLE_ENDIAN))
                            .add(jdk.incubator.vector.ByteVector.fromMemorySegment(b256, data, k0 + stride, java.nio.ByteOrder.LITTLE_ENDIAN))
                            .add(jdk.incubator.vector.ByteVector.fromMemorySegment(b256, data, k0 + 2 * stride, java.nio.ByteOrder.LITTLE_ENDIAN))
                            .add(jdk.incubator.vector.ByteVector.fromMemorySegment(b256, data, k0 + 3 * stride, java.nio.ByteOrder.LITTLE_ENDIAN));
                }
            }
            sink += acc.lane(0);
        });
    }

    /** One sequential 64-byte stream over the same bytes: what the bandwidth figure measures. */
    private static void sequential(WorkerPool pool, WeightMatrix w) {
        long bytes = w.byteSize();
        MemorySegment data = w.data();
        int chunks = (int) (bytes / 4096);
        pool.parallelFor(chunks, (start, end, worker) -> {
            var acc = jdk.incubator.vector.ByteVector.zero(b512);
            for (long i = start * 4096L; i < end * 4096L; i += 64) {
                acc = acc.add(jdk.incubator.vector.ByteVector.fromMemorySegment(b512, data, i, java.nio.ByteOrder.LITTLE_ENDIAN));
            }
            sink += acc.lane(0);
        });
    }

    private static final jdk.incubator.vector.VectorSpecies<Float> F = jdk.incubator.vector.FloatVector.SPECIES_512;
    private static final java.lang.foreign.ValueLayout.OfShort SHORT = java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

    /** The four-row kernel as it was before the touch-ahead loads (the A/B baseline). */
    private static void plainFourRows(WorkerPool pool, WeightMatrix w, float[] x, float[] out) {
        MemorySegment data = w.data();
        long stride = w.rowStride();
        int n = w.columns();
        pool.parallelFor(w.rows() / 4, (start, end, worker) -> {
            for (int g = start; g < end; g++) {
                int r = g * 4;
                long base = r * stride;
                var t0 = jdk.incubator.vector.FloatVector.zero(F);
                var t1 = jdk.incubator.vector.FloatVector.zero(F);
                var t2 = jdk.incubator.vector.FloatVector.zero(F);
                var t3 = jdk.incubator.vector.FloatVector.zero(F);
                for (int b = 0; b < n / 32; b++) {
                    long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
                    var low = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32);
                    var high = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32 + 16);
                    t0 = block(data, k0 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0))), t0);
                    t1 = block(data, k1 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1))), t1);
                    t2 = block(data, k2 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2))), t2);
                    t3 = block(data, k3 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3))), t3);
                }
                out[r] = t0.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 1] = t1.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 2] = t2.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 3] = t3.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
            }
        });
    }
    private static final jdk.incubator.vector.VectorSpecies<Byte> B128 = jdk.incubator.vector.ByteVector.SPECIES_128;
    private static final java.lang.foreign.ValueLayout.OfLong LONG = java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
    /** Rows per stream in the strided kernels: a super-group of 4 x SPAN rows is four contiguous runs of SPAN rows. */
    private static final int SPAN = Integer.getInteger("bench.span", 16);
    /** Rows ahead (in each stream) that the strided touch kernel touches; 0 = no touch. */
    private static final int AHEAD = Integer.getInteger("bench.ahead", 1);

    /**
     * Four rows per pass taken from four contiguous runs of SPAN rows (rows k, k + SPAN, k + 2 SPAN, k + 3 SPAN):
     * each of the four load streams moves forward through memory without jumps, one whole row after the other,
     * which is what the hardware stream prefetcher follows (the consecutive-rows kernel has two streams interleaved
     * in most 4 KB pages). Optionally touches AHEAD rows ahead in each stream.
     */
    private static void stridedFourRows(WorkerPool pool, WeightMatrix w, float[] x, float[] out, boolean touch) {
        MemorySegment data = w.data();
        long stride = w.rowStride();
        int n = w.columns();
        int superRows = 4 * SPAN;
        pool.parallelFor(w.rows() / superRows, (start, end, worker) -> {
            long touched = 0;
            for (int g = start; g < end; g++) {
                for (int k = 0; k < SPAN; k++) {
                    int r = g * superRows + k;
                    long base = r * stride;
                    long ahead = (k + AHEAD < SPAN || g + 1 < w.rows() / superRows) ? base + AHEAD * stride : base;
                    touched ^= stridedKernel(data, base, SPAN * stride, x, n, out, r, SPAN, touch ? ahead : -1);
                }
            }
            sink += (int) touched;
        });
    }

    private static long stridedKernel(MemorySegment data, long base, long stride, float[] x, int n, float[] out, int r,
                                      int outStride, long ahead) {
        var t0 = jdk.incubator.vector.FloatVector.zero(F);
        var t1 = jdk.incubator.vector.FloatVector.zero(F);
        var t2 = jdk.incubator.vector.FloatVector.zero(F);
        var t3 = jdk.incubator.vector.FloatVector.zero(F);
        long touched = 0;
        for (int b = 0; b < n / 32; b++) {
            long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            if (ahead >= 0 && (b & 1) == 0) {
                long a = ahead + b * 34L;
                touched ^= data.get(LONG, a) + data.get(LONG, a + stride) + data.get(LONG, a + 2 * stride) + data.get(LONG, a + 3 * stride);
            }
            var low = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32);
            var high = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32 + 16);
            t0 = block(data, k0 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0))), t0);
            t1 = block(data, k1 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1))), t1);
            t2 = block(data, k2 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2))), t2);
            t3 = block(data, k3 + 2, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3))), t3);
        }
        out[r] = t0.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
        out[r + outStride] = t1.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
        out[r + 2 * outStride] = t2.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
        out[r + 3 * outStride] = t3.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
        return touched;
    }

    /** One row at a time (one forward stream per thread), two accumulators per row. */
    private static void oneRow(WorkerPool pool, WeightMatrix w, float[] x, float[] out) {
        pool.parallelFor(w.rows(), (start, end, worker) -> {
            for (int r = start; r < end; r++) {
                out[r] = Kernels.dot(w, r, x, 0);
            }
        });
    }

    private static void repacked(WorkerPool pool, MemorySegment q, float[] scales, int rows, int columns, float[] x, float[] out) {
        int blocks = columns / 32;
        pool.parallelFor(rows / 4, (start, end, worker) -> {
            for (int g = start; g < end; g++) {
                int r = g * 4;
                var t0 = jdk.incubator.vector.FloatVector.zero(F);
                var t1 = jdk.incubator.vector.FloatVector.zero(F);
                var t2 = jdk.incubator.vector.FloatVector.zero(F);
                var t3 = jdk.incubator.vector.FloatVector.zero(F);
                long q0 = (long) r * columns;
                for (int b = 0; b < blocks; b++) {
                    var low = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32);
                    var high = jdk.incubator.vector.FloatVector.fromArray(F, x, b * 32 + 16);
                    long o = q0 + b * 32L;
                    t0 = block(q, o, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, scales[r * blocks + b]), t0);
                    t1 = block(q, o + columns, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, scales[(r + 1) * blocks + b]), t1);
                    t2 = block(q, o + 2L * columns, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, scales[(r + 2) * blocks + b]), t2);
                    t3 = block(q, o + 3L * columns, low, high).fma(jdk.incubator.vector.FloatVector.broadcast(F, scales[(r + 3) * blocks + b]), t3);
                }
                out[r] = t0.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 1] = t1.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 2] = t2.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
                out[r + 3] = t3.reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
            }
        });
    }

    private static jdk.incubator.vector.FloatVector block(MemorySegment q, long offset, jdk.incubator.vector.FloatVector low,
            jdk.incubator.vector.FloatVector high) {
        var acc = ((jdk.incubator.vector.FloatVector) jdk.incubator.vector.ByteVector.fromMemorySegment(B128, q, offset,
                java.nio.ByteOrder.LITTLE_ENDIAN).castShape(F, 0)).mul(low);
        return ((jdk.incubator.vector.FloatVector) jdk.incubator.vector.ByteVector.fromMemorySegment(B128, q, offset + 16,
                java.nio.ByteOrder.LITTLE_ENDIAN).castShape(F, 0)).fma(high, acc);
    }

    /** -Dbench.pages=huge|small: weights in directly mapped anonymous memory with or without MADV_HUGEPAGE. */
    private static final Boolean HUGE_PAGES = System.getProperty("bench.pages") == null ? null
            : System.getProperty("bench.pages").equals("huge");

    public static void main(String[] args) {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rows = args.length > 1 ? Integer.parseInt(args[1]) : 8192, columns = args.length > 3 ? Integer.parseInt(args[3]) : 2048; // the 1b-shaped FFN gate/up: 17.8 MB in Q8_0, far beyond the caches
        int matrices = args.length > 2 ? Integer.parseInt(args[2]) : 64; // 1.1 GB cycled, beyond the 260 MB L3, as in decode (8 = 142 MB stays in L3)
        Random random = new Random(1);
        float[] values = new float[columns];
        long rowBytes = GgmlType.Q8_0.bytesFor(columns);
        WeightMatrix[] weights = new WeightMatrix[matrices];
        Arena arena = Arena.ofShared();
        for (int m = 0; m < matrices; m++) {
            MemorySegment data = HUGE_PAGES != null ? AnonymousMemory.allocate(rowBytes * rows, HUGE_PAGES) : arena.allocate(rowBytes * rows, 64);
            byte[] row = new byte[(int) rowBytes];
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < columns; c++) {
                    values[c] = (float) random.nextGaussian();
                }
                Quantizer.encode(GgmlType.Q8_0, values, 0, columns, row, 0);
                MemorySegment.copy(MemorySegment.ofArray(row), 0, data, r * rowBytes, rowBytes);
            }
            weights[m] = new WeightMatrix("bench" + m, GgmlType.Q8_0, data, rows, columns, rowBytes);
        }
        // Diagnostic layout: quants of each row contiguous and 64-byte aligned, scales decoded into a separate array.
        MemorySegment[] quants = new MemorySegment[matrices];
        float[][] scaleArrays = new float[matrices][];
        for (int m = 0; m < matrices; m++) {
            quants[m] = arena.allocate((long) rows * columns, 64);
            scaleArrays[m] = new float[rows * (columns / 32)];
            for (int r = 0; r < rows; r++) {
                for (int b = 0; b < columns / 32; b++) {
                    long block = r * rowBytes + b * 34L;
                    scaleArrays[m][r * (columns / 32) + b] = Float.float16ToFloat(weights[m].data().get(
                            java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, block));
                    MemorySegment.copy(weights[m].data(), block + 2, quants[m], (long) r * columns + b * 32L, 32);
                }
            }
        }
        float[] x = new float[columns];
        for (int c = 0; c < columns; c++) {
            x[c] = (float) random.nextGaussian();
        }
        float[] out = new float[rows];
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (WorkerPool pool = new WorkerPool(threads)) {
            try {
                java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/smaps_rollup")).stream()
                        .filter(line -> line.startsWith("AnonHugePages") || line.startsWith("Rss")).forEach(System.out::println);
            } catch (java.io.IOException e) {
                System.out.println("no smaps_rollup: " + e);
            }
            long buffer = io.macfleet.node.bench.Benchmark.streamRuleBytes(io.macfleet.node.bench.Benchmark.lastLevelCacheBytes(),
                    io.macfleet.node.bench.Benchmark.availableMemoryBytes());
            System.out.printf("streaming read bandwidth, %d threads, %d MB buffer (4x the last-level cache): %.2f GB/s%n",
                    threads, buffer >> 20, io.macfleet.node.bench.Benchmark.bandwidth(pool, buffer, 5) / 1e9);
            for (int round = 0; round < 5; round++) {
                for (String kernel : System.getProperty("bench.kernels", "streams,float four-row,strided,one row,loads only,sequential").split(",")) {
                    int products = (int) (400L * 8192 * 2048 / ((long) rows * columns));
                    long cpu0 = os.getProcessCpuTime(), wall0 = System.nanoTime();
                    for (int i = 0; i < products; i++) {
                        WeightMatrix w = weights[i % matrices];
                        if (kernel.equals("loads only")) {
                            loadsOnly(pool, w);
                        } else if (kernel.equals("sequential")) {
                            sequential(pool, w);
                        } else if (kernel.startsWith("repacked")) {
                            repacked(pool, quants[i % matrices], scaleArrays[i % matrices], rows, columns, x, out);
                        } else if (kernel.equals("streams")) {
                            Kernels.matvecQ8Streams(pool, new WeightMatrix[] {w}, x, new float[][] {out});
                        } else if (kernel.equals("strided")) {
                            stridedFourRows(pool, w, x, out, false);
                        } else if (kernel.equals("strided touch")) {
                            stridedFourRows(pool, w, x, out, true);
                        } else if (kernel.equals("one row")) {
                            oneRow(pool, w, x, out);
                        } else if (kernel.equals("plain four-row")) {
                            plainFourRows(pool, w, x, out);
                        } else if (kernel.startsWith("int8")) {
                            Kernels.matvecQ8Int8(pool, w, x, out);
                        } else {
                            TouchAheadKernel.matvecQ8Float(pool, w, x, out);
                        }
                    }
                    double cpu = (os.getProcessCpuTime() - cpu0) / 1e9, wall = (System.nanoTime() - wall0) / 1e9;
                    double gigabytes = products * (double) weights[0].byteSize() / 1e9;
                    System.out.printf("round %d %-15s %6.2f GB/CPU-s  %6.2f GB/s wall  (%d threads)%n",
                            round, kernel, gigabytes / cpu, gigabytes / wall, threads);
                }
            }
        }
        arena.close();
    }
}
