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
}
