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
            default -> throw new IllegalArgumentException(type.toString());
        }
        return out;
    }
}
