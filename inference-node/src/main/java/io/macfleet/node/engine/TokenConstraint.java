package io.macfleet.node.engine;

/**
 * Restricts which tokens may be sampled (a grammar); applied to the logits where sampling happens, on rank 0,
 * so one node, tensor and pipeline clusters behave the same. One instance serves one generation.
 */
public interface TokenConstraint {
    /**
     * Sets the logit of every token that cannot come next to negative infinity (stop tokens included: the engine
     * allows those itself when {@link #canEnd()}). Returns false when no token at all may come next.
     */
    boolean mask(float[] logits);

    /** Records the sampled token (one the mask allowed). */
    void accept(int token);

    /** The output so far is complete: generation may stop here. */
    boolean canEnd();

    /** Complete and nothing may follow: generation stops without sampling. */
    boolean mustEnd();
}
