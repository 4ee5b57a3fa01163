package io.macfleet.node.model;

import io.macfleet.node.ScalarReference;
import io.macfleet.node.gguf.GgufFile;

/**
 * A straightforward scalar Llama forward pass (one token at a time, double accumulators, everything dequantized up
 * front), written from the architecture description to check the optimised engine; with the Qwen variants' Q/K/V
 * biases (Qwen2) and per-head Q/K RMSNorm before RoPE (Qwen3), when the file has them.
 */
final class ReferenceLlama {
    private final LlamaConfig c;
    private final float[] embedding, outputNorm, output, ropeFactors;
    private final float[][] attnNorm, wq, wk, wv, wo, ffnNorm, gate, up, down, qBias, kBias, vBias, qNorm, kNorm;
    /** Mixture of experts (null when dense): router [experts x dim] and all experts' matrices, expert after expert. */
    private final float[][] router, gateExperts, upExperts, downExperts;
    private final float[][] keyCache, valueCache;

    ReferenceLlama(GgufFile file, int context) {
        c = LlamaConfig.from(file);
        embedding = load(file, "token_embd.weight");
        outputNorm = load(file, "output_norm.weight");
        output = file.optionalTensor("output.weight") == null ? embedding : load(file, "output.weight");
        ropeFactors = file.optionalTensor("rope_freqs.weight") == null ? null : load(file, "rope_freqs.weight");
        int n = c.layers();
        attnNorm = new float[n][];
        wq = new float[n][];
        wk = new float[n][];
        wv = new float[n][];
        wo = new float[n][];
        ffnNorm = new float[n][];
        gate = new float[n][];
        up = new float[n][];
        down = new float[n][];
        qBias = new float[n][];
        kBias = new float[n][];
        vBias = new float[n][];
        qNorm = new float[n][];
        kNorm = new float[n][];
        router = new float[n][];
        gateExperts = new float[n][];
        upExperts = new float[n][];
        downExperts = new float[n][];
        keyCache = new float[n][context * c.kvDimension()];
        valueCache = new float[n][context * c.kvDimension()];
        for (int l = 0; l < n; l++) {
            String p = "blk." + l + ".";
            attnNorm[l] = load(file, p + "attn_norm.weight");
            wq[l] = load(file, p + "attn_q.weight");
            wk[l] = load(file, p + "attn_k.weight");
            wv[l] = load(file, p + "attn_v.weight");
            wo[l] = load(file, p + "attn_output.weight");
            ffnNorm[l] = load(file, p + "ffn_norm.weight");
            if (c.experts() > 0) {
                router[l] = load(file, p + "ffn_gate_inp.weight");
                gateExperts[l] = load(file, p + "ffn_gate_exps.weight");
                upExperts[l] = load(file, p + "ffn_up_exps.weight");
                downExperts[l] = load(file, p + "ffn_down_exps.weight");
            } else {
                gate[l] = load(file, p + "ffn_gate.weight");
                up[l] = load(file, p + "ffn_up.weight");
                down[l] = load(file, p + "ffn_down.weight");
            }
            qBias[l] = optional(file, p + "attn_q.bias");
            kBias[l] = optional(file, p + "attn_k.bias");
            vBias[l] = optional(file, p + "attn_v.bias");
            qNorm[l] = optional(file, p + "attn_q_norm.weight");
            kNorm[l] = optional(file, p + "attn_k_norm.weight");
        }
    }

    private static float[] optional(GgufFile file, String name) {
        return file.optionalTensor(name) == null ? null : load(file, name);
    }

    private static void add(float[] values, float[] bias) {
        if (bias != null) {
            for (int i = 0; i < values.length; i++) {
                values[i] += bias[i];
            }
        }
    }

    /** RMSNorm of every head's slice on its own, with the one weight vector of a head's width. */
    private void headNorm(float[] values, float[] weight) {
        if (weight == null) {
            return;
        }
        int width = weight.length;
        for (int head = 0; head < values.length / width; head++) {
            float[] slice = java.util.Arrays.copyOfRange(values, head * width, (head + 1) * width);
            System.arraycopy(rmsNorm(slice, weight), 0, values, head * width, width);
        }
    }

    private static float[] load(GgufFile file, String name) {
        return ScalarReference.dequantize(file.tensor(name));
    }

