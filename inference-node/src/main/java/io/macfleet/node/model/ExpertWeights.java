package io.macfleet.node.model;

import io.macfleet.node.kernel.WeightMatrix;

import java.util.Arrays;

/**
 * The mixture-of-experts FFN of one block, as llama.cpp stores it: a router ({@code ffn_gate_inp}, one row of model
 * width per expert, F32) and each expert's gate, up and down matrices, which are slices of the three expert tensors
 * ({@code ffn_gate_exps}, {@code ffn_up_exps}: [width, expert width, experts]; {@code ffn_down_exps}: [expert width,
 * width, experts]). One view per expert, so that a rank of an expert-parallel cluster can hold only its own experts:
 * {@link #localExperts} keeps a range and leaves the others null, and {@link MixtureOfExperts} then adds the
 * contributions of the selected experts it holds (the ranks' partial sums add up to the whole FFN).
 */
public record ExpertWeights(WeightMatrix router, WeightMatrix[] gates, WeightMatrix[] ups, WeightMatrix[] downs,
                            int expertsUsed, boolean normalizeSelected, ExpertRouting routing) {

    /** Qwen3 MoE's routing: softmax over all experts, top k, renormalized when {@code normalizeSelected}. */
    public ExpertWeights(WeightMatrix router, WeightMatrix[] gates, WeightMatrix[] ups, WeightMatrix[] downs,
                         int expertsUsed, boolean normalizeSelected) {
        this(router, gates, ups, downs, expertsUsed, normalizeSelected, null);
    }

    /** These experts chosen by {@code routing} instead (DeepSeek). */
    public ExpertWeights withRouting(ExpertRouting routing) {
        return new ExpertWeights(router, gates, ups, downs, expertsUsed, normalizeSelected, routing);
    }

    /** Slices the three expert tensors into one gate, up and down matrix per expert. */
    public static ExpertWeights of(WeightMatrix router, WeightMatrix gateExperts, WeightMatrix upExperts,
                                   WeightMatrix downExperts, int experts, int expertsUsed) {
        int width = gateExperts.rows() / experts;
        int dimension = downExperts.rows() / experts;
        WeightMatrix[] gates = new WeightMatrix[experts], ups = new WeightMatrix[experts], downs = new WeightMatrix[experts];
        for (int e = 0; e < experts; e++) {
            gates[e] = gateExperts.rowSlice(e * width, width);
            ups[e] = upExperts.rowSlice(e * width, width);
            downs[e] = downExperts.rowSlice(e * dimension, dimension);
        }
        // Qwen3 MoE renormalizes the selected experts' probabilities (llama.cpp builds qwen3moe with norm_w = true).
        return new ExpertWeights(router, gates, ups, downs, expertsUsed, true);
    }

    public int experts() {
        return gates.length;
    }

    /** Whether this rank holds expert {@code e}. */
    public boolean holds(int e) {
        return gates[e] != null;
    }

    /** Experts [first, first + count) only: what one rank of an expert-parallel layout holds. */
    public ExpertWeights localExperts(int first, int count) {
        if (first < 0 || count < 0 || first + count > experts()) {
            throw new IllegalArgumentException("experts " + first + "+" + count + " outside 0.." + experts());
        }
        WeightMatrix[] g = new WeightMatrix[experts()], u = new WeightMatrix[experts()], d = new WeightMatrix[experts()];
        System.arraycopy(gates, first, g, first, count);
        System.arraycopy(ups, first, u, first, count);
        System.arraycopy(downs, first, d, first, count);
        return new ExpertWeights(router, g, u, d, expertsUsed, normalizeSelected, routing);
    }

    /** Bytes read per token: the router and {@code expertsUsed} experts' three matrices (all experts are the same size). */
    public long bytesPerToken() {
        int any = 0;
        while (any < experts() - 1 && !holds(any)) {
            any++;
        }
        return router.byteSize() + (long) expertsUsed * (gates[any].byteSize() + ups[any].byteSize() + downs[any].byteSize());
    }

    @Override
    public String toString() {
        return "ExpertWeights[" + experts() + " experts, " + expertsUsed + " used, held " + Arrays.stream(gates).filter(g -> g != null).count() + "]";
    }
}
