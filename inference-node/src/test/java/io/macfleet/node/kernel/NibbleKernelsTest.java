package io.macfleet.node.kernel;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The four-stream decode products of Q4_0, Q4_K and Q6_K ({@link NibbleKernels}) against a double-precision dot
 * product of the independent scalar decoding in {@link ScalarReference}: with enough rows that the streams have spans
 * above one, a tail of four-row groups and single rows, several matrices in one loop, and column slices.
 */
class NibbleKernelsTest {
    // 203 rows on 2 workers: span 12, four units of 48 rows, then two four-row groups and three single rows.
    private static final int ROWS = 203;
    private static final int COLUMNS = 768;

    /** Blocks of different ranges and offsets (the other kernel tests of this package use them too). */
    static float[] values(int n, long seed) {
        Random random = new Random(seed);
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            // Blocks of different ranges and offsets, so that scales, minimums and the offsets' share all vary.
            values[i] = (float) (random.nextGaussian() * (1 + (i / 32) % 5) + ((i / 32) % 3 == 0 ? 0.7 : 0));
        }
        return values;
    }

    private static float expected(float[] w, int row, int columns, float[] x) {
        double sum = 0;
        for (int c = 0; c < columns; c++) {
            sum += (double) w[row * columns + c] * x[c];
        }
        return (float) sum;
    }

    private static float tolerance(float expected) {
        return 1e-4f * Math.max(1, Math.abs(expected)) + 2e-3f;
    }

    @Test
    void theyRunOnThisMachine() {
        // The build machine has AVX-512; elsewhere the single-row kernels run and the tests below compare those.
        assertThat(NibbleKernels.AVAILABLE).isEqualTo(Kernels.L == 16);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_0", "Q4_K", "Q6_K"})
    void matrixVectorProductsMatchTheScalarReference(GgmlType type) {
        WeightMatrix gate = KQuantKernelsTest.matrix(type, values(ROWS * COLUMNS, 1), ROWS, COLUMNS);
        WeightMatrix up = KQuantKernelsTest.matrix(type, values(7 * COLUMNS, 2), 7, COLUMNS);
        float[] gateWeights = ScalarReference.dequantize(type, gate.data(), ROWS * COLUMNS);
        float[] upWeights = ScalarReference.dequantize(type, up.data(), 7 * COLUMNS);
        float[] x = values(COLUMNS, 3);
        float[] single = new float[ROWS];
        float[][] fused = {new float[ROWS], new float[7]};
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, gate, x, single);
            Kernels.matvec(pool, new WeightMatrix[] {gate, up}, x, fused);
        }
        for (int r = 0; r < ROWS; r++) {
            float expected = expected(gateWeights, r, COLUMNS, x);
            assertThat(single[r]).as("%s row %d", type, r).isCloseTo(expected, within(tolerance(expected)));
            assertThat(fused[0][r]).as("%s row %d, fused", type, r).isCloseTo(expected, within(tolerance(expected)));
        }
        for (int r = 0; r < 7; r++) {
            float expected = expected(upWeights, r, COLUMNS, x);
            assertThat(fused[1][r]).as("%s second matrix row %d", type, r).isCloseTo(expected, within(tolerance(expected)));
        }
    }

    @Test
    void matricesOfDifferentTypesInOneLoopMatchTheScalarReference() {
        // A Q4_K_M file's Q/K/V: Q4_K query and key with a Q6_K value matrix, here with Q4_0 as well, in one loop,
        // twice (the second call runs compiled code that has seen every type).
        GgmlType[] types = {GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q4_0, GgmlType.Q6_K};
        int[] rows = {ROWS, 64, 37, 5};
        WeightMatrix[] matrices = new WeightMatrix[types.length];
        float[][] weights = new float[types.length][];
        for (int m = 0; m < types.length; m++) {
            matrices[m] = KQuantKernelsTest.matrix(types[m], values(rows[m] * COLUMNS, 10 + m), rows[m], COLUMNS);
            weights[m] = ScalarReference.dequantize(types[m], matrices[m].data(), rows[m] * COLUMNS);
        }
        float[] x = values(COLUMNS, 3);
        try (WorkerPool pool = new WorkerPool(2)) {
            for (int call = 0; call < 2; call++) {
                float[][] outs = new float[types.length][];
                for (int m = 0; m < types.length; m++) {
                    outs[m] = new float[rows[m]];
                }
                Kernels.matvec(pool, matrices, x, outs);
                for (int m = 0; m < types.length; m++) {
                    for (int r = 0; r < rows[m]; r++) {
                        float expected = expected(weights[m], r, COLUMNS, x);
                        assertThat(outs[m][r]).as("%s (matrix %d) row %d, call %d", types[m], m, r, call)
                                .isCloseTo(expected, within(tolerance(expected)));
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_0", "Q4_K", "Q6_K"})
    void columnSlicesReadOnlyTheirColumns(GgmlType type) {
        WeightMatrix matrix = KQuantKernelsTest.matrix(type, values(ROWS * COLUMNS, 4), ROWS, COLUMNS);
        float[] weights = ScalarReference.dequantize(type, matrix.data(), ROWS * COLUMNS);
        WeightMatrix right = matrix.columnSlice(256, 512);
        float[] x = values(512, 5);
        float[] product = new float[ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, right, x, product);
        }
        for (int r = 0; r < ROWS; r++) {
            double sum = 0;
            for (int c = 0; c < 512; c++) {
                sum += (double) weights[r * COLUMNS + 256 + c] * x[c];
            }
            assertThat(product[r]).as("%s row %d", type, r).isCloseTo((float) sum, within(tolerance((float) sum)));
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q6_K"})
    void vectorAndScalarDequantizationAreBothBitExact(GgmlType type) {
        // The engine takes the vector code on 512-bit machines and the scalar code elsewhere: both must be exact.
        WeightMatrix matrix = KQuantKernelsTest.matrix(type, values(ROWS * COLUMNS, 7), ROWS, COLUMNS);
        float[] expected = ScalarReference.dequantize(type, matrix.data(), ROWS * COLUMNS);
        float[] vector = new float[ROWS * COLUMNS], scalar = new float[ROWS * COLUMNS];
        for (int r = 0; r < ROWS; r++) {
            Kernels.dequantizeRow(matrix, r, vector, r * COLUMNS);
            if (type == GgmlType.Q4_K) {
                KQuantKernels.dequantizeQ4KScalar(matrix.data(), matrix.rowOffset(r), COLUMNS, scalar, r * COLUMNS);
            } else {
                KQuantKernels.dequantizeQ6KScalar(matrix.data(), matrix.rowOffset(r), COLUMNS, scalar, r * COLUMNS);
            }
        }
        for (int i = 0; i < expected.length; i++) {
            assertThat(Float.floatToRawIntBits(vector[i])).as("%s value %d", type, i).isEqualTo(Float.floatToRawIntBits(expected[i]));
            assertThat(Float.floatToRawIntBits(scalar[i])).as("%s value %d, scalar", type, i).isEqualTo(Float.floatToRawIntBits(expected[i]));
        }
    }

    @Test
    void packedScalesAndMinimumsDecodeAsTheReferenceUnpacking() {
        Random random = new Random(6);
        byte[] packed = new byte[12];
        int[] scales = new int[8], mins = new int[8];
        for (int round = 0; round < 200; round++) {
            random.nextBytes(packed);
            KQuantKernels.scalesAndMins(java.lang.foreign.MemorySegment.ofArray(packed), 0, scales, mins);
            long low = java.nio.ByteBuffer.wrap(packed).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0);
            int high = java.nio.ByteBuffer.wrap(packed).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(8);
            for (int j = 0; j < 8; j++) {
                assertThat(NibbleKernels.scale(low, high, j)).as("scale %d", j).isEqualTo(scales[j]);
                assertThat(NibbleKernels.minimum(low, high, j)).as("minimum %d", j).isEqualTo(mins[j]);
            }
        }
    }
}
