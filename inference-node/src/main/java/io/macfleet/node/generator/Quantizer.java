package io.macfleet.node.generator;

import io.macfleet.node.gguf.GgmlType;

/** Float rows to ggml encodings, as ggml's reference quantizers do (quantize_row_q8_0_ref, q4_0_ref);
 * K-quants in {@link KQuantizer}. */
public final class Quantizer {
    private Quantizer() {
    }

    /** Encodes {@code values[offset .. offset + count)} as {@code type} into {@code out} starting at outOffset. */
    public static void encode(GgmlType type, float[] values, int offset, int count, byte[] out, int outOffset) {
        switch (type) {
            case F32 -> {
                for (int i = 0; i < count; i++) {
                    putShortPair(out, outOffset + 4 * i, Float.floatToRawIntBits(values[offset + i]));
                }
            }
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    putShort(out, outOffset + 2 * i, Float.floatToFloat16(values[offset + i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    int bits = Float.floatToRawIntBits(values[offset + i]);
                    bits += 0x7FFF + ((bits >>> 16) & 1); // round to nearest even
                    putShort(out, outOffset + 2 * i, (short) (bits >>> 16));
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    int base = offset + b * 32;
                    int o = outOffset + b * 34;
                    float amax = 0;
                    for (int j = 0; j < 32; j++) {
                        amax = Math.max(amax, Math.abs(values[base + j]));
                    }
                    float d = amax / 127f;
                    float id = d != 0 ? 1f / d : 0f;
                    putShort(out, o, Float.floatToFloat16(d));
                    for (int j = 0; j < 32; j++) {
                        out[o + 2 + j] = (byte) Math.round(values[base + j] * id);
                    }
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    int base = offset + b * 32;
                    int o = outOffset + b * 18;
                    float amax = 0;
                    float max = 0;
                    for (int j = 0; j < 32; j++) {
                        float v = values[base + j];
                        if (Math.abs(v) > amax) {
                            amax = Math.abs(v);
                            max = v;
                        }
                    }
                    float d = max / -8f;
                    float id = d != 0 ? 1f / d : 0f;
                    putShort(out, o, Float.floatToFloat16(d));
                    for (int j = 0; j < 16; j++) {
                        int low = Math.min(15, (int) (values[base + j] * id + 8.5f));
                        int high = Math.min(15, (int) (values[base + 16 + j] * id + 8.5f));
                        out[o + 2 + j] = (byte) (low | (high << 4));
                    }
                }
            }
            case Q4_K, Q5_K, Q6_K -> {
                for (int b = 0; b < count / 256; b++) {
                    int o = outOffset + b * type.blockBytes();
                    if (type == GgmlType.Q6_K) {
                        KQuantizer.encodeQ6K(values, offset + b * 256, out, o);
                    } else {
                        KQuantizer.encodeWithMins(type == GgmlType.Q4_K ? 4 : 5, values, offset + b * 256, out, o);
                    }
                }
            }
            default -> throw new IllegalArgumentException("cannot encode " + type);
        }
    }

    private static void putShort(byte[] out, int at, short value) {
        out[at] = (byte) value;
        out[at + 1] = (byte) (value >> 8);
    }

    private static void putShortPair(byte[] out, int at, int value) {
        out[at] = (byte) value;
        out[at + 1] = (byte) (value >> 8);
        out[at + 2] = (byte) (value >> 16);
        out[at + 3] = (byte) (value >> 24);
    }
}
