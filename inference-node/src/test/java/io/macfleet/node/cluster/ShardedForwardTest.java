package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.Placement;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.LlamaConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tensor and pipeline parallelism give the logits of one node (within 1e-3 of their scale) and the same greedy
 * tokens, with ranks as threads over loopback TCP. The four-layer model lets pipeline use three stages, and its
 * two KV heads make three and four tensor ranks replicate KV heads (3 ranks: uneven, 2/1/1 query heads).
 */
class ShardedForwardTest {
    static final ModelGenerator.Shape FOUR_LAYERS = new ModelGenerator.Shape("macfleet-test-4l", 128, 4, 8, 2, 384, 512, 512);
    static Path fourLayers;

    @BeforeAll
    static void writeModel() throws IOException {
        fourLayers = Files.createTempFile("four-layers", ".gguf");
        ModelGenerator.write(FOUR_LAYERS, GgmlType.F32, 7, fourLayers);
    }

    @AfterAll
    static void deleteModel() throws IOException {
        Files.deleteIfExists(fourLayers);
    }

    static final int[][] PROMPTS = {{1, 17, 300, 42, 9, 88, 250, 3}, {1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 400, 401}};
    static final int GENERATED = 32;

    /** Greedy tokens and per-step logits of prompt + GENERATED tokens. */
    record Run(List<Integer> tokens, List<float[]> logits) {
    }

    static Run greedy(Placement.ForwardPass forward, int[] prompt) {
        List<Integer> tokens = new ArrayList<>();
        List<float[]> logits = new ArrayList<>();
        float[] current = forward.forward(prompt, 0, prompt.length, 0);
        int position = prompt.length;
        for (int i = 0; i < GENERATED; i++) {
            logits.add(current);
            int best = 0;
            for (int t = 1; t < current.length; t++) {
                if (current[t] > current[best]) {
                    best = t;
                }
            }
            tokens.add(best);
            current = forward.forward(new int[] {best}, 0, 1, position++);
        }
        return new Run(tokens, logits);
    }

    static Run single(Path model, int[] prompt) throws IOException {
        try (GgufFile file = GgufFile.open(model); WorkerPool pool = new WorkerPool(1)) {
            return greedy(Placement.LOCAL.place(file, LlamaConfig.from(file), 128, pool).forward(), prompt);
        }
    }

    static void assertSame(Path model, int ranks, ClusterFile.Parallelism parallelism, double[] weights) throws IOException {
        assertSame(model, ranks, parallelism, weights, ClusterNode.MICRO_BATCH, PROMPTS);
    }

    static void assertSame(Path model, int ranks, ClusterFile.Parallelism parallelism, double[] weights, int microBatch,
                           int[][] prompts) throws IOException {
        assertSame(model, ranks, parallelism, weights, microBatch, prompts, 1e-3f);
    }

    /**
     * Quantized deepseek2 files round their activations to 8 bits as llama.cpp does (Kernels.ROUND_ACTIVATIONS):
     * rounding is discontinuous, so a last-bit difference in a sum that ranks add up in another order can move one
     * value across a rounding step (1/127 of its block's largest value), and the JIT tier decides the Vector API's
     * lane-summation order; tokens must still be identical, logits within {@code tolerance} of the largest one
     * (measured on the tiny Q8_0 file: up to 1.1%; 3% asked).
     */
    static void assertSame(Path model, int ranks, ClusterFile.Parallelism parallelism, double[] weights, int microBatch,
                           int[][] prompts, float tolerance) throws IOException {
        try (InProcessCluster cluster = new InProcessCluster(model, ranks, parallelism, weights, 128)) {
            cluster.nodes.getFirst().microBatch(microBatch);
            for (int[] prompt : prompts) {
                Run expected = single(model, prompt);
                Run actual = greedy(cluster.root.forward(), prompt);
                assertThat(actual.tokens()).as("%s %d ranks", parallelism, ranks).isEqualTo(expected.tokens());
                for (int step = 0; step < GENERATED; step++) {
                    float[] want = expected.logits().get(step), got = actual.logits().get(step);
                    float scale = 0;
                    for (float v : want) {
                        scale = Math.max(scale, Math.abs(v));
                    }
                    for (int t = 0; t < want.length; t++) {
                        assertThat(Math.abs(got[t] - want[t])).as("%s %d ranks step %d token %d", parallelism, ranks, step, t)
                                .isLessThanOrEqualTo(tolerance * scale);
                    }
                }
            }
        }
    }

    @Test
    void tensorTwoRanksQuantized() throws IOException {
        assertSame(TestModels.tiny(GgmlType.Q8_0), 2, ClusterFile.Parallelism.TENSOR, null);
    }

    @Test
    void tensorTwoThreeFourRanksWithReplicatedKvHeads() throws IOException {
        for (int ranks = 2; ranks <= 4; ranks++) {
            assertSame(fourLayers, ranks, ClusterFile.Parallelism.TENSOR, null);
        }
    }

    @Test
    void tensorUnevenWeights() throws IOException {
        assertSame(fourLayers, 2, ClusterFile.Parallelism.TENSOR, new double[] {3, 1});
    }

    @Test
    void pipelineTwoAndThreeStages() throws IOException {
        assertSame(fourLayers, 2, ClusterFile.Parallelism.PIPELINE, null);
        assertSame(fourLayers, 3, ClusterFile.Parallelism.PIPELINE, new double[] {1, 1, 2});
    }

