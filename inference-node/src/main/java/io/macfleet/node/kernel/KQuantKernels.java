package io.macfleet.node.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Kernels for ggml's K-quants: super-blocks of 256 values with one half-precision scale (and, for Q4_K and Q5_K, one
 * half-precision scale of minimums) and small per-sub-block scales.
 * <ul>
 * <li>Q4_K (144 bytes): d, dmin, 12 bytes of eight 6-bit scales and eight 6-bit minimums, 128 bytes of 4-bit
 * values. Sub-block j (32 values) is {@code d * scale[j] * q - dmin * min[j]}; each run of 32 bytes holds two
 * sub-blocks, the first in the low nibbles.</li>
 * <li>Q5_K (176 bytes): as Q4_K plus 32 bytes of fifth bits: bit 2c of byte l is the fifth bit of value l of
 * sub-block 2c, bit 2c + 1 that of sub-block 2c + 1.</li>
 * <li>Q6_K (210 bytes): 128 bytes of low nibbles, 64 bytes of high 2-bit pairs, sixteen signed 8-bit scales (one per
 * 16 values), d last. Values are {@code d * scale * (q - 32)}, in two halves of 128 whose four 32-value quarters
 * share bytes: quarters 0 and 2 the low and high nibbles of low bytes 0..31, quarters 1 and 3 those of bytes 32..63,
 * and the four 2-bit pairs of one high byte.</li>
 * </ul>
 * Dequantization computes each value as ggml's reference does ({@code (d * scale) * q - (dmin * min)}, each product
 * rounded to float, no fused multiply-add), so it is bit-exact. Dot products multiply 16 dequantized weights at a
 * time with the activations on 512-bit vectors; other vector widths dequantize a super-block into a buffer first.
 */
final class KQuantKernels {
    static final int SUPER_BLOCK = 256;
    static final int Q4_K_BYTES = 144, Q5_K_BYTES = 176, Q6_K_BYTES = 210;
    private static final VectorSpecies<Float> F = Kernels.F;
    private static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
    private static final boolean WIDE = F.length() == 16;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort SHORT = Kernels.SHORT;

    private KQuantKernels() {
    }

    /** Unpacks the eight 6-bit scales and eight 6-bit minimums of a Q4_K/Q5_K super-block. */
    static void scalesAndMins(MemorySegment data, long packed, int[] scales, int[] mins) {
        for (int j = 0; j < 4; j++) {
            int low = data.get(ValueLayout.JAVA_BYTE, packed + j) & 0xFF;
            int middle = data.get(ValueLayout.JAVA_BYTE, packed + j + 4) & 0xFF;
            int high = data.get(ValueLayout.JAVA_BYTE, packed + j + 8) & 0xFF;
            scales[j] = low & 63;
            mins[j] = middle & 63;
            scales[j + 4] = (high & 0x0F) | ((low >> 6) << 4);
            mins[j + 4] = (high >> 4) | ((middle >> 6) << 4);
        }
    }

    // ---- dequantization: bit-exact ----

    static void dequantizeQ4K(MemorySegment data, long base, int n, float[] out, int offset) {
        if (NibbleKernels.AVAILABLE) {
            NibbleKernels.dequantizeQ4K(data, base, n, out, offset);
            return;
        }
        dequantizeQ4KScalar(data, base, n, out, offset);
    }

