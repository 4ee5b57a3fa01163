package io.macfleet.node.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Attention of the query heads that share one KV head, vectorized over positions. The KV cache stores keys
 * transposed in blocks of 64 positions (for each block, each of the head's dimensions holds the keys of the
 * block's 64 positions next to each other), so the scores of 4 x (vector length) positions are multiply-adds of
 * contiguous key vectors with a broadcast query element: no horizontal reduction per position, as a dot product
 * per position needs (that loop took 6 to 7% of a decode step at a 512-token context, more than the output
 * layer). A KV head's keys are one contiguous run of blocks, and its values (position-major) another, so both are
 * read as forward streams: in decode they come from memory (a whole layer's weights pass between two reads).
 */
final class Attention {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();

    /** Positions per block of transposed keys; capacities are padded to a multiple of it. */
    static final int BLOCK = 64;

    private Attention() {
    }

    /** {@code capacity} rounded up to whole key blocks. */
    static int paddedPositions(int capacity) {
        return (capacity + BLOCK - 1) / BLOCK * BLOCK;
    }

    /** Offset of key dimension {@code d} of position {@code j} from the KV head's first key. */
    static int keyOffset(int j, int d, int headDim) {
        return (j / BLOCK) * BLOCK * headDim + d * BLOCK + j % BLOCK;
    }

    /**
     * For query heads {@code h} in [0, heads): {@code out[outOffset + h * headDim ..] = softmax(scale * q_h · K) · V}
     * over positions [0, length).
     *
     * @param q           query head h at {@code qOffset + h * headDim}
     * @param keys        key dimension d of position j at {@code keyBase + keyOffset(j, d, headDim)}, readable up to
     *                    {@code length} rounded up to a whole block
     * @param values      value dimension d of position j at {@code valueBase + j * valueStride + d}
     * @param scores      scratch of at least {@code heads * scoreStride} floats
     * @param scoreStride at least {@code length} rounded up to a whole block
     */
    static void attendGroup(float[] q, int qOffset, int heads, int headDim, float scale, float[] keys, int keyBase,
                            float[] values, int valueBase, int valueStride, int length, float[] out, int outOffset,
                            float[] scores, int scoreStride) {
        int padded = (length + 4 * L - 1) / (4 * L) * (4 * L);
        // Scores, 4 x L positions at a time, for two heads per pass (8 independent accumulators): the block's keys
        // (headDim x 4 x L floats) stay in L1 while every head of the group uses them.
        for (int j = 0; j < padded; j += 4 * L) {
            int k = keyBase + keyOffset(j, 0, headDim);
            int h = 0;
            for (; h + 2 <= heads; h += 2) {
                scoresTwoHeads(q, qOffset + h * headDim, headDim, keys, k, scores, h * scoreStride + j, scoreStride);
            }
            if (h < heads) {
                scoresOneHead(q, qOffset + h * headDim, headDim, keys, k, scores, h * scoreStride + j);
            }
        }
        for (int h = 0; h < heads; h++) {
            softmax(scores, h * scoreStride, length, padded, scale);
        }
        int h = 0;
        if (headDim == 4 * L) {
            // Two heads per pass over the value rows, so each row is read from cache once per pair.
            for (; h + 2 <= heads; h += 2) {
                valuesTwoHeads(scores, h * scoreStride, scoreStride, length, values, valueBase, valueStride, out,
                        outOffset + h * headDim);
            }
        }
        for (; h < heads; h++) {
            valuesAnyWidth(scores, h * scoreStride, length, headDim, values, valueBase, valueStride, out,
                    outOffset + h * headDim);
        }
    }

    /**
     * Replaces raw scores {@code s} in {@code [row, row + length)} by {@code exp(scale * (s - max)) / sum} and the
     * padding up to {@code row + padded} by zeros.
     */
    private static void softmax(float[] scores, int row, int length, int padded, float scale) {
        // Lanes past the last position hold products with stale or empty cache entries: exclude them.
        java.util.Arrays.fill(scores, row + length, row + padded, Float.NEGATIVE_INFINITY);
        FloatVector max = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        for (int j = 0; j < padded; j += L) {
            max = max.max(FloatVector.fromArray(F, scores, row + j));
        }
        FloatVector shift = FloatVector.broadcast(F, -max.reduceLanes(VectorOperators.MAX) * scale);
        FloatVector scaleVector = FloatVector.broadcast(F, scale);
        FloatVector sum = FloatVector.zero(F);
        for (int j = 0; j < padded; j += L) {
            FloatVector e = FloatVector.fromArray(F, scores, row + j).fma(scaleVector, shift).lanewise(VectorOperators.EXP);
            e.intoArray(scores, row + j);
            sum = sum.add(e);
        }
        FloatVector inverse = FloatVector.broadcast(F, 1f / sum.reduceLanes(VectorOperators.ADD));
        for (int j = 0; j < padded; j += L) {
            FloatVector.fromArray(F, scores, row + j).mul(inverse).intoArray(scores, row + j);
        }
    }

    private static void scoresTwoHeads(float[] q, int qh, int headDim, float[] keys, int k, float[] scores, int s,
                                       int scoreStride) {
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        FloatVector b0 = FloatVector.zero(F), b1 = FloatVector.zero(F), b2 = FloatVector.zero(F), b3 = FloatVector.zero(F);
        for (int d = 0; d < headDim; d++, k += BLOCK) {
            FloatVector qa = FloatVector.broadcast(F, q[qh + d]);
            FloatVector qb = FloatVector.broadcast(F, q[qh + headDim + d]);
            FloatVector k0 = FloatVector.fromArray(F, keys, k), k1 = FloatVector.fromArray(F, keys, k + L);
            FloatVector k2 = FloatVector.fromArray(F, keys, k + 2 * L), k3 = FloatVector.fromArray(F, keys, k + 3 * L);
            a0 = k0.fma(qa, a0);
            a1 = k1.fma(qa, a1);
            a2 = k2.fma(qa, a2);
            a3 = k3.fma(qa, a3);
            b0 = k0.fma(qb, b0);
            b1 = k1.fma(qb, b1);
            b2 = k2.fma(qb, b2);
            b3 = k3.fma(qb, b3);
        }
        a0.intoArray(scores, s);
        a1.intoArray(scores, s + L);
        a2.intoArray(scores, s + 2 * L);
        a3.intoArray(scores, s + 3 * L);
        // The second head's scores row is the next one.
        b0.intoArray(scores, s + scoreStride);
        b1.intoArray(scores, s + scoreStride + L);
        b2.intoArray(scores, s + scoreStride + 2 * L);
        b3.intoArray(scores, s + scoreStride + 3 * L);
    }

    private static void scoresOneHead(float[] q, int qh, int headDim, float[] keys, int k, float[] scores, int s) {
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        for (int d = 0; d < headDim; d++, k += BLOCK) {
            FloatVector qa = FloatVector.broadcast(F, q[qh + d]);
            a0 = FloatVector.fromArray(F, keys, k).fma(qa, a0);
            a1 = FloatVector.fromArray(F, keys, k + L).fma(qa, a1);
            a2 = FloatVector.fromArray(F, keys, k + 2 * L).fma(qa, a2);
            a3 = FloatVector.fromArray(F, keys, k + 3 * L).fma(qa, a3);
        }
        a0.intoArray(scores, s);
        a1.intoArray(scores, s + L);
        a2.intoArray(scores, s + 2 * L);
        a3.intoArray(scores, s + 3 * L);
    }

    /** Weighted sums of value rows for two heads of exactly 4 vectors (64 dimensions with AVX-512). */
    private static void valuesTwoHeads(float[] scores, int row, int scoreStride, int length, float[] values, int v,
                                       int valueStride, float[] out, int o) {
        FloatVector c0 = FloatVector.zero(F), c1 = FloatVector.zero(F), c2 = FloatVector.zero(F), c3 = FloatVector.zero(F);
        FloatVector d0 = FloatVector.zero(F), d1 = FloatVector.zero(F), d2 = FloatVector.zero(F), d3 = FloatVector.zero(F);
        int second = row + scoreStride;
        for (int j = 0; j < length; j++, v += valueStride) {
            FloatVector p = FloatVector.broadcast(F, scores[row + j]);
            FloatVector r = FloatVector.broadcast(F, scores[second + j]);
            FloatVector v0 = FloatVector.fromArray(F, values, v), v1 = FloatVector.fromArray(F, values, v + L);
            FloatVector v2 = FloatVector.fromArray(F, values, v + 2 * L), v3 = FloatVector.fromArray(F, values, v + 3 * L);
            c0 = v0.fma(p, c0);
            c1 = v1.fma(p, c1);
            c2 = v2.fma(p, c2);
            c3 = v3.fma(p, c3);
            d0 = v0.fma(r, d0);
            d1 = v1.fma(r, d1);
            d2 = v2.fma(r, d2);
            d3 = v3.fma(r, d3);
        }
        c0.intoArray(out, o);
        c1.intoArray(out, o + L);
        c2.intoArray(out, o + 2 * L);
        c3.intoArray(out, o + 3 * L);
        d0.intoArray(out, o + 4 * L);
        d1.intoArray(out, o + 5 * L);
        d2.intoArray(out, o + 6 * L);
        d3.intoArray(out, o + 7 * L);
    }

    /** Weighted sum of value rows for any head size: one vector of dimensions at a time, four rows per pass. */
    private static void valuesAnyWidth(float[] scores, int row, int length, int headDim, float[] values, int valueBase,
                                       int valueStride, float[] out, int o) {
        int d = 0;
        for (; d + L <= headDim; d += L) {
            FloatVector c0 = FloatVector.zero(F), c1 = FloatVector.zero(F), c2 = FloatVector.zero(F), c3 = FloatVector.zero(F);
            int v = valueBase + d;
            int j = 0;
            for (; j + 4 <= length; j += 4, v += 4 * valueStride) {
                c0 = FloatVector.fromArray(F, values, v).fma(FloatVector.broadcast(F, scores[row + j]), c0);
                c1 = FloatVector.fromArray(F, values, v + valueStride).fma(FloatVector.broadcast(F, scores[row + j + 1]), c1);
                c2 = FloatVector.fromArray(F, values, v + 2 * valueStride).fma(FloatVector.broadcast(F, scores[row + j + 2]), c2);
                c3 = FloatVector.fromArray(F, values, v + 3 * valueStride).fma(FloatVector.broadcast(F, scores[row + j + 3]), c3);
            }
            for (; j < length; j++, v += valueStride) {
                c0 = FloatVector.fromArray(F, values, v).fma(FloatVector.broadcast(F, scores[row + j]), c0);
            }
            c0.add(c1).add(c2.add(c3)).intoArray(out, o + d);
        }
        for (; d < headDim; d++) {
            float acc = 0;
            for (int j = 0; j < length; j++) {
                acc += scores[row + j] * values[valueBase + j * valueStride + d];
            }
            out[o + d] = acc;
        }
    }
}
