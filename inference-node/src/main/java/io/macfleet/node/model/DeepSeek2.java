package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;

import java.util.Set;

/**
 * DeepSeek V2/V3 and Kimi K2 as llama.cpp stores them ({@code general.architecture = deepseek2}, llama.cpp's
 * src/models/deepseek2.cpp): multi-head latent attention with the split {@code attn_k_b}/{@code attn_v_b} tensors
 * (files that carry {@code attention.key_length_mla}), a mixture of experts with shared experts after
 * {@code leading_dense_block_count} dense blocks, softmax or sigmoid routing, YaRN RoPE. Metadata the node does not
 * implement is refused naming its key. Forward pass: {@link DeepSeek2Model}.
 */
final class DeepSeek2 implements Architecture {
    static final String NAME = "deepseek2";

    /**
     * What DeepSeek adds to the common hyperparameters ({@code base}: heads, {@code headDimension} =
     * {@code key_length_mla}, {@code ropeDimensions} = the rotated part of a key, experts). {@code queryRank} 0 means a
     * plain {@code attn_q} (the Lite models). RoPE: YaRN as llama.cpp computes it (frequency scale, extrapolation mix
     * between the correction dimensions, the magnitude {@code ropeScale} on the rotated parts, {@code attentionScale}
     * for the scores).
     */
    record Hyperparameters(LlamaConfig base, int queryRank, int kvRank, int keyNope, int keyRope, int valueHead,
                           int leadingDense, int sharedExperts, ExpertRouting routing, float frequencyScale,
                           float extrapolation, float correctionLow, float correctionHigh, float ropeScale,
                           float attentionScale) {

        /** Values of the latent cache per position and layer: the compressed KV and the rotated key part. */
        int latentWidth() {
            return kvRank + keyRope;
        }
    }

    @Override
    public Set<String> names() {
        return Set.of(NAME);
    }

    @Override
    public LlamaConfig config(GgufFile file) {
        return hyperparameters(file).base();
    }

    @Override
    public DecoderModel load(GgufFile file, LlamaConfig config, LayerRange layers, WorkerPool pool) {
        return new DeepSeek2Model(hyperparameters(file), file, layers, pool);
    }

    @Override
    public boolean tensorParallel() {
        return true;
    }

    @Override
    public LlamaConfig attentionOutputView(GgufFile file, LlamaConfig config) {
        Hyperparameters h = hyperparameters(file);
        return new LlamaConfig(config.architecture(), config.name(), config.dimension(), config.layers(), config.heads(),
                config.kvHeads(), h.valueHead(), config.feedForward(), config.vocabulary(), config.contextLength(),
                config.rmsEpsilon(), config.ropeTheta(), config.ropeDimensions(), config.ropeHalves(),
                config.ropeScalingType(), config.ropeScalingFactor(), config.ropeOriginalContext(),
                config.ropeLowFrequencyFactor(), config.ropeHighFrequencyFactor(), config.experts(), config.expertsUsed(),
                config.expertFeedForward());
    }

    /**
     * Heads split across ranks (their query rows, their slices of attn_k_b and attn_v_b, the matching columns of
     * attn_output); the low-rank query and latent projections replicated (each rank needs the whole latent row, and
     * they are small: kv_lora_rank + rope rows); experts dealt out whole; dense and shared-expert FFN rows split in
     * the same proportions; the output matrix by vocabulary rows. The ranks' attention and FFN outputs are partial sums.
     */
    @Override
    public DecoderModel loadTensorShard(GgufFile file, LlamaConfig config, TensorSlice slice, WorkerPool pool) {
        return new DeepSeek2Model(hyperparameters(file), file, new LayerRange(0, config.layers()), pool, slice);
    }

