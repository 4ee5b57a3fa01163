package io.macfleet.node.model;

import io.macfleet.node.kernel.Kernels;
import io.macfleet.node.kernel.WeightMatrix;
import io.macfleet.node.kernel.WorkerPool;

import java.util.Arrays;

/**
 * The mixture-of-experts FFN block (Qwen3 MoE): for each token, the router's logits go through a softmax over all
 * experts, the {@code expertsUsed} most probable are selected (the lower index first among equals) and their
 * probabilities renormalized to sum to 1; the block's output is the weighted sum of the selected experts' SwiGLU FFNs.
 * Only the selected experts' matrices are read. A batch (prompt processing) is grouped by expert: each selected expert
 * multiplies all its tokens at once, so its weights are read once per batch.
 */
public final class MixtureOfExperts {
    private final int dimension;
    private final int width;
    /** Scratch, grown to the largest batch seen (one forward pass at a time, as in {@link LlamaModel}). */
    private float[] logits = new float[0], gathered = new float[0], gate = new float[0], up = new float[0], down = new float[0];
    private int[] selected = new int[0];
    /** Decode: each selected expert's gate and up outputs (no garbage per token). */
    private float[][] expertScratch = new float[0][];
    private float[] selectedWeights = new float[0];

    public MixtureOfExperts(int dimension, int expertWidth) {
        this.dimension = dimension;
        this.width = expertWidth;
    }

    /**
     * Routes {@code batch} tokens ({@code normed[t * dimension ..]}) and writes the FFN output of each to
     * {@code out[t * dimension ..]} (overwritten: the sum over the selected experts this rank holds).
     */
    public void forward(WorkerPool pool, ExpertWeights weights, float[] normed, int batch, float[] out) {
        forward(pool, weights, normed, batch, out, null);
    }

    /**
     * Shared experts (DeepSeek's {@code ffn_*_shexp}): a SwiGLU FFN every token goes through, its output added after
     * the routed experts' sum, as llama.cpp adds them. In decode their products join the routed experts' parallel loops
     * (gate and up with the selected experts' gate and up, down with their downs): two hand-offs to the workers for
     * the whole block instead of one per matrix.
     */
    public record SharedExperts(WeightMatrix gate, WeightMatrix up, WeightMatrix down) {
    }

    /** {@link #forward(WorkerPool, ExpertWeights, float[], int, float[])} plus the shared experts' output (null: none). */
    public void forward(WorkerPool pool, ExpertWeights weights, float[] normed, int batch, float[] out, SharedExperts shared) {
        int experts = weights.experts(), used = weights.expertsUsed();
        ensure(batch, experts, used);
        if (batch == 1) {
            // a few rows (one per expert): on this thread, since handing them to the workers costs more than the
            // product, and on a loaded machine waits for a descheduled worker (each row's sum is the same either way)
            WeightMatrix router = weights.router();
            if (routerInput.length < router.columns()) {
                routerInput = new float[router.columns()];
            }
            Kernels.roundActivations(pool, router, normed, 0, router.columns(), routerInput, 0);
            for (int e = 0; e < router.rows(); e++) {
                logits[e] = Kernels.dot(router, e, routerInput, 0);
            }
        } else {
            Kernels.matmul(pool, weights.router(), normed, batch, logits);
        }
        for (int t = 0; t < batch; t++) {
            if (weights.routing() != null) {
                weights.routing().select(logits, t * experts, experts, used, selected, selectedWeights, t * used);
            } else {
                select(logits, t * experts, experts, used, weights.normalizeSelected(), selected, selectedWeights, t * used);
            }
        }
        Arrays.fill(out, 0, batch * dimension, 0f);
        if (batch == 1) {
            decode(pool, weights, normed, out, shared);
            return;
        }
        int[] tokens = new int[batch];
        int[] slots = new int[batch];
        float[] tokenWeights = new float[batch];
        if (routed.length < batch * used * dimension) {
            routed = new float[batch * used * dimension];
        }
        for (int e = 0; e < experts; e++) {
            if (!weights.holds(e)) {
                continue;
            }
            int count = 0;
            for (int t = 0; t < batch; t++) {
                for (int k = 0; k < used; k++) {
                    if (selected[t * used + k] == e) {
                        tokens[count] = t;
                        slots[count] = t * used + k;
                        tokenWeights[count++] = selectedWeights[t * used + k];
                    }
                }
            }
            if (count == 0) {
                continue;
            }
            for (int i = 0; i < count; i++) {
                System.arraycopy(normed, tokens[i] * dimension, gathered, i * dimension, dimension);
            }
            Kernels.matmulIndexed(pool, weights.gates()[e], gathered, count, gate);
            Kernels.matmulIndexed(pool, weights.ups()[e], gathered, count, up);
            Kernels.swiglu(gate, up, count * width);
            Kernels.matmulIndexed(pool, weights.downs()[e], gate, count, down);
            // each expert's output times its weight (one rounding, ggml_mul), summed below in selection order
            for (int i = 0; i < count; i++) {
                int at = slots[i] * dimension;
                for (int j = 0; j < dimension; j++) {
                    routed[at + j] = down[i * dimension + j] * tokenWeights[i];
                }
            }
        }
        for (int t = 0; t < batch; t++) {
            for (int k = 0; k < used; k++) {
                if (weights.holds(selected[t * used + k])) { // the slots this rank's experts filled
                    int at = (t * used + k) * dimension;
                    for (int j = 0; j < dimension; j++) {
                        out[t * dimension + j] += routed[at + j];
                    }
                }
            }
        }
        if (shared != null) {
            int sharedWidth = shared.gate().rows();
            ensureShared(batch * sharedWidth);
            Kernels.matmul(pool, shared.gate(), normed, batch, sharedGate);
            Kernels.matmul(pool, shared.up(), normed, batch, sharedUp);
            Kernels.swiglu(sharedGate, sharedUp, batch * sharedWidth);
            if (sharedDown.length < batch * dimension) {
                sharedDown = new float[batch * dimension];
            }
            Kernels.matmul(pool, shared.down(), sharedGate, batch, sharedDown);
            for (int i = 0; i < batch * dimension; i++) {
                out[i] += sharedDown[i];
            }
        }
    }

