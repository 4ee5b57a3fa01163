package io.macfleet.node.kernel;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The ggml-order Q4_K, Q5_K and Q6_K products: same value as the float kernels up to summation order. */
class GgmlOrderKernelsTest {
    private static final int ROWS = 7;
    private static final int COLUMNS = 768;

    @Test
    void recoversTheQ8KIntegersAndScale() {
        float[] x = NibbleKernelsTest.values(256, 11);
        float[] rounded = new float[256];
        ActivationRounding.Q8_K.round(x, 0, 256, rounded, 0);
        int[] q = new int[256];
        float d = GgmlOrderKernels.recover(rounded, 0, q);
        float max = 0, amax = 0;
        for (float v : x) {
            if (Math.abs(v) > amax) {
                amax = Math.abs(v);
                max = v;
            }
        }
        float iscale = -127f / max;
        assertThat(Float.floatToRawIntBits(d)).isEqualTo(Float.floatToRawIntBits(1 / iscale));
        for (int j = 0; j < 256; j++) {
            assertThat(q[j]).as("q[%d]", j).isEqualTo((int) Math.min(127, Math.rint(iscale * x[j])));
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void productsMatchTheScalarReference(GgmlType type) {
        WeightMatrix matrix = KQuantKernelsTest.matrix(type, NibbleKernelsTest.values(ROWS * COLUMNS, 3), ROWS, COLUMNS);
        float[] w = ScalarReference.dequantize(type, matrix.data(), ROWS * COLUMNS);
        float[] x = new float[COLUMNS];
        ActivationRounding.Q8_K.round(NibbleKernelsTest.values(COLUMNS, 4), 0, COLUMNS, x, 0);
        for (int r = 0; r < ROWS; r++) {
            double expected = 0;
            for (int c = 0; c < COLUMNS; c++) {
                expected += (double) w[r * COLUMNS + c] * x[c];
            }
            float actual = switch (type) {
                case Q4_K -> GgmlOrderKernels.dotQ4K(matrix.data(), matrix.rowOffset(r), x, 0, COLUMNS);
                case Q5_K -> GgmlOrderKernels.dotQ5K(matrix.data(), matrix.rowOffset(r), x, 0, COLUMNS);
                default -> GgmlOrderKernels.dotQ6K(matrix.data(), matrix.rowOffset(r), x, 0, COLUMNS);
            };
            assertThat(actual).as("%s row %d", type, r).isCloseTo((float) expected, within(1e-4f * (float) Math.max(1, Math.abs(expected))));
        }
    }

    @Test
    void q8_0ProductIsTheScaledIntegerDotPerBlock() {
        // one block: ggml's result is fma(x.d * y.d, lane, 0) per lane, summed by hsum_float_8, all of it exact here
        // because the eight lane sums are small integers times one scale: the value must be d * Σ wq * xq exactly
        WeightMatrix matrix = KQuantKernelsTest.matrix(GgmlType.Q8_0, NibbleKernelsTest.values(32, 5), 1, 32);
        float[] x = new float[32];
        ActivationRounding.Q8_0.round(NibbleKernelsTest.values(32, 6), 0, 32, x, 0);
        float dy = 0;
        for (float v : x) {
            dy = Math.max(dy, Math.abs(v) / 127f);
        }
        float dw = Float.float16ToFloat(matrix.data().get(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, 0));
        long integerDot = 0;
        for (int j = 0; j < 32; j++) {
            int xq = (int) Math.rint(x[j] / dy);
            assertThat(xq * dy).as("x[%d] is a whole multiple of its recovered scale", j).isEqualTo(x[j]);
            integerDot += (long) matrix.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 2 + j) * xq;
        }
        assertThat(GgmlOrderKernels.dotQ8_0(matrix.data(), 0, x, 0, 32)).isEqualTo((dw * dy) * integerDot);
    }

    @Test
    void q8_0AndF32ProductsMatchTheScalarReference() {
        int columns = 320; // ten Q8_0 blocks, ten 32-value steps of ggml_vec_dot_f32
        for (GgmlType type : new GgmlType[] {GgmlType.Q8_0, GgmlType.F32}) {
            WeightMatrix matrix = KQuantKernelsTest.matrix(type, NibbleKernelsTest.values(ROWS * columns, 8), ROWS, columns);
            float[] w = ScalarReference.dequantize(type, matrix.data(), ROWS * columns);
            float[] x = new float[columns];
            if (type == GgmlType.Q8_0) {
                ActivationRounding.Q8_0.round(NibbleKernelsTest.values(columns, 9), 0, columns, x, 0);
            } else {
                x = NibbleKernelsTest.values(columns, 9);
            }
            for (int r = 0; r < ROWS; r++) {
                double expected = 0;
                for (int c = 0; c < columns; c++) {
                    expected += (double) w[r * columns + c] * x[c];
                }
                float tolerance = 1e-5f * (float) Math.max(1, Math.abs(expected));
                if (type == GgmlType.Q8_0) {
                    assertThat(GgmlOrderKernels.dotQ8_0(matrix.data(), matrix.rowOffset(r), x, 0, columns))
                            .as("Q8_0 row %d", r).isCloseTo((float) expected, within(tolerance));
                } else {
                    assertThat(GgmlOrderKernels.dotF32(matrix.data(), matrix.rowOffset(r), x, 0, columns))
                            .as("F32 vec_dot order, row %d", r).isCloseTo((float) expected, within(tolerance));
                    assertThat(GgmlOrderKernels.dotF32Tiled(matrix.data(), matrix.rowOffset(r), x, 0, columns))
                            .as("F32 tinyBLAS order, row %d", r).isCloseTo((float) expected, within(tolerance));
                }
            }
        }
    }

    @Test
    void theTwoF32OrdersAreDifferentSums() {
        // ggml_vec_dot_f32 (four accumulators of eight lanes) and tinyBLAS (one of eight) differ in their last bits
        // for some rows: the reason prompt and decode products are told apart
        int columns = 256, differ = 0;
        WeightMatrix matrix = KQuantKernelsTest.matrix(GgmlType.F32, NibbleKernelsTest.values(64 * columns, 12), 64, columns);
        float[] x = NibbleKernelsTest.values(columns, 13);
        for (int r = 0; r < 64; r++) {
            float vector = GgmlOrderKernels.dotF32(matrix.data(), matrix.rowOffset(r), x, 0, columns);
            float tiled = GgmlOrderKernels.dotF32Tiled(matrix.data(), matrix.rowOffset(r), x, 0, columns);
            differ += Float.floatToRawIntBits(vector) != Float.floatToRawIntBits(tiled) ? 1 : 0;
        }
        assertThat(differ).isGreaterThan(0);
    }

    @Test
    void vectorExpIsWithinAFewUlpsOfExpAndHandlesTheRangeEnds() {
        // ggml_v_expf's error (its comment says 1.45358 plus 0.5 ulps; measured up to 2.7 ulps against Math.exp near
        // x = -74), a little more where its result is scaled in two steps (x < -80). Bit for bit it is checked against
        // the C function itself by inference-node/tools/ggml-order-check.sh (0 of 54,056 values differ in [-100, 100]).
        for (float x = -87f; x <= 88f; x += 0.0137f) {
            float expected = (float) Math.exp(x);
            assertThat(GgmlOrderKernels.vectorExp(x)).as("exp(%s)", x).isCloseTo(expected, within((x < -80 ? 4 : 3) * Math.ulp(expected)));
        }
        assertThat(GgmlOrderKernels.vectorExp(0f)).isEqualTo(1f);
        assertThat(GgmlOrderKernels.vectorExp(-200f)).isEqualTo(0f);
        assertThat(GgmlOrderKernels.vectorExp(200f)).isEqualTo(Float.POSITIVE_INFINITY);
    }

    @Test
    void swigluUsesTheVectorExpForWholeGroupsOfEight() {
        float[] gate = NibbleKernelsTest.values(13, 14), up = NibbleKernelsTest.values(13, 15);
        float[] expected = new float[13];
        for (int i = 0; i < 13; i++) {
            float exp = i < 8 ? GgmlOrderKernels.vectorExp(0f - gate[i]) : (float) Math.exp(-gate[i]);
            expected[i] = gate[i] / (1f + exp) * up[i];
        }
        GgmlOrderKernels.swiglu(gate, up, 13);
        for (int i = 0; i < 13; i++) {
            // the last five use the C library's expf, within an ulp of Math.exp's rounding
            assertThat(gate[i]).as("value %d", i).isCloseTo(expected[i], within(i < 8 ? 0f : 4 * Math.ulp(expected[i])));
        }
    }

    @Test
    void f16ScoresMatchTheDoubleSum() {
        float[] query = NibbleKernelsTest.values(576, 16);
        short[] keys = new short[576];
        double expected = 0;
        for (int i = 0; i < 576; i++) {
            keys[i] = Float.floatToFloat16(NibbleKernelsTest.values(576, 17)[i]);
            query[i] = Float.float16ToFloat(Float.floatToFloat16(query[i]));
            expected += (double) Float.float16ToFloat(keys[i]) * query[i];
        }
        assertThat(GgmlOrderKernels.dotF16(keys, 0, query, 0, 576)).isCloseTo((float) expected, within(1e-4f));
    }

    @Test
    void repackedQ4KOrdersMatchTheScalarReferenceAndDifferFromEachOther() {
        // llama.cpp's repacked Q4_K: gemv adds once per super-block, gemm once per 64 values; both the same sum
        WeightMatrix matrix = KQuantKernelsTest.matrix(GgmlType.Q4_K, NibbleKernelsTest.values(64 * COLUMNS, 18), 64, COLUMNS);
        float[] w = ScalarReference.dequantize(GgmlType.Q4_K, matrix.data(), 64 * COLUMNS);
        float[] x = new float[COLUMNS];
        ActivationRounding.Q8_K.round(NibbleKernelsTest.values(COLUMNS, 19), 0, COLUMNS, x, 0);
        int differ = 0;
        for (int r = 0; r < 64; r++) {
            double expected = 0;
            for (int c = 0; c < COLUMNS; c++) {
                expected += (double) w[r * COLUMNS + c] * x[c];
            }
            float tolerance = 1e-4f * (float) Math.max(1, Math.abs(expected));
            float vector = GgmlOrderKernels.dotQ4KRepacked(matrix.data(), matrix.rowOffset(r), x, 0, COLUMNS);
            float tiles = GgmlOrderKernels.dotQ4KRepackedTiles(matrix.data(), matrix.rowOffset(r), x, 0, COLUMNS);
            assertThat(vector).as("gemv order, row %d", r).isCloseTo((float) expected, within(tolerance));
            assertThat(tiles).as("gemm order, row %d", r).isCloseTo((float) expected, within(tolerance));
            differ += Float.floatToRawIntBits(vector) != Float.floatToRawIntBits(tiles) ? 1 : 0;
        }
        assertThat(differ).as("rows whose two orders differ in their last bits").isGreaterThan(0);
    }
}
