package io.macfleet.node.kernel;

import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PackedColumnsTest {
    private static final int ROWS = 48, COLUMNS = 256;

    private static WeightMatrix q8(long seed) {
        Random random = new Random(seed);
        float[] values = new float[ROWS * COLUMNS];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) random.nextGaussian();
        }
        long rowBytes = GgmlType.Q8_0.bytesFor(COLUMNS);
        byte[] bytes = new byte[(int) (ROWS * rowBytes)];
        for (int r = 0; r < ROWS; r++) {
            Quantizer.encode(GgmlType.Q8_0, values, r * COLUMNS, COLUMNS, bytes, (int) (r * rowBytes));
        }
        return new WeightMatrix("q8", GgmlType.Q8_0, MemorySegment.ofArray(bytes), ROWS, COLUMNS, rowBytes);
    }

    @Test
    void columnSlicesBecomeContiguousCopiesOfTheSameValues(@TempDir Path directory) throws IOException {
        WeightMatrix matrix = q8(3);
        WeightMatrix first = matrix.columnSlice(0, 96), second = matrix.columnSlice(96, 160);
        WeightMatrix[] packed = PackedColumns.pack(new WeightMatrix[] {first, matrix, second}, directory);

        assertThat(PackedColumns.strided(first)).isTrue();
        assertThat(packed[1]).isSameAs(matrix); // already contiguous: not copied
        for (int i : new int[] {0, 2}) {
            WeightMatrix slice = i == 0 ? first : second;
            assertThat(PackedColumns.strided(packed[i])).isFalse();
            assertThat(packed[i].rowStride()).isEqualTo(GgmlType.Q8_0.bytesFor(slice.columns()));
            assertThat(packed[i].data().isReadOnly()).isTrue();
            float[] expected = new float[slice.columns()], actual = new float[slice.columns()];
            for (int row = 0; row < ROWS; row++) {
                Kernels.dequantizeRow(slice, row, expected, 0);
                Kernels.dequantizeRow(packed[i], row, actual, 0);
                assertThat(actual).as("row %d of slice %d", row, i).containsExactly(expected);
            }
        }
        // the products agree (the contiguous rows may take the short-row kernel, which sums in another order)
        float[] x = new float[96];
        Random random = new Random(5);
        for (int i = 0; i < x.length; i++) {
            x[i] = random.nextInt(-3, 4) / 4f;
        }
        float[] viaSlice = new float[ROWS], viaCopy = new float[ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvec(pool, first, x, viaSlice);
            Kernels.matvec(pool, packed[0], x, viaCopy);
        }
        for (int row = 0; row < ROWS; row++) {
            assertThat(viaCopy[row]).isCloseTo(viaSlice[row], within(1e-4f * (1 + Math.abs(viaSlice[row]))));
        }
        // the scratch file is gone once mapped: nothing is left behind in the directory
        try (var files = Files.list(directory)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void nothingStridedMeansNoScratchFile(@TempDir Path directory) throws IOException {
        WeightMatrix matrix = q8(4);
        assertThat(PackedColumns.pack(new WeightMatrix[] {matrix, matrix.rowSlice(8, 16)}, directory))
                .containsExactly(matrix, matrix.rowSlice(8, 16));
        try (var files = Files.list(directory)) {
            assertThat(files).isEmpty();
        }
    }
}
