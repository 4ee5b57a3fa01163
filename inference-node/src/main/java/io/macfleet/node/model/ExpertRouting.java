package io.macfleet.node.model;

import io.macfleet.node.kernel.Kernels;

/**
 * How a token's experts are chosen and weighted, as llama.cpp's {@code build_moe_ffn} does for DeepSeek: the router's
 * logits through a softmax (V2) or a sigmoid (V3, {@code expert_gating_func} 2); a per-expert selection bias added
 * for choosing only ({@code exp_probs_b}, V3; the weights stay unbiased); group-limited choice (V3:
 * {@code expert_group_count} groups scored by the sum of their two best experts, the best
 * {@code expert_group_used_count} groups kept); the top {@code expertsUsed}; their weights renormalized when
 * {@code expert_weights_norm}, then scaled by {@code expert_weights_scale} (the routed scaling factor).
 */
public record ExpertRouting(Gating gating, float[] selectionBias, boolean normalize, float scale, int groups,
                            int groupsUsed) {

    /** {@code expert_gating_func}: llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE values 1 and 2. */
    public enum Gating {
        SOFTMAX(1), SIGMOID(2);

        private final int id;

        Gating(int id) {
            this.id = id;
        }

        public int id() {
            return id;
        }

        public static Gating byId(long id) {
            for (Gating gating : values()) {
                if (gating.id == id) {
                    return gating;
                }
            }
            return null;
        }
    }

    /** This routing with a layer's selection bias (null without one). */
    public ExpertRouting withBias(float[] bias) {
        return new ExpertRouting(gating, bias, normalize, scale, groups, groupsUsed);
    }

    /**
     * Chooses {@code used} experts for the logits at {@code logits[offset .. offset + experts)}: ids into
     * {@code ids[at ..]}, weights into {@code weights[at ..]}. Among equal scores the lower index goes first.
     */
    void select(float[] logits, int offset, int experts, int used, int[] ids, float[] weights, int at) {
        float[] probabilities = new float[experts];
        if (gating == Gating.SOFTMAX) {
            // ggml's soft_max: its vectorized exp for each group of eight, the sum in double, then times 1 / sum
            Kernels.ggmlSoftmax(logits, offset, experts, probabilities);
        } else {
            // ggml's sigmoid in float: 1 / (1 + expf(-x)), two float roundings
            for (int e = 0; e < experts; e++) {
                probabilities[e] = 1f / (1f + Kernels.exp(-logits[offset + e]));
            }
        }
        float[] selection = probabilities.clone();
        if (selectionBias != null) {
            for (int e = 0; e < experts; e++) {
                selection[e] += selectionBias[e];
            }
        }
        if (groups > 1) {
            int perGroup = experts / groups;
            float[] groupScores = new float[groups];
            for (int g = 0; g < groups; g++) {
                float best = Float.NEGATIVE_INFINITY, second = Float.NEGATIVE_INFINITY;
                for (int e = g * perGroup; e < (g + 1) * perGroup; e++) {
                    if (selection[e] > best) {
                        second = best;
                        best = selection[e];
                    } else if (selection[e] > second) {
                        second = selection[e];
                    }
                }
                groupScores[g] = perGroup > 1 ? best + second : best;
            }
            boolean[] kept = new boolean[groups];
            for (int k = 0; k < groupsUsed; k++) {
                int best = -1;
                for (int g = 0; g < groups; g++) {
                    if (!kept[g] && (best < 0 || groupScores[g] > groupScores[best])) {
                        best = g;
                    }
                }
                kept[best] = true;
            }
            for (int e = 0; e < experts; e++) {
                if (!kept[e / perGroup]) {
                    selection[e] = Float.NEGATIVE_INFINITY;
                }
            }
        }
        boolean[] taken = new boolean[experts];
        double total = 0; // ggml's sum_rows adds in double
        for (int k = 0; k < used; k++) {
            int best = -1;
            for (int e = 0; e < experts; e++) {
                if (!taken[e] && (best < 0 || selection[e] > selection[best])) {
                    best = e;
                }
            }
            taken[best] = true;
            ids[at + k] = best;
            weights[at + k] = probabilities[best];
            total += probabilities[best];
        }
        // llama.cpp clamps the sum to the smallest normal F16 before dividing.
        float divisor = Math.max((float) total, 6.103515625e-5f);
        for (int k = 0; k < used; k++) {
            if (normalize) {
                weights[at + k] /= divisor;
            }
            if (scale != 0 && scale != 1) {
                weights[at + k] *= scale;
            }
        }
    }
}
