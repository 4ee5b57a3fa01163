package io.macfleet.node.model;

import io.macfleet.node.kernel.WeightMatrix;

/**
 * Weights of one transformer block. Biases (Qwen2) and per-head Q/K norms (Qwen3) are null when absent. A
 * mixture-of-experts block (Qwen3 MoE) has {@code experts} instead of gate, up and down (then null).
 */
public record LayerWeights(int index, float[] attentionNorm, WeightMatrix query, WeightMatrix key, WeightMatrix value,
                           WeightMatrix output, float[] queryBias, float[] keyBias, float[] valueBias,
                           float[] queryNorm, float[] keyNorm, float[] ffnNorm, WeightMatrix gate, WeightMatrix up,
                           WeightMatrix down, ExpertWeights experts) {

    /** A dense block. */
    public LayerWeights(int index, float[] attentionNorm, WeightMatrix query, WeightMatrix key, WeightMatrix value,
                        WeightMatrix output, float[] queryBias, float[] keyBias, float[] valueBias,
                        float[] queryNorm, float[] keyNorm, float[] ffnNorm, WeightMatrix gate, WeightMatrix up,
                        WeightMatrix down) {
        this(index, attentionNorm, query, key, value, output, queryBias, keyBias, valueBias, queryNorm, keyNorm, ffnNorm,
                gate, up, down, null);
    }

    /**
     * The part of this layer that a tensor-parallel rank computes: query heads [firstHead, firstHead + headCount)
     * with KV heads [firstKvHead, firstKvHead + kvHeadCount) (whole KV groups, or one KV head replicated on the
     * ranks that share its query heads), and FFN units [firstUnit, firstUnit + unitCount). Q/K/V/gate/up are row
     * slices; the output and down projections are the matching column slices, whose partial results the ranks sum
     * (all-reduce). In a mixture-of-experts block the units are whole experts: the rank keeps experts
     * [firstUnit, firstUnit + unitCount) and the router, and its FFN output is the sum over the selected experts it holds.
     */
    public LayerWeights shard(LlamaConfig config, int firstHead, int headCount, int firstKvHead, int kvHeadCount,
                              int firstUnit, int unitCount) {
        int headDim = config.headDimension();
        int queryRow = firstHead * headDim;
        int queryRows = headCount * headDim;
        int kvRow = firstKvHead * headDim;
        int kvRows = kvHeadCount * headDim;
        return new LayerWeights(index, attentionNorm, query.rowSlice(queryRow, queryRows), key.rowSlice(kvRow, kvRows),
                value.rowSlice(kvRow, kvRows), output.columnSlice(queryRow, queryRows),
                slice(queryBias, queryRow, queryRows), slice(keyBias, kvRow, kvRows), slice(valueBias, kvRow, kvRows),
                queryNorm, keyNorm, ffnNorm, gate == null ? null : gate.rowSlice(firstUnit, unitCount),
                up == null ? null : up.rowSlice(firstUnit, unitCount), down == null ? null : down.columnSlice(firstUnit, unitCount),
                experts == null ? null : experts.localExperts(firstUnit, unitCount));
    }

    /** This layer with other attention output and down matrices (the same values, stored elsewhere). */
    public LayerWeights withOutputAndDown(WeightMatrix output, WeightMatrix down) {
        return new LayerWeights(index, attentionNorm, query, key, value, output, queryBias, keyBias, valueBias, queryNorm,
                keyNorm, ffnNorm, gate, up, down, experts);
    }

    private static float[] slice(float[] values, int from, int count) {
        return values == null ? null : java.util.Arrays.copyOfRange(values, from, from + count);
    }

    /** Bytes of matrices one token reads: of a mixture of experts, the router and the selected experts only. */
    public long matrixBytes() {
        long attention = query.byteSize() + key.byteSize() + value.byteSize() + output.byteSize();
        return attention + (experts != null ? experts.bytesPerToken() : gate.byteSize() + up.byteSize() + down.byteSize());
    }
}
