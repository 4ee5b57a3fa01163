package io.macfleet.node.model;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.gguf.GgufFormatException;
import io.macfleet.node.gguf.GgufWriter;
import io.macfleet.node.kernel.WorkerPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * deepseek2 beyond the greedy comparison with llama.cpp ({@link LlamaCppGreedyTest}): metadata the node does not
 * implement is refused naming its key; the latent KV cache holds layers x (kv_lora_rank + qk_rope_head_dim) values
 * per position; a prompt in one batch gives the logits of the same prompt token by token; the routing rules.
 */
class DeepSeek2Test {
    @TempDir
    Path directory;

    private Path write(String name, Consumer<GgufWriter> metadata) throws IOException {
        Path file = directory.resolve(name + ".gguf");
        ModelGenerator.writeDeepSeek2(ModelGenerator.TINY, true, QuantizationMix.F32, 3, file, metadata);
        return file;
    }

    private void assertRefused(Consumer<GgufWriter> metadata, String key) throws IOException {
        Path file = write(key.replace('.', '-'), metadata);
        try (GgufFile gguf = GgufFile.open(file)) {
            assertThatThrownBy(() -> LlamaConfig.from(gguf)).isInstanceOf(GgufFormatException.class)
                    .hasMessageContaining("'" + key + "'");
        }
    }

    @Test
    void unsupportedMetadataIsRefusedNamingTheKey() throws IOException {
        assertRefused(w -> w.remove("deepseek2.expert_gating_func").putUInt32("deepseek2.expert_gating_func", 4),
                "deepseek2.expert_gating_func");
        assertRefused(w -> w.remove("deepseek2.rope.scaling.type").putString("deepseek2.rope.scaling.type", "longrope"),
                "deepseek2.rope.scaling.type");
        assertRefused(w -> w.remove("deepseek2.attention.key_length_mla"), "deepseek2.attention.key_length_mla");
        assertRefused(w -> w.putFloat32("deepseek2.attention.temperature_scale", 0.1), "deepseek2.attention.temperature_scale");
        assertRefused(w -> w.remove("deepseek2.expert_group_used_count").putUInt32("deepseek2.expert_group_used_count", 2),
                "deepseek2.expert_group_count");
    }

    @Test
    void latentCacheHoldsTheCompressedRowPerPositionAndLayer() throws IOException {
        Path file = write("cache", w -> { });
        try (GgufFile gguf = GgufFile.open(file); WorkerPool pool = new WorkerPool(1)) {
            LlamaConfig config = LlamaConfig.from(gguf);
            DecoderModel model = Architectures.of(gguf).load(gguf, config, new LayerRange(0, config.layers()), pool);
            // tiny: 2 layers, kv_lora_rank 32, qk_rope_head_dim 16; plain MHA: 4 heads x (48 key + 32 value)
            assertThat(model.kvValuesPerPosition()).isEqualTo(2 * (32 + 16));
            assertThat(model.multiHeadKvValuesPerPosition()).isEqualTo(2 * 4 * (48 + 32));
            // F16 rows by default, as llama.cpp's --cache-type-k f16; F32 on request (-Dinference.kvCache=f32)
            KvCache cache = model.allocateCache(100);
            assertThat(cache.half()).isTrue();
            assertThat(cache.byteSize()).isEqualTo(2L * (32 + 16) * 100 * 2);
            assertThat(KvCache.latent(2, 32 + 16, 100, false).byteSize()).isEqualTo(2L * (32 + 16) * 100 * Float.BYTES);
        }
    }

