package io.macfleet.node.kernel;

/**
 * What llama.cpp does to a matrix product's activations before it multiplies them with weights of a given type: ggml's
 * CPU backend converts the activations to the weight type's {@code vec_dot_type} (F16 weights: F16 activations; Q8_0
 * and Q4_0: Q8_0 blocks of 32 with a half-precision scale; the K-quants: Q8_K super-blocks of 256 with a float scale)
 * and only then takes the dot products. The node keeps float kernels but hands them activations rounded exactly as
 * that conversion rounds them: each value becomes {@code q * d} with ggml's {@code q} and {@code d}, so the products
 * equal llama.cpp's integer ones up to the float summation order (about 1e-7 relative, where the quantization itself
 * moves a product by about 1e-3). Without it, greedy decoding of quantized files went apart from llama.cpp's after 5
 * to 16 tokens; the rounding costs one pass over the activations per product (decode: a few KB against MBs of weights).
 * <p>
 * Each supported weight type names its rounding in {@link QuantizationTypes}; {@link #NONE} leaves F32 activations.
 */
@FunctionalInterface
public interface ActivationRounding {
    /** {@code out[outOffset + i] = rounded(x[offset + i])} for i in [0, n); n a multiple of the rounding's block. */
    void round(float[] x, int offset, int n, float[] out, int outOffset);

    /** Whether this rounding changes values at all (false: the caller may pass its activations through). */
    default boolean identity() {
        return false;
    }

    /** The elements per block of the rounding: a row length must be a multiple of it. */
    default int block() {
        return 1;
    }

    /** F32 weights: llama.cpp multiplies F32 activations as they are. */
    ActivationRounding NONE = new ActivationRounding() {
        @Override
        public void round(float[] x, int offset, int n, float[] out, int outOffset) {
            System.arraycopy(x, offset, out, outOffset, n);
        }

        @Override
        public boolean identity() {
            return true;
        }
    };

    /** F16 weights: ggml's FP32_TO_FP16 (round to nearest even, as F16C's vcvtps2ph). */
    ActivationRounding F16 = (x, offset, n, out, outOffset) -> {
        for (int i = 0; i < n; i++) {
            out[outOffset + i] = Float.float16ToFloat(Float.floatToFloat16(x[offset + i]));
        }
    };

    /** BF16 weights: ggml's FP32_TO_BF16 (round to nearest even on the upper 16 bits). */
    ActivationRounding BF16 = (x, offset, n, out, outOffset) -> {
        for (int i = 0; i < n; i++) {
            int bits = Float.floatToRawIntBits(x[offset + i]);
            if ((bits & 0x7fffffff) > 0x7f800000) { // NaN stays NaN (quiet)
                out[outOffset + i] = Float.intBitsToFloat((bits | 0x400000) & 0xffff0000);
            } else {
                out[outOffset + i] = Float.intBitsToFloat((bits + (0x7fff + ((bits >>> 16) & 1))) & 0xffff0000);
            }
        }
    };

    /**
     * Q8_0 blocks of 32 as ggml-cpu's AVX2 quantize_row_q8_0 (the build .ci/llama-cpp.sh makes): d = max|x| / 127
     * stored as F16; q = round-to-nearest-even(x * (127 / max|x|)); the product uses q times the stored F16 d.
     */
    ActivationRounding Q8_0 = new ActivationRounding() {
        @Override
        public void round(float[] x, int offset, int n, float[] out, int outOffset) {
            for (int b = 0; b < n; b += 32) {
                float max = 0;
                for (int j = 0; j < 32; j++) {
                    max = Math.max(max, Math.abs(x[offset + b + j]));
                }
                float d = Float.float16ToFloat(Float.floatToFloat16(max / 127f));
                float inverse = max != 0 ? 127f / max : 0f;
                for (int j = 0; j < 32; j++) {
                    out[outOffset + b + j] = (float) Math.rint(x[offset + b + j] * inverse) * d;
                }
            }
        }

        @Override
        public int block() {
            return 32;
        }
    };

    /**
     * Q8_K super-blocks of 256 as ggml's quantize_row_q8_K_ref: the value of largest magnitude {@code max} (the first
     * among equals, sign kept), iscale = -127 / max, q = min(127, nearest_int(iscale * x)), d = 1 / iscale (a float).
     */
    ActivationRounding Q8_K = new ActivationRounding() {
        @Override
        public void round(float[] x, int offset, int n, float[] out, int outOffset) {
            for (int b = 0; b < n; b += 256) {
                float max = 0, amax = 0;
                for (int j = 0; j < 256; j++) {
                    float ax = Math.abs(x[offset + b + j]);
                    if (ax > amax) {
                        amax = ax;
                        max = x[offset + b + j];
                    }
                }
                if (amax == 0) {
                    java.util.Arrays.fill(out, outOffset + b, outOffset + b + 256, 0f);
                    continue;
                }
                float iscale = -127f / max;
                float d = 1 / iscale;
                for (int j = 0; j < 256; j++) {
                    float q = Math.min(127f, (float) Math.rint(iscale * x[offset + b + j]));
                    out[outOffset + b + j] = q * d;
                }
            }
        }

        @Override
        public int block() {
            return 256;
        }
    };
}
