package io.macfleet.node.engine;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SamplerTest {
    private static final float[] LOGITS = {1f, 3f, 2.5f, -1f, 0f, 2.9f};

    private static Set<Integer> draws(SamplingParameters parameters) {
        Set<Integer> seen = new HashSet<>();
        Sampler sampler = new Sampler(parameters);
        for (int i = 0; i < 2000; i++) {
            seen.add(sampler.sample(LOGITS));
        }
        return seen;
    }

    @Test
    void greedyPicksTheLargestLogit() {
        assertThat(new Sampler(SamplingParameters.greedy(1)).sample(LOGITS)).isEqualTo(1);
    }

    @Test
    void filtersLimitTheCandidates() {
        assertThat(draws(new SamplingParameters(1, 2, 1, 0, 1L, 1, List.of()))).containsExactlyInAnyOrder(1, 5);
        assertThat(draws(new SamplingParameters(1, 0, 1, 0.5f, 1L, 1, List.of()))).containsExactlyInAnyOrder(1, 2, 5);
        assertThat(draws(new SamplingParameters(1, 0, 0.3f, 0, 1L, 1, List.of()))).containsExactly(1);
        assertThat(draws(new SamplingParameters(1, 0, 1, 0, 1L, 1, List.of()))).hasSize(6);
    }

    @Test
    void aSeedRepeatsTheSameDraws() {
        SamplingParameters parameters = new SamplingParameters(1.5f, 0, 1, 0, 77L, 1, List.of());
        Sampler first = new Sampler(parameters);
        Sampler second = new Sampler(parameters);
        for (int i = 0; i < 100; i++) {
            assertThat(second.sample(LOGITS)).isEqualTo(first.sample(LOGITS));
        }
    }

    @Test
    void invalidParametersAreRejected() {
        assertThatThrownBy(() -> new SamplingParameters(-1, 0, 1, 0, null, 1, List.of())).hasMessageContaining("temperature");
        assertThatThrownBy(() -> new SamplingParameters(1, 0, 0, 0, null, 1, List.of())).hasMessageContaining("top_p");
        assertThatThrownBy(() -> new SamplingParameters(1, 0, 1, 0, null, 0, List.of())).hasMessageContaining("max_tokens");
    }
}
