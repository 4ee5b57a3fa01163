package io.macfleet.node.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * The machine's arithmetic ceilings for prompt processing, per core (CPU time of each thread, so other load on a
 * shared machine skews the figures less than wall time), with 1 and 2 threads:
 * <ul>
 *   <li><b>float FMA peak</b>: 12 independent chains of {@code FloatVector} multiply-adds held in registers (no
 *       loads), so the figure is the FMA units' throughput and not their latency;</li>
 *   <li><b>float 4x4 tile from L1</b>: the register tile of {@link Kernels#matmul} (4 weight rows x 4 tokens, 16
 *       accumulators, 8 loads per 16 multiply-adds) over 2 KB rows that stay in the first-level cache: the most the
 *       matmul's inner loop can do once the weights are dequantized;</li>
 *   <li><b>int16 pair multiply-add from L1</b>: the loop {@code sum += a[2i] * b[2i] + a[2i + 1] * b[2i + 1]} over
 *       short arrays (C2's MulAddS2I idiom, which it may compile to {@code vpmaddwd}/{@code vpdpwssd}), as an
 *       int8-times-int8 dot product in 16-bit lanes would run it, against the same loop shape in floats.</li>
 * </ul>
 * Not a test; run after {@code mvn test-compile}: {@code java --add-modules jdk.incubator.vector -cp
 * inference-node/target/classes:inference-node/target/test-classes io.macfleet.node.kernel.FmaPeakBenchmark}
 * ({@code -Dbench.seconds=N}, default 1, the time per measurement).
 */
public final class FmaPeakBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final int L = Kernels.L;
    private static final double SECONDS = Double.parseDouble(System.getProperty("bench.seconds", "1"));

    private FmaPeakBenchmark() {
    }

    /** One measured kernel: runs {@code repeats} times and returns the multiply-adds done (for the result sink). */
    private interface Kernel {
        double run(long repeats);

        /** Multiply-adds per repeat. */
        long work();
    }

    /** 12 chains of FMAs in registers, 64 FMAs per chain per repeat. */
    private static final class RegisterFma implements Kernel {
        private final float seed;

        RegisterFma(float seed) {
            this.seed = seed;
        }

        @Override
        public double run(long repeats) {
            FloatVector a = FloatVector.broadcast(Kernels.F, 0.999999f);
            FloatVector b = FloatVector.broadcast(Kernels.F, 1e-7f * seed);
            FloatVector c0 = FloatVector.broadcast(Kernels.F, seed), c1 = c0.add(1), c2 = c0.add(2), c3 = c0.add(3);
            FloatVector c4 = c0.add(4), c5 = c0.add(5), c6 = c0.add(6), c7 = c0.add(7);
            FloatVector c8 = c0.add(8), c9 = c0.add(9), c10 = c0.add(10), c11 = c0.add(11);
            for (long r = 0; r < repeats; r++) {
                for (int k = 0; k < 64; k++) {
                    c0 = c0.fma(a, b);
                    c1 = c1.fma(a, b);
                    c2 = c2.fma(a, b);
                    c3 = c3.fma(a, b);
                    c4 = c4.fma(a, b);
                    c5 = c5.fma(a, b);
                    c6 = c6.fma(a, b);
                    c7 = c7.fma(a, b);
                    c8 = c8.fma(a, b);
                    c9 = c9.fma(a, b);
                    c10 = c10.fma(a, b);
                    c11 = c11.fma(a, b);
                }
            }
            return c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(c8).add(c9).add(c10).add(c11)
                    .reduceLanes(VectorOperators.ADD);
        }

        @Override
        public long work() {
            return 64L * 12 * L;
        }
    }

    /** The 4x4 register tile over 4 rows and 4 tokens of 512 floats each (16 KB, in L1). */
    private static final class L1Tile implements Kernel {
        private static final int N = 512;
        private final float[] w = filled(4 * N, 1);
        private final float[] x = filled(4 * N, 2);
        private final float[] out = new float[16];

        @Override
        public double run(long repeats) {
            double sink = 0;
            for (long r = 0; r < repeats; r++) {
                tile(w, x, N, out);
                sink += out[(int) (r & 15)];
            }
            return sink;
        }

        @Override
        public long work() {
            return 16L * N;
        }

        private static void tile(float[] w, float[] x, int n, float[] out) {
            FloatVector c00 = FloatVector.zero(Kernels.F), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
            FloatVector c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
            for (int i = 0; i < n; i += L) {
                FloatVector w0 = FloatVector.fromArray(Kernels.F, w, i), w1 = FloatVector.fromArray(Kernels.F, w, n + i);
                FloatVector w2 = FloatVector.fromArray(Kernels.F, w, 2 * n + i), w3 = FloatVector.fromArray(Kernels.F, w, 3 * n + i);
                FloatVector v = FloatVector.fromArray(Kernels.F, x, i);
                c00 = w0.fma(v, c00);
                c01 = w1.fma(v, c01);
                c02 = w2.fma(v, c02);
                c03 = w3.fma(v, c03);
                v = FloatVector.fromArray(Kernels.F, x, n + i);
                c10 = w0.fma(v, c10);
                c11 = w1.fma(v, c11);
                c12 = w2.fma(v, c12);
                c13 = w3.fma(v, c13);
                v = FloatVector.fromArray(Kernels.F, x, 2 * n + i);
                c20 = w0.fma(v, c20);
                c21 = w1.fma(v, c21);
                c22 = w2.fma(v, c22);
                c23 = w3.fma(v, c23);
                v = FloatVector.fromArray(Kernels.F, x, 3 * n + i);
                c30 = w0.fma(v, c30);
                c31 = w1.fma(v, c31);
                c32 = w2.fma(v, c32);
                c33 = w3.fma(v, c33);
            }
            // Reduced one by one: vectors put in an array are boxed, which slows the whole loop 30-fold.
            out[0] = c00.reduceLanes(VectorOperators.ADD);
            out[1] = c01.reduceLanes(VectorOperators.ADD);
            out[2] = c02.reduceLanes(VectorOperators.ADD);
            out[3] = c03.reduceLanes(VectorOperators.ADD);
            out[4] = c10.reduceLanes(VectorOperators.ADD);
            out[5] = c11.reduceLanes(VectorOperators.ADD);
            out[6] = c12.reduceLanes(VectorOperators.ADD);
            out[7] = c13.reduceLanes(VectorOperators.ADD);
            out[8] = c20.reduceLanes(VectorOperators.ADD);
            out[9] = c21.reduceLanes(VectorOperators.ADD);
            out[10] = c22.reduceLanes(VectorOperators.ADD);
            out[11] = c23.reduceLanes(VectorOperators.ADD);
            out[12] = c30.reduceLanes(VectorOperators.ADD);
            out[13] = c31.reduceLanes(VectorOperators.ADD);
            out[14] = c32.reduceLanes(VectorOperators.ADD);
            out[15] = c33.reduceLanes(VectorOperators.ADD);
        }
    }

    /** Four pairs of short vectors of {@code N} values (in L1) with int8-sized values, shared by the int16 kernels. */
    private abstract static class ShortOperands implements Kernel {
        static final int N = 2048;
        final short[] a = new short[N], b0 = new short[N], b1 = new short[N], b2 = new short[N], b3 = new short[N];

        ShortOperands() {
            for (int i = 0; i < N; i++) {
                a[i] = (short) (i % 255 - 127);
                b0[i] = (short) (i % 251 - 125);
                b1[i] = (short) (i % 241 - 120);
                b2[i] = (short) (i % 239 - 119);
                b3[i] = (short) (i % 233 - 116);
            }
        }
    }

    /** {@code sum += a[2i] * b[2i] + a[2i + 1] * b[2i + 1]} over 2 x 1024 shorts (in L1), four sums per repeat. */
    private static final class ShortPairs extends ShortOperands {
        @Override
        public double run(long repeats) {
            long sink = 0;
            for (long r = 0; r < repeats; r++) {
                sink += pairs(a, b0) + pairs(a, b1) + pairs(a, b2) + pairs(a, b3);
            }
            return sink;
        }

        private static int pairs(short[] a, short[] b) {
            int sum = 0;
            for (int i = 0; i < N / 2; i++) {
                sum += a[2 * i] * b[2 * i] + a[2 * i + 1] * b[2 * i + 1];
            }
            return sum;
        }

        @Override
        public long work() {
            return 4L * N;
        }
    }

    /**
     * {@code out[i] += a[2i] * b[2i] + a[2i + 1] * b[2i + 1]} over 2 x 1024 shorts into 1024 ints (all in L1), four
     * b arrays per repeat: the form of the idiom C2's superword pass packs into vector multiply-adds of pairs.
     */
    private static final class ShortPairsInto extends ShortOperands {
        private final int[] out = new int[N / 2];

        @Override
        public double run(long repeats) {
            for (long r = 0; r < repeats; r++) {
                pairs(a, b0, out);
                pairs(a, b1, out);
                pairs(a, b2, out);
                pairs(a, b3, out);
            }
            return out[(int) (repeats & 511)];
        }

        private static void pairs(short[] a, short[] b, int[] out) {
            for (int i = 0; i < N / 2; i++) {
                out[i] += a[2 * i] * b[2 * i] + a[2 * i + 1] * b[2 * i + 1];
            }
        }

        @Override
        public long work() {
            return 4L * N;
        }
    }

    /** The same four dot products over 2048 floats with the Vector API (one accumulator each, as ShortPairs). */
    private static final class FloatPairs implements Kernel {
        private static final int N = 2048;
        private final float[] a = filled(N, 3), b0 = filled(N, 4), b1 = filled(N, 5), b2 = filled(N, 6), b3 = filled(N, 7);

        @Override
        public double run(long repeats) {
            double sink = 0;
            for (long r = 0; r < repeats; r++) {
                sink += Kernels.dot(a, 0, b0, 0, N) + Kernels.dot(a, 0, b1, 0, N) + Kernels.dot(a, 0, b2, 0, N) + Kernels.dot(a, 0, b3, 0, N);
            }
            return sink;
        }

        @Override
        public long work() {
            return 4L * N;
        }
    }

    private static float[] filled(int n, int seed) {
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = ((i * 31 + seed * 17) % 97 - 48) / 97f;
        }
        return values;
    }

    /** Runs {@code kernel} on {@code threads} threads for about {@link #SECONDS}; returns giga multiply-adds per CPU-second per thread (median). */
    private static double[] measure(String name, java.util.function.Supplier<Kernel> kernels, int threads) throws Exception {
        Kernel probe = kernels.get();
        long repeats = 1;
        // Calibrate (and warm up the JIT) on one thread.
        for (int i = 0; i < 200; i++) {
            probe.run(repeats);
        }
        while (cpuSeconds(probe, repeats) < SECONDS / 10) {
            repeats *= 2;
        }
        long measuredRepeats = (long) (repeats * (SECONDS / Math.max(1e-3, cpuSeconds(probe, repeats))));
        double[] rates = new double[threads];
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        double[] sinks = new double[threads];
        long wallStart = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int index = t;
            Kernel kernel = kernels.get();
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    long cpu = THREADS.getCurrentThreadCpuTime();
                    sinks[index] = kernel.run(measuredRepeats);
                    double seconds = (THREADS.getCurrentThreadCpuTime() - cpu) / 1e9;
                    rates[index] = kernel.work() * measuredRepeats / seconds / 1e9;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        double wall = (System.nanoTime() - wallStart) / 1e9;
        double total = probe.work() * measuredRepeats * (double) threads / wall / 1e9;
        Arrays.sort(rates);
        System.out.printf("%-34s %d thread(s): %6.1f G multiply-adds per CPU-second per thread (%.1f GFLOP/s per core), "
                        + "all threads %.1f GFLOP/s wall (sink %.1g)%n",
                name, threads, rates[rates.length / 2], 2 * rates[rates.length / 2], 2 * total, sinks[0]);
        return rates;
    }

    private static double cpuSeconds(Kernel kernel, long repeats) {
        long cpu = THREADS.getCurrentThreadCpuTime();
        kernel.run(repeats);
        return (THREADS.getCurrentThreadCpuTime() - cpu) / 1e9;
    }

    public static void main(String[] args) throws Exception {
        System.out.printf("%d float lanes, %d processors%n", L, Runtime.getRuntime().availableProcessors());
        for (int threads = 1; threads <= 2; threads++) {
            int seed = threads;
            measure("float FMA peak (registers)", () -> new RegisterFma(seed), threads);
            measure("float 4x4 tile (L1)", L1Tile::new, threads);
            measure("float dot, 4 rows (L1)", FloatPairs::new, threads);
            measure("int16 pairs, sum += (L1)", ShortPairs::new, threads);
            measure("int16 pairs, out[i] += (L1)", ShortPairsInto::new, threads);
        }
    }
}
