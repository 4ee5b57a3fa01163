package io.macfleet.node.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Q4_K, Q5_K and Q6_K dot products in the float order of ggml-cpu's AVX2 {@code ggml_vec_dot_q4_K_q8_K},
 * {@code ggml_vec_dot_q5_K_q8_K} and {@code ggml_vec_dot_q6_K_q8_K} (llama.cpp without weight repacking, {@code --no-repack}): per super-block the
 * integer sums of eight 32-bit lanes (lane k takes the values whose index modulo 32 lies in [4k, 4k + 4)), each lane
 * added to its float accumulator with one fused multiply-add by {@code y.d * x.d}; Q4_K's minimums go to a separate
 * four-lane accumulator ({@code -y.d * x.dmin} times the minimums against the 32-value sums of the activations);
 * at the end ggml's {@code hsum_float_8}. The activations arrive rounded as {@link ActivationRounding#Q8_K} rounds
 * them ({@code q * d}); their integers q and scale d are recovered from those floats per super-block.
 * <p>
 * Scalar and slow (a measurement tool, off by default): {@code -Dinference.ggmlOrder=true} uses it for every
 * Q4_K and Q6_K product (and turns off the faster decode paths that would bypass it).
 */
final class GgmlOrderKernels {
    static final boolean ENABLED = "true".equals(System.getProperty("inference.ggmlOrder"));
    private static final int QK = 256;
    private static final ThreadLocal<int[]> Q8 = ThreadLocal.withInitial(() -> new int[QK]);

    private GgmlOrderKernels() {
    }

    /** The Q8_K integers of x[offset .. offset + 256) into q; returns the block's scale d (0 for a zero block). */
    static float recover(float[] x, int offset, int[] q) {
        int at = -1;
        float amax = 0;
        for (int j = 0; j < QK; j++) {
            float a = Math.abs(x[offset + j]);
            if (a > amax) {
                amax = a;
                at = j;
            }
        }
        if (at < 0) {
            java.util.Arrays.fill(q, 0);
            return 0f;
        }
        // the largest value is q = -127 times d
        float top = x[offset + at];
        for (int j = 0; j < QK; j++) {
            q[j] = (int) Math.rint(x[offset + j] * (-127.0 / top));
        }
        // d is 1 / (-127 / max) rounded twice: search the floats next to top / -127 for the one that gives every value back
        float guess = top / -127f;
        for (int step = 0; step <= 8; step++) {
            float c = (step & 1) == 0 ? stepUp(guess, step / 2) : stepDown(guess, (step + 1) / 2);
            if (matches(x, offset, q, c)) {
                return c;
            }
        }
        return guess; // activations not rounded as Q8_K (no caller does that): the nearest scale
    }

    private static float stepUp(float value, int times) {
        for (int i = 0; i < times; i++) {
            value = Math.nextUp(value);
        }
        return value;
    }

    private static float stepDown(float value, int times) {
        for (int i = 0; i < times; i++) {
            value = Math.nextDown(value);
        }
        return value;
    }

    private static boolean matches(float[] x, int offset, int[] q, float d) {
        for (int j = 0; j < QK; j++) {
            if (q[j] * d != x[offset + j]) {
                return false;
            }
        }
        return true;
    }