    static void dequantizeQ4KScalar(MemorySegment data, long base, int n, float[] out, int offset) {
        int[] scales = new int[8], mins = new int[8];
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q4_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block));
            float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
            scalesAndMins(data, block + 4, scales, mins);
            int o = offset + b * SUPER_BLOCK;
            for (int c = 0; c < 4; c++) {
                long q = block + 16 + 32L * c;
                float d1 = d * scales[2 * c], m1 = dmin * mins[2 * c];
                float d2 = d * scales[2 * c + 1], m2 = dmin * mins[2 * c + 1];
                for (int l = 0; l < 32; l++) {
                    int packed = data.get(ValueLayout.JAVA_BYTE, q + l) & 0xFF;
                    out[o + 64 * c + l] = d1 * (packed & 0x0F) - m1;
                    out[o + 64 * c + 32 + l] = d2 * (packed >> 4) - m2;
                }
            }
        }
    }

    static void dequantizeQ5K(MemorySegment data, long base, int n, float[] out, int offset) {
        int[] scales = new int[8], mins = new int[8];
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q5_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block));
            float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
            scalesAndMins(data, block + 4, scales, mins);
            long high = block + 16;
            int o = offset + b * SUPER_BLOCK;
            for (int c = 0; c < 4; c++) {
                long q = block + 48 + 32L * c;
                float d1 = d * scales[2 * c], m1 = dmin * mins[2 * c];
                float d2 = d * scales[2 * c + 1], m2 = dmin * mins[2 * c + 1];
                for (int l = 0; l < 32; l++) {
                    int packed = data.get(ValueLayout.JAVA_BYTE, q + l) & 0xFF;
                    int bits = data.get(ValueLayout.JAVA_BYTE, high + l) >> (2 * c);
                    out[o + 64 * c + l] = d1 * ((packed & 0x0F) | ((bits & 1) << 4)) - m1;
                    out[o + 64 * c + 32 + l] = d2 * ((packed >> 4) | ((bits & 2) << 3)) - m2;
                }
            }
        }
    }

    static void dequantizeQ6K(MemorySegment data, long base, int n, float[] out, int offset) {
        if (NibbleKernels.AVAILABLE) {
            NibbleKernels.dequantizeQ6K(data, base, n, out, offset);
            return;
        }
        dequantizeQ6KScalar(data, base, n, out, offset);
    }

    static void dequantizeQ6KScalar(MemorySegment data, long base, int n, float[] out, int offset) {
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q6_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block + 208));
            int o = offset + b * SUPER_BLOCK;
            for (int half = 0; half < 2; half++) {
                long low = block + 64L * half, high = block + 128 + 32L * half, scales = block + 192 + 8L * half;
                for (int l = 0; l < 32; l++) {
                    int lowA = data.get(ValueLayout.JAVA_BYTE, low + l) & 0xFF;
                    int lowB = data.get(ValueLayout.JAVA_BYTE, low + 32 + l) & 0xFF;
                    int h = data.get(ValueLayout.JAVA_BYTE, high + l) & 0xFF;
                    int s = l / 16;
                    int at = o + 128 * half + l;
                    out[at] = d * data.get(ValueLayout.JAVA_BYTE, scales + s) * (((lowA & 0x0F) | ((h & 3) << 4)) - 32);
                    out[at + 32] = d * data.get(ValueLayout.JAVA_BYTE, scales + s + 2) * (((lowB & 0x0F) | (((h >> 2) & 3) << 4)) - 32);
                    out[at + 64] = d * data.get(ValueLayout.JAVA_BYTE, scales + s + 4) * (((lowA >> 4) | (((h >> 4) & 3) << 4)) - 32);
                    out[at + 96] = d * data.get(ValueLayout.JAVA_BYTE, scales + s + 6) * (((lowB >> 4) | (((h >> 6) & 3) << 4)) - 32);
                }
            }
        }
    }

    // ---- dot products ----

    private static final ThreadLocal<float[]> BLOCK = ThreadLocal.withInitial(() -> new float[SUPER_BLOCK]);

    /** Any vector width: one super-block at a time into a buffer, then a float dot product. */
    static float dotByBlocks(io.macfleet.node.gguf.GgmlType type, MemorySegment data, long base, float[] x, int offset, int n) {
        float[] w = BLOCK.get();
        float sum = 0;
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * type.blockBytes();
            switch (type) {
                case Q4_K -> dequantizeQ4K(data, block, SUPER_BLOCK, w, 0);
                case Q5_K -> dequantizeQ5K(data, block, SUPER_BLOCK, w, 0);
                case Q6_K -> dequantizeQ6K(data, block, SUPER_BLOCK, w, 0);
                default -> throw new IllegalStateException("not a K-quant: " + type);
            }
            sum += Kernels.dot(w, 0, x, offset + b * SUPER_BLOCK, SUPER_BLOCK);
        }
        return sum;
    }

    static float dotQ4K(MemorySegment data, long base, float[] x, int offset, int n) {
        if (!WIDE) {
            return dotByBlocks(io.macfleet.node.gguf.GgmlType.Q4_K, data, base, x, offset, n);
        }
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F);
        int[] scales = new int[8], mins = new int[8];
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q4_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block));
            float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
            scalesAndMins(data, block + 4, scales, mins);
            int xi = offset + b * SUPER_BLOCK;
            for (int c = 0; c < 4; c++) {
                long q = block + 16 + 32L * c;
                ByteVector a = ByteVector.fromMemorySegment(B128, data, q, LE);
                ByteVector e = ByteVector.fromMemorySegment(B128, data, q + 16, LE);
                FloatVector d1 = FloatVector.broadcast(F, d * scales[2 * c]), m1 = FloatVector.broadcast(F, dmin * mins[2 * c]);
                FloatVector d2 = FloatVector.broadcast(F, d * scales[2 * c + 1]), m2 = FloatVector.broadcast(F, dmin * mins[2 * c + 1]);
                int xc = xi + 64 * c;
                t0 = weights(a.and((byte) 0x0F), d1, m1).fma(FloatVector.fromArray(F, x, xc), t0);
                t1 = weights(e.and((byte) 0x0F), d1, m1).fma(FloatVector.fromArray(F, x, xc + 16), t1);
                t0 = weights(a.lanewise(VectorOperators.LSHR, 4), d2, m2).fma(FloatVector.fromArray(F, x, xc + 32), t0);
                t1 = weights(e.lanewise(VectorOperators.LSHR, 4), d2, m2).fma(FloatVector.fromArray(F, x, xc + 48), t1);
            }
        }
        return t0.add(t1).reduceLanes(VectorOperators.ADD);
    }

    static float dotQ5K(MemorySegment data, long base, float[] x, int offset, int n) {
        if (!WIDE) {
            return dotByBlocks(io.macfleet.node.gguf.GgmlType.Q5_K, data, base, x, offset, n);
        }
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F);
        int[] scales = new int[8], mins = new int[8];
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q5_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block));
            float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
            scalesAndMins(data, block + 4, scales, mins);
            ByteVector highA = ByteVector.fromMemorySegment(B128, data, block + 16, LE);
            ByteVector highE = ByteVector.fromMemorySegment(B128, data, block + 32, LE);
            int xi = offset + b * SUPER_BLOCK;
            for (int c = 0; c < 4; c++) {
                long q = block + 48 + 32L * c;
                ByteVector a = ByteVector.fromMemorySegment(B128, data, q, LE);
                ByteVector e = ByteVector.fromMemorySegment(B128, data, q + 16, LE);
                ByteVector fifthA = highA.lanewise(VectorOperators.LSHR, 2 * c);
                ByteVector fifthE = highE.lanewise(VectorOperators.LSHR, 2 * c);
                FloatVector d1 = FloatVector.broadcast(F, d * scales[2 * c]), m1 = FloatVector.broadcast(F, dmin * mins[2 * c]);
                FloatVector d2 = FloatVector.broadcast(F, d * scales[2 * c + 1]), m2 = FloatVector.broadcast(F, dmin * mins[2 * c + 1]);
                int xc = xi + 64 * c;
                t0 = weights(a.and((byte) 0x0F).or(fifthA.and((byte) 1).lanewise(VectorOperators.LSHL, 4)), d1, m1)
                        .fma(FloatVector.fromArray(F, x, xc), t0);
                t1 = weights(e.and((byte) 0x0F).or(fifthE.and((byte) 1).lanewise(VectorOperators.LSHL, 4)), d1, m1)
                        .fma(FloatVector.fromArray(F, x, xc + 16), t1);
                t0 = weights(a.lanewise(VectorOperators.LSHR, 4).or(fifthA.and((byte) 2).lanewise(VectorOperators.LSHL, 3)), d2, m2)
                        .fma(FloatVector.fromArray(F, x, xc + 32), t0);
                t1 = weights(e.lanewise(VectorOperators.LSHR, 4).or(fifthE.and((byte) 2).lanewise(VectorOperators.LSHL, 3)), d2, m2)
                        .fma(FloatVector.fromArray(F, x, xc + 48), t1);
            }
        }
        return t0.add(t1).reduceLanes(VectorOperators.ADD);
    }

    /** 16 unsigned values as weights {@code scale * q - min}. */
    private static FloatVector weights(ByteVector q, FloatVector scale, FloatVector min) {
        return ((FloatVector) q.castShape(F, 0)).mul(scale).sub(min);
    }

    static float dotQ6K(MemorySegment data, long base, float[] x, int offset, int n) {
        if (!WIDE) {
            return dotByBlocks(io.macfleet.node.gguf.GgmlType.Q6_K, data, base, x, offset, n);
        }
        FloatVector t0 = FloatVector.zero(F), t1 = FloatVector.zero(F);
        for (int b = 0; b < n / SUPER_BLOCK; b++) {
            long block = base + (long) b * Q6_K_BYTES;
            float d = Float.float16ToFloat(data.get(SHORT, block + 208));
            int xi = offset + b * SUPER_BLOCK;
            for (int half = 0; half < 2; half++) {
                long low = block + 64L * half, high = block + 128 + 32L * half, scales = block + 192 + 8L * half;
                int xh = xi + 128 * half;
                // Two runs of 16 positions l; each gives four vectors (quarters 0..3) with one scale each.
                for (int part = 0; part < 2; part++) {
                    ByteVector lowA = ByteVector.fromMemorySegment(B128, data, low + 16 * part, LE);
                    ByteVector lowB = ByteVector.fromMemorySegment(B128, data, low + 32 + 16 * part, LE);
                    ByteVector h = ByteVector.fromMemorySegment(B128, data, high + 16 * part, LE);
                    int xp = xh + 16 * part;
                    FloatVector acc = part == 0 ? t0 : t1;
                    acc = signed6(lowA.and((byte) 0x0F), h, 0, d, data.get(ValueLayout.JAVA_BYTE, scales + part))
                            .fma(FloatVector.fromArray(F, x, xp), acc);
                    acc = signed6(lowB.and((byte) 0x0F), h, 2, d, data.get(ValueLayout.JAVA_BYTE, scales + part + 2))
                            .fma(FloatVector.fromArray(F, x, xp + 32), acc);
                    acc = signed6(lowA.lanewise(VectorOperators.LSHR, 4), h, 4, d, data.get(ValueLayout.JAVA_BYTE, scales + part + 4))
                            .fma(FloatVector.fromArray(F, x, xp + 64), acc);
                    acc = signed6(lowB.lanewise(VectorOperators.LSHR, 4), h, 6, d, data.get(ValueLayout.JAVA_BYTE, scales + part + 6))
                            .fma(FloatVector.fromArray(F, x, xp + 96), acc);
                    if (part == 0) {
                        t0 = acc;
                    } else {
                        t1 = acc;
                    }
                }
            }
        }
        return t0.add(t1).reduceLanes(VectorOperators.ADD);
    }

    /** 16 Q6_K weights: low nibbles with the 2-bit pairs at {@code shift} of the high bytes, minus 32, times d * scale. */
    private static FloatVector signed6(ByteVector lowNibbles, ByteVector high, int shift, float d, byte scale) {
        ByteVector q = lowNibbles.or(high.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                .sub((byte) 32);
        return ((FloatVector) q.castShape(F, 0)).mul(d * scale);
    }
}
