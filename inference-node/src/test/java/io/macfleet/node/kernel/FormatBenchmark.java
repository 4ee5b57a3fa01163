package io.macfleet.node.kernel;

import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Random;

/**
 * Prompt-processing and decode kernels per weight type, in CPU time of the calling thread (one worker, so other load
 * on a shared machine skews the figures less than wall time): the batched product ({@link Kernels#matmul}) of a
 * 1b-shaped 2048 x 2048 matrix with 512 tokens in GFLOP per CPU-second, and the matrix-vector product
 * ({@link Kernels#matvec}) over 8192 x 2048 matrices cycled out of the caches (about 1 GB of weights) in GB of weights
 * per CPU-second. Not a test; run after {@code mvn test-compile}:
 * {@code java --add-modules jdk.incubator.vector -cp inference-node/target/classes:inference-node/target/test-classes
 * io.macfleet.node.kernel.FormatBenchmark [matmul|matvec] [TYPES...]}; for matmul, {@code -Dbench.rows=N},
 * {@code -Dbench.columns=N} and {@code -Dbench.tokens=N} (the engine's batch is 128) change the shape and
 * {@code -Dbench.warmup=N} the calls before measuring (10: with 2, batches of 128 or fewer tokens measured before C2
 * had finished, 35 against 54 GFLOP per CPU-second at 4 tokens).
 */
