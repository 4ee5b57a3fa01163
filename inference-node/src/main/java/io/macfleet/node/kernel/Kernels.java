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
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private Kernels() {
    }

    /** Dot product of row {@code row} of {@code matrix} with {@code x[offset .. offset + columns)}. */
    public static float dot(WeightMatrix matrix, int row, float[] x, int offset) {
        MemorySegment data = matrix.data();
        long base = matrix.rowOffset(row);
        int n = matrix.columns();
        return switch (matrix.type()) {
            case F32 -> dotF32(data, base, x, offset, n);
            case F16 -> dotF16(data, base, x, offset, n);
            case BF16 -> dotBF16(data, base, x, offset, n);
            case Q8_0 -> dotQ8(data, base, x, offset, n);
            case Q4_0 -> dotQ4(data, base, x, offset, n);
            default -> throw new IllegalStateException("unsupported type " + matrix.type());
        };
    }

    private static float dotF32(MemorySegment data, long base, float[] x, int offset, int n) {
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

    private static float dotF16(MemorySegment data, long base, float[] x, int offset, int n) {
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

    private static float dotBF16(MemorySegment data, long base, float[] x, int offset, int n) {
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

    private static float dotQ8(MemorySegment data, long base, float[] x, int offset, int n) {
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

    private static float dotQ4(MemorySegment data, long base, float[] x, int offset, int n) {
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

    /** Writes row {@code row} of {@code matrix} as floats into {@code out[offset ..]}. Exact for every type. */
    public static void dequantizeRow(WeightMatrix matrix, int row, float[] out, int offset) {
        MemorySegment data = matrix.data();
        long base = matrix.rowOffset(row);
        int n = matrix.columns();
        switch (matrix.type()) {
            case F32 -> MemorySegment.copy(data, FLOAT, base, out, offset, n);
            case F16, BF16 -> {
                boolean half = matrix.type() == io.macfleet.node.gguf.GgmlType.F16;
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
            case Q8_0 -> {
                for (int b = 0; b < n / 32; b++) {
                    long block = base + b * 34L;
                    FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
                    for (int half = 0; half < 2; half++) {
                        ByteVector q = ByteVector.fromMemorySegment(B128, data, block + 2 + half * 16, LE);
                        for (int p = 0; p < BYTE_PARTS; p++) {
                            ((FloatVector) q.convertShape(VectorOperators.B2F, F, p)).mul(scale)
                                    .intoArray(out, offset + b * 32 + half * 16 + p * L);
                        }
                    }
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < n / 32; b++) {
                    long block = base + b * 18L;
                    FloatVector scale = FloatVector.broadcast(F, Float.float16ToFloat(data.get(SHORT, block)));
                    ByteVector packed = ByteVector.fromMemorySegment(B128, data, block + 2, LE);
                    ByteVector low = packed.and((byte) 0x0F).sub((byte) 8);
                    ByteVector high = packed.lanewise(VectorOperators.LSHR, 4).sub((byte) 8);
                    for (int p = 0; p < BYTE_PARTS; p++) {
                        ((FloatVector) low.convertShape(VectorOperators.B2F, F, p)).mul(scale).intoArray(out, offset + b * 32 + p * L);
                        ((FloatVector) high.convertShape(VectorOperators.B2F, F, p)).mul(scale).intoArray(out, offset + b * 32 + 16 + p * L);
                    }
                }
            }
            default -> throw new IllegalStateException("unsupported type " + matrix.type());
        }
    }

    /** out[r] = row r · x for every row, rows split across the pool. */
    public static void matvec(WorkerPool pool, WeightMatrix matrix, float[] x, float[] out) {
        pool.parallelFor(matrix.rows(), (start, end, worker) -> {
            for (int r = start; r < end; r++) {
                out[r] = dot(matrix, r, x, 0);
            }
        });
    }

    /**
     * Batched product for prompt processing: {@code out[t * rows + r] = row r · x[t * columns ..]} for
     * {@code tokens} activations. Each weight row is read and dequantized once per batch, then multiplied with all
     * tokens four at a time, so weights cross the memory bus once per batch instead of once per token.
     */
    public static void matmul(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out) {
        if (tokens == 1) {
            matvec(pool, matrix, x, out);
            return;
        }
        int rows = matrix.rows();
        int columns = matrix.columns();
        pool.parallelFor(rows, (start, end, worker) -> {
            float[] row = new float[columns];
            for (int r = start; r < end; r++) {
                dequantizeRow(matrix, r, row, 0);
                int t = 0;
                for (; t + 4 <= tokens; t += 4) {
                    dot4(row, x, t * columns, columns, out, t * rows + r, rows);
                }
                for (; t < tokens; t++) {
                    out[t * rows + r] = dot(row, x, t * columns, columns);
                }
            }
        });
    }

    private static void dot4(float[] w, float[] x, int offset, int n, float[] out, int outIndex, int outStride) {
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        int i = 0;
        for (; i <= n - L; i += L) {
            FloatVector wv = FloatVector.fromArray(F, w, i);
            a0 = wv.fma(FloatVector.fromArray(F, x, offset + i), a0);
            a1 = wv.fma(FloatVector.fromArray(F, x, offset + n + i), a1);
            a2 = wv.fma(FloatVector.fromArray(F, x, offset + 2 * n + i), a2);
            a3 = wv.fma(FloatVector.fromArray(F, x, offset + 3 * n + i), a3);
        }
        float s0 = a0.reduceLanes(VectorOperators.ADD), s1 = a1.reduceLanes(VectorOperators.ADD);
        float s2 = a2.reduceLanes(VectorOperators.ADD), s3 = a3.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            s0 += w[i] * x[offset + i];
            s1 += w[i] * x[offset + n + i];
            s2 += w[i] * x[offset + 2 * n + i];
            s3 += w[i] * x[offset + 3 * n + i];
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
