package io.macfleet.node.model;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ForwardPassTest {
    private static final int[] TOKENS = {508, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33, 300, 400, 5};

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void batchedPrefillAndDecodeMatchTheScalarReference(GgmlType type) throws IOException {
        assertMatchesReference(ModelGenerator.Architecture.LLAMA, type);
    }

    /** Qwen2's key prefix, Q/K/V biases and RoPE on halves; Qwen3's per-head Q/K norms and heads wider than width / heads. */
    @ParameterizedTest
    @EnumSource(value = ModelGenerator.Architecture.class, names = {"QWEN2", "QWEN3"})
    void theLlamaShapedVariantsMatchTheScalarReference(ModelGenerator.Architecture architecture) throws IOException {
        assertMatchesReference(architecture, GgmlType.Q8_0);
        assertMatchesReference(architecture, GgmlType.F32);
    }

    /** K-quant files with llama.cpp's mixes (Q4_K, Q5_K, Q6_K and Q8_0 matrices side by side) on the small preset. */
    @ParameterizedTest
    @ValueSource(strings = {"q4_k_m", "q5_k_m", "q6_k"})
    void kQuantMixesMatchTheScalarReference(String type) throws IOException {
        assertMatchesReference(TestModels.small(ModelGenerator.Architecture.LLAMA, QuantizationMix.parse(type)),
                ModelGenerator.Architecture.LLAMA, type);
    }

    /** Qwen3 MoE: router, softmax top-k with renormalization, experts grouped per batch in prefill. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "Q8_0", "Q4_0"})
    void theMixtureOfExpertsMatchesTheScalarReference(GgmlType type) throws IOException {
        assertMatchesReference(ModelGenerator.Architecture.QWEN3MOE, type);
    }

    @Test
    void aMixtureOfExpertsInAKQuantMixMatchesTheScalarReference() throws IOException {
        assertMatchesReference(TestModels.small(ModelGenerator.Architecture.QWEN3MOE, QuantizationMix.Q4_K_M),
                ModelGenerator.Architecture.QWEN3MOE, "q4_k_m");
    }

    @Test
    void aQwen3KQuantFileMatchesTheScalarReference() throws IOException {
        assertMatchesReference(TestModels.small(ModelGenerator.Architecture.QWEN3, QuantizationMix.Q4_K_M),
                ModelGenerator.Architecture.QWEN3, "q4_k_m");
    }

    private static void assertMatchesReference(ModelGenerator.Architecture architecture, GgmlType type) throws IOException {
        assertMatchesReference(TestModels.tiny(architecture, type), architecture, type.name());
    }

    private static void assertMatchesReference(java.nio.file.Path modelFile, ModelGenerator.Architecture architecture, String type)
            throws IOException {
        try (GgufFile file = GgufFile.open(modelFile); WorkerPool pool = new WorkerPool(2)) {
            LlamaConfig config = LlamaConfig.from(file);
            LlamaModel model = new LlamaModel(LlamaWeights.load(file, config), pool);
            KvCache cache = KvCache.allocate(config, 32);
            ReferenceLlama reference = new ReferenceLlama(file, 32);
            int prompt = 12;
            float[] expected = null;
            for (int position = 0; position < prompt; position++) {
                expected = reference.forward(TOKENS[position], position);
            }
            assertThat(config.architecture()).isEqualTo(architecture.name().toLowerCase());
            assertClose(model.forward(TOKENS, 0, prompt, 0, cache), expected, architecture + " " + type + " prefill");
            for (int position = prompt; position < TOKENS.length; position++) {
                float[] logits = model.forward(TOKENS, position, 1, position, cache);
                assertClose(logits, reference.forward(TOKENS[position], position), architecture + " " + type + " decode at " + position);
            }
        }
    }

    private static void assertClose(float[] actual, float[] expected, String what) {
        assertThat(actual).hasSameSizeAs(expected);
        float scale = 0;
        for (float e : expected) {
            scale = Math.max(scale, Math.abs(e));
        }
        assertThat(scale).as("logits are not trivially zero").isGreaterThan(0.1f);
        for (int i = 0; i < actual.length; i++) {
            assertThat(actual[i]).as("%s logit %d", what, i).isCloseTo(expected[i], within(1e-3f * Math.max(1, scale)));
        }
    }

    @Test
    void generationIsDeterministicForASeed() throws IOException {
        try (InferenceEngine engine = InferenceEngine.load(TestModels.tiny(GgmlType.Q8_0), 256, 2)) {
            List<Integer> prompt = engine.encodeCompletion("Once upon a time");
            SamplingParameters sampling = new SamplingParameters(0.9f, 40, 0.95f, 0.02f, 1234L, 40, List.of());
            InferenceEngine.Generation first = engine.generate(prompt, sampling, text -> { });
            InferenceEngine.Generation second = engine.generate(prompt, sampling, text -> { });
            assertThat(second.text()).isEqualTo(first.text());
            assertThat(first.completionTokens()).isPositive();
            InferenceEngine.Generation other = engine.generate(prompt,
                    new SamplingParameters(0.9f, 40, 0.95f, 0.02f, 99L, 40, List.of()), text -> { });
            assertThat(other.text()).isNotEqualTo(first.text());
        }
    }

    @Test
    void streamedPiecesAddUpAndStopSequencesCut() throws IOException {
        try (InferenceEngine engine = InferenceEngine.load(TestModels.tiny(GgmlType.Q8_0), 256, 1)) {
            List<Integer> prompt = engine.encodeCompletion("Hello");
            InferenceEngine.Generation free = engine.generate(prompt, SamplingParameters.greedy(30), text -> { });
            assertThat(free.completionTokens()).isEqualTo(30);
            assertThat(free.finishReason()).isEqualTo("length");
            String stop = free.text().substring(free.text().length() / 2, free.text().length() / 2 + 2);
            StringBuilder streamed = new StringBuilder();
            InferenceEngine.Generation cut = engine.generate(prompt,
                    new SamplingParameters(0, 0, 1, 0, 0L, 30, List.of(stop)), streamed::append);
            assertThat(cut.finishReason()).isEqualTo("stop");
            assertThat(cut.text()).isEqualTo(free.text().substring(0, free.text().indexOf(stop)));
            assertThat(streamed.toString()).isEqualTo(cut.text());
        }
    }

    @Test
    void kvCacheTooLargeForTheHeapIsAClearError() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            LlamaConfig config = LlamaConfig.from(file);
            assertThatThrownBy(() -> KvCache.allocate(config, 1 << 30))
                    .isInstanceOf(KvCache.InsufficientMemoryException.class)
                    .hasMessageContaining("context of 1073741824 tokens").hasMessageContaining("MB");
        }
    }

    @Test
    void layerRangeLoadsAPipelineStage() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            LlamaConfig config = LlamaConfig.from(file);
            LlamaWeights stage = LlamaWeights.load(file, config, new LayerRange(1, 2));
            assertThat(stage.blocks()).hasSize(1);
            assertThat(stage.block(1).index()).isEqualTo(1);
            LayerWeights shard = stage.block(1).shard(config, 2, 2, 1, 1, 96, 96);
            assertThat(shard.query().rows()).isEqualTo(2 * config.headDimension());
            assertThat(shard.key().rows()).isEqualTo(config.headDimension());
            assertThat(shard.output().columns()).isEqualTo(2 * config.headDimension());
            assertThat(shard.down().columns()).isEqualTo(96);
        }
    }
}
