package io.macfleet.node.model;

import io.macfleet.node.TestModels;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The F16 KV cache option: half the memory, logits close to the F32 cache's, the same greedy tokens. */
class HalfKvCacheTest {

    @Test
    void halfPrecisionCacheKeepsGreedyTokensAndLogitsClose() throws IOException {
        compare(TestModels.tiny(GgmlType.Q8_0));
        compare(TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.Q8_0));
        compare(TestModels.small(ModelGenerator.Architecture.QWEN3, QuantizationMix.Q4_K_M));
    }

    private static void compare(Path model) throws IOException {
        try (GgufFile file = GgufFile.open(model); WorkerPool pool = new WorkerPool(2)) {
            LlamaConfig config = LlamaConfig.from(file);
            LlamaModel full = new LlamaModel(LlamaWeights.load(file, config), pool);
            LlamaModel halfModel = new LlamaModel(LlamaWeights.load(file, config), pool);
            KvCache single = KvCache.allocate(config, 200, false);
            KvCache half = KvCache.allocate(config, 200, true);
            assertThat(half.half()).isTrue();
            assertThat(half.byteSize() * 2).isEqualTo(single.byteSize());
            int[] tokens = new int[160];
            for (int i = 0; i < 100; i++) {
                tokens[i] = (i * 37 + 11) % config.vocabulary();
            }
            int[] greedy = tokens.clone();
            float[] a = full.forward(tokens, 0, 100, 0, single);
            float[] b = halfModel.forward(greedy, 0, 100, 0, half);
            for (int position = 100; position < 160; position++) {
                float scale = 0;
                for (float v : a) {
                    scale = Math.max(scale, Math.abs(v));
                }
                for (int i = 0; i < a.length; i++) {
                    assertThat(b[i]).as("%s logit %d at %d", model.getFileName(), i, position).isCloseTo(a[i], within(2e-2f * scale));
                }
                tokens[position] = argmax(a);
                greedy[position] = argmax(b);
                assertThat(greedy[position]).as("%s greedy token at %d", model.getFileName(), position).isEqualTo(tokens[position]);
                if (position + 1 < 160) {
                    a = full.forward(tokens, position, 1, position, single);
                    b = halfModel.forward(greedy, position, 1, position, half);
                }
            }
        }
    }

    private static int argmax(float[] values) {
        int best = 0;
        for (int i = 1; i < values.length; i++) {
            if (values[i] > values[best]) {
                best = i;
            }
        }
        return best;
    }
}
