package io.macfleet.node.kernel;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Q4_K, Q5_K and Q6_K: kernels against the independent scalar decoding in {@link ScalarReference}. */
class KQuantKernelsTest {
    private static final int ROWS = 13;
    private static final int COLUMNS = 768; // three super-blocks

    private static float[] gaussian(int n, long seed) {
        Random random = new Random(seed);
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            // Sub-blocks of different ranges and offsets, so that the 6-bit scales and minimums vary widely.
            values[i] = (float) (random.nextGaussian() * (1 + (i / 32) % 5) + ((i / 32) % 3 == 0 ? 0.7 : 0));
        }
        return values;
    }

    static WeightMatrix matrix(GgmlType type, float[] values, int rows, int columns) {
        long rowBytes = type.bytesFor(columns);
        byte[] bytes = new byte[(int) (rowBytes * rows)];
        for (int r = 0; r < rows; r++) {
            Quantizer.encode(type, values, r * columns, columns, bytes, (int) (r * rowBytes));
        }
        return new WeightMatrix("test", type, MemorySegment.ofArray(bytes), rows, columns, rowBytes);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void dequantizationIsBitExact(GgmlType type) {
        WeightMatrix matrix = matrix(type, gaussian(ROWS * COLUMNS, 1), ROWS, COLUMNS);
        float[] expected = ScalarReference.dequantize(type, matrix.data(), ROWS * COLUMNS);
        float[] row = new float[COLUMNS];
        for (int r = 0; r < ROWS; r++) {
            Kernels.dequantizeRow(matrix, r, row, 0);
            for (int c = 0; c < COLUMNS; c++) {
                assertThat(Float.floatToRawIntBits(row[c])).as("%s row %d column %d", type, r, c)
                        .isEqualTo(Float.floatToRawIntBits(expected[r * COLUMNS + c]));
            }
        }
    }

    /** The encoder keeps values near the originals: relative RMS error within what the bit width allows. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void encodingIsCloseToTheOriginal(GgmlType type) {
        float[] values = gaussian(ROWS * COLUMNS, 2);
        float[] decoded = ScalarReference.dequantize(type, matrix(type, values, ROWS, COLUMNS).data(), ROWS * COLUMNS);
        double error = 0, energy = 0;
        for (int i = 0; i < values.length; i++) {
            error += (decoded[i] - values[i]) * (decoded[i] - values[i]);
            energy += values[i] * values[i];
        }
        double relative = Math.sqrt(error / energy);
        double bound = switch (type) {
            case Q4_K -> 0.12;
            case Q5_K -> 0.06;
            default -> 0.04;
        };
        assertThat(relative).as("%s relative RMS error", type).isLessThan(bound).isGreaterThan(0.0);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void dotProductsMatchTheScalarReference(GgmlType type) {
        WeightMatrix matrix = matrix(type, gaussian(ROWS * COLUMNS, 3), ROWS, COLUMNS);
        float[] w = ScalarReference.dequantize(type, matrix.data(), ROWS * COLUMNS);
        float[] x = gaussian(COLUMNS + 7, 4);
        float[] product = new float[ROWS];
        float[] shifted = java.util.Arrays.copyOfRange(x, 7, 7 + COLUMNS);
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, matrix, shifted, product);
        }
        for (int r = 0; r < ROWS; r++) {
            double expected = 0;
            for (int c = 0; c < COLUMNS; c++) {
                expected += (double) w[r * COLUMNS + c] * x[7 + c];
            }
            float tolerance = 1e-4f * (float) Math.max(1, Math.abs(expected)) + 2e-3f;
            assertThat(Kernels.dot(matrix, r, x, 7)).as("%s row %d", type, r).isCloseTo((float) expected, within(tolerance));
            assertThat(KQuantKernels.dotByBlocks(type, matrix.data(), matrix.rowOffset(r), x, 7, COLUMNS))
                    .as("%s row %d, any vector width", type, r).isCloseTo((float) expected, within(tolerance));
            assertThat(product[r]).as("%s matvec row %d", type, r).isCloseTo((float) expected, within(tolerance));
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void batchedProductMatchesMatrixVector(GgmlType type) {
        WeightMatrix matrix = matrix(type, gaussian(ROWS * COLUMNS, 5), ROWS, COLUMNS);
        int tokens = 6;
        float[] x = gaussian(tokens * COLUMNS, 6);
        float[] batched = new float[tokens * ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matmul(pool, matrix, x, tokens, batched);
            for (int t = 0; t < tokens; t++) {
                float[] single = new float[ROWS];
                Kernels.matvec(pool, matrix, java.util.Arrays.copyOfRange(x, t * COLUMNS, (t + 1) * COLUMNS), single);
                for (int r = 0; r < ROWS; r++) {
                    assertThat(batched[t * ROWS + r]).isCloseTo(single[r], within(2e-3f * Math.max(1, Math.abs(single[r]))));
                }
            }
        }
    }

    /** Every 6-bit scale and minimum code survives packing, including the high bits of sub-blocks 4..7. */
    @Test
    void sixBitScalesAndMinimumsUnpackAsPacked() {
        byte[] packed = new byte[12];
        int[] scales = {63, 0, 17, 42, 63, 31, 48, 5}, mins = {1, 63, 32, 16, 62, 47, 0, 63};
        for (int j = 0; j < 4; j++) {
            packed[j] = (byte) (scales[j] | ((scales[j + 4] >> 4) << 6));
            packed[j + 4] = (byte) (mins[j] | ((mins[j + 4] >> 4) << 6));
            packed[j + 8] = (byte) ((scales[j + 4] & 0x0F) | ((mins[j + 4] & 0x0F) << 4));
        }
        int[] outScales = new int[8], outMins = new int[8];
        KQuantKernels.scalesAndMins(MemorySegment.ofArray(packed), 0, outScales, outMins);
        assertThat(outScales).containsExactly(scales);
        assertThat(outMins).containsExactly(mins);
    }
}
