package io.macfleet.node.engine;

import java.util.List;

/**
 * How to pick tokens: temperature 0 is greedy; topK 0 and topP 1 and minP 0 disable those filters.
 * A null seed means a fresh random seed.
 */
public record SamplingParameters(float temperature, int topK, float topP, float minP, Long seed, int maxTokens,
                                 List<String> stop) {
    public SamplingParameters {
        if (temperature < 0 || Float.isNaN(temperature)) {
            throw new IllegalArgumentException("temperature must be at least 0, got " + temperature);
        }
        if (topK < 0) {
            throw new IllegalArgumentException("top_k must be at least 0, got " + topK);
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        }
        if (!(minP >= 0 && minP <= 1)) {
            throw new IllegalArgumentException("min_p must be in [0, 1], got " + minP);
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max_tokens must be at least 1, got " + maxTokens);
        }
        stop = List.copyOf(stop);
    }

    public static SamplingParameters greedy(int maxTokens) {
        return new SamplingParameters(0, 0, 1, 0, 0L, maxTokens, List.of());
    }
}
