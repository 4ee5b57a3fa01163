package io.macfleet.node.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The node's operations in the float order of llama.cpp's CPU backend as .ci/llama-cpp.sh builds it (x86, AVX2 + FMA,
 * GCC), so that a forward pass gives llama.cpp's logits bit for bit ({@code -Dinference.ggmlOrder=true}; scalar and
 * slow, a correctness mode for tests and diagnosis, off by default; docs/inference-node-formats.md lists each
 * operation with the ggml function it follows).
 * <p>
 * The products: Q4_K, Q5_K and Q6_K as ggml-cpu's AVX2 {@code ggml_vec_dot_q4_K_q8_K}, {@code ggml_vec_dot_q5_K_q8_K}
 * and {@code ggml_vec_dot_q6_K_q8_K} (llama.cpp without weight repacking, {@code --no-repack}): per super-block the
 * integer sums of eight 32-bit lanes (lane k takes the values whose index modulo 32 lies in [4k, 4k + 4)), each lane
 * added to its float accumulator with one fused multiply-add by {@code y.d * x.d}; Q4_K's minimums go to a separate
 * four-lane accumulator ({@code -y.d * x.dmin} times the minimums against the 32-value sums of the activations);
 * at the end ggml's {@code hsum_float_8}. The activations arrive rounded as {@link ActivationRounding#Q8_K} rounds
 * them ({@code q * d}); their integers q and scale d are recovered from those floats per super-block. Q8_0 the same
 * way per block of 32; F32 in ggml_vec_dot_f32's order and in llamafile tinyBLAS's (prompt batches); F16 attention
 * scores in ggml_vec_dot_f16's. Besides: ggml's vectorized exp and SwiGLU, and the C library's expf, cosf, sinf and
 * powf, which ggml calls for single values.
 */
final class GgmlOrderKernels {
    static final boolean ENABLED = "true".equals(System.getProperty("inference.ggmlOrder"));
    /**
     * Whether Q4_K weights with a multiple of 8 rows are multiplied as llama.cpp multiplies them after repacking them
     * into interleaved 8x8 tiles, its default on AVX2 ({@link #dotQ4KRepacked}); {@code -Dinference.ggmlRepack=false}
     * for a llama.cpp started with {@code --no-repack}.
     */
    static final boolean REPACK = !"false".equals(System.getProperty("inference.ggmlRepack"));
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

    /**
     * The start of every Q4_K/Q5_K super-block product: the activations' Q8_K integers into {@code q8}, the six-bit
     * scales and minimums, and into {@code scale} the two float factors {@code x.d * y.d} and {@code x.dmin * y.d}.
     */
    private static void readSuperBlock(MemorySegment data, long block, float[] x, int activations, int[] q8, int[] scales,
                                       int[] mins, float[] scale) {
        float yd = recover(x, activations, q8);
        scale[0] = yd * Float.float16ToFloat(data.get(Kernels.SHORT, block));
        scale[1] = yd * Float.float16ToFloat(data.get(Kernels.SHORT, block + 2));
        KQuantKernels.scalesAndMins(data, block + 4, scales, mins);
    }

    static float dotQ4K(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        float[] accMin = new float[4];
        int[] lanes = new int[8];
        int[] scales = new int[8], mins = new int[8];
        float[] scale = new float[2];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q4_K_BYTES;
            readSuperBlock(data, block, x, offset + b * QK, q8, scales, mins, scale);
            float d = scale[0], dmin = -scale[1];
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

    /**
     * Q4_K as ggml-cpu's AVX2 {@code ggml_gemv_q4_K_8x8_q8_K} computes it on weights repacked into 8x8 tiles
     * (arch/x86/repack.cpp; decode, experts' rows, and the prompt rows left over from groups of four): each output is
     * one lane, so per super-block one exact integer sum of the scaled products and one of the minimums against the
     * activations' sub-block sums, each added with one fused multiply-add by {@code x.d * y.d} and {@code x.dmin * y.d};
     * at the end the minimums' sum subtracted.
     */
    static float dotQ4KRepacked(MemorySegment data, long base, float[] x, int offset, int n) {
        return dotQ4KRepacked(data, base, x, offset, n, 8);
    }

    /**
     * {@link #dotQ4KRepacked} as {@code ggml_gemm_q4_K_8x8_q8_K} computes it for a prompt's groups of four rows: the
     * same sums, but added to the accumulators after every pair of sub-blocks (64 values) instead of every super-block.
     */
    static float dotQ4KRepackedTiles(MemorySegment data, long base, float[] x, int offset, int n) {
        return dotQ4KRepacked(data, base, x, offset, n, 2);
    }

    private static float dotQ4KRepacked(MemorySegment data, long base, float[] x, int offset, int n, int subBlocksPerAdd) {
        float acc = 0, accMin = 0;
        int[] scales = new int[8], mins = new int[8];
        float[] scale = new float[2];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q4_K_BYTES;
            readSuperBlock(data, block, x, offset + b * QK, q8, scales, mins, scale);
            float d = scale[0], dmin = scale[1];
            int sum = 0, minimums = 0;
            for (int subBlock = 0; subBlock < 8; subBlock++) {
                minimums += mins[subBlock] * sum32(q8, subBlock);
                // sub-block 2j takes the low nibbles of bytes 32j .. 32j + 31, sub-block 2j + 1 their high nibbles
                for (int l = 0; l < 32; l++) {
                    int packed = data.get(ValueLayout.JAVA_BYTE, block + 16 + 32L * (subBlock / 2) + l) & 0xFF;
                    sum += scales[subBlock] * ((subBlock & 1) == 0 ? packed & 0x0F : packed >> 4) * q8[32 * subBlock + l];
                }
                if ((subBlock + 1) % subBlocksPerAdd == 0) {
                    acc = Math.fma((float) sum, d, acc);
                    accMin = Math.fma((float) minimums, dmin, accMin);
                    sum = 0;
                    minimums = 0;
                }
            }
        }
        return acc - accMin;
    }

