package io.macfleet.node.kernel;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class KernelsTest {
    private static final int ROWS = 37;
    private static final int COLUMNS = 96;

    private static WeightMatrix randomMatrix(GgmlType type, long seed) {
        Random random = new Random(seed);
        float[] values = new float[ROWS * COLUMNS];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) random.nextGaussian();
        }
        long rowBytes = type.bytesFor(COLUMNS);
        byte[] bytes = new byte[(int) (rowBytes * ROWS)];
        for (int r = 0; r < ROWS; r++) {
            Quantizer.encode(type, values, r * COLUMNS, COLUMNS, bytes, (int) (r * rowBytes));
        }
        return new WeightMatrix("test", type, MemorySegment.ofArray(bytes), ROWS, COLUMNS, rowBytes);
    }

    private static float[] reference(WeightMatrix matrix) {
        return ScalarReference.dequantize(matrix.type(), matrix.data(), matrix.rows() * matrix.columns());
    }

    private static float[] randomVector(int n, long seed) {
        Random random = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) random.nextGaussian();
        }
        return x;
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void dequantizationIsExact(GgmlType type) {
        WeightMatrix matrix = randomMatrix(type, 1);
        float[] expected = reference(matrix);
        float[] row = new float[COLUMNS];
        for (int r = 0; r < ROWS; r++) {
            Kernels.dequantizeRow(matrix, r, row, 0);
            for (int c = 0; c < COLUMNS; c++) {
                assertThat(row[c]).as("%s row %d column %d", type, r, c).isEqualTo(expected[r * COLUMNS + c]);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void dotProductsMatchScalarReference(GgmlType type) {
        WeightMatrix matrix = randomMatrix(type, 2);
        float[] w = reference(matrix);
        float[] x = randomVector(COLUMNS + 5, 3);
        for (int r = 0; r < ROWS; r++) {
            double expected = 0;
            for (int c = 0; c < COLUMNS; c++) {
                expected += (double) w[r * COLUMNS + c] * x[5 + c];
            }
            assertThat(Kernels.dot(matrix, r, x, 5)).as("%s row %d", type, r).isCloseTo((float) expected, within(1e-3f));
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void batchedProductMatchesMatrixVector(GgmlType type) {
        WeightMatrix matrix = randomMatrix(type, 4);
        int tokens = 7;
        float[] x = randomVector(tokens * COLUMNS, 5);
        float[] batched = new float[tokens * ROWS];
        try (WorkerPool pool = new WorkerPool(3)) {
            Kernels.matmul(pool, matrix, x, tokens, batched);
            for (int t = 0; t < tokens; t++) {
                float[] single = new float[ROWS];
                Kernels.matvec(pool, matrix, java.util.Arrays.copyOfRange(x, t * COLUMNS, (t + 1) * COLUMNS), single);
                for (int r = 0; r < ROWS; r++) {
                    assertThat(batched[t * ROWS + r]).isCloseTo(single[r], within(1e-3f));
                }
            }
        }
    }

    @Test
    void everyFiniteHalfConvertsExactly() {
        int count = 0x10000;
        byte[] bytes = new byte[count * 2];
        for (int h = 0; h < count; h++) {
            bytes[2 * h] = (byte) h;
            bytes[2 * h + 1] = (byte) (h >> 8);
        }
        WeightMatrix all = new WeightMatrix("halves", GgmlType.F16, MemorySegment.ofArray(bytes), 1, count, count * 2L);
        float[] out = new float[count];
        Kernels.dequantizeRow(all, 0, out, 0);
        for (int h = 0; h < count; h++) {
            float expected = Float.float16ToFloat((short) h);
            if (Float.isFinite(expected)) {
                assertThat(Float.floatToRawIntBits(out[h])).as("half 0x%04x", h).isEqualTo(Float.floatToRawIntBits(expected));
            }
        }
    }

    @Test
    void rowAndColumnSlicesComputeTheirPartOfTheProduct() {
        WeightMatrix matrix = randomMatrix(GgmlType.Q8_0, 6);
        float[] x = randomVector(COLUMNS, 7);
        float[] full = new float[ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, matrix, x, full);
            WeightMatrix rows = matrix.rowSlice(10, 5);
            for (int r = 0; r < 5; r++) {
                assertThat(Kernels.dot(rows, r, x, 0)).isEqualTo(full[10 + r]);
            }
            WeightMatrix left = matrix.columnSlice(0, 64);
            WeightMatrix right = matrix.columnSlice(64, 32);
            for (int r = 0; r < ROWS; r++) {
                float sum = Kernels.dot(left, r, x, 0) + Kernels.dot(right, r, x, 64);
                assertThat(sum).isCloseTo(full[r], within(1e-3f));
            }
        }
    }
}
