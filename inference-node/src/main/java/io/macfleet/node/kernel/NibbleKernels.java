package io.macfleet.node.kernel;

import io.macfleet.node.gguf.GgmlType;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Decode (matrix-vector) products of the 4- and 6-bit types Q4_0, Q4_K and Q6_K on 512-bit vectors, as four forward
 * streams like the Q8_0 product ({@link Kernels#matvecQ8Streams}): a unit of work is 4 x span rows and each pass
 * computes rows k, k + span, k + 2 span, k + 3 span, so each of the four load streams walks forward through memory.
 * <p>
 * What makes them cheaper than dequantizing each weight to a float (the single-row {@link Kernels#dot} path):
 * <ul>
 * <li>16 packed bytes are widened to 16 int lanes once ({@code ZERO_EXTEND_B2I}, one {@code vpmovzxbd}) and the
 * nibbles are cut out in int lanes ({@code and}, {@code >>>}): x86 has no byte shift, so the byte-lane shifts of the
 * single-row kernels cost a widen, shift and narrow each.</li>
 * <li>Constant offsets and minimums leave the inner loop: {@code sum (q - 8) x = sum q x - 8 sum x} (Q4_0) and
 * {@code sum (d s q - dmin m) x = d s sum q x - dmin m sum x} (Q4_K), with the activations' sums per 32 values
 * computed once per product and shared by every row.</li>
 * <li>Each block's products are summed unscaled and multiplied by the block scale once ({@code fma(p, d, t)}),
 * instead of scaling every weight vector.</li>
 * </ul>
 * Dot products may round differently from dequantize-then-multiply (they are not bit-exact, as no fused kernel is);
 * dequantization stays the bit-exact reference.
 */
final class NibbleKernels {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = Kernels.SHORT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    /** Bytes to int lanes; ZERO_EXTEND_B2I or B2I (then masked), whichever measures faster. */
    private static final VectorOperators.Conversion<Byte, Integer> ZERO_EXTEND = VectorOperators.ZERO_EXTEND_B2I;

    /** Whether these kernels run here: 16 float lanes (AVX-512); other widths keep the single-row kernels. */
    static final boolean AVAILABLE = Kernels.L == 16 && FloatVector.SPECIES_PREFERRED.length() == 16;

    private NibbleKernels() {
    }

    /** Whether {@code matrix} is one of the types these kernels take, with whole blocks per row. */
    static boolean handles(WeightMatrix matrix) {
        GgmlType type = matrix.type();
        return AVAILABLE && (type == GgmlType.Q4_0 || type == GgmlType.Q4_K || type == GgmlType.Q6_K)
                && matrix.columns() % type.blockSize() == 0;
    }

    /**
     * {@code outs[i][r] = row r of matrices[i] · x} for every matrix (each {@link #handles} it, all with the same
     * columns), in one parallel loop ({@link FourStreams}): decode's Q/K/V and gate/up products share their input.
     */
    static void matvec(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs) {
        float[] sums = blockSums(x, matrices[0].columns());
        float[] offsets = null;
        for (WeightMatrix matrix : matrices) {
            if (matrix.type() == GgmlType.Q6_K && offsets == null) {
                offsets = offsetSums(x, matrix.columns());
            }
        }
        FourStreams.Unit[] units = new FourStreams.Unit[matrices.length];
        for (int m = 0; m < matrices.length; m++) {
            units[m] = unit(matrices[m], x, sums, offsets, outs[m]);
        }
        FourStreams.run(pool, matrices, x, outs, units);
    }

    /**
     * The four-stream kernel of one matrix, one lambda per type: each has its own compiled loop with one static
     * kernel call, which C2 inlines for that type alone. (A shared loop that switched on the type per four rows
     * compiled the Q4_K and Q6_K kernels of a mixed file such as Q4_K_M into one method; see the contributor notes.)
     */
    static FourStreams.Unit unit(WeightMatrix matrix, float[] x, float[] sums, float[] offsets, float[] out) {
        MemorySegment data = matrix.data();
        long rowStride = matrix.rowStride();
        int columns = matrix.columns();
        return switch (matrix.type()) {
            case Q4_0 -> (first, span) -> {
                for (int r = first; r < first + span; r++) {
                    q4FourRows(data, matrix.rowOffset(r), span * rowStride, x, sums, columns / 32, out, r, span);
                }
            };
            case Q4_K -> (first, span) -> {
                float[] accumulators = ACCUMULATORS.get();
                for (int r = first; r < first + span; r++) {
                    q4kFourRows(data, matrix.rowOffset(r), span * rowStride, x, sums, columns / 256, out, r, span, accumulators);
                }
            };
            case Q6_K -> (first, span) -> {
                float[] accumulators = ACCUMULATORS.get();
                for (int r = first; r < first + span; r++) {
                    q6kFourRows(data, matrix.rowOffset(r), span * rowStride, x, offsets, columns / 256, out, r, span,
                            accumulators);
                }
            };
            default -> throw new IllegalStateException("not a nibble type: " + matrix.type());
        };
    }

    /** Per-thread scratch of the K-quant kernels (four rows x 16 lanes): decode must not allocate per unit of work. */
    private static final ThreadLocal<float[]> ACCUMULATORS = ThreadLocal.withInitial(() -> new float[64]);

    /** Per-thread buffer for {@link #offsetSums}. */
    private static final ThreadLocal<float[]> OFFSETS = ThreadLocal.withInitial(() -> new float[0]);

    /** {@code offsets[b] = -32 (x[16 b] + .. + x[16 b + 15])} for every 16 values of {@code x[0 .. n)} (Q6_K's offset). */
    static float[] offsetSums(float[] x, int n) {
        float[] offsets = OFFSETS.get();
        if (offsets.length < n / 16) {
            offsets = new float[n / 16];
            OFFSETS.set(offsets);
        }
        for (int b = 0; b < n / 16; b++) {
            offsets[b] = -32 * FloatVector.fromArray(F, x, 16 * b).reduceLanes(VectorOperators.ADD);
        }
        return offsets;
    }

    /** Per-thread buffer for the activations' sums. */
    private static final ThreadLocal<float[]> SUMS = ThreadLocal.withInitial(() -> new float[0]);

    /**
     * Where the sums start in {@link #blockSums}: 8 unused floats first, so that a 16-float load ending at a Q4_K
     * super-block's 8 sums never starts before the array.
     */
    static final int SUMS_FIRST = 8;

    /** {@code sums[SUMS_FIRST + b] = x[32 b] + .. + x[32 b + 31]} for every block of 32 in {@code x[0 .. n)}. */
    static float[] blockSums(float[] x, int n) {
        float[] sums = SUMS.get();
        if (sums.length < SUMS_FIRST + n / 32) {
            sums = new float[SUMS_FIRST + n / 32];
            SUMS.set(sums);
        }
        for (int b = 0; b < n / 32; b++) {
            sums[SUMS_FIRST + b] = FloatVector.fromArray(F, x, 32 * b).add(FloatVector.fromArray(F, x, 32 * b + 16)).reduceLanes(VectorOperators.ADD);
        }
        return sums;
    }

    // ---- Q4_0: d (half), 16 bytes: value j in the low nibble of byte j, value 16 + j in its high nibble; d (q - 8) ----
    // The four rows are written out rather than calling a per-block method: a method that C2 has already compiled on
    // its own is "too large" to inline, and a vector passed to or returned from a call that is not inlined is
    // allocated (measured: 2 GB of weights per CPU-second that way, against 6 for the single-row kernel).

    private static void q4FourRows(MemorySegment data, long base, long stride, float[] x, float[] sums, int blocks,
                                   float[] out, int r, int outStride) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F), t2 = FloatVector.zero(F), t3 = FloatVector.zero(F);
        float o0 = 0, o1 = 0, o2 = 0, o3 = 0;
        for (int b = 0; b < blocks; b++) {
            long k0 = base + b * 18L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            FloatVector low = FloatVector.fromArray(F, x, b * 32);
            FloatVector high = FloatVector.fromArray(F, x, b * 32 + 16);
            float s = sums[SUMS_FIRST + b];
            float d0 = Float.float16ToFloat(data.get(SHORT, k0));
            IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B128, data, k0 + 2, LE).convertShape(ZERO_EXTEND, I, 0);
            t0 = ((FloatVector) q0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(high,
                    ((FloatVector) q0.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(low)).fma(FloatVector.broadcast(F, d0), t0);
            o0 += d0 * s;
            float d1 = Float.float16ToFloat(data.get(SHORT, k1));
            IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B128, data, k1 + 2, LE).convertShape(ZERO_EXTEND, I, 0);
            t1 = ((FloatVector) q1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(high,
                    ((FloatVector) q1.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(low)).fma(FloatVector.broadcast(F, d1), t1);
            o1 += d1 * s;
            float d2 = Float.float16ToFloat(data.get(SHORT, k2));
            IntVector q2 = (IntVector) ByteVector.fromMemorySegment(B128, data, k2 + 2, LE).convertShape(ZERO_EXTEND, I, 0);
            t2 = ((FloatVector) q2.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(high,
                    ((FloatVector) q2.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(low)).fma(FloatVector.broadcast(F, d2), t2);
            o2 += d2 * s;
            float d3 = Float.float16ToFloat(data.get(SHORT, k3));
            IntVector q3 = (IntVector) ByteVector.fromMemorySegment(B128, data, k3 + 2, LE).convertShape(ZERO_EXTEND, I, 0);
            t3 = ((FloatVector) q3.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(high,
                    ((FloatVector) q3.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(low)).fma(FloatVector.broadcast(F, d3), t3);
            o3 += d3 * s;
        }
        out[r + 0 * outStride] = t0.reduceLanes(VectorOperators.ADD) - 8 * o0;
        out[r + 1 * outStride] = t1.reduceLanes(VectorOperators.ADD) - 8 * o1;
        out[r + 2 * outStride] = t2.reduceLanes(VectorOperators.ADD) - 8 * o2;
        out[r + 3 * outStride] = t3.reduceLanes(VectorOperators.ADD) - 8 * o3;
    }

    // ---- Q4_K and Q6_K: see KQuantKernels for the layouts ----
    // One method call per row and super-block, returning a float: written out for four rows like Q4_0, these methods
    // were so large that C1 gave up on them ("out of virtual registers") and the engine ran them in the interpreter's
    // vector fallbacks for minutes before C2 took over; a vector handed across a call that is not inlined would be
    // allocated, a float is not. The reduction per super-block (256 values) costs a few percent.

    private static void q4kFourRows(MemorySegment data, long base, long stride, float[] x, float[] sums, int superBlocks,
                                    float[] out, int r, int outStride, float[] acc) {
        java.util.Arrays.fill(acc, 0f);
        for (int b = 0; b < superBlocks; b++) {
            long k0 = base + b * 144L;
            q4kSuperBlockInto(data, k0, x, sums, b, acc, 0);
            q4kSuperBlockInto(data, k0 + stride, x, sums, b, acc, 16);
            q4kSuperBlockInto(data, k0 + 2 * stride, x, sums, b, acc, 32);
            q4kSuperBlockInto(data, k0 + 3 * stride, x, sums, b, acc, 48);
        }
        for (int i = 0; i < 4; i++) {
            out[r + i * outStride] = FloatVector.fromArray(F, acc, 16 * i).reduceLanes(VectorOperators.ADD);
        }
    }

    private static final VectorShuffle<Integer> SCALE_BYTES = VectorShuffle.fromValues(I, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11);
    private static final VectorShuffle<Integer> HIGH_BITS = VectorShuffle.fromValues(I, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7);
    private static final IntVector NIBBLE_SHIFT = IntVector.fromArray(I, new int[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4}, 0);
    private static final IntVector LOW_MASK = IntVector.fromArray(I, new int[] {63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15}, 0);
    private static final IntVector HIGH_MASK = IntVector.fromArray(I, new int[] {0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30}, 0);
    private static final jdk.incubator.vector.VectorMask<Float> LOW_HALF = jdk.incubator.vector.VectorMask.fromLong(F, 0xFFL);
    private static final VectorShuffle<Float> LANE_0 = VectorShuffle.fromValues(F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    private static final VectorShuffle<Float> LANE_1 = VectorShuffle.fromValues(F, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    private static final VectorShuffle<Float> LANE_2 = VectorShuffle.fromValues(F, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2);
    private static final VectorShuffle<Float> LANE_3 = VectorShuffle.fromValues(F, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3);
    private static final VectorShuffle<Float> LANE_4 = VectorShuffle.fromValues(F, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4);
    private static final VectorShuffle<Float> LANE_5 = VectorShuffle.fromValues(F, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5);
    private static final VectorShuffle<Float> LANE_6 = VectorShuffle.fromValues(F, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6);
    private static final VectorShuffle<Float> LANE_7 = VectorShuffle.fromValues(F, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    private static final VectorShuffle<Float> LANE_8 = VectorShuffle.fromValues(F, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8);
    private static final VectorShuffle<Float> LANE_9 = VectorShuffle.fromValues(F, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9);
    private static final VectorShuffle<Float> LANE_10 = VectorShuffle.fromValues(F, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10);
    private static final VectorShuffle<Float> LANE_11 = VectorShuffle.fromValues(F, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11);
    private static final VectorShuffle<Float> LANE_12 = VectorShuffle.fromValues(F, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12);
    private static final VectorShuffle<Float> LANE_13 = VectorShuffle.fromValues(F, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13);
    private static final VectorShuffle<Float> LANE_14 = VectorShuffle.fromValues(F, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14);
    private static final VectorShuffle<Float> LANE_15 = VectorShuffle.fromValues(F, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15);

    /**
     * One Q4_K super-block · {@code x[256 b ..]} added into {@code acc[at .. at + 16)} (a vector accumulator kept in
     * memory across calls: a vector returned from a call that is not inlined is allocated). The twelve packed scale
     * bytes become one vector {@code [d scale[0..7], dmin min[0..7]]} in int lanes (two lane permutations, a shift,
     * masks) instead of sixteen scalar bit extractions; lane j is broadcast by a permutation, and the minimums' share
     * is one multiply-add of the mins lanes with the activations' sums.
     */
    private static void q4kSuperBlockInto(MemorySegment data, long block, float[] x, float[] sums, int b, float[] acc, int at) {
        float d = Float.float16ToFloat(data.get(SHORT, block));
        float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
        IntVector packed = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 4, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector values = packed.rearrange(SCALE_BYTES).lanewise(VectorOperators.LSHR, NIBBLE_SHIFT).and(LOW_MASK)
                .or(packed.rearrange(HIGH_BITS).lanewise(VectorOperators.LSHR, 2).and(HIGH_MASK));
        FloatVector asFloats = (FloatVector) values.convertShape(VectorOperators.I2F, F, 0);
        FloatVector scales = asFloats.mul(FloatVector.broadcast(F, dmin).blend(d, LOW_HALF));
        // Lanes 8..15: -dmin min[j] times the sums of sub-blocks j (lanes 0..7 read the 8 floats before, times 0).
        FloatVector t = asFloats.mul(FloatVector.broadcast(F, -dmin).blend(0f, LOW_HALF))
                .fma(FloatVector.fromArray(F, sums, SUMS_FIRST + 8 * b - 8), FloatVector.fromArray(F, acc, at));
        FloatVector u = FloatVector.zero(F);
        int x0 = b * 256;
        IntVector a0 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 16, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector e0 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 32, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) e0.and(15).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 16),
                ((FloatVector) a0.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 0)))
                .fma(scales.rearrange(LANE_0), t);
        u = ((FloatVector) e0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 48),
                ((FloatVector) a0.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 32)))
                .fma(scales.rearrange(LANE_1), u);
        IntVector a1 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 48, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector e1 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 64, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) e1.and(15).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 80),
                ((FloatVector) a1.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 64)))
                .fma(scales.rearrange(LANE_2), t);
        u = ((FloatVector) e1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 112),
                ((FloatVector) a1.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 96)))
                .fma(scales.rearrange(LANE_3), u);
        IntVector a2 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 80, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector e2 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 96, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) e2.and(15).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 144),
                ((FloatVector) a2.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 128)))
                .fma(scales.rearrange(LANE_4), t);
        u = ((FloatVector) e2.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 176),
                ((FloatVector) a2.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 160)))
                .fma(scales.rearrange(LANE_5), u);
        IntVector a3 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 112, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector e3 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 128, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) e3.and(15).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 208),
                ((FloatVector) a3.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 192)))
                .fma(scales.rearrange(LANE_6), t);
        u = ((FloatVector) e3.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).fma(FloatVector.fromArray(F, x, x0 + 240),
                ((FloatVector) a3.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, x0 + 224)))
                .fma(scales.rearrange(LANE_7), u);
        t.add(u).intoArray(acc, at);
    }

    /** 6-bit scale j of the 12 packed bytes ({@code low} bytes 0..7, {@code high} bytes 8..11), as scalesAndMins. */
    static int scale(long low, int high, int j) {
        if (j < 4) {
            return (int) (low >>> (8 * j)) & 63;
        }
        int k = j - 4;
        return (high >>> (8 * k)) & 0x0F | ((int) (low >>> (8 * k + 6)) & 3) << 4;
    }

    static int minimum(long low, int high, int j) {
        if (j < 4) {
            return (int) (low >>> (8 * j + 32)) & 63;
        }
        int k = j - 4;
        return (high >>> (8 * k + 4)) & 0x0F | ((int) (low >>> (8 * k + 38)) & 3) << 4;
    }

    private static void q6kFourRows(MemorySegment data, long base, long stride, float[] x, float[] offsets, int superBlocks,
                                    float[] out, int r, int outStride, float[] acc) {
        java.util.Arrays.fill(acc, 0f);
        for (int b = 0; b < superBlocks; b++) {
            long k0 = base + b * 210L;
            q6kSuperBlockInto(data, k0, x, offsets, b * 256, acc, 0);
            q6kSuperBlockInto(data, k0 + stride, x, offsets, b * 256, acc, 16);
            q6kSuperBlockInto(data, k0 + 2 * stride, x, offsets, b * 256, acc, 32);
            q6kSuperBlockInto(data, k0 + 3 * stride, x, offsets, b * 256, acc, 48);
        }
        for (int i = 0; i < 4; i++) {
            out[r + i * outStride] = FloatVector.fromArray(F, acc, 16 * i).reduceLanes(VectorOperators.ADD);
        }
    }

    /**
     * One Q6_K super-block · {@code x[xi .. xi + 256)} ({@code sum d scale (q - 32) x}) added into
     * {@code acc[at .. at + 16)}: the sixteen signed scales are converted and multiplied by d as one vector, and each
     * is broadcast by a lane permutation. The offset leaves the inner loop as in Q4_0: {@code sum d s (q - 32) x =
     * d s sum q x + d s (-32 sum x)} per 16 values, the second term for all sixteen scales at once from
     * {@code offsets} ({@link #offsetSums}).
     */
    private static void q6kSuperBlockInto(MemorySegment data, long block, float[] x, float[] offsets, int xi, float[] acc,
                                          int at) {
        FloatVector scales = ((FloatVector) ByteVector.fromMemorySegment(B128, data, block + 192, LE).castShape(F, 0))
                .mul(Float.float16ToFloat(data.get(SHORT, block + 208)));
        FloatVector t = scales.fma(FloatVector.fromArray(F, offsets, xi / 16), FloatVector.fromArray(F, acc, at));
        FloatVector u = FloatVector.zero(F);
        IntVector a0 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 0, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector c0 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 32, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector h0 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 128, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) a0.and(15).or(h0.lanewise(VectorOperators.LSHL, 4).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 0)).fma(scales.rearrange(LANE_0), t);
        u = ((FloatVector) c0.and(15).or(h0.lanewise(VectorOperators.LSHL, 2).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 32)).fma(scales.rearrange(LANE_2), u);
        t = ((FloatVector) a0.lanewise(VectorOperators.LSHR, 4).or(h0.and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 64)).fma(scales.rearrange(LANE_4), t);
        u = ((FloatVector) c0.lanewise(VectorOperators.LSHR, 4).or(h0.lanewise(VectorOperators.LSHR, 2).and(0x30))
                .convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 96)).fma(scales.rearrange(LANE_6), u);
        IntVector a1 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 16, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector c1 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 48, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector h1 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 144, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) a1.and(15).or(h1.lanewise(VectorOperators.LSHL, 4).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 16)).fma(scales.rearrange(LANE_1), t);
        u = ((FloatVector) c1.and(15).or(h1.lanewise(VectorOperators.LSHL, 2).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 48)).fma(scales.rearrange(LANE_3), u);
        t = ((FloatVector) a1.lanewise(VectorOperators.LSHR, 4).or(h1.and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 80)).fma(scales.rearrange(LANE_5), t);
        u = ((FloatVector) c1.lanewise(VectorOperators.LSHR, 4).or(h1.lanewise(VectorOperators.LSHR, 2).and(0x30))
                .convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 112)).fma(scales.rearrange(LANE_7), u);
        IntVector a2 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 64, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector c2 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 96, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector h2 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 160, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) a2.and(15).or(h2.lanewise(VectorOperators.LSHL, 4).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 128)).fma(scales.rearrange(LANE_8), t);
        u = ((FloatVector) c2.and(15).or(h2.lanewise(VectorOperators.LSHL, 2).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 160)).fma(scales.rearrange(LANE_10), u);
        t = ((FloatVector) a2.lanewise(VectorOperators.LSHR, 4).or(h2.and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 192)).fma(scales.rearrange(LANE_12), t);
        u = ((FloatVector) c2.lanewise(VectorOperators.LSHR, 4).or(h2.lanewise(VectorOperators.LSHR, 2).and(0x30))
                .convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 224)).fma(scales.rearrange(LANE_14), u);
        IntVector a3 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 80, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector c3 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 112, LE).convertShape(ZERO_EXTEND, I, 0);
        IntVector h3 = (IntVector) ByteVector.fromMemorySegment(B128, data, block + 176, LE).convertShape(ZERO_EXTEND, I, 0);
        t = ((FloatVector) a3.and(15).or(h3.lanewise(VectorOperators.LSHL, 4).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 144)).fma(scales.rearrange(LANE_9), t);
        u = ((FloatVector) c3.and(15).or(h3.lanewise(VectorOperators.LSHL, 2).and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 176)).fma(scales.rearrange(LANE_11), u);
        t = ((FloatVector) a3.lanewise(VectorOperators.LSHR, 4).or(h3.and(0x30)).convertShape(VectorOperators.I2F, F, 0))
                .mul(FloatVector.fromArray(F, x, xi + 208)).fma(scales.rearrange(LANE_13), t);
        u = ((FloatVector) c3.lanewise(VectorOperators.LSHR, 4).or(h3.lanewise(VectorOperators.LSHR, 2).and(0x30))
                .convertShape(VectorOperators.I2F, F, 0)).mul(FloatVector.fromArray(F, x, xi + 240)).fma(scales.rearrange(LANE_15), u);
        t.add(u).intoArray(acc, at);
    }

    // ---- bit-exact dequantization (prompt processing dequantizes each weight row once per batch) ----

    /**
     * Q4_K rows as {@link KQuantKernels#dequantizeQ4K} computes them, 16 values per operation: {@code (d * scale) * q -
     * (dmin * min)}, each product and the difference rounded to float as in the scalar code (Java never fuses them).
     */
    static void dequantizeQ4K(MemorySegment data, long base, int n, float[] out, int offset) {
        for (int b = 0; b < n / 256; b++) {
            long block = base + b * 144L;
            float d = Float.float16ToFloat(data.get(SHORT, block));
            float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
            long low = data.get(LONG, block + 4);
            int high = data.get(INT, block + 12);
            for (int c = 0; c < 4; c++) {
                long q = block + 16 + 32L * c;
                int o = offset + b * 256 + 64 * c;
                IntVector a = (IntVector) ByteVector.fromMemorySegment(B128, data, q, LE).convertShape(ZERO_EXTEND, I, 0);
                IntVector e = (IntVector) ByteVector.fromMemorySegment(B128, data, q + 16, LE).convertShape(ZERO_EXTEND, I, 0);
                FloatVector d1 = FloatVector.broadcast(F, d * scale(low, high, 2 * c));
                FloatVector m1 = FloatVector.broadcast(F, dmin * minimum(low, high, 2 * c));
                FloatVector d2 = FloatVector.broadcast(F, d * scale(low, high, 2 * c + 1));
                FloatVector m2 = FloatVector.broadcast(F, dmin * minimum(low, high, 2 * c + 1));
                ((FloatVector) a.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(d1).sub(m1).intoArray(out, o);
                ((FloatVector) e.and(15).convertShape(VectorOperators.I2F, F, 0)).mul(d1).sub(m1).intoArray(out, o + 16);
                ((FloatVector) a.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(d2).sub(m2)
                        .intoArray(out, o + 32);
                ((FloatVector) e.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.I2F, F, 0)).mul(d2).sub(m2)
                        .intoArray(out, o + 48);
            }
        }
    }

    /** Q6_K rows as {@link KQuantKernels#dequantizeQ6K} computes them: {@code (d * scale) * (q - 32)}. */
    static void dequantizeQ6K(MemorySegment data, long base, int n, float[] out, int offset) {
        for (int b = 0; b < n / 256; b++) {
            long block = base + b * 210L;
            float d = Float.float16ToFloat(data.get(SHORT, block + 208));
            for (int g = 0; g < 4; g++) {
                int half = g >> 1, part = g & 1;
                long low = block + 64L * half + 16 * part, highBits = block + 128 + 32L * half + 16 * part;
                long scales = block + 192 + 8L * half + part;
                int o = offset + b * 256 + 128 * half + 16 * part;
                IntVector a = (IntVector) ByteVector.fromMemorySegment(B128, data, low, LE).convertShape(ZERO_EXTEND, I, 0);
                IntVector c = (IntVector) ByteVector.fromMemorySegment(B128, data, low + 32, LE).convertShape(ZERO_EXTEND, I, 0);
                IntVector h = (IntVector) ByteVector.fromMemorySegment(B128, data, highBits, LE).convertShape(ZERO_EXTEND, I, 0);
                ((FloatVector) a.and(15).or(h.lanewise(VectorOperators.LSHL, 4).and(0x30)).sub(32).convertShape(VectorOperators.I2F, F, 0))
                        .mul(d * data.get(ValueLayout.JAVA_BYTE, scales)).intoArray(out, o);
                ((FloatVector) c.and(15).or(h.lanewise(VectorOperators.LSHL, 2).and(0x30)).sub(32).convertShape(VectorOperators.I2F, F, 0))
                        .mul(d * data.get(ValueLayout.JAVA_BYTE, scales + 2)).intoArray(out, o + 32);
                ((FloatVector) a.lanewise(VectorOperators.LSHR, 4).or(h.and(0x30)).sub(32).convertShape(VectorOperators.I2F, F, 0))
                        .mul(d * data.get(ValueLayout.JAVA_BYTE, scales + 4)).intoArray(out, o + 64);
                ((FloatVector) c.lanewise(VectorOperators.LSHR, 4).or(h.lanewise(VectorOperators.LSHR, 2).and(0x30)).sub(32)
                        .convertShape(VectorOperators.I2F, F, 0)).mul(d * data.get(ValueLayout.JAVA_BYTE, scales + 6)).intoArray(out, o + 96);
            }
        }
    }
}
