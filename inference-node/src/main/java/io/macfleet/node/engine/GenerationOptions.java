package io.macfleet.node.engine;

/**
 * What a generation does beyond sampling: a constraint on the tokens (null: none), how many alternatives to
 * report with each token's log probability (-1: no log probabilities), and OpenAI's presence and frequency
 * penalties (subtracted from a token's logit: presence once if it occurred in the completion, frequency per time).
 */
public record GenerationOptions(TokenConstraint constraint, int topLogprobs, float presencePenalty,
                                float frequencyPenalty) {
    public static final GenerationOptions NONE = new GenerationOptions(null, -1, 0, 0);

    public GenerationOptions {
        if (topLogprobs > 20) {
            throw new IllegalArgumentException("top_logprobs must be at most 20, got " + topLogprobs);
        }
        if (!(presencePenalty >= -2 && presencePenalty <= 2)) {
            throw new IllegalArgumentException("presence_penalty must be from -2 to 2, got " + presencePenalty);
        }
        if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2)) {
            throw new IllegalArgumentException("frequency_penalty must be from -2 to 2, got " + frequencyPenalty);
        }
    }

    public boolean logprobs() {
        return topLogprobs >= 0;
    }

    /** One generated token with its log probability and the most likely alternatives at that step. */
    public record TokenLogprob(int token, byte[] bytes, double logprob, java.util.List<TokenLogprob> top) {
    }
}
