package io.macfleet.node.generator;

/**
 * Float rows to ggml's K-quant super-blocks (256 values): Q4_K and Q5_K as asymmetric sub-blocks of 32 (a 6-bit
 * scale and a 6-bit minimum each, both relative to the super-block's half-precision d and dmin), Q6_K as symmetric
 * sub-blocks of 16 (a signed 8-bit scale relative to d). Written from the block layouts (see the kernels' KQuantKernels
 * for the byte order); the rounding choices are simple ones (range-based scales, round to nearest), not ggml's
 * iterative search, so the bytes differ from llama-quantize's while any ggml reader decodes them the same way.
 */
final class KQuantizer {
    private KQuantizer() {
    }

    /** Q4_K (bits 4) or Q5_K (bits 5): one super-block of {@code values[offset .. offset + 256)}. */
    static void encodeWithMins(int bits, float[] values, int offset, byte[] out, int o) {
        int levels = (1 << bits) - 1;
        float[] scales = new float[8], mins = new float[8];
        for (int j = 0; j < 8; j++) {
            float min = 0, max = 0; // the minimum is at most 0, so that an offset is never negative
            for (int l = 0; l < 32; l++) {
                float v = values[offset + 32 * j + l];
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
            scales[j] = (max - min) / levels;
            mins[j] = -min;
        }
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; j++) {
            maxScale = Math.max(maxScale, scales[j]);
            maxMin = Math.max(maxMin, mins[j]);
        }
        short dHalf = Float.floatToFloat16(maxScale / 63);
        short dminHalf = Float.floatToFloat16(maxMin / 63);
        float d = Float.float16ToFloat(dHalf), dmin = Float.float16ToFloat(dminHalf);
        int[] scaleCodes = new int[8], minCodes = new int[8];
        for (int j = 0; j < 8; j++) {
            scaleCodes[j] = d == 0 ? 0 : Math.min(63, Math.round(scales[j] / d));
            minCodes[j] = dmin == 0 ? 0 : Math.min(63, Math.round(mins[j] / dmin));
        }
        putShort(out, o, dHalf);
        putShort(out, o + 2, dminHalf);
        for (int j = 0; j < 4; j++) {
            out[o + 4 + j] = (byte) (scaleCodes[j] | ((scaleCodes[j + 4] >> 4) << 6));
            out[o + 8 + j] = (byte) (minCodes[j] | ((minCodes[j + 4] >> 4) << 6));
            out[o + 12 + j] = (byte) ((scaleCodes[j + 4] & 0x0F) | ((minCodes[j + 4] & 0x0F) << 4));
        }
        int[] q = new int[256];
        for (int j = 0; j < 8; j++) {
            // Values from the stored (rounded) scale and minimum, as the reader will see them.
            float scale = d * scaleCodes[j], min = dmin * minCodes[j];
            for (int l = 0; l < 32; l++) {
                int i = 32 * j + l;
                q[i] = scale == 0 ? 0 : Math.max(0, Math.min(levels, Math.round((values[offset + i] + min) / scale)));
            }
        }
        int low = bits == 4 ? o + 16 : o + 48;
        if (bits == 5) {
            java.util.Arrays.fill(out, o + 16, o + 48, (byte) 0);
        }
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                int first = q[64 * c + l], second = q[64 * c + 32 + l];
                out[low + 32 * c + l] = (byte) ((first & 0x0F) | ((second & 0x0F) << 4));
                if (bits == 5) {
                    out[o + 16 + l] |= (byte) (((first >> 4) << (2 * c)) | ((second >> 4) << (2 * c + 1)));
                }
            }
        }
    }

    /** Q6_K: one super-block of {@code values[offset .. offset + 256)}. */
    static void encodeQ6K(float[] values, int offset, byte[] out, int o) {
        float[] scales = new float[16];
        float maxScale = 0;
        for (int j = 0; j < 16; j++) {
            float extreme = 0; // signed value of largest magnitude, mapped to -32 (the wider side of [-32, 31])
            for (int l = 0; l < 16; l++) {
                float v = values[offset + 16 * j + l];
                if (Math.abs(v) > Math.abs(extreme)) {
                    extreme = v;
                }
            }
            scales[j] = extreme / -32f;
            if (Math.abs(scales[j]) > Math.abs(maxScale)) {
                maxScale = scales[j];
            }
        }
        short dHalf = Float.floatToFloat16(maxScale / -128f);
        float d = Float.float16ToFloat(dHalf);
        int[] q = new int[256];
        for (int j = 0; j < 16; j++) {
            int code = d == 0 ? 0 : Math.max(-128, Math.min(127, Math.round(scales[j] / d)));
            out[o + 192 + j] = (byte) code;
            float scale = d * code;
            for (int l = 0; l < 16; l++) {
                int i = 16 * j + l;
                q[i] = 32 + (scale == 0 ? 0 : Math.max(-32, Math.min(31, Math.round(values[offset + i] / scale))));
            }
        }
        putShort(out, o + 208, dHalf);
        for (int half = 0; half < 2; half++) {
            for (int l = 0; l < 32; l++) {
                int base = 128 * half + l;
                int q0 = q[base], q1 = q[base + 32], q2 = q[base + 64], q3 = q[base + 96];
                out[o + 64 * half + l] = (byte) ((q0 & 0x0F) | ((q2 & 0x0F) << 4));
                out[o + 64 * half + 32 + l] = (byte) ((q1 & 0x0F) | ((q3 & 0x0F) << 4));
                out[o + 128 + 32 * half + l] = (byte) ((q0 >> 4) | ((q1 >> 4) << 2) | ((q2 >> 4) << 4) | ((q3 >> 4) << 6));
            }
        }
    }

    private static void putShort(byte[] out, int at, short value) {
        out[at] = (byte) value;
        out[at + 1] = (byte) (value >> 8);
    }
}