    @Test
    void aPromptInOneBatchGivesTheLogitsOfTokenByToken() throws IOException {
        Path file = write("batch", w -> { });
        int[] prompt = {1, 17, 300, 42, 9, 88, 250, 3, 77, 401};
        try (GgufFile gguf = GgufFile.open(file); WorkerPool pool = new WorkerPool(2)) {
            LlamaConfig config = LlamaConfig.from(gguf);
            DecoderModel model = Architectures.of(gguf).load(gguf, config, new LayerRange(0, config.layers()), pool);
            float[] batched = model.forward(prompt, 0, prompt.length, 0, model.allocateCache(64));
            KvCache cache = model.allocateCache(64);
            float[] stepped = null;
            for (int i = 0; i < prompt.length; i++) {
                stepped = model.forward(prompt, i, 1, i, cache);
            }
            float scale = 0;
            for (float v : batched) {
                scale = Math.max(scale, Math.abs(v));
            }
            for (int t = 0; t < batched.length; t++) {
                assertThat(Math.abs(batched[t] - stepped[t])).as("token %d", t).isLessThanOrEqualTo(1e-4f * scale);
            }
        }
    }

    /**
     * A prompt batch of 64 tokens or more reads the F16 cache as llama.cpp's tiled flash attention does (widened rows,
     * F32 accumulator), decode as its one-chunk path (F16 accumulator): the two agree to F16 accumulation error.
     */
    @Test
    void aLongPromptBatchAgreesWithTokenByTokenOverTheHalfCache() throws IOException {
        Path file = write("tiled", w -> { });
        int[] prompt = new int[DeepSeek2Model.TILED_BATCH + 6];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 1 + (i * 37) % 400;
        }
        try (GgufFile gguf = GgufFile.open(file); WorkerPool pool = new WorkerPool(2)) {
            LlamaConfig config = LlamaConfig.from(gguf);
            DecoderModel model = Architectures.of(gguf).load(gguf, config, new LayerRange(0, config.layers()), pool);
            float[] batched = model.forward(prompt, 0, prompt.length, 0, model.allocateCache(128));
            KvCache cache = model.allocateCache(128);
            float[] stepped = null;
            for (int i = 0; i < prompt.length; i++) {
                stepped = model.forward(prompt, i, 1, i, cache);
            }
            float scale = 0;
            for (float v : batched) {
                scale = Math.max(scale, Math.abs(v));
            }
            for (int t = 0; t < batched.length; t++) {
                assertThat(Math.abs(batched[t] - stepped[t])).as("token %d", t).isLessThanOrEqualTo(1e-2f * scale);
            }
        }
    }

    @Test
    void sigmoidRoutingKeepsTheBestGroupsAndWeighsByUnbiasedScores() {
        // 4 experts in 2 groups, 1 group kept, 2 experts used; the bias moves expert 3 ahead of expert 0 for the choice
        ExpertRouting routing = new ExpertRouting(ExpertRouting.Gating.SIGMOID, new float[] {0, 0, 0, 1f}, true, 2.5f, 2, 1);
        float[] logits = {2f, 1.5f, -1f, -0.5f};
        int[] ids = new int[2];
        float[] weights = new float[2];
        routing.select(logits, 0, 4, 2, ids, weights, 0);
        // group scores with bias: {s(2)+s(1.5), s(-1)+s(-0.5)+1}: 0.881+0.818=1.699 against 0.269+0.378+1=1.647
        assertThat(ids).containsExactly(0, 1);
        double s0 = 1 / (1 + Math.exp(-2)), s1 = 1 / (1 + Math.exp(-1.5));
        assertThat(weights[0]).isCloseTo((float) (2.5 * s0 / (s0 + s1)), org.assertj.core.data.Offset.offset(1e-5f));
        assertThat(weights[1]).isCloseTo((float) (2.5 * s1 / (s0 + s1)), org.assertj.core.data.Offset.offset(1e-5f));
        // softmax (V2), no normalization: the probabilities of the two best
        ExpertRouting softmax = new ExpertRouting(ExpertRouting.Gating.SOFTMAX, null, false, 1f, 0, 0);
        softmax.select(logits, 0, 4, 2, ids, weights, 0);
        double sum = Math.exp(2) + Math.exp(1.5) + Math.exp(-1) + Math.exp(-0.5);
        assertThat(ids).containsExactly(0, 1);
        assertThat(weights[0]).isCloseTo((float) (Math.exp(2) / sum), org.assertj.core.data.Offset.offset(1e-5f));
    }
}