    float[] forward(int token, int position) {
        int dim = c.dimension(), headDim = c.headDimension(), kvDim = c.kvDimension();
        float[] x = new float[dim];
        System.arraycopy(embedding, token * dim, x, 0, dim);
        for (int l = 0; l < c.layers(); l++) {
            float[] h = rmsNorm(x, attnNorm[l]);
            float[] q = matvec(wq[l], h, c.queryDimension());
            float[] k = matvec(wk[l], h, kvDim);
            float[] v = matvec(wv[l], h, kvDim);
            add(q, qBias[l]);
            add(k, kBias[l]);
            add(v, vBias[l]);
            headNorm(q, qNorm[l]);
            headNorm(k, kNorm[l]);
            rope(q, c.heads(), position);
            rope(k, c.kvHeads(), position);
            System.arraycopy(k, 0, keyCache[l], position * kvDim, kvDim);
            System.arraycopy(v, 0, valueCache[l], position * kvDim, kvDim);
            float[] attention = new float[c.queryDimension()];
            for (int head = 0; head < c.heads(); head++) {
                int kvHead = head / (c.heads() / c.kvHeads());
                double[] scores = new double[position + 1];
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j <= position; j++) {
                    double s = 0;
                    for (int d = 0; d < headDim; d++) {
                        s += q[head * headDim + d] * keyCache[l][j * kvDim + kvHead * headDim + d];
                    }
                    scores[j] = s / Math.sqrt(headDim);
                    max = Math.max(max, scores[j]);
                }
                double sum = 0;
                for (int j = 0; j <= position; j++) {
                    scores[j] = Math.exp(scores[j] - max);
                    sum += scores[j];
                }
                for (int d = 0; d < headDim; d++) {
                    double value = 0;
                    for (int j = 0; j <= position; j++) {
                        value += scores[j] / sum * valueCache[l][j * kvDim + kvHead * headDim + d];
                    }
                    attention[head * headDim + d] = (float) value;
                }
            }
            float[] o = matvec(wo[l], attention, dim);
            for (int i = 0; i < dim; i++) {
                x[i] += o[i];
            }
            h = rmsNorm(x, ffnNorm[l]);
            float[] d = router[l] == null ? ffn(gate[l], up[l], down[l], h, c.feedForward()) : experts(l, h);
            for (int i = 0; i < dim; i++) {
                x[i] += d[i];
            }
        }
        return matvec(output, rmsNorm(x, outputNorm), c.vocabulary());
    }

    private float[] ffn(float[] gate, float[] up, float[] down, float[] h, int width) {
        float[] g = matvec(gate, h, width);
        float[] u = matvec(up, h, width);
        for (int i = 0; i < g.length; i++) {
            g[i] = (float) (g[i] / (1 + Math.exp(-g[i])) * u[i]);
        }
        return matvec(down, g, c.dimension());
    }

    /** Softmax over all experts, the top expertsUsed (lower index first among equals), renormalized, weighted sum. */
    private float[] experts(int l, float[] h) {
        int experts = c.experts(), width = c.expertFeedForward(), dim = c.dimension();
        float[] logits = matvec(router[l], h, experts);
        double max = Double.NEGATIVE_INFINITY;
        for (float v : logits) {
            max = Math.max(max, v);
        }
        double[] p = new double[experts];
        double sum = 0;
        for (int e = 0; e < experts; e++) {
            p[e] = Math.exp(logits[e] - max);
            sum += p[e];
        }
        Integer[] order = new Integer[experts];
        for (int e = 0; e < experts; e++) {
            order[e] = e;
        }
        java.util.Arrays.sort(order, (a, b) -> Double.compare(p[b], p[a])); // stable: equal keep index order
        double selected = 0;
        for (int k = 0; k < c.expertsUsed(); k++) {
            selected += p[order[k]] / sum;
        }
        float[] out = new float[dim];
        for (int k = 0; k < c.expertsUsed(); k++) {
            int e = order[k];
            double weight = p[e] / sum / selected;
            float[] y = ffn(java.util.Arrays.copyOfRange(gateExperts[l], e * width * dim, (e + 1) * width * dim),
                    java.util.Arrays.copyOfRange(upExperts[l], e * width * dim, (e + 1) * width * dim),
                    java.util.Arrays.copyOfRange(downExperts[l], e * dim * width, (e + 1) * dim * width), h, width);
            for (int i = 0; i < dim; i++) {
                out[i] += (float) (weight * y[i]);
            }
        }
        return out;
    }

    private float[] rmsNorm(float[] x, float[] weight) {
        double sum = 0;
        for (float v : x) {
            sum += v * v;
        }
        double scale = 1 / Math.sqrt(sum / x.length + c.rmsEpsilon());
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (float) (x[i] * scale * weight[i]);
        }
        return out;
    }

    private static float[] matvec(float[] w, float[] x, int rows) {
        float[] out = new float[rows];
        for (int r = 0; r < rows; r++) {
            double s = 0;
            for (int i = 0; i < x.length; i++) {
                s += (double) w[r * x.length + i] * x[i];
            }
            out[r] = (float) s;
        }
        return out;
    }

    private void rope(float[] v, int heads, int position) {
        int headDim = c.headDimension();
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < c.ropeDimensions() / 2; i++) {
                double frequency = Math.pow(c.ropeTheta(), -2.0 * i / c.ropeDimensions());
                if (ropeFactors != null) {
                    frequency /= ropeFactors[i];
                }
                double angle = position * frequency;
                int a = h * headDim + (c.ropeHalves() ? i : 2 * i);
                int b = h * headDim + (c.ropeHalves() ? i + c.ropeDimensions() / 2 : 2 * i + 1);
                double x0 = v[a], x1 = v[b];
                v[a] = (float) (x0 * Math.cos(angle) - x1 * Math.sin(angle));
                v[b] = (float) (x0 * Math.sin(angle) + x1 * Math.cos(angle));
            }
        }
    }
}
