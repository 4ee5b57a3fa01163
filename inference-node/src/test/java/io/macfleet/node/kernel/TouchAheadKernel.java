package io.macfleet.node.kernel;

import static io.macfleet.node.kernel.Kernels.F;
import static io.macfleet.node.kernel.Kernels.SHORT;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * The engine's previous Q8_0 decode kernel, four consecutive rows per pass with touch-ahead loads, kept in test scope
 * as {@link KernelBenchmark}'s A/B baseline ("float four-row") after the four-stream kernel replaced it.
 */
final class TouchAheadKernel {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private TouchAheadKernel() {
    }

    /**
     * The previous float-activation Q8_0 decode product, four consecutive rows at a time, kept as the
     * KernelBenchmark's baseline ("float four-row"): {@link Kernels#matvecQ8Streams} replaced it. While it computes one group of four rows it reads one 8-byte word per cache line of the next group (the next
     * four rows, 136 bytes per block pass = the group's size), so that those lines are already on their way when the
     * group's turn comes. Why: the kernel's own loads each have about ten dependent vector operations waiting on
     * them, so the out-of-order window fills after a handful of cache lines and a core keeps only about five lines
     * in flight (4.5 to 5.5 GB of weights per CPU-second from memory, against 12 to 13 from L2); a touch load has one
     * dependent scalar xor, so many more lines are in flight. Measured 16 to 37% more weights per CPU-second from
     * memory with two threads and no cost in cache (KernelBenchmark), 8 to 12% less CPU per decode token end to end.
     * The Vector API has no prefetch instruction, hence a load.
     */
    static void matvecQ8Float(WorkerPool pool, WeightMatrix matrix, float[] x, float[] out) {
        matvecQ8Float(pool, new WeightMatrix[] {matrix}, x, new float[][] {out});
    }

    /** {@link #matvecQ8Float} over several matrices with the same input, as one parallel loop over all their rows. */
    static void matvecQ8Float(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs) {
        int[] firstGroup = new int[matrices.length + 1];
        for (int m = 0; m < matrices.length; m++) {
            firstGroup[m + 1] = firstGroup[m] + (matrices[m].rows() + 3) / 4;
        }
        pool.parallelFor(firstGroup[matrices.length], (start, end, worker) -> {
            long touched = 0;
            int m = 0;
            for (int group = start; group < end; group++) {
                while (group >= firstGroup[m + 1]) {
                    m++;
                }
                touched ^= q8Group(matrices[m], x, outs[m], group - firstGroup[m]);
            }
            if (touched == TOUCH_IMPOSSIBLE) {
                // Never true in practice; the comparison keeps the touch loads from being removed as dead code.
                touchSink = touched;
            }
        });
    }

    /** Rows [4 group, 4 group + 4) of a Q8_0 matrix (fewer for the last group); returns the touched words' xor. */
    private static long q8Group(WeightMatrix matrix, float[] x, float[] out, int group) {
        int rows = matrix.rows();
        int r = group * 4;
        if (r + 4 > rows) {
            for (; r < rows; r++) {
                out[r] = Kernels.dot(matrix, r, x, 0);
            }
            return 0;
        }
        MemorySegment data = matrix.data();
        long stride = matrix.rowStride();
        int columns = matrix.columns();
        long touchSpan = TOUCH_BYTES_PER_BLOCK * (columns / 32);
        long base = matrix.rowOffset(r);
        long next = base + 4 * stride;
        // The last group touches its own lines (already being read) rather than past the data.
        return dotQ8FourRows(data, base, stride, x, columns, out, r, next + touchSpan <= data.byteSize() ? next : base);
    }

    /** Bytes of the next group touched per block pass: two cache lines (a group is 4 x 34 = 136 bytes per block). */
    private static final long TOUCH_BYTES_PER_BLOCK = 128;
    private static final long TOUCH_IMPOSSIBLE = 0x5eed_5eed_5eed_5eedL;
    static long touchSink;

    /**
     * Four Q8_0 rows per pass over x (16 float lanes only): each activation vector loaded feeds four rows. Returns
     * the xor of the words touched at {@code next} (see {@link #matvecQ8Float}); {@code next + 128 * n / 32} must
     * lie within {@code data}. Kept free of anything the JIT cannot keep in registers: an extra vector value in this
     * loop, or eight rows instead of four, exceeds C2's inlining budget and boxes every vector (measured 6x slower).
     */
    private static long dotQ8FourRows(MemorySegment data, long base, long stride, float[] x, int n, float[] out, int r, long next) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F), t2 = FloatVector.zero(F), t3 = FloatVector.zero(F);
        long touched = 0;
        for (int b = 0; b < n / 32; b++) {
            long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            long ahead = next + b * TOUCH_BYTES_PER_BLOCK;
            touched ^= data.get(LONG, ahead) + data.get(LONG, ahead + 64);
            FloatVector low = FloatVector.fromArray(F, x, b * 32);
            FloatVector high = FloatVector.fromArray(F, x, b * 32 + 16);
            t0 = Kernels.q8Block(data, k0, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0))), t0);
            t1 = Kernels.q8Block(data, k1, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1))), t1);
            t2 = Kernels.q8Block(data, k2, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2))), t2);
            t3 = Kernels.q8Block(data, k3, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3))), t3);
        }
        out[r] = t0.reduceLanes(VectorOperators.ADD);
        out[r + 1] = t1.reduceLanes(VectorOperators.ADD);
        out[r + 2] = t2.reduceLanes(VectorOperators.ADD);
        out[r + 3] = t3.reduceLanes(VectorOperators.ADD);
        return touched;
    }

}