public final class FormatBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    static WeightMatrix random(GgmlType type, int rows, int columns, Arena arena, long seed) {
        Random random = new Random(seed);
        long rowBytes = type.bytesFor(columns);
        MemorySegment data = arena.allocate(rowBytes * rows, 64);
        float[] values = new float[columns];
        byte[] row = new byte[(int) rowBytes];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < columns; c++) {
                values[c] = (float) random.nextGaussian() * 0.02f;
            }
            Quantizer.encode(type, values, 0, columns, row, 0);
            MemorySegment.copy(MemorySegment.ofArray(row), 0, data, r * rowBytes, rowBytes);
        }
        return new WeightMatrix("bench", type, data, rows, columns, rowBytes);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /**
     * The decode pattern of a mixed file (Q4_K_M: Q4_K and Q6_K matrices in turn, as ffn_down and attn_v alternate
     * between the two types layer by layer): one matrix of each type after the other, the CPU time of each type
     * summed apart, in GB of weights per CPU-second. Compare with {@code matvec TYPE} (one type alone per JVM).
     */
    private static void mixed(WorkerPool pool, Arena arena, String[] names) {
        int rows = Integer.getInteger("bench.rows", 8192), columns = 2048;
        long megabytes = Long.getLong("bench.megabytes", 512);
        int types = names.length;
        WeightMatrix[][] matrices = new WeightMatrix[types][];
        for (int t = 0; t < types; t++) {
            GgmlType type = GgmlType.valueOf(names[t]);
            int count = (int) Math.max(2, megabytes * (1L << 20) / types / type.bytesFor(columns) / rows);
            matrices[t] = new WeightMatrix[count];
            matrices[t][0] = random(type, rows, columns, arena, 0);
            for (int m = 1; m < count; m++) {
                MemorySegment copy = arena.allocate(matrices[t][0].byteSize(), 64);
                copy.copyFrom(matrices[t][0].data());
                matrices[t][m] = new WeightMatrix("bench" + m, type, copy, rows, columns, matrices[t][0].rowStride());
            }
        }
        float[] x = new float[columns];
        Random random = new Random(2);
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
        }
        float[] out = new float[rows];
        double[][] rates = new double[types][Integer.getInteger("bench.rounds", 7)];
        for (int round = -5; round < rates[0].length; round++) {
            long[] cpu = new long[types];
            long[] bytes = new long[types];
            for (int i = 0; ; i++) {
                boolean any = false;
                for (int t = 0; t < types; t++) {
                    if (i < matrices[t].length) {
                        any = true;
                        long start = THREADS.getCurrentThreadCpuTime();
                        Kernels.matvec(pool, matrices[t][i], x, out);
                        cpu[t] += THREADS.getCurrentThreadCpuTime() - start;
                        bytes[t] += matrices[t][i].byteSize();
                    }
                }
                if (!any) {
                    break;
                }
            }
            if (round >= 0) {
                for (int t = 0; t < types; t++) {
                    rates[t][round] = bytes[t] / (cpu[t] / 1e9) / 1e9;
                }
            }
        }
        for (int t = 0; t < types; t++) {
            System.out.printf("%s matvec in turn with %s: %.2f GB of weights per CPU-second (median of %d)%n",
                    names[t], String.join(", ", names), median(rates[t]), rates[t].length);
        }
    }

    public static void main(String[] args) {
        String mode = args.length > 0 ? args[0] : "matmul";
        String[] types = args.length > 1 ? Arrays.copyOfRange(args, 1, args.length) : new String[] {"Q8_0", "Q4_0", "Q4_K", "Q6_K"};
        try (WorkerPool pool = new WorkerPool(1); Arena arena = Arena.ofShared()) {
            for (String name : types) {
                GgmlType type = GgmlType.valueOf(name);
                if (mode.equals("mixed")) {
                    mixed(pool, arena, types);
                    return;
                }
                if (mode.equals("matmul")) {
                    int rows = Integer.getInteger("bench.rows", 2048), columns = Integer.getInteger("bench.columns", 2048), tokens = Integer.getInteger("bench.tokens", 512);
                    WeightMatrix matrix = random(type, rows, columns, arena, 1);
                    float[] x = new float[tokens * columns];
                    Random random = new Random(2);
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) random.nextGaussian();
                    }
                    float[] out = new float[tokens * rows];
                    // Row blocks to compare (-Dbench.blockRows=4,16,32), run interleaved round by round.
                    String[] variants = System.getProperty("bench.blockRows", String.valueOf(Kernels.BLOCK_ROWS)).split(",");
                    double[][] rates = new double[variants.length][9];
                    for (int round = -Integer.getInteger("bench.warmup", 10); round < rates[0].length; round++) {
                        for (int v = 0; v < variants.length; v++) {
                            int blockRows = Integer.parseInt(variants[v]);
                            long cpu = THREADS.getCurrentThreadCpuTime();
                            Kernels.matmul(pool, matrix, x, tokens, out, blockRows);
                            double seconds = (THREADS.getCurrentThreadCpuTime() - cpu) / 1e9;
                            if (round >= 0) {
                                rates[v][round] = 2.0 * rows * columns * tokens / seconds / 1e9;
                            }
                        }
                    }
                    for (int v = 0; v < variants.length; v++) {
                        System.out.printf("%s matmul %dx%d x %d tokens, %s rows per block: %.1f GFLOP per CPU-second (median of %d)%n",
                                type, rows, columns, tokens, variants[v], median(rates[v]), rates[v].length);
                    }
                } else {
                    int rows = Integer.getInteger("bench.rows", 8192), columns = 2048;
                    int count = (int) Math.max(2, Long.getLong("bench.megabytes", 1024) * (1L << 20) / type.bytesFor(columns) / rows);
                    WeightMatrix[] matrices = new WeightMatrix[count];
                    matrices[0] = random(type, rows, columns, arena, 0);
                    for (int m = 1; m < count; m++) {
                        // Copies of one matrix at other addresses: the same bytes, out of the caches all the same.
                        MemorySegment copy = arena.allocate(matrices[0].byteSize(), 64);
                        copy.copyFrom(matrices[0].data());
                        matrices[m] = new WeightMatrix("bench" + m, type, copy, rows, columns, matrices[0].rowStride());
                    }
                    float[] x = new float[columns];
                    Random random = new Random(2);
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) random.nextGaussian();
                    }
                    float[] out = new float[rows];
                    // The engine's product against one row at a time through Kernels.dot, interleaved round by round.
                    double[][] rates = new double[2][Integer.getInteger("bench.rounds", 7)];
                    for (int round = -5; round < rates[0].length; round++) {
                        for (int variant = 0; variant < 2; variant++) {
                            long cpu = THREADS.getCurrentThreadCpuTime();
                            for (WeightMatrix matrix : matrices) {
                                if (variant == 0) {
                                    Kernels.matvec(pool, matrix, x, out);
                                } else {
                                    for (int r = 0; r < rows; r++) {
                                        out[r] = Kernels.dot(matrix, r, x, 0);
                                    }
                                }
                            }
                            double seconds = (THREADS.getCurrentThreadCpuTime() - cpu) / 1e9;
                            if (round >= 0) {
                                rates[variant][round] = count * matrices[0].byteSize() / seconds / 1e9;
                            }
                        }
                    }
                    System.out.printf("%s matvec %d x (%dx%d): engine %.2f, row by row through dot %.2f GB of weights per CPU-second (median of %d)%n",
                            type, count, rows, columns, median(rates[0]), median(rates[1]), rates[0].length);
                }
            }
        }
    }
}
