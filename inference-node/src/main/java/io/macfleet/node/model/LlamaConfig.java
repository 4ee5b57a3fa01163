package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;

/**
 * Hyperparameters of a Llama-family model, read from GGUF metadata ({@code <arch>.*} keys as llama.cpp writes them).
 * Llama and Mistral rotate interleaved pairs (GGUF Q/K weights are permuted for that); Qwen2/Qwen3 rotate halves.
 */
public record LlamaConfig(String architecture, String name, int dimension, int layers, int heads, int kvHeads,
                          int headDimension, int feedForward, int vocabulary, int contextLength, float rmsEpsilon,
                          float ropeTheta, int ropeDimensions, boolean ropeHalves, String ropeScalingType,
                          float ropeScalingFactor, int ropeOriginalContext, float ropeLowFrequencyFactor,
                          float ropeHighFrequencyFactor, int experts, int expertsUsed, int expertFeedForward) {

    /** A dense model (no experts). */
    public LlamaConfig(String architecture, String name, int dimension, int layers, int heads, int kvHeads,
                       int headDimension, int feedForward, int vocabulary, int contextLength, float rmsEpsilon,
                       float ropeTheta, int ropeDimensions, boolean ropeHalves, String ropeScalingType,
                       float ropeScalingFactor, int ropeOriginalContext, float ropeLowFrequencyFactor,
                       float ropeHighFrequencyFactor) {
        this(architecture, name, dimension, layers, heads, kvHeads, headDimension, feedForward, vocabulary, contextLength,
                rmsEpsilon, ropeTheta, ropeDimensions, ropeHalves, ropeScalingType, ropeScalingFactor, ropeOriginalContext,
                ropeLowFrequencyFactor, ropeHighFrequencyFactor, 0, 0, 0);
    }

    /** Whether the FFN of every block is a mixture of experts ({@link MixtureOfExperts}). */
    public boolean mixtureOfExperts() {
        return experts > 0;
    }

    /** The hyperparameters of a file of any registered architecture ({@link Architectures}). */
    public static LlamaConfig from(GgufFile file) {
        return Architectures.of(file).config(file);
    }

    static int positive(GgufFile file, String key) {
        long value = file.integer(key);
        if (value <= 0 || value > Integer.MAX_VALUE) {
            throw file.error("metadata '" + key + "' must be a positive 32-bit integer, got " + value);
        }
        return (int) value;
    }

    public int queryDimension() {
        return heads * headDimension;
    }

    public int kvDimension() {
        return kvHeads * headDimension;
    }

    /**
     * The configuration a tensor-parallel rank computes with: its own query heads, KV heads and FFN units; the
     * forward pass then runs unchanged on the shard (group = heads / kvHeads stays right: a rank holds whole KV
     * groups, or one replicated KV head with some of its query heads).
     */
    public LlamaConfig shard(int shardHeads, int shardKvHeads, int shardFeedForward) {
        return new LlamaConfig(architecture, name, dimension, layers, shardHeads, shardKvHeads, headDimension,
                shardFeedForward, vocabulary, contextLength, rmsEpsilon, ropeTheta, ropeDimensions, ropeHalves,
                ropeScalingType, ropeScalingFactor, ropeOriginalContext, ropeLowFrequencyFactor, ropeHighFrequencyFactor,
                experts, expertsUsed, expertFeedForward);
    }

    /** The configuration of a pipeline stage's KV cache: {@code stageLayers} layers. */
    public LlamaConfig stage(int stageLayers) {
        return new LlamaConfig(architecture, name, dimension, stageLayers, heads, kvHeads, headDimension, feedForward,
                vocabulary, contextLength, rmsEpsilon, ropeTheta, ropeDimensions, ropeHalves, ropeScalingType,
                ropeScalingFactor, ropeOriginalContext, ropeLowFrequencyFactor, ropeHighFrequencyFactor, experts, expertsUsed,
                expertFeedForward);
    }

    /** Bytes of key and value cache for the given number of positions. */
    public long kvCacheBytes(int positions) {
        return 2L * layers * positions * kvDimension() * Float.BYTES;
    }
}
