package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;

import java.util.Set;

/**
 * Hyperparameters of a Llama-family model, read from GGUF metadata ({@code <arch>.*} keys as llama.cpp writes them).
 * Llama and Mistral rotate interleaved pairs (GGUF Q/K weights are permuted for that); Qwen2/Qwen3 rotate halves.
 */
public record LlamaConfig(String architecture, String name, int dimension, int layers, int heads, int kvHeads,
                          int headDimension, int feedForward, int vocabulary, int contextLength, float rmsEpsilon,
                          float ropeTheta, int ropeDimensions, boolean ropeHalves, String ropeScalingType,
                          float ropeScalingFactor, int ropeOriginalContext, float ropeLowFrequencyFactor,
                          float ropeHighFrequencyFactor, int experts, int expertsUsed, int expertFeedForward) {

    public static final Set<String> ARCHITECTURES = Set.of("llama", "mistral", "qwen2", "qwen3", "qwen3moe");

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

    public static LlamaConfig from(GgufFile file) {
        String arch = file.string("general.architecture");
        if (!ARCHITECTURES.contains(arch)) {
            throw file.error("unsupported architecture '" + arch + "' in metadata 'general.architecture' (supported: "
                    + String.join(", ", ARCHITECTURES.stream().sorted().toList()) + ")");
        }
        int dimension = positive(file, arch + ".embedding_length");
        int heads = positive(file, arch + ".attention.head_count");
        int kvHeads = (int) file.integer(arch + ".attention.head_count_kv", heads);
        if (kvHeads <= 0 || heads % kvHeads != 0) {
            throw file.error("metadata '" + arch + ".attention.head_count_kv' = " + kvHeads
                    + " must divide '" + arch + ".attention.head_count' = " + heads);
        }
        int headDimension = (int) file.integer(arch + ".attention.key_length", dimension / heads);
        if (headDimension <= 0 || headDimension % 2 != 0) {
            throw file.error("head dimension " + headDimension + " must be positive and even");
        }
        int vocabulary = file.metadata().containsKey(arch + ".vocab_size")
                ? positive(file, arch + ".vocab_size")
                : file.array("tokenizer.ggml.tokens").size();
        int ropeDimensions = (int) file.integer(arch + ".rope.dimension_count", headDimension);
        if (ropeDimensions <= 0 || ropeDimensions > headDimension || ropeDimensions % 2 != 0) {
            throw file.error("metadata '" + arch + ".rope.dimension_count' = " + ropeDimensions
                    + " must be even and at most the head dimension " + headDimension);
        }
        float epsilon = (float) file.number(arch + ".attention.layer_norm_rms_epsilon", 1e-5);
        int context = positive(file, arch + ".context_length");
        int experts = 0, expertsUsed = 0, expertFeedForward = 0;
        if (file.metadata().containsKey(arch + ".expert_count")) {
            experts = positive(file, arch + ".expert_count");
            expertsUsed = positive(file, arch + ".expert_used_count");
            expertFeedForward = positive(file, arch + ".expert_feed_forward_length");
            if (expertsUsed > experts) {
                throw file.error("metadata '" + arch + ".expert_used_count' = " + expertsUsed + " exceeds '" + arch
                        + ".expert_count' = " + experts);
            }
        } else if (arch.endsWith("moe")) {
            throw file.error("missing metadata '" + arch + ".expert_count' (architecture " + arch + " is a mixture of experts)");
        }
        // A mixture of experts may leave out the dense FFN width (llama.cpp then uses the experts' own width).
        int feedForward = experts > 0 && !file.metadata().containsKey(arch + ".feed_forward_length")
                ? expertFeedForward * expertsUsed : positive(file, arch + ".feed_forward_length");
        return new LlamaConfig(arch, file.string("general.name", arch), dimension, positive(file, arch + ".block_count"),
                heads, kvHeads, headDimension, feedForward, vocabulary, context,
                epsilon, (float) file.number(arch + ".rope.freq_base", 10000.0), ropeDimensions,
                arch.startsWith("qwen"), file.string(arch + ".rope.scaling.type", "none"),
                (float) file.number(arch + ".rope.scaling.factor", 1.0),
                (int) file.integer(arch + ".rope.scaling.original_context_length", context),
                (float) file.number(arch + ".rope.scaling.low_freq_factor", 1.0),
                (float) file.number(arch + ".rope.scaling.high_freq_factor", 4.0), experts, expertsUsed, expertFeedForward);
    }

    private static int positive(GgufFile file, String key) {
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
