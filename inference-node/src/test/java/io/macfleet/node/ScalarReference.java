package io.macfleet.node;

import io.macfleet.node.gguf.TensorInfo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Plain scalar decoding of ggml tensor data, written from the block layouts, independent of the kernels. */
public final class ScalarReference {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ScalarReference() {
    }

    public static float[] dequantize(TensorInfo tensor) {
        return dequantize(tensor.type(), tensor.data(), (int) tensor.elementCount());
    }

    public static float[] dequantize(io.macfleet.node.gguf.GgmlType type, MemorySegment data, int count) {
        float[] out = new float[count];
        switch (type) {
            case F32 -> {
                for (int i = 0; i < count; i++) {
                    out[i] = data.get(FLOAT, 4L * i);
                }
            }
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    out[i] = Float.float16ToFloat(data.get(SHORT, 2L * i));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    out[i] = Float.intBitsToFloat((data.get(SHORT, 2L * i) & 0xFFFF) << 16);
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    float d = Float.float16ToFloat(data.get(SHORT, 34L * b));
                    for (int j = 0; j < 32; j++) {
                        out[b * 32 + j] = data.get(ValueLayout.JAVA_BYTE, 34L * b + 2 + j) * d;
                    }
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    float d = Float.float16ToFloat(data.get(SHORT, 18L * b));
                    for (int j = 0; j < 16; j++) {
                        int packed = data.get(ValueLayout.JAVA_BYTE, 18L * b + 2 + j) & 0xFF;
                        out[b * 32 + j] = ((packed & 0x0F) - 8) * d;
                        out[b * 32 + 16 + j] = ((packed >> 4) - 8) * d;
                    }
                }
            }
            case Q4_K, Q5_K -> {
                boolean five = type == io.macfleet.node.gguf.GgmlType.Q5_K;
                long size = type.blockBytes();
                for (int b = 0; b < count / 256; b++) {
                    long block = size * b;
                    float d = Float.float16ToFloat(data.get(SHORT, block));
                    float dmin = Float.float16ToFloat(data.get(SHORT, block + 2));
                    for (int i = 0; i < 256; i++) {
                        int sub = i / 32; // sub-block: scale and minimum index
                        int chunk = i / 64, l = i % 32;
                        int packed = unsigned(data, block + (five ? 48 : 16) + 32 * chunk + l);
                        int q = sub % 2 == 0 ? packed & 0x0F : packed >> 4;
                        if (five) {
                            q += ((unsigned(data, block + 16 + l) >> sub) & 1) * 16;
                        }
                        int[] scaleAndMin = scaleAndMin(data, block + 4, sub);
                        out[b * 256 + i] = d * scaleAndMin[0] * q - dmin * scaleAndMin[1];
                    }
                }
            }
            case Q6_K -> {
                for (int b = 0; b < count / 256; b++) {
                    long block = 210L * b;
                    float d = Float.float16ToFloat(data.get(SHORT, block + 208));
                    for (int i = 0; i < 256; i++) {
                        int half = i / 128, quarter = (i % 128) / 32, l = i % 32;
                        int low = unsigned(data, block + 64 * half + (quarter % 2) * 32 + l);
                        int nibble = quarter < 2 ? low & 0x0F : low >> 4;
                        int pair = (unsigned(data, block + 128 + 32 * half + l) >> (2 * quarter)) & 3;
                        int scale = data.get(ValueLayout.JAVA_BYTE, block + 192 + i / 16);
                        out[b * 256 + i] = d * scale * ((nibble | (pair << 4)) - 32);
                    }
                }
            }
            default -> throw new IllegalArgumentException(type.toString());
        }
        return out;
    }

    private static int unsigned(MemorySegment data, long at) {
        return data.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    /** Scale and minimum of sub-block j from the 12 packed bytes (ggml's get_scale_min_k4 layout). */
    private static int[] scaleAndMin(MemorySegment data, long packed, int j) {
        if (j < 4) {
            return new int[] {unsigned(data, packed + j) & 63, unsigned(data, packed + j + 4) & 63};
        }
        int scale = (unsigned(data, packed + j + 4) & 0x0F) | ((unsigned(data, packed + j - 4) >> 6) << 4);
        int min = (unsigned(data, packed + j + 4) >> 4) | ((unsigned(data, packed + j) >> 6) << 4);
        return new int[] {scale, min};
    }
}