    /**
     * Prompts split into micro-batches of 3 positions (the last one shorter; 5 of them for 14 tokens) flow through 2
     * and 3 stages while rank 0 computes the next one, and give one node's tokens and logits. A 40-token prompt
     * crosses the default micro-batch of 32.
     */
    @Test
    void pipelineMicroBatchesGiveOneNodesTokens() throws IOException {
        int[] long40 = new int[40];
        for (int i = 0; i < long40.length; i++) {
            long40[i] = 1 + (i * 37) % 500;
        }
        int[][] prompts = {PROMPTS[1], long40};
        assertSame(fourLayers, 2, ClusterFile.Parallelism.PIPELINE, null, 3, prompts);
        assertSame(fourLayers, 3, ClusterFile.Parallelism.PIPELINE, new double[] {1, 1, 2}, 3, prompts);
        assertSame(fourLayers, 2, ClusterFile.Parallelism.PIPELINE, null, ClusterNode.MICRO_BATCH, new int[][] {long40});
    }

    /** A pipeline stage of a mixture-of-experts model keeps its experts (the stage's configuration carries them). */
    @Test
    void pipelineOfMixtureOfExperts() throws IOException {
        assertSame(TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.Q8_0), 2, ClusterFile.Parallelism.PIPELINE, null);
    }

    /** deepseek2 by layers: each stage keeps its layers' latent cache, dense and MoE blocks alike. */
    @Test
    void pipelineOfDeepSeek2() throws IOException {
        Path model = TestModels.tiny(ModelGenerator.Architecture.DEEPSEEK2, GgmlType.Q8_0);
        assertSame(model, 2, ClusterFile.Parallelism.PIPELINE, null, ClusterNode.MICRO_BATCH, PROMPTS, 3e-2f);
        assertSame(model, 2, ClusterFile.Parallelism.PIPELINE, null, 3, new int[][] {PROMPTS[1]}, 3e-2f);
    }

    /**
     * deepseek2 by heads and experts: 2 ranks (2 of 4 heads, 2 of 4 experts, half the dense and shared-expert rows
     * each) and 2 ranks weighted 3:1, F32 and Q8_0 (column slices on block bounds), give one node's tokens and logits.
     */
    @Test
    void tensorOfDeepSeek2SplitsHeadsAndExperts() throws IOException {
        assertSame(TestModels.tiny(ModelGenerator.Architecture.DEEPSEEK2, GgmlType.Q8_0), 2, ClusterFile.Parallelism.TENSOR,
                null, ClusterNode.MICRO_BATCH, PROMPTS, 3e-2f);
        assertSame(TestModels.tiny(ModelGenerator.Architecture.DEEPSEEK2_SOFTMAX, GgmlType.F32), 2,
                ClusterFile.Parallelism.TENSOR, new double[] {3, 1});
    }

    /** A rank whose share of the file exceeds its machine's memory is refused with the numbers. */
    @Test
    void aRankWhoseShareDoesNotFitItsMemoryIsRefused() throws IOException {
        Path model = TestModels.tiny(ModelGenerator.Architecture.DEEPSEEK2, GgmlType.Q8_0);
        try (GgufFile file = GgufFile.open(model)) {
            LlamaConfig config = LlamaConfig.from(file);
            ClusterFile cluster = ClusterFile.parse(ClusterFile.loopback(2, ClusterFile.Parallelism.TENSOR, LaunchLocal.freePorts(2),
                    LaunchLocal.freePorts(2)), "test");
            ShardPlan plan = ClusterNode.plan(file, config, cluster);
            long half = file.fileSize() / 2;
            ClusterNode.checkFits(file, config, plan, new double[] {1, 1}, 1, half + 1);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> ClusterNode.checkFits(file, config, plan, new double[] {1, 3}, 1, half + 1))
                    .hasMessageContaining("rank 1 would hold about").hasMessageContaining("(75% by the cluster file's tensor plan)")
                    .hasMessageContaining("GB of memory");
        }
    }

    /**
     * Tensor parallelism of a mixture of experts deals the experts out whole (the tiny qwen3moe model: 4 experts,
     * 2 used per token) and splits the attention as for a dense model: 2 ranks (2/2 experts), 2 ranks weighted 3:1
     * (3/1 experts) and 3 ranks (2/1/1 experts, KV heads replicated) give one node's tokens and logits.
     */
    @Test
    void tensorOfMixtureOfExpertsDealsOutWholeExperts() throws IOException {
        Path quantized = TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.Q8_0);
        try (GgufFile file = GgufFile.open(quantized)) {
            ClusterFile cluster = ClusterFile.parse(ClusterFile.loopback(2, ClusterFile.Parallelism.TENSOR, LaunchLocal.freePorts(2),
                    LaunchLocal.freePorts(2)), "test");
            assertThat(ClusterNode.plan(file, LlamaConfig.from(file), cluster).tensor())
                    .extracting(ShardPlan.TensorShard::unitCount).containsExactly(2, 2);
        }
        assertSame(quantized, 2, ClusterFile.Parallelism.TENSOR, null);
        assertSame(quantized, 2, ClusterFile.Parallelism.TENSOR, new double[] {3, 1});
        assertSame(TestModels.tiny(ModelGenerator.Architecture.QWEN3MOE, GgmlType.F32), 3, ClusterFile.Parallelism.TENSOR, null);
    }
}
