package io.macfleet.node.model;

import io.macfleet.node.TestModels;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class MixtureOfExpertsTest {

    @Test
    void softmaxOverAllExpertsThenTopKRenormalized() {
        float[] logits = {0f, 2f, 1f, 2f, -1f};
        int[] ids = new int[2];
        float[] weights = new float[2];
        MixtureOfExperts.select(logits, 0, 5, 2, true, ids, weights, 0);
        assertThat(ids).containsExactly(1, 3); // equal logits: the lower index first
        assertThat(weights[0]).isCloseTo(0.5f, within(1e-6f));
        assertThat(weights[1]).isCloseTo(0.5f, within(1e-6f));
        MixtureOfExperts.select(logits, 0, 5, 3, false, new int[3], weights = new float[3], 0);
        double sum = 0;
        for (float logit : logits) {
            sum += Math.exp(logit);
        }
        // Without renormalization the weights are the softmax over all five experts.
        assertThat(weights[2]).isCloseTo((float) (Math.exp(1) / sum), within(1e-6f));
        int[] three = new int[3];
        float[] normalized = new float[3];
        MixtureOfExperts.select(logits, 0, 5, 3, true, three, normalized, 0);
        assertThat(three).containsExactly(1, 3, 2);
        assertThat(normalized[0] + normalized[1] + normalized[2]).isCloseTo(1f, within(1e-6f));
        assertThat(normalized[2]).isCloseTo((float) (Math.exp(1) / (2 * Math.exp(2) + Math.exp(1))), within(1e-6f));
    }

    /** Expert parallelism: ranks holding disjoint expert ranges produce partial outputs that add up to the whole FFN. */
    @Test
    void expertRangesOnDifferentRanksSumToTheWholeBlock() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.Q8_0));
             WorkerPool pool = new WorkerPool(2)) {
            LlamaConfig config = LlamaConfig.from(file);
            assertThat(config.experts()).isEqualTo(4);
            assertThat(config.expertsUsed()).isEqualTo(2);
            ExpertWeights all = LlamaWeights.load(file, config).block(1).experts();
            int dim = config.dimension();
            int batch = 5;
            float[] x = new float[batch * dim];
            Random random = new Random(3);
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) random.nextGaussian();
            }
            for (int tokens : new int[] {1, batch}) {
                MixtureOfExperts block = new MixtureOfExperts(dim, config.expertFeedForward());
                float[] whole = new float[tokens * dim], first = new float[tokens * dim], second = new float[tokens * dim];
                block.forward(pool, all, x, tokens, whole);
                block.forward(pool, all.localExperts(0, 1), x, tokens, first);
                block.forward(pool, all.localExperts(1, 3), x, tokens, second);
                float scale = 0;
                for (int i = 0; i < tokens * dim; i++) {
                    scale = Math.max(scale, Math.abs(whole[i]));
                }
                assertThat(scale).isGreaterThan(0.01f);
                for (int i = 0; i < tokens * dim; i++) {
                    assertThat(first[i] + second[i]).as("%d tokens, value %d", tokens, i).isCloseTo(whole[i], within(1e-4f * scale));
                }
            }
        }
    }

    @Test
    void theDecodeBoundCountsTheActiveExpertsOnly() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.Q8_0))) {
            LlamaConfig config = LlamaConfig.from(file);
            LayerWeights block = LlamaWeights.load(file, config).block(0);
            long attention = block.query().byteSize() + block.key().byteSize() + block.value().byteSize() + block.output().byteSize();
            long oneExpert = 3L * config.expertFeedForward() * GgmlType.Q8_0.bytesFor(config.dimension());
            long router = (long) config.experts() * config.dimension() * Float.BYTES;
            assertThat(block.matrixBytes()).isEqualTo(attention + router + config.expertsUsed() * oneExpert);
            assertThat(block.gate()).isNull();
        }
    }
}
