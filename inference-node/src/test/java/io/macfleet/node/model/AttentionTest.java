package io.macfleet.node.model;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class AttentionTest {

    /** Scalar reference: double accumulators, keys and values position-major. */
    private static double[] reference(float[] q, int qOffset, int headDim, float scale, float[][] keys, float[][] values,
                                      int length) {
        double[] scores = new double[length];
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < length; j++) {
            double dot = 0;
            for (int d = 0; d < headDim; d++) {
                dot += (double) q[qOffset + d] * keys[j][d];
            }
            scores[j] = dot * scale;
            max = Math.max(max, scores[j]);
        }
        double sum = 0;
        for (int j = 0; j < length; j++) {
            scores[j] = Math.exp(scores[j] - max);
            sum += scores[j];
        }
        double[] out = new double[headDim];
        for (int j = 0; j < length; j++) {
            for (int d = 0; d < headDim; d++) {
                out[d] += scores[j] / sum * values[j][d];
            }
        }
        return out;
    }

    @ParameterizedTest
    @CsvSource({"1,16,1,8", "4,64,1,32", "4,64,15,32", "4,64,64,64", "4,64,65,100", "4,64,200,520", "7,80,97,130",
            "2,128,333,333", "1,24,5,5", "3,64,70,70", "5,16,2,40"})
    void matchesScalarReferenceWithStaleEntriesPastTheLength(int group, int headDim, int length, int capacity) {
        Random random = new Random(group * 1000L + headDim * 10L + length);
        int kvHeads = 3, kvHead = 1;
        int padded = Attention.paddedPositions(capacity);
        // The cache's layout: each KV head's keys one run of transposed 64-position blocks, its values one run of
        // positions (headDim apart).
        float[] keys = new float[kvHeads * padded * headDim];
        float[] values = new float[kvHeads * capacity * headDim];
        int keyBase = kvHead * padded * headDim, valueBase = kvHead * capacity * headDim;
        // Entries past `length` are stale: large values that would dominate the softmax if they were read.
        java.util.Arrays.fill(keys, 50f);
        java.util.Arrays.fill(values, 1e6f);
        float[][] k = new float[length][headDim], v = new float[length][headDim];
        for (int j = 0; j < length; j++) {
            for (int d = 0; d < headDim; d++) {
                k[j][d] = (float) random.nextGaussian() * 3;
                v[j][d] = (float) random.nextGaussian();
                keys[keyBase + Attention.keyOffset(j, d, headDim)] = k[j][d];
                values[valueBase + j * headDim + d] = v[j][d];
            }
        }
        int qOffset = 5;
        float[] q = new float[qOffset + group * headDim + 3];
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) random.nextGaussian();
        }
        float scale = (float) (1 / Math.sqrt(headDim));
        float[] out = new float[q.length];
        float[] scores = new float[group * padded];
        Attention.attendGroup(q, qOffset, group, headDim, scale, keys, keyBase, values, valueBase, headDim, length, out,
                qOffset, scores, padded);
        for (int h = 0; h < group; h++) {
            double[] expected = reference(q, qOffset + h * headDim, headDim, scale, k, v, length);
            for (int d = 0; d < headDim; d++) {
                assertThat(out[qOffset + h * headDim + d]).as("head %d dimension %d", h, d)
                        .isCloseTo((float) expected[d], within(1e-4f));
            }
        }
        assertThat(out[0]).isZero();
        assertThat(out[qOffset + group * headDim]).isZero();
    }
}
