package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;

import java.util.Set;

/**
 * Llama, Mistral, Qwen2, Qwen3 and Qwen3-MoE: one forward pass ({@link LlamaModel}) with what sets them apart read
 * from the file (Q/K/V biases, per-head Q/K norms, experts, RoPE on pairs or halves). Tensor parallelism splits
 * heads and FFN units ({@code ClusterNode}).
 */
final class LlamaFamily implements Architecture {
    @Override
    public Set<String> names() {
        return Set.of("llama", "mistral", "qwen2", "qwen3", "qwen3moe");
    }

    @Override
    public LlamaConfig config(GgufFile file) {
        String arch = file.string("general.architecture");
        int dimension = LlamaConfig.positive(file, arch + ".embedding_length");
        int heads = LlamaConfig.positive(file, arch + ".attention.head_count");
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
                ? LlamaConfig.positive(file, arch + ".vocab_size")
                : file.array("tokenizer.ggml.tokens").size();
        int ropeDimensions = (int) file.integer(arch + ".rope.dimension_count", headDimension);
        if (ropeDimensions <= 0 || ropeDimensions > headDimension || ropeDimensions % 2 != 0) {
            throw file.error("metadata '" + arch + ".rope.dimension_count' = " + ropeDimensions
                    + " must be even and at most the head dimension " + headDimension);
        }
        float epsilon = (float) file.number(arch + ".attention.layer_norm_rms_epsilon", 1e-5);
        int context = LlamaConfig.positive(file, arch + ".context_length");
        int experts = 0, expertsUsed = 0, expertFeedForward = 0;
        if (file.metadata().containsKey(arch + ".expert_count")) {
            experts = LlamaConfig.positive(file, arch + ".expert_count");
            expertsUsed = LlamaConfig.positive(file, arch + ".expert_used_count");
            expertFeedForward = LlamaConfig.positive(file, arch + ".expert_feed_forward_length");
            if (expertsUsed > experts) {
                throw file.error("metadata '" + arch + ".expert_used_count' = " + expertsUsed + " exceeds '" + arch
                        + ".expert_count' = " + experts);
            }
        } else if (arch.endsWith("moe")) {
            throw file.error("missing metadata '" + arch + ".expert_count' (architecture " + arch + " is a mixture of experts)");
        }
        // A mixture of experts may leave out the dense FFN width (llama.cpp then uses the experts' own width).
        int feedForward = experts > 0 && !file.metadata().containsKey(arch + ".feed_forward_length")
                ? expertFeedForward * expertsUsed : LlamaConfig.positive(file, arch + ".feed_forward_length");
        return new LlamaConfig(arch, file.string("general.name", arch), dimension, LlamaConfig.positive(file, arch + ".block_count"),
                heads, kvHeads, headDimension, feedForward, vocabulary, context,
                epsilon, (float) file.number(arch + ".rope.freq_base", 10000.0), ropeDimensions,
                arch.startsWith("qwen"), file.string(arch + ".rope.scaling.type", "none"),
                (float) file.number(arch + ".rope.scaling.factor", 1.0),
                (int) file.integer(arch + ".rope.scaling.original_context_length", context),
                (float) file.number(arch + ".rope.scaling.low_freq_factor", 1.0),
                (float) file.number(arch + ".rope.scaling.high_freq_factor", 4.0), experts, expertsUsed, expertFeedForward);
    }

    @Override
    public DecoderModel load(GgufFile file, LlamaConfig config, LayerRange layers, WorkerPool pool) {
        return new LlamaModel(LlamaWeights.load(file, config, layers), pool);
    }

    @Override
    public boolean tensorParallel() {
        return true;
    }
}
