package io.macfleet.node.engine;

import java.util.Arrays;
import java.util.Random;

/** Picks the next token from logits: temperature, top-k, min-p, top-p, then a seeded draw. */
public final class Sampler {
    private final SamplingParameters parameters;
    private final Random random;

    public Sampler(SamplingParameters parameters) {
        this.parameters = parameters;
        this.random = new Random(parameters.seed() == null ? System.nanoTime() : parameters.seed());
    }

    public int sample(float[] logits) {
        if (parameters.temperature() == 0) {
            return argmax(logits);
        }
        int n = logits.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        // Stable sort by descending logit: ties keep id order, so a seed always gives the same result.
        Arrays.sort(order, (a, b) -> Float.compare(logits[b], logits[a]));
        int count = parameters.topK() > 0 ? Math.min(parameters.topK(), n) : n;
        double max = logits[order[0]] / parameters.temperature();
        double[] probabilities = new double[count];
        double sum = 0;
        for (int i = 0; i < count; i++) {
            probabilities[i] = Math.exp(logits[order[i]] / parameters.temperature() - max);
            sum += probabilities[i];
        }
        for (int i = 0; i < count; i++) {
            probabilities[i] /= sum;
        }
        if (parameters.minP() > 0) {
            double threshold = probabilities[0] * parameters.minP();
            int kept = 1;
            while (kept < count && probabilities[kept] >= threshold) {
                kept++;
            }
            count = kept;
        }
        if (parameters.topP() < 1) {
            double cumulative = 0;
            int kept = 0;
            while (kept < count) {
                cumulative += probabilities[kept++];
                if (cumulative >= parameters.topP()) {
                    break;
                }
            }
            count = kept;
        }
        double total = 0;
        for (int i = 0; i < count; i++) {
            total += probabilities[i];
        }
        double draw = random.nextDouble() * total;
        for (int i = 0; i < count; i++) {
            draw -= probabilities[i];
            if (draw <= 0) {
                return order[i];
            }
        }
        return order[count - 1];
    }

    static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }
}