    /** As Q4_K, but the minimums go straight to one float ({@code summs += dmin * sum}, contracted to a fused multiply-add). */
    static float dotQ5K(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        float minimums = 0;
        int[] lanes = new int[8];
        int[] scales = new int[8], mins = new int[8];
        float[] scale = new float[2];
        int[] q8 = Q8.get();
        for (int b = 0; b < n / QK; b++) {
            long block = base + (long) b * KQuantKernels.Q5_K_BYTES;
            readSuperBlock(data, block, x, offset + b * QK, q8, scales, mins, scale);
            float d = scale[0], dmin = -scale[1];
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

    /**
     * Q8_0 weights against Q8_0-rounded activations as ggml-cpu's AVX2 {@code ggml_vec_dot_q8_0_q8_0} (decode) and
     * llamafile's {@code tinyBLAS_Q0_AVX} (prompt batches) both compute it: per block of 32 the integer sums of eight
     * lanes of four consecutive values, each added to its lane with {@code fma(x.d * y.d, lane, acc)}, then
     * {@code hsum_float_8}. The activation's integers come back exactly: its largest magnitude is 127 times its F16 scale.
     */
    static float dotQ8_0(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        int[] q = Q8.get();
        for (int b = 0; b < n / 32; b++) {
            long block = base + b * 34L;
            int xi = offset + b * 32;
            float amax = 0;
            for (int j = 0; j < 32; j++) {
                amax = Math.max(amax, Math.abs(x[xi + j]));
            }
            float dy = amax / 127f;
            for (int j = 0; j < 32; j++) {
                q[j] = dy == 0 ? 0 : (int) Math.rint(x[xi + j] / dy);
            }
            float d = Float.float16ToFloat(data.get(ValueLayout.JAVA_SHORT_UNALIGNED, block)) * dy;
            for (int k = 0; k < 8; k++) {
                int lane = 0;
                for (int j = 4 * k; j < 4 * k + 4; j++) {
                    lane += data.get(ValueLayout.JAVA_BYTE, block + 2 + j) * q[j];
                }
                acc[k] = Math.fma(d, (float) lane, acc[k]);
            }
        }
        return hsum8(acc);
    }

    /**
     * F32 rows as ggml-cpu's AVX2 {@code ggml_vec_dot_f32} (decode): four eight-lane accumulators over steps of 32
     * values, reduced as {@code GGML_F32x8_REDUCE} (0+2, 1+3, then 0+1, halves, two horizontal adds), leftovers added
     * one by one.
     */
    static float dotF32(MemorySegment data, long base, float[] x, int offset, int n) {
        int steps = n & ~31;
        float result = fourAccumulators(i -> data.get(ValueLayout.JAVA_FLOAT_UNALIGNED, base + 4L * i), x, offset, steps);
        for (int i = steps; i < n; i++) {
            result += data.get(ValueLayout.JAVA_FLOAT_UNALIGNED, base + 4L * i) * x[offset + i];
        }
        return result;
    }

    /**
     * F32 rows as llamafile's {@code tinyBLAS<8, __m256>} (prompt batches of two or more tokens): one eight-lane
     * accumulator (lane l takes the values whose index is l modulo 8), then its {@code hsum}.
     */
    static float dotF32Tiled(MemorySegment data, long base, float[] x, int offset, int n) {
        float[] acc = new float[8];
        for (int i = 0; i < n; i += 8) {
            for (int l = 0; l < 8; l++) {
                acc[l] = Math.fma(data.get(ValueLayout.JAVA_FLOAT_UNALIGNED, base + 4L * (i + l)), x[offset + i + l], acc[l]);
            }
        }
        return hsum8(acc);
    }

    /**
     * F16 cache rows against an F16-exact query as ggml-cpu's AVX2 {@code ggml_vec_dot_f16} (flash attention's
     * scores): the same four eight-lane accumulators and reduction as {@link #dotF32}, leftovers in double.
     */
    static float dotF16(short[] half, int offset, float[] x, int xOffset, int n) {
        int steps = n & ~31;
        double result = fourAccumulators(i -> Float.float16ToFloat(half[offset + i]), x, xOffset, steps);
        for (int i = steps; i < n; i++) {
            result += Float.float16ToFloat(half[offset + i]) * x[xOffset + i];
        }
        return (float) result;
    }

    /** The weight row's value at an index (F32 or widened F16). */
    private interface Row {
        float at(int index);
    }

    /**
     * ggml's GGML_F32_STEP loop: four eight-lane accumulators over {@code steps} values (a multiple of 32), each lane
     * one fused multiply-add per step, then {@link #reduce}.
     */
    private static float fourAccumulators(Row row, float[] x, int offset, int steps) {
        float[][] sum = new float[4][8];
        for (int i = 0; i < steps; i += 32) {
            for (int j = 0; j < 4; j++) {
                for (int l = 0; l < 8; l++) {
                    int at = i + 8 * j + l;
                    sum[j][l] = Math.fma(row.at(at), x[offset + at], sum[j][l]);
                }
            }
        }
        return reduce(sum);
    }

    /** GGML_F32x8_REDUCE of four eight-lane accumulators: 0+2 and 1+3, then 0+1, halves, two horizontal adds. */
    private static float reduce(float[][] sum) {
        float[] lanes = new float[8];
        for (int l = 0; l < 8; l++) {
            lanes[l] = (sum[0][l] + sum[2][l]) + (sum[1][l] + sum[3][l]);
        }
        float t0 = lanes[0] + lanes[4], t1 = lanes[1] + lanes[5], t2 = lanes[2] + lanes[6], t3 = lanes[3] + lanes[7];
        return (t0 + t1) + (t2 + t3);
    }

    /**
     * One lane of ggml-cpu's AVX2 {@code ggml_v_expf} (a polynomial exp whose last bits differ from libm's), which
     * its SiLU, SwiGLU and softmax use for every whole group of eight values.
     */
    static float vectorExp(float x) {
        float r = 0x1.8p23f;
        float z = Math.fma(x, 0x1.715476p+0f, r);
        float n = z - r;
        float b = Math.fma(-n, 0x1.7f7d1cp-20f, Math.fma(-n, 0x1.62e4p-1f, x));
        int e = Float.floatToRawIntBits(z) << 23;
        float k = Float.intBitsToFloat(e + Float.floatToRawIntBits(1f));
        float u = b * b;
        float j = Math.fma(Math.fma(Math.fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                Math.fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u, 0x1.ffffecp-1f * b);
        if (!(Math.abs(n) > 126)) {
            return Math.fma(j, k, k);
        }
        int g = n <= 0 ? 0x82000000 : 0;
        float s1 = Float.intBitsToFloat(g + 0x7f000000);
        float s2 = Float.intBitsToFloat(e - g);
        if (Math.abs(n) > 192) {
            return s1 * s1;
        }
        return Math.fma(s2, j, s2) * s1;
    }

    /**
     * ggml-cpu's {@code ggml_vec_swiglu_f32}: {@code silu(gate) * up} with {@link #vectorExp} for each whole group of
     * eight ({@code x / (1 + exp(0 - x))}), libm's expf for the rest; into {@code gate}.
     */
    static void swiglu(float[] gate, float[] up, int n) {
        int whole = n & ~7;
        for (int i = 0; i < n; i++) {
            float x = gate[i];
            float exp = i < whole ? vectorExp(0f - x) : libraryExp(-x);
            gate[i] = x / (1f + exp) * up[i];
        }
    }

    /**
     * The C library's {@code expf}, {@code cosf}, {@code sinf} and {@code powf}, which ggml calls for single values
     * (their last bits can differ from Math's); looked up on first use (the JDK's foreign function interface).
     */
    private static final class Library {
        static final java.lang.invoke.MethodHandle EXPF = function("expf", 1);
        static final java.lang.invoke.MethodHandle COSF = function("cosf", 1);
        static final java.lang.invoke.MethodHandle SINF = function("sinf", 1);
        static final java.lang.invoke.MethodHandle POWF = function("powf", 2);

        private static java.lang.invoke.MethodHandle function(String name, int arguments) {
            java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(() -> new IllegalStateException(
                    "-Dinference.ggmlOrder=true needs the C library's " + name + ", which this platform's default lookup"
                            + " does not find; run without it")), arguments == 1
                    ? java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT)
                    : java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT));
        }
    }

    static float libraryCos(float x) {
        return callUnary(Library.COSF, x);
    }

    static float librarySin(float x) {
        return callUnary(Library.SINF, x);
    }

    static float libraryExp(float x) {
        return callUnary(Library.EXPF, x);
    }

    static float libraryPow(float x, float y) {
        try {
            return (float) Library.POWF.invokeExact(x, y);
        } catch (Throwable e) {
            throw new IllegalStateException("powf", e);
        }
    }

    private static float callUnary(java.lang.invoke.MethodHandle function, float x) {
        try {
            return (float) function.invokeExact(x);
        } catch (Throwable e) {
            throw new IllegalStateException(function.toString(), e);
        }
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
    static float hsum8(float[] v) {
        float r0 = v[4] + v[0], r1 = v[5] + v[1], r2 = v[6] + v[2], r3 = v[7] + v[3];
        return (r0 + r2) + (r1 + r3);
    }
}
