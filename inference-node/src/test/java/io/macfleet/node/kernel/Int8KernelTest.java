package io.macfleet.node.kernel;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.generator.Quantizer;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The int8-activation Q8_0 kernel against a scalar int8 reference (exact) and the float reference (bounded). */
class Int8KernelTest {
    private static final int ROWS = 37;
    private static final int COLUMNS = 256;

    @BeforeEach
    void needsSixteenFloatLanes() {
        Assumptions.assumeTrue(Kernels.L == 16, "the int8 kernel is written for 512-bit vectors");
    }

    private static byte[] randomQ8(long seed, int rows, int columns) {
        Random random = new Random(seed);
        float[] values = new float[columns];
        long rowBytes = GgmlType.Q8_0.bytesFor(columns);
        byte[] bytes = new byte[(int) (rowBytes * rows)];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < columns; c++) {
                values[c] = (float) random.nextGaussian();
            }
            Quantizer.encode(GgmlType.Q8_0, values, 0, columns, bytes, (int) (r * rowBytes));
        }
        return bytes;
    }

    private static float[] randomVector(int n, long seed) {
        Random random = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (random.nextGaussian() * (1 + i % 7)); // blocks of different magnitudes
        }
        return x;
    }

    @Test
    void activationsQuantizeAsLlamaCppDoes() {
        float[] x = randomVector(COLUMNS, 1);
        x[40] = 0; // a block of zeros must give scale 0 and values 0, not NaN
        java.util.Arrays.fill(x, 64, 96, 0f);
        byte[] values = new byte[COLUMNS];
        float[] scales = new float[COLUMNS / 32];
        Kernels.quantizeActivations(x, COLUMNS, values, scales);
        for (int b = 0; b < COLUMNS / 32; b++) {
            float max = 0;
            for (int j = 0; j < 32; j++) {
                max = Math.max(max, Math.abs(x[b * 32 + j]));
            }
            float scale = max / 127f;
            assertThat(scales[b]).as("scale of block %d", b).isEqualTo(scale);
            for (int j = 0; j < 32; j++) {
                int expected = scale == 0 ? 0 : Math.round(x[b * 32 + j] * (1f / scale));
                assertThat(values[b * 32 + j]).as("block %d value %d", b, j).isEqualTo((byte) expected);
                assertThat(Math.abs(values[b * 32 + j] * scale - x[b * 32 + j])).isLessThanOrEqualTo(scale / 2 * 1.0001f);
            }
        }
        assertThat(scales[2]).isZero();
    }

    @Test
    void blockSumsAreExactIntegerDotProducts() {
        byte[] weights = randomQ8(2, ROWS, COLUMNS);
        // Extremes that would overflow a 16-bit sum of two products if the pairing were wrong: -128 weights (legal in
        // Q8_0 files from other quantizers) against -127 activations, and 127 against 127.
        for (int j = 0; j < 32; j++) {
            weights[2 + j] = (byte) -128;
            weights[34 + 2 + j] = (byte) 127;
        }
        byte[] activations = new byte[COLUMNS];
        Random random = new Random(3);
        for (int i = 0; i < COLUMNS; i++) {
            activations[i] = (byte) (random.nextInt(255) - 127);
        }
        for (int j = 0; j < 32; j++) {
            activations[j] = -127;
            activations[32 + j] = 127;
        }
        MemorySegment data = MemorySegment.ofArray(weights);
        long rowBytes = GgmlType.Q8_0.bytesFor(COLUMNS);
        for (int r = 0; r < ROWS; r++) {
            for (int b = 0; b < COLUMNS / 32; b++) {
                long block = r * rowBytes + b * 34L;
                int expected = 0;
                for (int j = 0; j < 32; j++) {
                    expected += weights[(int) block + 2 + j] * activations[b * 32 + j];
                }
                assertThat(Kernels.blockIntegerSum(data, block, activations, b)).as("row %d block %d", r, b).isEqualTo(expected);
            }
        }
        assertThat(Kernels.blockIntegerSum(data, 0, activations, 0)).isEqualTo(32 * 128 * 127);
        assertThat(Kernels.blockIntegerSum(data, 34, activations, 1)).isEqualTo(32 * 127 * 127);
    }

    @Test
    void matrixVectorMatchesTheScalarInt8ReferenceAndStaysWithinTheRoundingBoundOfTheFloatOne() {
        byte[] weights = randomQ8(4, ROWS, COLUMNS);
        WeightMatrix matrix = new WeightMatrix("test", GgmlType.Q8_0, MemorySegment.ofArray(weights), ROWS, COLUMNS,
                GgmlType.Q8_0.bytesFor(COLUMNS));
        float[] x = randomVector(COLUMNS, 5);
        byte[] values = new byte[COLUMNS];
        float[] scales = new float[COLUMNS / 32];
        Kernels.quantizeActivations(x, COLUMNS, values, scales);
        float[] w = ScalarReference.dequantize(GgmlType.Q8_0, matrix.data(), ROWS * COLUMNS);
        float[] product = new float[ROWS];
        try (WorkerPool pool = new WorkerPool(2)) {
            Kernels.matvecQ8Int8(pool, matrix, x, product); // nine groups of four rows, then one remainder row
        }
        for (int r = 0; r < ROWS; r++) {
            double int8Reference = 0, floatReference = 0, roundingBound = 0;
            for (int b = 0; b < COLUMNS / 32; b++) {
                long block = r * matrix.rowStride() + b * 34L;
                float weightScale = Float.float16ToFloat(matrix.data().get(
                        java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), block));
                long sum = 0;
                for (int j = 0; j < 32; j++) {
                    sum += (long) weights[(int) block + 2 + j] * values[b * 32 + j];
                    float weight = w[r * COLUMNS + b * 32 + j];
                    floatReference += (double) weight * x[b * 32 + j];
                    // each activation is off by at most half its block's scale
                    roundingBound += Math.abs(weight) * scales[b] / 2;
                }
                int8Reference += sum * ((double) weightScale * scales[b]);
            }
            // Same integer sums; only the float accumulation order differs (16 lanes, then a reduction).
            assertThat(product[r]).as("row %d against scalar int8", r).isCloseTo((float) int8Reference, within(1e-4f));
            assertThat(Kernels.dotQ8Int8(matrix.data(), r * matrix.rowStride(), values, scales, COLUMNS))
                    .as("single-row kernel, row %d", r).isCloseTo((float) int8Reference, within(1e-4f));
            assertThat((double) product[r]).as("row %d against float", r)
                    .isCloseTo(floatReference, within(roundingBound + 1e-4));
        }
    }
}