    private float[] sharedGate = new float[0], sharedUp = new float[0], sharedDown = new float[0], routerInput = new float[0];
    private float[][] downScratch = new float[0][];
    private float[] routed = new float[0];

    private void ensureShared(int length) {
        if (sharedGate.length < length) {
            sharedGate = new float[length];
            sharedUp = new float[length];
        }
    }

    /**
     * One token: the selected experts' (and the shared experts') gate and up products in one parallel loop, then all
     * their down products in another; the outputs summed as llama.cpp's build_moe_ffn sums them: each expert's output
     * times its weight, added in selection order, then the shared experts' output.
     */
    private void decode(WorkerPool pool, ExpertWeights weights, float[] x, float[] out, SharedExperts shared) {
        int used = weights.expertsUsed();
        int held = 0;
        for (int k = 0; k < used; k++) {
            held += weights.holds(selected[k]) ? 1 : 0;
        }
        int extra = shared == null ? 0 : 1;
        if (held + extra == 0) {
            return; // none of this token's experts is on this rank
        }
        WeightMatrix[] matrices = new WeightMatrix[2 * (held + extra)];
        float[][] outs = new float[2 * (held + extra)][];
        WeightMatrix[] downs = new WeightMatrix[held + extra];
        float[][] downInputs = new float[held + extra][];
        if (downScratch.length < held + extra) {
            downScratch = new float[held + extra][];
        }
        float[] scales = new float[held];
        for (int k = 0, i = 0; k < used; k++) {
            int e = selected[k];
            if (weights.holds(e)) {
                scales[i] = selectedWeights[k];
                matrices[2 * i] = weights.gates()[e];
                matrices[2 * i + 1] = weights.ups()[e];
                outs[2 * i] = expertScratch[2 * i];
                outs[2 * i + 1] = expertScratch[2 * i + 1];
                downs[i] = weights.downs()[e];
                downInputs[i] = outs[2 * i];
                i++;
            }
        }
        if (shared != null) {
            int sharedWidth = shared.gate().rows();
            ensureShared(sharedWidth);
            matrices[2 * held] = shared.gate();
            matrices[2 * held + 1] = shared.up();
            outs[2 * held] = sharedGate;
            outs[2 * held + 1] = sharedUp;
            downs[held] = shared.down();
            downInputs[held] = sharedGate;
        }
        for (int i = 0; i < held + extra; i++) {
            if (downScratch[i] == null || downScratch[i].length < dimension) {
                downScratch[i] = new float[dimension];
            }
        }
        Kernels.matvec(pool, matrices, x, outs);
        for (int i = 0; i < held + extra; i++) {
            Kernels.swiglu(outs[2 * i], outs[2 * i + 1], matrices[2 * i].rows());
        }
        Kernels.matvecEach(pool, downs, downInputs, downScratch);
        for (int i = 0; i < held; i++) {
            float[] d = downScratch[i];
            float scale = scales[i];
            for (int j = 0; j < dimension; j++) {
                out[j] += d[j] * scale; // ggml_mul then ggml_add: two roundings, no fused multiply-add
            }
        }
        if (shared != null) {
            float[] d = downScratch[held];
            for (int j = 0; j < dimension; j++) {
                out[j] += d[j];
            }
        }
    }

    /**
     * Softmax over {@code logits[offset .. offset + experts)}, then the {@code used} most probable experts into
     * {@code ids[at ..]} with their probabilities into {@code weights[at ..]}, renormalized to sum to 1 when asked.
     */
    static void select(float[] logits, int offset, int experts, int used, boolean normalize, int[] ids, float[] weights, int at) {
        float max = Float.NEGATIVE_INFINITY;
        for (int e = 0; e < experts; e++) {
            max = Math.max(max, logits[offset + e]);
        }
        float[] probabilities = new float[experts];
        float sum = 0;
        for (int e = 0; e < experts; e++) {
            probabilities[e] = (float) Math.exp(logits[offset + e] - max);
            sum += probabilities[e];
        }
        float total = 0;
        for (int k = 0; k < used; k++) {
            int best = -1;
            for (int e = 0; e < experts; e++) {
                if (probabilities[e] >= 0 && (best < 0 || probabilities[e] > probabilities[best])) {
                    best = e;
                }
            }
            ids[at + k] = best;
            weights[at + k] = probabilities[best] / sum;
            total += weights[at + k];
            probabilities[best] = -1; // taken
        }
        if (normalize) {
            for (int k = 0; k < used; k++) {
                weights[at + k] /= total;
            }
        }
    }

    private void ensure(int batch, int experts, int used) {
        if (logits.length < batch * experts) {
            logits = new float[batch * experts];
        }
        if (selected.length < batch * used) {
            selected = new int[batch * used];
            selectedWeights = new float[batch * used];
        }
        if (gathered.length < batch * dimension) {
            gathered = new float[batch * dimension];
            down = new float[batch * dimension];
        }
        if (expertScratch.length < 2 * used) {
            expertScratch = new float[2 * used][width];
        }
        if (gate.length < batch * width) {
            gate = new float[batch * width];
            up = new float[batch * width];
        }
    }
}
