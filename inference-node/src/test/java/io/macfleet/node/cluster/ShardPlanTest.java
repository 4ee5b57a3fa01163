package io.macfleet.node.cluster;

import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.TestModels;
import io.macfleet.node.model.LlamaConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardPlanTest {
    /** The 1b-shaped preset's attention: 32 query heads in 8 KV groups of 64-wide heads, FFN 8192. */
    private static LlamaConfig oneB() {
        return new LlamaConfig("llama", "1b", 2048, 16, 32, 8, 64, 8192, 32000, 8192, 1e-5f, 10000, 64, false,
                "none", 1, 8192, 1, 4);
    }

    @Test
    void threeRanksOnEightKvHeadsSplitThreeThreeTwo() {
        ShardPlan plan = ShardPlan.tensor(oneB(), new double[] {1, 1, 1}, 32, ShardPlan.FeedForwardSharding.dense(oneB(), 32));
        assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::kvHeadCount).containsExactly(3, 3, 2);
        assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::firstHead).containsExactly(0, 12, 24);
        assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::unitCount).containsExactly(2752, 2720, 2720);
        assertThat(plan.tensor().stream().mapToInt(ShardPlan.TensorShard::unitCount).sum()).isEqualTo(8192);
    }

    @Test
    void weightsGiveTheLargerRankMore() {
        ShardPlan plan = ShardPlan.tensor(oneB(), new double[] {2, 2, 1, 1}, 32, ShardPlan.FeedForwardSharding.dense(oneB(), 32));
        assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::kvHeadCount).containsExactly(3, 3, 1, 1);
        assertThat(plan.tensor().get(0).unitCount()).isGreaterThan(plan.tensor().get(3).unitCount() * 3 / 2);
    }

    @Test
    void moreRanksThanKvHeadsReplicateKvHeads() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.F32))) {
            LlamaConfig config = LlamaConfig.from(file); // 4 query heads, 2 KV heads
            ShardPlan plan = ShardPlan.tensor(config, new double[] {1, 1, 1, 1}, 1, ShardPlan.FeedForwardSharding.dense(config, 1));
            assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::firstKvHead).containsExactly(0, 0, 1, 1);
            assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::firstHead).containsExactly(0, 1, 2, 3);
            assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::headCount).containsExactly(1, 1, 1, 1);
            ShardPlan three = ShardPlan.tensor(config, new double[] {1, 1, 1}, 1, ShardPlan.FeedForwardSharding.dense(config, 1));
            assertThat(three.tensor()).extracting(ShardPlan.TensorShard::firstKvHead).containsExactly(0, 1, 1);
            assertThat(three.tensor()).extracting(ShardPlan.TensorShard::headCount).containsExactly(2, 1, 1);
            assertThatThrownBy(() -> ShardPlan.tensor(config, new double[] {1, 1, 1, 1, 1}, 1,
                    ShardPlan.FeedForwardSharding.dense(config, 1))).hasMessageContaining("more than the model's 4 query heads");
        }
    }

    @Test
    void quantizedAttentionOutputNeedsWholeBlocks() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            LlamaConfig config = LlamaConfig.from(file); // 16-wide heads, Q8_0 blocks of 32
            assertThatThrownBy(() -> ClusterNode.plan(file, config, ClusterFile.parse(
                    ClusterFile.loopback(4, ClusterFile.Parallelism.TENSOR, new int[4], new int[4]), "test")))
                    .hasMessageContaining("not whole quantization blocks of 32");
        }
    }

    @Test
    void equalRanksGetEqualLayersAndVocabularyRows() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            LlamaConfig config = LlamaConfig.from(file);
            ShardPlan plan = ClusterNode.plan(file, config, ClusterFile.parse(
                    ClusterFile.loopback(2, ClusterFile.Parallelism.TENSOR, new int[2], new int[2]), "test"));
            // the output matrix is split by vocabulary, so rank 0 no longer gives up layers for it
            assertThat(plan.tensor().get(0).unitCount()).isEqualTo(plan.tensor().get(1).unitCount());
            assertThat(plan.tensor().get(0).unitCount() + plan.tensor().get(1).unitCount()).isEqualTo(config.feedForward());
            assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::firstVocabularyRow)
                    .containsExactly(0, config.vocabulary() / 2);
            assertThat(plan.tensor().stream().mapToInt(ShardPlan.TensorShard::vocabularyRows).sum()).isEqualTo(config.vocabulary());
        }
    }

    @Test
    void vocabularyRowsFollowTheWeightsWithoutGapsOrOverlaps() {
        ShardPlan plan = ShardPlan.tensor(oneB(), new double[] {2, 2, 1, 1}, 32, ShardPlan.FeedForwardSharding.dense(oneB(), 32));
        int next = 0;
        for (ShardPlan.TensorShard shard : plan.tensor()) {
            assertThat(shard.firstVocabularyRow()).isEqualTo(next);
            next += shard.vocabularyRows();
        }
        assertThat(next).isEqualTo(32000);
        assertThat(plan.tensor()).extracting(ShardPlan.TensorShard::vocabularyRows).containsExactly(10667, 10667, 5333, 5333);
        assertThat(plan.describe()).contains("rank 3: ").endsWith("vocabulary rows 26667+5333");
    }

    @Test
    void pipelineStagesAreContiguousByWeight() {
        ShardPlan plan = ShardPlan.pipeline(oneB(), new double[] {2, 1, 1});
        assertThat(plan.stages()).extracting(r -> r.first() + ".." + r.end()).containsExactly("0..8", "8..12", "12..16");
        assertThat(plan.describe()).isEqualTo("pipeline; rank 0: layers 0..7; rank 1: layers 8..11; rank 2: layers 12..15");
    }
}