    static float dotQ4K(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        float[] accMin = new float[4];
        int[] lanes = new int[8];
        int[] scales = new int[8], mins = new int[8];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q4_K_BYTES;
            float yd = recover(x, offset + b * QK, q8);
            float d = yd * Float.float16ToFloat(data.get(Kernels.SHORT, block));
            float dmin = -yd * Float.float16ToFloat(data.get(Kernels.SHORT, block + 2));
            KQuantKernels.scalesAndMins(data, block + 4, scales, mins);
            for (int m = 0; m < 4; m++) {
                int product = mins[2 * m] * sum32(q8, 2 * m) + mins[2 * m + 1] * sum32(q8, 2 * m + 1);
                accMin[m] = Math.fma(dmin, (float) product, accMin[m]);
            }
            java.util.Arrays.fill(lanes, 0);
            for (int j = 0; j < 4; j++) {
                for (int l = 0; l < 32; l++) {
                    int packed = data.get(ValueLayout.JAVA_BYTE, block + 16 + 32L * j + l) & 0xFF;
                    lanes[l >> 2] += scales[2 * j] * (packed & 0x0F) * q8[64 * j + l]
                            + scales[2 * j + 1] * (packed >> 4) * q8[64 * j + 32 + l];
                }
            }
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
        }
        float minimums = (accMin[0] + accMin[2]) + (accMin[1] + accMin[3]);
        return hsum8(acc) + minimums;
    }

    /** As Q4_K, but the minimums go straight to one float ({@code summs += dmin * sum}, contracted to a fused multiply-add). */
    static float dotQ5K(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        float minimums = 0;
        int[] lanes = new int[8];
        int[] scales = new int[8], mins = new int[8];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q5_K_BYTES;
            float yd = recover(x, offset + b * QK, q8);
            float d = yd * Float.float16ToFloat(data.get(Kernels.SHORT, block));
            float dmin = -yd * Float.float16ToFloat(data.get(Kernels.SHORT, block + 2));
            KQuantKernels.scalesAndMins(data, block + 4, scales, mins);
            int total = 0;
            for (int m = 0; m < 8; m++) {
                total += mins[m] * sum32(q8, m);
            }
            minimums = Math.fma(dmin, (float) total, minimums);
            java.util.Arrays.fill(lanes, 0);
            for (int j = 0; j < 4; j++) {
                for (int l = 0; l < 32; l++) {
                    int packed = data.get(ValueLayout.JAVA_BYTE, block + 48 + 32L * j + l) & 0xFF;
                    int high = data.get(ValueLayout.JAVA_BYTE, block + 16 + l) & 0xFF;
                    int low = (packed & 0x0F) | (((high >> (2 * j)) & 1) << 4);
                    int upper = (packed >> 4) | (((high >> (2 * j + 1)) & 1) << 4);
                    lanes[l >> 2] += scales[2 * j] * low * q8[64 * j + l] + scales[2 * j + 1] * upper * q8[64 * j + 32 + l];
                }
            }
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
        }
        return hsum8(acc) + minimums;
    }

    static float dotQ6K(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        int[] lanes = new int[8];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q6_K_BYTES;
            float yd = recover(x, offset + b * QK, q8);
            float d = yd * Float.float16ToFloat(data.get(Kernels.SHORT, block + 208));
            java.util.Arrays.fill(lanes, 0);
            for (int half = 0; half < 2; half++) {
                long low = block + 64L * half, high = block + 128 + 32L * half, scales = block + 192 + 8L * half;
                int e = 128 * half;
                for (int l = 0; l < 32; l++) {
                    int a = data.get(ValueLayout.JAVA_BYTE, low + l) & 0xFF;
                    int c = data.get(ValueLayout.JAVA_BYTE, low + 32 + l) & 0xFF;
                    int h = data.get(ValueLayout.JAVA_BYTE, high + l) & 0xFF;
                    int is = l / 16;
                    int s0 = data.get(ValueLayout.JAVA_BYTE, scales + is);
                    int s1 = data.get(ValueLayout.JAVA_BYTE, scales + is + 2);
                    int s2 = data.get(ValueLayout.JAVA_BYTE, scales + is + 4);
                    int s3 = data.get(ValueLayout.JAVA_BYTE, scales + is + 6);
                    // unsigned 6-bit values: the -32 comes off per lane below, as ggml subtracts it
                    int q1 = (a & 0x0F) | ((h & 3) << 4);
                    int q2 = (c & 0x0F) | (((h >> 2) & 3) << 4);
                    int q3 = (a >> 4) | (((h >> 4) & 3) << 4);
                    int q4 = (c >> 4) | (((h >> 6) & 3) << 4);
                    lanes[l >> 2] += s0 * q1 * q8[e + l] + s1 * q2 * q8[e + 32 + l] + s2 * q3 * q8[e + 64 + l]
                            + s3 * q4 * q8[e + 96 + l];
                }
            }
            // ggml: sumi - (madd(bsums, scales) << 5): lane k loses 32 * (bsums[2k] * scale[2k] + bsums[2k+1] * scale[2k+1])
            for (int k = 0; k < 8; k++) {
                int pair = sum16(q8, 2 * k) * data.get(ValueLayout.JAVA_BYTE, block + 192 + 2 * k)
                        + sum16(q8, 2 * k + 1) * data.get(ValueLayout.JAVA_BYTE, block + 192 + 2 * k + 1);
                lanes[k] -= pair << 5;
            }
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
        }
        return hsum8(acc);
    }

    private static int sum16(int[] q8, int group) {
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            sum += q8[16 * group + j];
        }
        return sum;
    }

    private static int sum32(int[] q8, int subBlock) {
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            sum += q8[32 * subBlock + j];
        }
        return sum;
    }

    /** ggml's hsum_float_8: upper half onto lower, then lanes 2-3 onto 0-1, then lane 1 onto 0. */
    private static float hsum8(float[] v) {
        float r0 = v[4] + v[0], r1 = v[5] + v[1], r2 = v[6] + v[2], r3 = v[7] + v[3];
        return (r0 + r2) + (r1 + r3);
    }
}
