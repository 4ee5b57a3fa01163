package io.macfleet.node.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Vector API kernels over {@link WeightMatrix} data: dot products of a weight row with an activation vector for
 * each supported type, row dequantization, matrix-vector (decode) and batched matrix-matrix (prefill) products.
 * Written for any preferred vector width from 128 to 512 bits.
 */
public final class Kernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    static final int L = F.length();
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final int BYTE_PARTS = 16 / L;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_PREFERRED.withShape(VectorShape.forBitSize(L * 16));
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED.withShape(F.vectorShape());
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private Kernels() {
    }

    /** Dot product of row {@code row} of {@code matrix} with {@code x[offset .. offset + columns)}. */
    public static float dot(WeightMatrix matrix, int row, float[] x, int offset) {
        if (repackedQ4K(matrix)) {
            return GgmlOrderKernels.dotQ4KRepacked(matrix.data(), matrix.rowOffset(row), x, offset, matrix.columns());
        }
        return QuantizationTypes.of(matrix.type()).dot().dot(matrix.data(), matrix.rowOffset(row), x, offset, matrix.columns());
    }

    /** Whether llama.cpp repacks this matrix (ggml_repack_get_optimal_repack_type: Q4_K, rows a multiple of 8, AVX2). */
    private static boolean repackedQ4K(WeightMatrix matrix) {
        return GgmlOrderKernels.ENABLED && GgmlOrderKernels.REPACK && matrix.type() == io.macfleet.node.gguf.GgmlType.Q4_K
                && matrix.rows() % 8 == 0;
    }

    static float dotF32(MemorySegment data, long base, float[] x, int offset, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            acc = FloatVector.fromMemorySegment(F, data, base + i * 4L, LE).fma(FloatVector.fromArray(F, x, offset + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += data.get(FLOAT, base + i * 4L) * x[offset + i];
        }
        return sum;
    }

    private static FloatVector halfToFloat(ShortVector halves) {
        IntVector h = (IntVector) halves.convertShape(VectorOperators.S2I, I, 0);
        // Exponent rebias by multiplication handles normal and subnormal halves exactly (weights are finite).
        FloatVector magnitude = h.and(0x7fff).lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(0x1p112f);
        return magnitude.reinterpretAsInts().or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16)).reinterpretAsFloats();
    }

    private static FloatVector bf16ToFloat(ShortVector halves) {
        IntVector h = (IntVector) halves.convertShape(VectorOperators.S2I, I, 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    static float dotF16(MemorySegment data, long base, float[] x, int offset, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector w = halfToFloat(ShortVector.fromMemorySegment(S, data, base + i * 2L, LE));
            acc = w.fma(FloatVector.fromArray(F, x, offset + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += Float.float16ToFloat(data.get(SHORT, base + i * 2L)) * x[offset + i];
        }
        return sum;
    }

    static float dotBF16(MemorySegment data, long base, float[] x, int offset, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector w = bf16ToFloat(ShortVector.fromMemorySegment(S, data, base + i * 2L, LE));
            acc = w.fma(FloatVector.fromArray(F, x, offset + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += Float.intBitsToFloat(data.get(SHORT, base + i * 2L) << 16) * x[offset + i];
        }
        return sum;
    }

    static float dotQ8(MemorySegment data, long base, float[] x, int offset, int n) {
        if (BYTE_PARTS == 1) {
            return dotQ8Wide(data, base, x, offset, n);
        }
        FloatVector total = FloatVector.zero(F);
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            long block = base + b * 34L;
            float scale = Float.float16ToFloat(data.get(SHORT, block));
            int xi = offset + b * 32;
            ByteVector low = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
            ByteVector high = ByteVector.fromMemorySegment(B128, data, block + 18, LE);
            FloatVector acc = FloatVector.zero(F);
            for (int p = 0; p < BYTE_PARTS; p++) {
                acc = ((FloatVector) low.convertShape(VectorOperators.B2F, F, p)).fma(FloatVector.fromArray(F, x, xi + p * L), acc);
            }
            for (int p = 0; p < BYTE_PARTS; p++) {
                acc = ((FloatVector) high.convertShape(VectorOperators.B2F, F, p)).fma(FloatVector.fromArray(F, x, xi + 16 + p * L), acc);
            }
            total = acc.fma(FloatVector.broadcast(F, scale), total);
        }
        return total.reduceLanes(VectorOperators.ADD);
    }

    /**
     * 16 float lanes (AVX-512): each half block converts in one constant-part cast, and the two halves feed two
     * independent accumulators; measured about twice as fast as the generic loop, whose variable part index
     * keeps the JIT from using the conversion intrinsic well.
     */
    private static float dotQ8Wide(MemorySegment data, long base, float[] x, int offset, int n) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F);
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            long block = base + b * 34L;
            FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
            int xi = offset + b * 32;
            ByteVector low = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
            ByteVector high = ByteVector.fromMemorySegment(B128, data, block + 18, LE);
            t0 = ((FloatVector) low.castShape(F, 0)).mul(scale).fma(FloatVector.fromArray(F, x, xi), t0);
            t1 = ((FloatVector) high.castShape(F, 0)).mul(scale).fma(FloatVector.fromArray(F, x, xi + 16), t1);
        }
        return t0.add(t1).reduceLanes(VectorOperators.ADD);
    }

    static float dotQ4(MemorySegment data, long base, float[] x, int offset, int n) {
        if (BYTE_PARTS == 1) {
            return dotQ4Wide(data, base, x, offset, n);
        }
        FloatVector total = FloatVector.zero(F);
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            long block = base + b * 18L;
            float scale = Float.float16ToFloat(data.get(SHORT, block));
            int xi = offset + b * 32;
            ByteVector packed = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
            ByteVector low = packed.and((byte) 0x0F).sub((byte) 8);
            ByteVector high = packed.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
            FloatVector acc = FloatVector.zero(F);
            for (int p = 0; p < BYTE_PARTS; p++) {
                acc = ((FloatVector) low.convertShape(VectorOperators.B2F, F, p)).fma(FloatVector.fromArray(F, x, xi + p * L), acc);
            }
            for (int p = 0; p < BYTE_PARTS; p++) {
                acc = ((FloatVector) high.convertShape(VectorOperators.B2F, F, p)).fma(FloatVector.fromArray(F, x, xi + 16 + p * L), acc);
            }
            total = acc.fma(FloatVector.broadcast(F, scale), total);
        }
        return total.reduceLanes(VectorOperators.ADD);
    }

    private static float dotQ4Wide(MemorySegment data, long base, float[] x, int offset, int n) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F);
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            long block = base + b * 18L;
            FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
            int xi = offset + b * 32;
            ByteVector packed = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
            ByteVector low = packed.and((byte) 0x0F).sub((byte) 8);
            ByteVector high = packed.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
            t0 = ((FloatVector) low.castShape(F, 0)).mul(scale).fma(FloatVector.fromArray(F, x, xi), t0);
            t1 = ((FloatVector) high.castShape(F, 0)).mul(scale).fma(FloatVector.fromArray(F, x, xi + 16), t1);
        }
        return t0.add(t1).reduceLanes(VectorOperators.ADD);
    }

    /** Writes row {@code row} of {@code matrix} as floats into {@code out[offset ..]}. Exact for every type. */
    public static void dequantizeRow(WeightMatrix matrix, int row, float[] out, int offset) {
        QuantizationTypes.of(matrix.type()).dequantize()
                .dequantize(matrix.data(), matrix.rowOffset(row), matrix.columns(), out, offset);
    }

    static void dequantizeF32(MemorySegment data, long base, int n, float[] out, int offset) {
        MemorySegment.copy(data, FLOAT, base, out, offset, n);
    }

    static void dequantizeF16(MemorySegment data, long base, int n, float[] out, int offset) {
        dequantizeHalf(data, base, n, out, offset, true);
    }

    static void dequantizeBF16(MemorySegment data, long base, int n, float[] out, int offset) {
        dequantizeHalf(data, base, n, out, offset, false);
    }

    private static void dequantizeHalf(MemorySegment data, long base, int n, float[] out, int offset, boolean half) {
        int i = 0;
        for (; i <= n - L; i += L) {
            ShortVector raw = ShortVector.fromMemorySegment(S, data, base + i * 2L, LE);
            (half ? halfToFloat(raw) : bf16ToFloat(raw)).intoArray(out, offset + i);
        }
        for (; i < n; i++) {
            short raw = data.get(SHORT, base + i * 2L);
            out[offset + i] = half ? Float.float16ToFloat(raw) : Float.intBitsToFloat(raw << 16);
        }
    }

    static void dequantizeQ8(MemorySegment data, long base, int n, float[] out, int offset) {
        for (int b = 0; b < n / 32; b++) {
            long block = base + b * 34L;
            FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
            for (int half = 0; half < 2; half++) {
                ByteVector q = ByteVector.fromMemorySegment(B128, data, block + 2 + half * 16, LE);
                if (BYTE_PARTS == 1) {
                    ((FloatVector) q.castShape(F, 0)).mul(scale).intoArray(out, offset + b * 32 + half * 16);
                    continue;
                }
                for (int p = 0; p < BYTE_PARTS; p++) {
                    ((FloatVector) q.convertShape(VectorOperators.B2F, F, p)).mul(scale)
                            .intoArray(out, offset + b * 32 + half * 16 + p * L);
                }
            }
        }
    }

    static void dequantizeQ4(MemorySegment data, long base, int n, float[] out, int offset) {
        for (int b = 0; b < n / 32; b++) {
            long block = base + b * 18L;
            FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
            ByteVector packed = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
            ByteVector low = packed.and((byte) 0x0F).sub((byte) 8);
            ByteVector high = packed.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
            if (BYTE_PARTS == 1) {
                ((FloatVector) low.castShape(F, 0)).mul(scale).intoArray(out, offset + b * 32);
                ((FloatVector) high.castShape(F, 0)).mul(scale).intoArray(out, offset + b * 32 + 16);
                continue;
            }
            for (int p = 0; p < BYTE_PARTS; p++) {
                ((FloatVector) low.convertShape(VectorOperators.B2F, F, p)).mul(scale).intoArray(out, offset + b * 32 + p * L);
                ((FloatVector) high.convertShape(VectorOperators.B2F, F, p)).mul(scale).intoArray(out, offset + b * 32 + 16 + p * L);
            }
        }
    }

    /**
     * {@code outs[i][r] = row r of matrices[i] · x} for every matrix: decode's Q/K/V and gate/up products, which share
     * their input. Q8_0 matrices run as one parallel loop over all their rows (one hand-off to the workers and one
     * wait instead of one per matrix); other types one matrix after the other.
     */
    public static void matvec(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs) {
        if (ROUND_ACTIVATIONS && pool.roundsActivations()) {
            ActivationRounding rounding = rounding(matrices[0]);
            for (WeightMatrix matrix : matrices) {
                if (rounding(matrix) != rounding || matrix.columns() != matrices[0].columns()) {
                    for (int i = 0; i < matrices.length; i++) {
                        matvec(pool, matrices[i], x, outs[i]);
                    }
                    return;
                }
            }
            x = rounded(rounding, x, matrices[0].columns(), 1);
        }
        matvecRounded(pool, matrices, x, outs);
    }

    /**
     * Activations rounded as llama.cpp rounds them for each weight type ({@link ActivationRounding}) before every
     * matrix product on a pool that asks for it ({@link WorkerPool#roundsActivations});
     * {@code -Dinference.roundActivations=false} multiplies the float activations as they are everywhere.
     */
    public static final boolean ROUND_ACTIVATIONS = !"false".equals(System.getProperty("inference.roundActivations"));

    /** Per-calling-thread buffer for rounded activations: decode must not allocate per product. */
    private static final ThreadLocal<float[]> ROUNDED = ThreadLocal.withInitial(() -> new float[0]);

    private static ActivationRounding rounding(WeightMatrix matrix) {
        return QuantizationTypes.of(matrix.type()).activations();
    }

    /**
     * {@code tokens} rows of {@code columns} activations rounded for multiplication with {@code matrix}'s type, into
     * {@code out[outOffset ..]} (the caller's buffer: products that take rows one at a time, like the absorbed
     * attention's, round once and then call {@link #dot}).
     */
    public static void roundActivations(WorkerPool pool, WeightMatrix matrix, float[] x, int offset, int n, float[] out,
                                        int outOffset) {
        ActivationRounding rounding = rounding(matrix);
        if (!ROUND_ACTIVATIONS || !pool.roundsActivations() || n % rounding.block() != 0) {
            System.arraycopy(x, offset, out, outOffset, n);
            return;
        }
        rounding.round(x, offset, n, out, outOffset);
    }

    /** x rounded into this thread's buffer, or x itself when the rounding changes nothing or rows are not whole blocks. */
    private static float[] rounded(ActivationRounding rounding, float[] x, int columns, int tokens) {
        if (rounding.identity() || columns % rounding.block() != 0) {
            return x;
        }
        float[] buffer = ROUNDED.get();
        if (buffer.length < columns * tokens) {
            buffer = new float[columns * tokens];
            ROUNDED.set(buffer);
        }
        rounding.round(x, 0, columns * tokens, buffer, 0);
        return buffer;
    }

    private static void matvecRounded(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs) {
        boolean fused = BYTE_PARTS == 1 && !INT8_ACTIVATIONS && !GgmlOrderKernels.ENABLED;
        for (WeightMatrix matrix : matrices) {
            fused &= matrix.type() == io.macfleet.node.gguf.GgmlType.Q8_0 && matrix.columns() == matrices[0].columns();
        }
        if (fused) {
            matvecQ8Streams(pool, matrices, x, outs);
            return;
        }
        boolean nibbles = NIBBLE_STREAMS;
        for (WeightMatrix matrix : matrices) {
            nibbles &= NibbleKernels.handles(matrix) && matrix.columns() == matrices[0].columns();
        }
        if (nibbles) {
            NibbleKernels.matvec(pool, matrices, x, outs);
            return;
        }
        for (int i = 0; i < matrices.length; i++) {
            matvecRounded(pool, matrices[i], x, outs[i]);
        }
    }

    /**
     * {@code outs[i][r] = row r of matrices[i] · xs[i]}: products with different inputs (decode's down projections of
     * the selected and shared experts) in one parallel loop when all are Q8_0 (one hand-off to the workers and one
     * wait instead of one per matrix, which is what the workers mostly did on a loaded machine); otherwise one after
     * the other.
     */
    public static void matvecEach(WorkerPool pool, WeightMatrix[] matrices, float[][] xs, float[][] outs) {
        boolean fused = BYTE_PARTS == 1 && !INT8_ACTIVATIONS && !GgmlOrderKernels.ENABLED;
        for (WeightMatrix matrix : matrices) {
            fused &= matrix.type() == io.macfleet.node.gguf.GgmlType.Q8_0;
        }
        if (!fused) {
            for (int i = 0; i < matrices.length; i++) {
                matvec(pool, matrices[i], xs[i], outs[i]);
            }
            return;
        }
        float[][] inputs = xs;
        if (ROUND_ACTIVATIONS && pool.roundsActivations()) {
            float[][] buffers = ROUNDED_EACH.get();
            if (buffers.length < matrices.length) {
                buffers = java.util.Arrays.copyOf(buffers, matrices.length);
                ROUNDED_EACH.set(buffers);
            }
            inputs = new float[matrices.length][];
            for (int i = 0; i < matrices.length; i++) {
                int columns = matrices[i].columns();
                if (buffers[i] == null || buffers[i].length < columns) {
                    buffers[i] = new float[columns];
                }
                ActivationRounding.Q8_0.round(xs[i], 0, columns, buffers[i], 0);
                inputs[i] = buffers[i];
            }
        }
        FourStreams.Unit[] units = new FourStreams.Unit[matrices.length];
        for (int m = 0; m < matrices.length; m++) {
            WeightMatrix matrix = matrices[m];
            MemorySegment data = matrix.data();
            long stride = matrix.rowStride();
            float[] x = inputs[m], out = outs[m];
            units[m] = (first, span) -> {
                for (int r = first; r < first + span; r++) {
                    dotQ8FourStreams(data, matrix.rowOffset(r), span * stride, x, matrix.columns(), out, r, span);
                }
            };
        }
        FourStreams.run(pool, matrices, inputs, outs, units);
    }

    /** Per-calling-thread buffers for {@link #matvecEach}'s rounded inputs, one per matrix. */
    private static final ThreadLocal<float[][]> ROUNDED_EACH = ThreadLocal.withInitial(() -> new float[0][]);

    /** out[r] = row r · x for every row, rows split across the pool. */
    public static void matvec(WorkerPool pool, WeightMatrix matrix, float[] x, float[] out) {
        matvecRounded(pool, matrix, ROUND_ACTIVATIONS && pool.roundsActivations()
                ? rounded(rounding(matrix), x, matrix.columns(), 1) : x, out);
    }

    private static void matvecRounded(WorkerPool pool, WeightMatrix matrix, float[] x, float[] out) {
        // Q4_0, Q4_K and Q6_K: four streams in NibbleKernels. Earlier attempts at the same scheme for Q4_0 and Q4_K
        // measured slower because they cut nibbles in byte lanes (x86 has no byte shift) and passed vectors to
        // methods C2 did not inline (each such vector is allocated); see NibbleKernels.
        if (NIBBLE_STREAMS && NibbleKernels.handles(matrix)) {
            NibbleKernels.matvec(pool, new WeightMatrix[] {matrix}, x, new float[][] {out});
            return;
        }
        boolean fourRows = BYTE_PARTS == 1 && matrix.type() == io.macfleet.node.gguf.GgmlType.Q8_0 && !GgmlOrderKernels.ENABLED;
        if (!fourRows) {
            pool.parallelFor(matrix.rows(), (start, end, worker) -> {
                for (int r = start; r < end; r++) {
                    out[r] = dot(matrix, r, x, 0);
                }
            });
            return;
        }
        if (INT8_ACTIVATIONS && matrix.columns() % 32 == 0) {
            matvecQ8Int8(pool, matrix, x, out);
            return;
        }
        matvecQ8Streams(pool, new WeightMatrix[] {matrix}, x, new float[][] {out});
    }

    /** Whether products, SwiGLU and attention scores follow ggml-cpu's exact float order ({@code -Dinference.ggmlOrder=true}). */
    public static boolean ggmlOrder() {
        return GgmlOrderKernels.ENABLED;
    }

    /** expf as ggml calls it for single values: the C library's under {@code -Dinference.ggmlOrder=true}, else Math.exp. */
    public static float exp(float x) {
        return GgmlOrderKernels.ENABLED ? GgmlOrderKernels.libraryExp(x) : (float) Math.exp(x);
    }

    /** cosf, sinf and powf as ggml calls them: the C library's under {@code -Dinference.ggmlOrder=true}. */
    public static float cos(float x) {
        return GgmlOrderKernels.ENABLED ? GgmlOrderKernels.libraryCos(x) : (float) Math.cos(x);
    }

    public static float sin(float x) {
        return GgmlOrderKernels.ENABLED ? GgmlOrderKernels.librarySin(x) : (float) Math.sin(x);
    }

    public static float pow(float x, float y) {
        return GgmlOrderKernels.ENABLED ? GgmlOrderKernels.libraryPow(x, y) : (float) Math.pow(x, y);
    }

    /** ggml-cpu's softmax of {@code x[offset .. offset + n)} into {@code y} (ggml_vec_soft_max_f32, then the scale by 1 / sum). */
    public static void ggmlSoftmax(float[] x, int offset, int n, float[] y) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[offset + i]);
        }
        double sum = 0;
        int whole = n & ~7;
        float[] lanes = new float[8];
        for (int i = 0; i < whole; i += 8) {
            for (int l = 0; l < 8; l++) {
                lanes[l] = y[i + l] = GgmlOrderKernels.vectorExp(x[offset + i + l] - max);
            }
            sum += GgmlOrderKernels.hsum8(lanes);
        }
        for (int i = whole; i < n; i++) {
            y[i] = exp(x[offset + i] - max);
            sum += y[i];
        }
        float inverse = (float) (1.0 / sum);
        for (int i = 0; i < n; i++) {
            y[i] *= inverse;
        }
    }

    /**
     * Q4_0, Q4_K and Q6_K decode through {@link NibbleKernels} (on by default; {@code -Dinference.nibbleStreams=false}
     * for the single-row kernels, to compare).
     */
    static final boolean NIBBLE_STREAMS = !"false".equals(System.getProperty("inference.nibbleStreams"))
            && !GgmlOrderKernels.ENABLED;

    /**
     * The Q8_0 product (decode), four rows per pass as four forward streams: a unit of work is 4 x span consecutive
     * rows, and each pass computes rows k, k + span, k + 2 span, k + 3 span, so each of the four load streams walks
     * forward through its own contiguous run of span rows, one whole row after the other. That is the pattern the
     * hardware stream prefetcher follows (it tracks forward streams within 4 KB pages): with four consecutive rows
     * per pass, most pages hold the end of one row and the start of the next, read at the same time from two
     * places, and the weights arrive on demand. Measured (KernelBenchmark, 1.1 GB of 8192 x 2048 matrices, one
     * thread, same run): 9.0 to 9.1 GB of weights per CPU-second with a span of 64 rows, 8.5 to 8.8 with 16, 7.6 with
     * 4, against 6.5 to 6.9 for the previous kernel (consecutive rows, touching the next group's lines ahead: touch
     * loads in this scheme made it slower, 7.1 to 7.5). Smaller matrices get a shorter span, so that each worker has
     * several units to claim; rows past the last full unit run four consecutive rows at a time. All matrices share
     * one parallel loop (decode's Q/K/V and gate/up products have the same input): the task loop is
     * {@link FourStreams}, shared with the 4- and 6-bit kernels.
     */
    static void matvecQ8Streams(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs) {
        matvecQ8Streams(pool, matrices, x, outs, RUN_BLOCKS);
    }

    /** {@link #matvecQ8Streams(WorkerPool, WeightMatrix[], float[], float[][])} with rows under {@code runBlocks} blocks as runs. */
    static void matvecQ8Streams(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs, int runBlocks) {
        int count = matrices.length;
        // Short rows (fewer than runBlocks blocks) in one loop per unit over a repeated copy of x, when each stream's
        // rows are contiguous (no column slice); off by default (RUN_BLOCKS).
        int columns = matrices[0].columns();
        boolean[] run = new boolean[count];
        boolean anyRun = false;
        for (int m = 0; m < count; m++) {
            run[m] = columns < 32 * runBlocks && columns % 32 == 0 && matrices[m].columns() == columns
                    && matrices[m].rowStride() == 34L * (columns / 32);
            anyRun |= run[m];
        }
        int copies = anyRun ? Math.max(1, runBlocks / (columns / 32)) : 1;
        float[] tiled = anyRun ? repeated(x, columns, copies) : x;
        FourStreams.Unit[] units = new FourStreams.Unit[count];
        for (int m = 0; m < count; m++) {
            WeightMatrix matrix = matrices[m];
            MemorySegment data = matrix.data();
            long stride = matrix.rowStride();
            float[] out = outs[m];
            units[m] = run[m]
                    ? (first, span) -> dotQ8FourStreamRuns(data, matrix.rowOffset(first), span * stride, tiled, columns / 32,
                            copies * (columns / 32), out, first, span)
                    : (first, span) -> {
                        for (int r = first; r < first + span; r++) {
                            dotQ8FourStreams(data, matrix.rowOffset(r), span * stride, x, matrix.columns(), out, r, span);
                        }
                    };
        }
        FourStreams.run(pool, matrices, x, outs, units);
    }

    /**
     * Rows with fewer blocks than this run as {@link #dotQ8FourStreamRuns}; 0 (the default) runs every row through
     * {@link #dotQ8FourStreams}, {@code -Dinference.runBlocks=256} brings the runs back for rows under 8192 columns.
     * The runs were measured faster on 2026-11-23 (all 16 layers' 8192 x 2048 gate/up matrices of the 1b-shaped
     * file, two threads, quiet: 20.6 to 20.9 GB/s wall against 17.7 for one call per row), but on 2026-11-24 they
     * measured slower in every comparison, in CPU time, under a load of 3 to 10: KernelBenchmark (1.1 GB of
     * 8192 x 2048 matrices) one thread 12.5 to 14.0 GB of weights per CPU-second against 17.4 to 17.8 for the same
     * four-stream pattern row by row, two threads 10.6 to 12.1 against 13.0 to 15.9; `bench` on the 1b-shaped Q8_0
     * file, interleaved, one thread 12.07 and 12.08 -> 15.46 and 14.88 tokens/s (decode 83.4 and 78.8 -> 65.3 and
     * 65.9 CPU-ms per token, gate/up 42.0 and 40.6 -> 30.9 and 31.7 ms), two threads 89.1 to 97.8 -> 79.1 to 86.3
     * CPU-ms per token in six pairs.
     */
    static final int RUN_BLOCKS = Integer.getInteger("inference.runBlocks", 0);

    /** {@code copies} copies of {@code x[0 .. n)} one after the other, in a buffer of the calling thread. */
    private static float[] repeated(float[] x, int n, int copies) {
        float[] buffer = REPEATED.get();
        if (buffer.length < n * copies) {
            buffer = new float[n * copies];
            REPEATED.set(buffer);
        }
        for (int c = 0; c < copies; c++) {
            System.arraycopy(x, 0, buffer, c * n, n);
        }
        return buffer;
    }

    private static final ThreadLocal<float[]> REPEATED = ThreadLocal.withInitial(() -> new float[0]);

    /**
     * The four streams of one unit of {@link #matvecQ8Streams} as a single loop: rows r .. r + rows - 1 of each
     * stream are contiguous (the rows' stride is their size), so each stream is one run of {@code rows * blocks}
     * blocks; every {@code blocks} passes the four sums are stored (rows r + i, r + i + rows, r + i + 2 rows,
     * r + i + 3 rows) and restarted. {@code x} holds the activations repeated, {@code xBlocks} blocks in all (a
     * multiple of {@code blocks}): the activation index wraps every {@code xBlocks} passes rather than every row.
     * Why that is faster for short rows (2048 columns: 20.6 against 18.9 to 19.3 GB/s with the activations read
     * from one copy, 17.7 with one call per row; no gain for 8192 columns, hence {@link #RUN_BLOCKS}) is not
     * established: no hardware counters in this VM.
     */
    private static void dotQ8FourStreamRuns(MemorySegment data, long base, long stride, float[] x, int blocks,
                                            int xBlocks, float[] out, int r, int rows) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F), t2 = FloatVector.zero(F), t3 = FloatVector.zero(F);
        int total = blocks * rows;
        int xb = 0, rowBlock = 0, row = r;
        for (int b = 0; b < total; b++) {
            long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            FloatVector low = FloatVector.fromArray(F, x, xb * 32);
            FloatVector high = FloatVector.fromArray(F, x, xb * 32 + 16);
            t0 = q8Block(data, k0, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0))), t0);
            t1 = q8Block(data, k1, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1))), t1);
            t2 = q8Block(data, k2, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2))), t2);
            t3 = q8Block(data, k3, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3))), t3);
            if (++xb == xBlocks) {
                xb = 0;
            }
            if (++rowBlock == blocks) {
                rowBlock = 0;
                out[row] = t0.reduceLanes(VectorOperators.ADD);
                out[row + rows] = t1.reduceLanes(VectorOperators.ADD);
                out[row + 2 * rows] = t2.reduceLanes(VectorOperators.ADD);
                out[row + 3 * rows] = t3.reduceLanes(VectorOperators.ADD);
                t0 = FloatVector.zero(F);
                t1 = FloatVector.zero(F);
                t2 = FloatVector.zero(F);
                t3 = FloatVector.zero(F);
                row++;
            }
        }
    }

    /**
     * Four Q8_0 rows per pass over x (16 float lanes only), {@code stride} bytes apart, into {@code out[r]},
     * {@code out[r + outStride]}, {@code out[r + 2 outStride]}, {@code out[r + 3 outStride]}: each activation vector
     * loaded feeds four rows. Kept free of anything the JIT cannot keep in registers (see {@link #dotQ8FourRows}).
     */
    private static void dotQ8FourStreams(MemorySegment data, long base, long stride, float[] x, int n, float[] out, int r,
                                         int outStride) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F), t2 = FloatVector.zero(F), t3 = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            FloatVector low = FloatVector.fromArray(F, x, b * 32);
            FloatVector high = FloatVector.fromArray(F, x, b * 32 + 16);
            t0 = q8Block(data, k0, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0))), t0);
            t1 = q8Block(data, k1, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1))), t1);
            t2 = q8Block(data, k2, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2))), t2);
            t3 = q8Block(data, k3, low, high).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3))), t3);
        }
        out[r] = t0.reduceLanes(VectorOperators.ADD);
        out[r + outStride] = t1.reduceLanes(VectorOperators.ADD);
        out[r + 2 * outStride] = t2.reduceLanes(VectorOperators.ADD);
        out[r + 3 * outStride] = t3.reduceLanes(VectorOperators.ADD);
    }

    /**
     * Q8_0 decode as llama.cpp does it: the activations are quantized once per product into Q8_0-style blocks (32
     * int8 values and a float scale), so each weight block is an int8 x int8 dot product in 16-bit lanes (32 at a
     * time: |q| <= 127 keeps each product and each sum of two in 16 bits) instead of two int8-to-float conversions
     * and two float multiplications. Changes numerics by the activation rounding (at most half an activation scale
     * per element), as llama.cpp accepts; prefill keeps float activations.
     * <p>
     * Off by default (opt in with {@code -Dinference.int8=true}): on this 2-core AVX-512 machine it measured no
     * faster than the float four-row kernel (4.3 to 4.7 against 4.6 to 4.8 GB of weights per CPU-second out of
     * cache, 11.5 against 13 in cache; decode 6.8 against 7.3 tokens/s), because out of cache neither kernel is
     * arithmetic-bound: both drop from about 12 GB per CPU-second with the weights in L2 to about 5 from memory.
     * Without a multiply-add of pairs (vpmaddwd/vpdpbusd, which the Vector API does not expose) the int8 block
     * costs as many 512-bit operations as the float one. Kept, tested, for the day the API gains such an operation.
     */
    static final boolean INT8_ACTIVATIONS = L == 16 && Boolean.getBoolean("inference.int8");
    private static final VectorSpecies<Byte> B256 = ByteVector.SPECIES_256;
    private static final VectorSpecies<Short> S512 = ShortVector.SPECIES_512;

    /** Per-calling-thread buffers for quantized activations: decode must not allocate per product. */
    private static final ThreadLocal<QuantizedActivations> ACTIVATIONS = ThreadLocal.withInitial(() -> new QuantizedActivations(0));

    /** Activations quantized to Q8_0-style blocks: {@code values[32 b + j] * scales[b]} approximates x. */
    record QuantizedActivations(byte[] values, float[] scales) {
        QuantizedActivations(int n) {
            this(new byte[n], new float[n / 32]);
        }
    }

    /**
     * Quantizes {@code x[0 .. n)} (n a multiple of 32) per block of 32: scale = max |x| / 127, value =
     * round(x / scale) (llama.cpp's quantize_row_q8_0, with a float scale instead of a half one).
     */
    static QuantizedActivations quantizeActivations(float[] x, int n) {
        QuantizedActivations buffers = ACTIVATIONS.get();
        if (buffers.values().length < n) {
            buffers = new QuantizedActivations(n);
            ACTIVATIONS.set(buffers);
        }
        quantizeActivations(x, n, buffers.values(), buffers.scales());
        return buffers;
    }

    static void quantizeActivations(float[] x, int n, byte[] values, float[] scales) {
        for (int b = 0; b < n / 32; b++) {
            int i = b * 32;
            FloatVector low = FloatVector.fromArray(F, x, i), high = FloatVector.fromArray(F, x, i + 16);
            float max = low.abs().max(high.abs()).reduceLanes(VectorOperators.MAX);
            float scale = max / 127f;
            float inverse = scale == 0 ? 0 : 1f / scale;
            scales[b] = scale;
            for (int j = 0; j < 32; j++) {
                values[i + j] = (byte) Math.round(x[i + j] * inverse);
            }
        }
    }

    static void matvecQ8Int8(WorkerPool pool, WeightMatrix matrix, float[] x, float[] out) {
        QuantizedActivations activations = quantizeActivations(x, matrix.columns());
        byte[] values = activations.values();
        float[] scales = activations.scales();
        int rows = matrix.rows();
        pool.parallelFor((rows + 3) / 4, (start, end, worker) -> {
            for (int group = start; group < end; group++) {
                int r = group * 4;
                if (r + 4 <= rows) {
                    dotQ8Int8FourRows(matrix.data(), matrix.rowOffset(r), matrix.rowStride(), values, scales, matrix.columns(), out, r);
                } else {
                    for (; r < rows; r++) {
                        out[r] = dotQ8Int8(matrix.data(), matrix.rowOffset(r), values, scales, matrix.columns());
                    }
                }
            }
        });
    }

    /** One Q8_0 row with quantized activations; the float accumulator is reduced once, at the end of the row. */
    static float dotQ8Int8(MemorySegment data, long base, byte[] values, float[] scales, int n) {
        FloatVector t0 = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long k0 = base + b * 34L;
            ShortVector a = activationBlock(values, b);
            t0 = int8Block(data, k0, a).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0)) * scales[b]), t0);
        }
        return t0.reduceLanes(VectorOperators.ADD);
    }

    static void dotQ8Int8FourRows(MemorySegment data, long base, long stride, byte[] values, float[] scales, int n, float[] out, int r) {
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F), t2 = FloatVector.zero(F), t3 = FloatVector.zero(F);
        for (int b = 0; b < n / 32; b++) {
            long k0 = base + b * 34L, k1 = k0 + stride, k2 = k1 + stride, k3 = k2 + stride;
            ShortVector a = activationBlock(values, b);
            float s = scales[b];
            t0 = int8Block(data, k0, a).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k0)) * s), t0);
            t1 = int8Block(data, k1, a).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k1)) * s), t1);
            t2 = int8Block(data, k2, a).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k2)) * s), t2);
            t3 = int8Block(data, k3, a).fma(FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, k3)) * s), t3);
        }
        out[r] = t0.reduceLanes(VectorOperators.ADD);
        out[r + 1] = t1.reduceLanes(VectorOperators.ADD);
        out[r + 2] = t2.reduceLanes(VectorOperators.ADD);
        out[r + 3] = t3.reduceLanes(VectorOperators.ADD);
    }

    /** The exact integer dot product of one weight block with activation block {@code block} (for tests). */
    static int blockIntegerSum(MemorySegment data, long blockOffset, byte[] values, int block) {
        // Every lane holds an integer of magnitude at most 2 * 128 * 127, and their sum stays below 2^24: exact in float.
        return (int) int8Block(data, blockOffset, activationBlock(values, block)).reduceLanes(VectorOperators.ADD);
    }

    private static ShortVector activationBlock(byte[] values, int block) {
        return (ShortVector) ByteVector.fromArray(B256, values, block * 32).convertShape(VectorOperators.B2S, S512, 0);
    }

    /**
     * The 32 int8 products of one weight block with its activations, as 16 float lanes each holding the exact sum
     * of two adjacent products: the 16-bit products are paired inside 32-bit lanes by one shift and add (the sum of
     * two fits in 16 bits), then the high halves are shifted down with their sign.
     */
    private static FloatVector int8Block(MemorySegment data, long block, ShortVector activations) {
        ShortVector products = ((ShortVector) ByteVector.fromMemorySegment(B256, data, block + 2, LE)
                .convertShape(VectorOperators.B2S, S512, 0)).mul(activations);
        IntVector pairs = products.reinterpretAsInts();
        IntVector sums = pairs.add(pairs.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
        return (FloatVector) sums.convertShape(VectorOperators.I2F, F, 0);
    }

    /** Unscaled products of one Q8_0 block with the two 16-lane halves of its activations. */
    static FloatVector q8Block(MemorySegment data, long block, FloatVector low, FloatVector high) {
        FloatVector acc = ((FloatVector) ByteVector.fromMemorySegment(B128, data, block + 2, LE).castShape(F, 0)).mul(low);
        return ((FloatVector) ByteVector.fromMemorySegment(B128, data, block + 18, LE).castShape(F, 0)).fma(high, acc);
    }

    /**
     * Batched product for prompt processing: {@code out[t * rows + r] = row r · x[t * columns ..]} for
     * {@code tokens} activations. Weight rows are dequantized once per batch, {@link #BLOCK_ROWS} at a time, and the
     * whole batch runs through that block four tokens at a time, each group of four tokens against the block's rows
     * in 4x4 register tiles: weights cross the memory bus once per batch instead of once per token, every loaded
     * vector feeds four multiply-adds, and each activation vector brought from the outer caches feeds all the block's
     * rows while it is in the first-level cache (with one 4-row group per pass, the whole batch's activations, 4 MB
     * for 128 tokens of 8192 columns, streamed from the shared cache once per four rows).
     */
    public static void matmul(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out) {
        if (tokens == 1) {
            matvec(pool, matrix, x, out);
            return;
        }
        matmul(pool, matrix, ROUND_ACTIVATIONS && pool.roundsActivations()
                ? rounded(rounding(matrix), x, matrix.columns(), tokens) : x, tokens, out, BLOCK_ROWS);
    }

    /**
     * {@link #matmul} for an expert's weights (ggml's mul_mat_id): under {@code -Dinference.ggmlOrder=true} one
     * {@code vec_dot} per row and token, as ggml multiplies indexed weights (never through llamafile's tinyBLAS,
     * whose F32 order differs); otherwise the same as {@link #matmul}.
     */
    public static void matmulIndexed(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out) {
        if (!GgmlOrderKernels.ENABLED || tokens == 1) {
            matmul(pool, matrix, x, tokens, out);
            return;
        }
        ggmlOrderProducts(pool, matrix, ROUND_ACTIVATIONS && pool.roundsActivations()
                ? rounded(rounding(matrix), x, matrix.columns(), tokens) : x, tokens, out, true);
    }

    /**
     * A batch's products one row and token at a time, in ggml's order ({@code x} already rounded). A plain mul_mat
     * sends F32 weights through llamafile's tinyBLAS, whose order differs from vec_dot's, and repacked Q4_K weights
     * through the gemm for each group of four tokens (gemv for the rest); an indexed one ({@code indexed}: experts)
     * uses vec_dot and gemv throughout.
     */
    private static void ggmlOrderProducts(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out,
                                          boolean indexed) {
        int rows = matrix.rows(), columns = matrix.columns();
        boolean f32Tiled = !indexed && matrix.type() == io.macfleet.node.gguf.GgmlType.F32;
        int tiledTokens = !indexed && repackedQ4K(matrix) ? tokens - tokens % 4 : 0;
        pool.parallelFor(rows, (start, end, worker) -> {
            for (int r = start; r < end; r++) {
                for (int t = 0; t < tokens; t++) {
                    out[t * rows + r] = f32Tiled
                            ? GgmlOrderKernels.dotF32Tiled(matrix.data(), matrix.rowOffset(r), x, t * columns, columns)
                            : t < tiledTokens
                            ? GgmlOrderKernels.dotQ4KRepackedTiles(matrix.data(), matrix.rowOffset(r), x, t * columns, columns)
                            : dot(matrix, r, x, t * columns);
                }
            }
        });
    }

    /** {@link #matmul(WorkerPool, WeightMatrix, float[], int, float[])} with its blocking as parameters (for benchmarks). */
    static void matmul(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out, int blockRows) {
        int rows = matrix.rows();
        int columns = matrix.columns();
        // ggml's order needs the products one row and token at a time (its vec_dot), not dequantized float tiles
        if (GgmlOrderKernels.ENABLED) {
            ggmlOrderProducts(pool, matrix, x, tokens, out, false);
            return;
        }
        boolean tiled = columns % L == 0;
        pool.parallelFor((rows + blockRows - 1) / blockRows, (start, end, worker) -> {
            float[] w = rowBuffer(blockRows * columns);
            for (int block = start; block < end; block++) {
                int first = block * blockRows;
                int count = Math.min(blockRows, rows - first);
                for (int i = 0; i < count; i++) {
                    dequantizeRow(matrix, first + i, w, i * columns);
                }
                int tiledRows = tiled ? count / 4 * 4 : 0;
                int tiledTokens = tiledRows > 0 ? tokens / 4 * 4 : 0;
                for (int t = 0; t < tiledTokens; t += 4) {
                    for (int i = 0; i < tiledRows; i += 4) {
                        tile4x4(w, i * columns, x, t * columns, columns, out, t * rows + first + i, rows);
                    }
                }
                for (int i = 0; i < count; i++) {
                    int r = first + i;
                    int u = i < tiledRows ? tiledTokens : 0;
                    for (; u + 4 <= tokens; u += 4) {
                        dot4(w, i * columns, x, u * columns, columns, out, u * rows + r, rows);
                    }
                    for (; u < tokens; u++) {
                        out[u * rows + r] = dot(w, i * columns, x, u * columns, columns);
                    }
                }
            }
        });
    }

    /**
     * Rows dequantized and multiplied together in {@link #matmul}. Measured (FormatBenchmark, Q4_0, 512 tokens, one
     * thread, variants interleaved in one run, load average 22 on the 2 cores): 2048 x 8192 (the down projection)
     * 28.8 GFLOP per CPU-second with 4 rows (the previous scheme), 37.7 with 16, 39.6 with 32; 2048 x 2048 within noise
     * (31.4 to 33.1 for every variant; 84 to 90 with 16 or 32 rows and 69 to 78 with 4 or 8 when the load was lower).
     * Blocking the columns as well (spans of 1024 or 2048 columns, sums added across spans) measured no better.
     */
    static final int BLOCK_ROWS = 16;

    /** Per-thread buffer for dequantized rows: prefill would otherwise allocate hundreds of MB of garbage. */
    private static final ThreadLocal<float[]> ROW_BUFFER = ThreadLocal.withInitial(() -> new float[0]);

    private static float[] rowBuffer(int length) {
        float[] buffer = ROW_BUFFER.get();
        if (buffer.length < length) {
            buffer = new float[length];
            ROW_BUFFER.set(buffer);
        }
        return buffer;
    }

    /** Rows at {@code w[wOffset ..]} (n floats apart) times tokens at {@code x[xOffset ..]} (n floats apart). */
    private static void tile4x4(float[] w, int wOffset, float[] x, int xOffset, int n, float[] out, int o, int rows) {
        FloatVector c00 = FloatVector.zero(F), c01 = FloatVector.zero(F), c02 = FloatVector.zero(F), c03 = FloatVector.zero(F);
        FloatVector c10 = FloatVector.zero(F), c11 = FloatVector.zero(F), c12 = FloatVector.zero(F), c13 = FloatVector.zero(F);
        FloatVector c20 = FloatVector.zero(F), c21 = FloatVector.zero(F), c22 = FloatVector.zero(F), c23 = FloatVector.zero(F);
        FloatVector c30 = FloatVector.zero(F), c31 = FloatVector.zero(F), c32 = FloatVector.zero(F), c33 = FloatVector.zero(F);
        int x0 = xOffset, x1 = x0 + n, x2 = x1 + n, x3 = x2 + n;
        int w0o = wOffset, w1o = w0o + n, w2o = w1o + n, w3o = w2o + n;
        for (int i = 0; i < n; i += L) {
            FloatVector w0 = FloatVector.fromArray(F, w, w0o + i);
            FloatVector w1 = FloatVector.fromArray(F, w, w1o + i);
            FloatVector w2 = FloatVector.fromArray(F, w, w2o + i);
            FloatVector w3 = FloatVector.fromArray(F, w, w3o + i);
            FloatVector v = FloatVector.fromArray(F, x, x0 + i);
            c00 = w0.fma(v, c00);
            c01 = w1.fma(v, c01);
            c02 = w2.fma(v, c02);
            c03 = w3.fma(v, c03);
            v = FloatVector.fromArray(F, x, x1 + i);
            c10 = w0.fma(v, c10);
            c11 = w1.fma(v, c11);
            c12 = w2.fma(v, c12);
            c13 = w3.fma(v, c13);
            v = FloatVector.fromArray(F, x, x2 + i);
            c20 = w0.fma(v, c20);
            c21 = w1.fma(v, c21);
            c22 = w2.fma(v, c22);
            c23 = w3.fma(v, c23);
            v = FloatVector.fromArray(F, x, x3 + i);
            c30 = w0.fma(v, c30);
            c31 = w1.fma(v, c31);
            c32 = w2.fma(v, c32);
            c33 = w3.fma(v, c33);
        }
        out[o] = c00.reduceLanes(VectorOperators.ADD);
        out[o + 1] = c01.reduceLanes(VectorOperators.ADD);
        out[o + 2] = c02.reduceLanes(VectorOperators.ADD);
        out[o + 3] = c03.reduceLanes(VectorOperators.ADD);
        o += rows;
        out[o] = c10.reduceLanes(VectorOperators.ADD);
        out[o + 1] = c11.reduceLanes(VectorOperators.ADD);
        out[o + 2] = c12.reduceLanes(VectorOperators.ADD);
        out[o + 3] = c13.reduceLanes(VectorOperators.ADD);
        o += rows;
        out[o] = c20.reduceLanes(VectorOperators.ADD);
        out[o + 1] = c21.reduceLanes(VectorOperators.ADD);
        out[o + 2] = c22.reduceLanes(VectorOperators.ADD);
        out[o + 3] = c23.reduceLanes(VectorOperators.ADD);
        o += rows;
        out[o] = c30.reduceLanes(VectorOperators.ADD);
        out[o + 1] = c31.reduceLanes(VectorOperators.ADD);
        out[o + 2] = c32.reduceLanes(VectorOperators.ADD);
        out[o + 3] = c33.reduceLanes(VectorOperators.ADD);
    }

    private static void dot4(float[] w, int wOffset, float[] x, int offset, int n, float[] out, int outIndex, int outStride) {
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector wv = FloatVector.fromArray(F, w, wOffset + i);
            a0 = wv.fma(FloatVector.fromArray(F, x, offset + i), a0);
            a1 = wv.fma(FloatVector.fromArray(F, x, offset + n + i), a1);
            a2 = wv.fma(FloatVector.fromArray(F, x, offset + 2 * n + i), a2);
            a3 = wv.fma(FloatVector.fromArray(F, x, offset + 3 * n + i), a3);
        }
        float s0 = a0.reduceLanes(VectorOperators.ADD), s1 = a1.reduceLanes(VectorOperators.ADD);
        float s2 = a2.reduceLanes(VectorOperators.ADD), s3 = a3.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            s0 += w[wOffset + i] * x[offset + i];
            s1 += w[wOffset + i] * x[offset + n + i];
            s2 += w[wOffset + i] * x[offset + 2 * n + i];
            s3 += w[wOffset + i] * x[offset + 3 * n + i];
        }
        out[outIndex] = s0;
        out[outIndex + outStride] = s1;
        out[outIndex + 2 * outStride] = s2;
        out[outIndex + 3 * outStride] = s3;
    }

    /** Dot product of two float arrays from the given offsets. */
    public static float dot(float[] a, float[] b, int bOffset, int n) {
        return dot(a, 0, b, bOffset, n);
    }

    public static float dot(float[] a, int aOffset, float[] b, int bOffset, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            acc = FloatVector.fromArray(F, a, aOffset + i).fma(FloatVector.fromArray(F, b, bOffset + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += a[aOffset + i] * b[bOffset + i];
        }
        return sum;
    }

    /** SwiGLU in place: {@code gate[i] = gate[i] / (1 + exp(-gate[i])) * up[i]} for i in [0, n). */
    public static void swiglu(float[] gate, float[] up, int n) {
        if (GgmlOrderKernels.ENABLED) {
            GgmlOrderKernels.swiglu(gate, up, n);
            return;
        }
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector g = FloatVector.fromArray(F, gate, i);
            FloatVector e = g.neg().lanewise(VectorOperators.EXP);
            g.div(e.add(1f)).mul(FloatVector.fromArray(F, up, i)).intoArray(gate, i);
        }
        for (; i < n; i++) {
            float g = gate[i];
            gate[i] = g / (1f + (float) Math.exp(-g)) * up[i];
        }
    }

    /** {@code half[offset ..] · x[xOffset ..]} over n elements, the F16 values widened (ggml_vec_dot_f16). */
    public static float dotHalf(short[] half, int offset, float[] x, int xOffset, int n) {
        if (GgmlOrderKernels.ENABLED) {
            return GgmlOrderKernels.dotF16(half, offset, x, xOffset, n);
        }
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            acc = halfToFloat(ShortVector.fromArray(S, half, offset + i)).fma(FloatVector.fromArray(F, x, xOffset + i), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += Float.float16ToFloat(half[offset + i]) * x[xOffset + i];
        }
        return sum;
    }

    /** {@code x[offset ..]} rounded to the nearest F16 value (ties to even, as F16C's vcvtps2ph), in place. */
    public static void roundToHalf(float[] x, int offset, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            roundToHalf(FloatVector.fromArray(F, x, offset + i)).intoArray(x, offset + i);
        }
        for (; i < n; i++) {
            x[offset + i] = Float.float16ToFloat(Float.floatToFloat16(x[offset + i]));
        }
    }

    /**
     * ggml_vec_mad_f16 on an F16 accumulator (held as F16-exact floats): {@code acc[i] = f16(fma(v[i], scale, acc[i]))}
     * with {@code v} F16 values at {@code half[offset ..]}; llama.cpp's flash attention accumulates values this way
     * when its V cache is F16.
     */
    public static void madHalf(float[] acc, short[] half, int offset, float scale, int n) {
        FloatVector s = FloatVector.broadcast(F, scale);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector v = halfToFloat(ShortVector.fromArray(S, half, offset + i));
            roundToHalf(v.fma(s, FloatVector.fromArray(F, acc, i))).intoArray(acc, i);
        }
        for (; i < n; i++) {
            acc[i] = Float.float16ToFloat(Float.floatToFloat16(Math.fma(Float.float16ToFloat(half[offset + i]), scale, acc[i])));
        }
    }

    /** {@code out[outOffset + i] = half[offset + i]} widened to float (exact), over n elements. */
    public static void halfToFloat(short[] half, int offset, float[] out, int outOffset, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            halfToFloat(ShortVector.fromArray(S, half, offset + i)).intoArray(out, outOffset + i);
        }
        for (; i < n; i++) {
            out[outOffset + i] = Float.float16ToFloat(half[offset + i]);
        }
    }

    /** {@link #madHalf(float[], short[], int, float, int)} with F16 values already widened, at {@code acc[accOffset ..]}. */
    public static void madHalf(float[] acc, int accOffset, float[] v, float scale, int n) {
        FloatVector s = FloatVector.broadcast(F, scale);
        int i = 0;
        for (; i <= n - L; i += L) {
            roundToHalf(FloatVector.fromArray(F, v, i).fma(s, FloatVector.fromArray(F, acc, accOffset + i))).intoArray(acc, accOffset + i);
        }
        for (; i < n; i++) {
            acc[accOffset + i] = Float.float16ToFloat(Float.floatToFloat16(Math.fma(v[i], scale, acc[accOffset + i])));
        }
    }

    /** {@link #scaleHalf(float[], float, int)} at {@code acc[accOffset ..]}. */
    public static void scaleHalf(float[] acc, int accOffset, float scale, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            roundToHalf(FloatVector.fromArray(F, acc, accOffset + i).mul(scale)).intoArray(acc, accOffset + i);
        }
        for (; i < n; i++) {
            acc[accOffset + i] = Float.float16ToFloat(Float.floatToFloat16(acc[accOffset + i] * scale));
        }
    }

    /** ggml_vec_scale_f16: {@code acc[i] = f16(acc[i] * scale)}. */
    public static void scaleHalf(float[] acc, float scale, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            roundToHalf(FloatVector.fromArray(F, acc, i).mul(scale)).intoArray(acc, i);
        }
        for (; i < n; i++) {
            acc[i] = Float.float16ToFloat(Float.floatToFloat16(acc[i] * scale));
        }
    }

    /**
     * Rounds each lane to the nearest F16 value, ties to even, with one float addition and subtraction: adding
     * {@code C = 1.5 x 2^(e + 13)}, where {@code e} is the lane's binary exponent (at least -14, the smallest normal
     * half's), puts the sum in the binade whose float spacing is the F16 spacing at {@code e} (2^(e - 10), or 2^-24
     * for subnormal halves), so the float addition itself rounds to F16 precision, ties to even (C is an even multiple
     * of that spacing); subtracting C again is exact. Four integer operations build C from the lane's exponent bits.
     * This replaced a mantissa-bit rounding plus a separate subnormal path and blend (about 10 operations per
     * vector against 6), which made the F16 decode accumulator of deepseek2's attention cost 1.4x the F32 one.
     * Zero and values rounding to zero come out as +0 (the F16 conversion keeps the sign; no sum differs). Values
     * beyond the F16 range (65504) are not expected here (attention sums of normalized latents).
     */
    private static FloatVector roundToHalf(FloatVector v) {
        FloatVector c = v.reinterpretAsInts().and(0x7f800000).max(HALF_MIN_NORMAL_EXPONENT).add(HALF_ROUNDING_OFFSET)
                .reinterpretAsFloats();
        return v.add(c).sub(c);
    }

    /** The float exponent bits of 2^-14, the smallest normal F16 value. */
    private static final int HALF_MIN_NORMAL_EXPONENT = (127 - 14) << 23;
    /** Added to exponent bits: 13 to the exponent, and the mantissa's top bit (times 1.5). */
    private static final int HALF_ROUNDING_OFFSET = (13 << 23) | 0x400000;

    /** acc[aOffset ..] += scale * v[vOffset ..] over n elements. */
    public static void axpy(float[] acc, int aOffset, float scale, float[] v, int vOffset, int n) {
        FloatVector s = FloatVector.broadcast(F, scale);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector.fromArray(F, v, vOffset + i).fma(s, FloatVector.fromArray(F, acc, aOffset + i)).intoArray(acc, aOffset + i);
        }
        for (; i < n; i++) {
            acc[aOffset + i] += scale * v[vOffset + i];
        }
    }
}
