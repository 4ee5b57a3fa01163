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
     * {@code tokens} activations. Weight rows are dequantized once per batch, four at a time, and multiplied with
     * four tokens at a time in a 4x4 register tile, so weights cross the memory bus once per batch instead of once
     * per token and every loaded vector feeds four multiply-adds.
     */
    public static void matmul(WorkerPool pool, WeightMatrix matrix, float[] x, int tokens, float[] out) {
        if (tokens == 1) {
            matvec(pool, matrix, x, out);
            return;
        }
        int rows = matrix.rows();
        int columns = matrix.columns();
        boolean tiled = columns % L == 0;
        pool.parallelFor((rows + 3) / 4, (start, end, worker) -> {
            float[] w = new float[4 * columns];
            for (int group = start; group < end; group++) {
                int first = group * 4;
                int count = Math.min(4, rows - first);
                for (int i = 0; i < count; i++) {
                    dequantizeRow(matrix, first + i, w, i * columns);
                }
                int t = 0;
                if (tiled && count == 4) {
                    for (; t + 4 <= tokens; t += 4) {
                        tile4x4(w, x, t, columns, out, first, rows);
                    }
                }
                for (int i = 0; i < count; i++) {
                    int r = first + i;
                    int u = t;
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

    private static void tile4x4(float[] w, float[] x, int token, int n, float[] out, int row, int rows) {
        FloatVector c00 = FloatVector.zero(F), c01 = FloatVector.zero(F), c02 = FloatVector.zero(F), c03 = FloatVector.zero(F);
        FloatVector c10 = FloatVector.zero(F), c11 = FloatVector.zero(F), c12 = FloatVector.zero(F), c13 = FloatVector.zero(F);
        FloatVector c20 = FloatVector.zero(F), c21 = FloatVector.zero(F), c22 = FloatVector.zero(F), c23 = FloatVector.zero(F);
        FloatVector c30 = FloatVector.zero(F), c31 = FloatVector.zero(F), c32 = FloatVector.zero(F), c33 = FloatVector.zero(F);
        int x0 = token * n, x1 = x0 + n, x2 = x1 + n, x3 = x2 + n;
        for (int i = 0; i < n; i += L) {
            FloatVector w0 = FloatVector.fromArray(F, w, i);
            FloatVector w1 = FloatVector.fromArray(F, w, n + i);
            FloatVector w2 = FloatVector.fromArray(F, w, 2 * n + i);
            FloatVector w3 = FloatVector.fromArray(F, w, 3 * n + i);
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
        int o = token * rows + row;
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
