package io.macfleet.node.engine;

/**
 * What a generation does beyond sampling: a constraint on the tokens (null: none), how many alternatives to
 * report with each token's log probability (-1: no log probabilities), OpenAI's presence and frequency
 * penalties (subtracted from a token's logit: presence once if it occurred in the completion, frequency per time),
 * and who hears of each token's log probability as it comes (before the token's text is passed on).
 */
public record GenerationOptions(TokenConstraint constraint, int topLogprobs, float presencePenalty,
                                float frequencyPenalty, java.util.function.Consumer<TokenLogprob> onLogprob) {
    public static final GenerationOptions NONE = new GenerationOptions(null, -1, 0, 0);

    public GenerationOptions(TokenConstraint constraint, int topLogprobs, float presencePenalty, float frequencyPenalty) {
        this(constraint, topLogprobs, presencePenalty, frequencyPenalty, logprob -> { });
    }

    /** The same options with another constraint (each choice of a request gets its own). */
    public GenerationOptions withConstraint(TokenConstraint other) {
        return new GenerationOptions(other, topLogprobs, presencePenalty, frequencyPenalty, onLogprob);
    }

    /** The same options reporting each token's log probability as it is generated (streaming). */
    public GenerationOptions withLogprobListener(java.util.function.Consumer<TokenLogprob> listener) {
        return new GenerationOptions(constraint, topLogprobs, presencePenalty, frequencyPenalty, listener);
    }

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
