package io.macfleet.node.engine;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Penalties and log probabilities on the random tiny model, whose greedy text repeats itself. */
class GenerationOptionsTest {
    private static InferenceEngine engine;

    @BeforeAll
    static void load() throws Exception {
        engine = InferenceEngine.load(TestModels.tiny(GgmlType.F32), 256, 1);
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static InferenceEngine.Generation greedy(GenerationOptions options) {
        return engine.generate(engine.encodeCompletion("Once upon a time"), SamplingParameters.greedy(24), options,
                text -> { });
    }

    @Test
    void penaltiesMakeRepeatedTokensLessLikely() {
        InferenceEngine.Generation plain = greedy(new GenerationOptions(null, 0, 0, 0));
        InferenceEngine.Generation penalized = greedy(new GenerationOptions(null, 0, 2, 2));
        int plainDistinct = new HashSet<>(plain.logprobs().stream().map(GenerationOptions.TokenLogprob::token).toList()).size();
        int penalizedDistinct = new HashSet<>(penalized.logprobs().stream().map(GenerationOptions.TokenLogprob::token).toList()).size();
        assertThat(plainDistinct).as("the random model repeats itself").isLessThan(plain.logprobs().size());
        assertThat(penalizedDistinct).isGreaterThan(plainDistinct);
    }

    @Test
    void logprobsAreTheModelsDistribution() {
        InferenceEngine.Generation result = greedy(new GenerationOptions(null, 5, 0, 0));
        assertThat(result.logprobs()).hasSize(result.completionTokens());
        for (GenerationOptions.TokenLogprob token : result.logprobs()) {
            assertThat(token.top()).hasSize(5);
            assertThat(token.top().getFirst().token()).as("greedy picks the most likely").isEqualTo(token.token());
            assertThat(token.logprob()).isEqualTo(token.top().getFirst().logprob()).isLessThanOrEqualTo(0);
            double mass = token.top().stream().mapToDouble(t -> Math.exp(t.logprob())).sum();
            assertThat(mass).isLessThanOrEqualTo(1.0 + 1e-9);
            assertThat(token.top().get(1).logprob()).isLessThanOrEqualTo(token.top().getFirst().logprob());
        }
        assertThat(greedy(GenerationOptions.NONE).logprobs()).isEmpty();
        assertThat(List.of(result.text())).isEqualTo(List.of(greedy(GenerationOptions.NONE).text()));
    }
}