    static Hyperparameters hyperparameters(GgufFile file) {
        String p = NAME + ".";
        int dimension = LlamaConfig.positive(file, p + "embedding_length");
        int allLayers = LlamaConfig.positive(file, p + "block_count");
        int nextToken = (int) file.integer(p + "nextn_predict_layers", 0);
        if (nextToken < 0 || nextToken >= allLayers) {
            throw file.error("metadata '" + p + "nextn_predict_layers' = " + nextToken + " must be 0.." + (allLayers - 1));
        }
        int layers = allLayers - nextToken; // as llama.cpp, the multi-token-prediction blocks are not run
        int heads = LlamaConfig.positive(file, p + "attention.head_count");
        long keyLength = file.integer(p + "attention.key_length_mla", 0);
        long valueLength = file.integer(p + "attention.value_length_mla", 0);
        if (keyLength <= 0 || valueLength <= 0) {
            throw file.error("missing metadata '" + p + "attention.key_length_mla' / '" + p + "attention.value_length_mla':"
                    + " only files with multi-head latent attention tensors (attn_k_b, attn_v_b) are supported, not the"
                    + " older attn_kv_b layout");
        }
        int keyRope = LlamaConfig.positive(file, p + "rope.dimension_count");
        int keyNope = (int) keyLength - keyRope;
        if (keyNope < 1 || keyRope % 2 != 0) {
            throw file.error("metadata '" + p + "rope.dimension_count' = " + keyRope + " must be even and below '" + p
                    + "attention.key_length_mla' = " + keyLength);
        }
        int kvRank = LlamaConfig.positive(file, p + "attention.kv_lora_rank");
        long queryRank = file.integer(p + "attention.q_lora_rank", 0);
        if (queryRank < 0) {
            throw file.error("metadata '" + p + "attention.q_lora_rank' = " + queryRank + " must not be negative");
        }
        int vocabulary = file.metadata().containsKey(p + "vocab_size")
                ? LlamaConfig.positive(file, p + "vocab_size") : file.array("tokenizer.ggml.tokens").size();
        int context = LlamaConfig.positive(file, p + "context_length");
        int leadingDense = (int) file.integer(p + "leading_dense_block_count", 0);
        if (leadingDense < 0 || leadingDense > layers) {
            throw file.error("metadata '" + p + "leading_dense_block_count' = " + leadingDense + " must be 0.." + layers);
        }
        int feedForward = leadingDense > 0 ? LlamaConfig.positive(file, p + "feed_forward_length") : 0;
        int experts = LlamaConfig.positive(file, p + "expert_count");
        int expertsUsed = LlamaConfig.positive(file, p + "expert_used_count");
        int expertWidth = LlamaConfig.positive(file, p + "expert_feed_forward_length");
        int shared = LlamaConfig.positive(file, p + "expert_shared_count");
        if (expertsUsed > experts) {
            throw file.error("metadata '" + p + "expert_used_count' = " + expertsUsed + " exceeds '" + p + "expert_count' = " + experts);
        }
        ExpertRouting.Gating gating;
        if (file.metadata().containsKey(p + "expert_gating_func")) {
            long id = file.integer(p + "expert_gating_func");
            gating = ExpertRouting.Gating.byId(id);
            if (gating == null) {
                throw file.error("metadata '" + p + "expert_gating_func' = " + id + " is not supported (1 softmax, 2 sigmoid)");
            }
        } else if ((layers == 47 || layers == 48) && vocabulary == 154880) {
            // llama.cpp takes sigmoid for this one model family (GLM 4.7 Lite) without the key; not verified here
            throw file.error("missing metadata '" + p + "expert_gating_func' for a GLM 4.7 Lite shaped model");
        } else {
            gating = ExpertRouting.Gating.SOFTMAX; // DeepSeek V2 and V2.5 files carry no key
        }
        int groups = (int) file.integer(p + "expert_group_count", 0);
        int groupsUsed = (int) file.integer(p + "expert_group_used_count", 0);
        if (groups > 1 && (experts % groups != 0 || groupsUsed <= 0 || groupsUsed >= groups || groups >= experts)) {
            throw file.error("metadata '" + p + "expert_group_count' = " + groups + " / '" + p + "expert_group_used_count' = "
                    + groupsUsed + " must divide the " + experts + " experts with 0 < used < groups");
        }
        if (file.number(p + "attention.temperature_scale", 0) != 0) {
            throw file.error("metadata '" + p + "attention.temperature_scale' (attention temperature tuning) is not supported");
        }
        ExpertRouting routing = new ExpertRouting(gating, null, file.bool(p + "expert_weights_norm", false),
                (float) file.number(p + "expert_weights_scale", 0), groups, groupsUsed);

        // RoPE scaling as llama.cpp's llama_context and the deepseek2 graph compute it.
        float base = (float) file.number(p + "rope.freq_base", 10000.0);
        String scaling = file.string(p + "rope.scaling.type", "none");
        double factor = file.number(p + "rope.scaling.factor", 0);
        boolean yarn = scaling.equals("yarn");
        if (!yarn && !scaling.equals("none") && !(scaling.equals("linear") && (factor == 0 || factor == 1))) {
            throw file.error("metadata '" + p + "rope.scaling.type' = '" + scaling + "' (factor " + factor
                    + ") is not supported for deepseek2 (none or yarn)");
        }
        float frequencyScale = yarn && factor != 0 ? (float) (1.0 / factor) : 1f;
        float extrapolation = yarn ? 1f : 0f;
        int originalContext = (int) file.integer(p + "rope.scaling.original_context_length", context);
        float logMultiplier = (float) (file.number(p + "rope.scaling.yarn_log_multiplier", 0) / 0.1f);
        float attentionFactor = 1f;
        if (extrapolation != 0) {
            float scale = 1f / frequencyScale;
            // with the log multiplier, llama.cpp takes mscale = mscale_all_dim for deepseek2: their ratio is 1
            attentionFactor = logMultiplier != 0 ? 1f : mscale(scale, 1f);
            attentionFactor *= 1f / (1f + 0.1f * (float) Math.log(scale));
        }
        attentionFactor *= (float) file.number(p + "rope.scaling.attn_factor", 1.0);
        float logInverse = (float) Math.log(1.0 / frequencyScale);
        float ropeScale = extrapolation != 0 ? attentionFactor * (1f + 0.1f * logInverse) : attentionFactor;
        float originalFactor = attentionFactor * (1f + 0.1f * logInverse);
        float mscale = originalFactor * (1f + 0.1f * logMultiplier * logInverse);
        float attentionScale = (float) (mscale * mscale / Math.sqrt(keyLength));
        float low = (float) Math.floor(correctionDimension(keyRope, originalContext, 32f, base));
        float high = (float) Math.ceil(correctionDimension(keyRope, originalContext, 1f, base));
        low = Math.max(0, low);
        high = Math.min(keyRope - 1, high);

        LlamaConfig common = new LlamaConfig(NAME, file.string("general.name", NAME), dimension, layers, heads, heads,
                (int) keyLength, feedForward, vocabulary, context,
                (float) file.number(p + "attention.layer_norm_rms_epsilon", 1e-6), base, keyRope, false, scaling,
                (float) (factor == 0 ? 1 : factor), originalContext, 1f, 4f, experts, expertsUsed, expertWidth);
        return new Hyperparameters(common, (int) queryRank, kvRank, keyNope, keyRope, (int) valueLength, leadingDense,
                shared, routing, frequencyScale, extrapolation, low, high, ropeScale, attentionScale);
    }

    private static float mscale(float scale, float mscale) {
        return scale <= 1f ? 1f : 0.1f * mscale * (float) Math.log(scale) + 1f;
    }

    /** ggml_rope_yarn_corr_dim: the dimension whose wavelength fits {@code rotations} times in the original context. */
    private static double correctionDimension(int dimensions, int originalContext, float rotations, float base) {
        return dimensions * Math.log(originalContext / (rotations * 2 * Math.PI)) / (2 * Math.log(base));
    }
}
