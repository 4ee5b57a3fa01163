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
        return randomMatrix(type, seed, COLUMNS);
    }

    private static WeightMatrix randomMatrix(GgmlType type, long seed, int columns) {
        final int COLUMNS = columns;
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
        float[] shifted = java.util.Arrays.copyOfRange(x, 5, 5 + COLUMNS);
        float[] product = new float[ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, matrix, shifted, product); // four rows at a time, then the remainder row
        }
        for (int r = 0; r < ROWS; r++) {
            double expected = 0;
            for (int c = 0; c < COLUMNS; c++) {
                expected += (double) w[r * COLUMNS + c] * shifted[c];
            }
            assertThat(product[r]).as("%s matvec row %d", type, r).isCloseTo((float) expected, within(1e-3f));
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

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0"})
    void batchedProductDoesNotDependOnTheRowBlocking(GgmlType type) {
        // 37 rows: blocks of 16 leave a block of 5 (one 4-row tile and a row alone); 11 tokens leave 3 outside the tiles.
        WeightMatrix matrix = randomMatrix(type, 10);
        int tokens = 11;
        float[] x = randomVector(tokens * COLUMNS, 11);
        float[] expected = new float[tokens * ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matmul(pool, matrix, x, tokens, expected, 4);
            for (int blockRows : new int[] {8, 16, 32, 64}) {
                float[] blocked = new float[tokens * ROWS];
                java.util.Arrays.fill(blocked, Float.NaN);
                Kernels.matmul(pool, matrix, x, tokens, blocked, blockRows);
                assertThat(blocked).as("%s in blocks of %d rows", type, blockRows).containsExactly(expected);
            }
        }
    }

    @Test
    void batchedProductOverSeveralColumnBlocks() {
        int columns = 1056; // more than two 512-column cache blocks, the last one partial
        WeightMatrix matrix = randomMatrix(GgmlType.Q8_0, 8, columns);
        int tokens = 9;
        float[] x = randomVector(tokens * columns, 9);
        float[] batched = new float[tokens * ROWS];
        java.util.Arrays.fill(batched, Float.NaN); // the product must overwrite, not accumulate into, old contents
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matmul(pool, matrix, x, tokens, batched);
        }
        float[] w = ScalarReference.dequantize(GgmlType.Q8_0, matrix.data(), ROWS * columns);
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < ROWS; r++) {
                double expected = 0;
                for (int c = 0; c < columns; c++) {
                    expected += (double) w[r * columns + c] * x[t * columns + c];
                }
                assertThat(batched[t * ROWS + r]).as("token %d row %d", t, r).isCloseTo((float) expected, within(2e-3f));
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
                assertThat(Kernels.dot(rows, r, x, 0)).isCloseTo(full[10 + r], within(1e-4f));
            }
            WeightMatrix left = matrix.columnSlice(0, 64);
            WeightMatrix right = matrix.columnSlice(64, 32);
            for (int r = 0; r < ROWS; r++) {
                float sum = Kernels.dot(left, r, x, 0) + Kernels.dot(right, r, x, 64);
                assertThat(sum).isCloseTo(full[r], within(1e-3f));
            }
        }
    }

    /**
     * The Q8_0 decode product reads four streams of rows at once: on a slice that ends right after its last row
     * (nothing beyond the segment to read) and on column slices (rows further apart than their bytes, which take the
     * per-row kernel) it must still compute every row, each against the scalar reference.
     */
    @Test
    void fourRowProductOnSlicesMatchesScalarReference() {
        int columns = 256;
        WeightMatrix matrix = randomMatrix(GgmlType.Q8_0, 11, columns);
        float[] w = ScalarReference.dequantize(GgmlType.Q8_0, matrix.data(), ROWS * columns);
        float[] x = randomVector(columns, 12);
        long rowBytes = matrix.rowStride();
        // Exactly sized segments: all rows, the first 36 rows (9 full groups), and 33 rows from row 4.
        WeightMatrix[] cases = {
                new WeightMatrix("all", GgmlType.Q8_0, matrix.data().asSlice(0, ROWS * rowBytes), ROWS, columns, rowBytes),
                new WeightMatrix("36", GgmlType.Q8_0, matrix.data().asSlice(0, 36 * rowBytes), 36, columns, rowBytes),
                new WeightMatrix("from 4", GgmlType.Q8_0, matrix.data().asSlice(4 * rowBytes, 33 * rowBytes), 33, columns, rowBytes),
                matrix.columnSlice(64, 128),
                matrix.rowSlice(8, 28).columnSlice(224, 32),
        };
        int[] firstRow = {0, 0, 4, 0, 8};
        int[] firstColumn = {0, 0, 0, 64, 224};
        try (WorkerPool pool = new WorkerPool(2)) {
            for (int i = 0; i < cases.length; i++) {
                WeightMatrix m = cases[i];
                float[] slice = java.util.Arrays.copyOfRange(x, firstColumn[i], firstColumn[i] + m.columns());
                float[] product = new float[m.rows()];
                Kernels.matvec(pool, m, slice, product);
                for (int r = 0; r < m.rows(); r++) {
                    double expected = 0;
                    for (int c = 0; c < m.columns(); c++) {
                        expected += (double) w[(firstRow[i] + r) * columns + firstColumn[i] + c] * slice[c];
                    }
                    assertThat(product[r]).as("case %s row %d", m.name(), r).isCloseTo((float) expected, within(1e-3f));
                }
            }
        }
    }

    /**
     * Several matrices with the same input in one parallel loop (decode's Q/K/V and gate/up): every row of every
     * matrix against the scalar reference, with row counts that end in partial groups, exactly sized segments
     * (the last group of each touches its own lines) and, for other types, the one-matrix-at-a-time fallback.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void severalMatricesInOnePassMatchScalarReference(GgmlType type) {
        int columns = 128;
        WeightMatrix source = randomMatrix(type, 21, columns);
        float[] w = reference(source);
        long rowBytes = source.rowStride();
        int[] first = {0, 20, 28};
        int[] counts = {20, 8, 9}; // 5 full groups; 2 full groups; 2 full groups and a single row
        WeightMatrix[] matrices = new WeightMatrix[3];
        float[][] outs = new float[3][];
        for (int i = 0; i < 3; i++) {
            matrices[i] = new WeightMatrix("m" + i, type, source.data().asSlice(first[i] * rowBytes, counts[i] * rowBytes),
                    counts[i], columns, rowBytes);
            outs[i] = new float[counts[i]];
            java.util.Arrays.fill(outs[i], Float.NaN);
        }
        float[] x = randomVector(columns, 22);
        for (int threads : new int[] {1, 2, 3}) {
            try (WorkerPool pool = new WorkerPool(threads)) {
                Kernels.matvec(pool, matrices, x, outs);
            }
            for (int i = 0; i < 3; i++) {
                for (int r = 0; r < counts[i]; r++) {
                    double expected = 0;
                    for (int c = 0; c < columns; c++) {
                        expected += (double) w[(first[i] + r) * columns + c] * x[c];
                    }
                    assertThat(outs[i][r]).as("%s, %d threads, matrix %d row %d", type, threads, i, r)
                            .isCloseTo((float) expected, within(1e-3f));
                }
            }
        }
    }

    @Test
    void swigluMatchesScalarFormula() {
        int n = 1000 + 7; // a tail past the last full vector
        float[] gate = randomVector(n, 31), up = randomVector(n, 32);
        for (int i = 0; i < 40; i++) {
            gate[i] *= 30; // large positive and negative arguments: exp overflows to infinity, the unit gives 0
        }
        float[] expected = new float[n];
        for (int i = 0; i < n; i++) {
            expected[i] = (float) (gate[i] / (1 + Math.exp(-(double) gate[i])) * up[i]);
        }
        Kernels.swiglu(gate, up, n);
        for (int i = 0; i < n; i++) {
            assertThat(gate[i]).as("element %d", i).isCloseTo(expected[i], within(1e-5f * Math.max(1, Math.abs(expected[i]))));
        }
    }

    /**
     * The decode product in units of four forward streams of up to 64 rows each: a matrix large enough for full
     * 64-row spans, with tail rows past the last unit (full groups of four and a last partial one), for 1 to 3
     * threads (the span shrinks with more threads), every row against the scalar reference.
     */
    @Test
    void streamedProductMatchesScalarReferenceOnEveryRow() {
        int rows = 1100 + 3, columns = 64;
        Random random = new Random(41);
        float[] values = new float[rows * columns];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) random.nextGaussian();
        }
        long rowBytes = GgmlType.Q8_0.bytesFor(columns);
        byte[] bytes = new byte[(int) (rowBytes * rows)];
        for (int r = 0; r < rows; r++) {
            Quantizer.encode(GgmlType.Q8_0, values, r * columns, columns, bytes, (int) (r * rowBytes));
        }
        WeightMatrix matrix = new WeightMatrix("big", GgmlType.Q8_0, MemorySegment.ofArray(bytes), rows, columns, rowBytes);
        float[] w = reference(matrix);
        float[] x = randomVector(columns, 42);
        for (int threads = 1; threads <= 3; threads++) {
            float[] out = new float[rows];
            java.util.Arrays.fill(out, Float.NaN);
            try (WorkerPool pool = new WorkerPool(threads)) {
                Kernels.matvec(pool, matrix, x, out);
            }
            for (int r = 0; r < rows; r++) {
                double expected = 0;
                for (int c = 0; c < columns; c++) {
                    expected += (double) w[r * columns + c] * x[c];
                }
                assertThat(out[r]).as("%d threads, row %d", threads, r).isCloseTo((float) expected, within(1e-3f));
            }
        }
    }

    /**
     * Short rows run as one loop per unit over repeated activations ({@code Kernels.dotQ8FourStreamRuns}): two
     * matrices in one pass, one of them a column slice (rows not contiguous, so it takes the per-row kernel), with
     * 10 blocks per row (the repeated activations, 25 copies, wrap every 250 blocks), tail rows past the last unit,
     * for 1 to 3 threads, every row against the scalar reference.
     */
    @Test
    void shortRowRunsMatchScalarReferenceOnEveryRow() {
        int rows = 1100 + 3, columns = 320, wide = columns + 64;
        Random random = new Random(51);
        WeightMatrix[] sources = new WeightMatrix[2];
        int[] widths = {columns, wide};
        for (int m = 0; m < 2; m++) {
            float[] values = new float[rows * widths[m]];
            for (int i = 0; i < values.length; i++) {
                values[i] = (float) random.nextGaussian();
            }
            long rowBytes = GgmlType.Q8_0.bytesFor(widths[m]);
            byte[] bytes = new byte[(int) (rowBytes * rows)];
            for (int r = 0; r < rows; r++) {
                Quantizer.encode(GgmlType.Q8_0, values, r * widths[m], widths[m], bytes, (int) (r * rowBytes));
            }
            sources[m] = new WeightMatrix("m" + m, GgmlType.Q8_0, MemorySegment.ofArray(bytes), rows, widths[m], rowBytes);
        }
        WeightMatrix[] matrices = {sources[0], sources[1].columnSlice(64, columns)};
        float[][] w = {reference(sources[0]), reference(sources[1])};
        int[] firstColumn = {0, 64};
        float[] x = randomVector(columns, 52);
        for (int threads = 1; threads <= 3; threads++) {
            float[][] outs = new float[2][rows];
            java.util.Arrays.fill(outs[0], Float.NaN);
            java.util.Arrays.fill(outs[1], Float.NaN);
            try (WorkerPool pool = new WorkerPool(threads)) {
                Kernels.matvecQ8Streams(pool, matrices, x, outs, 256); // the runs are off by default (Kernels.RUN_BLOCKS)
            }
            for (int m = 0; m < 2; m++) {
                for (int r = 0; r < rows; r++) {
                    double expected = 0;
                    for (int c = 0; c < columns; c++) {
                        expected += (double) w[m][r * widths[m] + firstColumn[m] + c] * x[c];
                    }
                    assertThat(outs[m][r]).as("%d threads, matrix %d row %d", threads, m, r).isCloseTo((float) expected, within(1e-3f));
                }
            }
        }
    }
}
