package io.macfleet.node.kernel;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The activation roundings against ggml's definitions, and the vector F16 rounding against the JDK's conversion. */
class ActivationRoundingTest {

    @Test
    void q8_0BlocksBecomeIntegersTimesTheHalfScale() {
        float[] x = new float[64];
        Random random = new Random(1);
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian() * (i < 32 ? 1f : 0.01f);
        }
        x[5] = 0.5f * 127 / 127; // an ordinary value next to the block's largest below
        float[] out = new float[64];
        ActivationRounding.Q8_0.round(x, 0, 64, out, 0);
        for (int b = 0; b < 2; b++) {
            float max = 0;
            for (int j = 0; j < 32; j++) {
                max = Math.max(max, Math.abs(x[b * 32 + j]));
            }
            float d = Float.float16ToFloat(Float.floatToFloat16(max / 127f));
            for (int j = 0; j < 32; j++) {
                float q = out[b * 32 + j] / d;
                assertThat(q).isEqualTo((float) Math.rint(q)); // an integer multiple of the F16 scale
                assertThat(Math.abs(q)).isLessThanOrEqualTo(127f);
                assertThat(q).isEqualTo((float) Math.rint(x[b * 32 + j] * (127f / max)));
            }
        }
        float[] again = new float[64];
        ActivationRounding.Q8_0.round(out, 0, 64, again, 0);
        assertThat(again).containsExactly(out); // rounding twice changes nothing
    }

    @Test
    void q8_KKeepsTheSignOfTheLargestValueAndAZeroBlockStaysZero() {
        float[] x = new float[512];
        for (int i = 0; i < 256; i++) {
            x[i] = (i % 7 - 3) * 0.1f;
        }
        x[10] = -2f; // the largest magnitude, negative: iscale = 127 / 2, so it becomes -127 steps of 2/127
        float[] out = new float[512];
        ActivationRounding.Q8_K.round(x, 0, 512, out, 0);
        float d = 1 / (-127f / -2f);
        assertThat(out[10]).isEqualTo(-127 * d);
        assertThat(out[3]).isEqualTo((float) Math.rint((-127f / -2f) * x[3]) * d);
        for (int i = 256; i < 512; i++) {
            assertThat(out[i]).isZero();
        }
    }

    @Test
    void vectorHalfRoundingEqualsTheJdkConversionIncludingSubnormalsAndTies() {
        Random random = new Random(7);
        float[] values = new float[4096];
        for (int i = 0; i < values.length; i++) {
            int kind = i % 4;
            values[i] = switch (kind) {
                case 0 -> (float) random.nextGaussian();
                case 1 -> (float) random.nextGaussian() * 1e-5f; // F16 subnormal range
                case 2 -> Float.float16ToFloat((short) random.nextInt(0x7bff)) + Math.ulp(1f) * 0; // exact halves
                default -> Float.intBitsToFloat((Float.floatToRawIntBits(1.5f + random.nextInt(1000) / 1024f) & ~0x1fff) | 0x1000); // ties
            };
        }
        float[] rounded = values.clone();
        Kernels.roundToHalf(rounded, 0, rounded.length);
        for (int i = 0; i < values.length; i++) {
            float expected = Float.float16ToFloat(Float.floatToFloat16(values[i]));
            if (rounded[i] != expected) { // == : zero's sign aside
                assertThat(rounded[i]).as("value %s", values[i]).isEqualTo(expected);
            }
        }
    }

    @Test
    void vectorHalfRoundingEqualsTheJdkConversionAcrossTheWholeHalfRange() {
        // every 251st float bit pattern up to the largest half (65504) and its negative: each binade, normal and
        // subnormal halves, values that round to zero or carry into the next binade (zero's sign aside: == on floats)
        int limit = Float.floatToRawIntBits(65504f);
        float[] values = new float[2 * (limit / 251 + 1)];
        int count = 0;
        for (int bits = 0; bits <= limit; bits += 251) {
            values[count++] = Float.intBitsToFloat(bits);
            values[count++] = -Float.intBitsToFloat(bits);
        }
        float[] rounded = values.clone();
        Kernels.roundToHalf(rounded, 0, count);
        for (int i = 0; i < count; i++) {
            float expected = Float.float16ToFloat(Float.floatToFloat16(values[i]));
            if (rounded[i] != expected) {
                assertThat(rounded[i]).as("value %s (bits %x)", values[i], Float.floatToRawIntBits(values[i])).isEqualTo(expected);
            }
        }
    }

    @Test
    void halfAccumulationRoundsAfterEveryStep() {
        float[] accumulator = {1f, 0f};
        float[] row = {Float.float16ToFloat(Float.floatToFloat16(1e-3f)), 3f};
        Kernels.madHalf(accumulator, 0, row, 0.5f, 2);
        assertThat(accumulator[0]).isEqualTo(Float.float16ToFloat(Float.floatToFloat16(Math.fma(row[0], 0.5f, 1f))));
        assertThat(accumulator[1]).isEqualTo(1.5f);
    }
}
