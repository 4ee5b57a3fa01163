package io.macfleet.node.cluster;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-rank timing lines of a tensor rank's /metrics count its forward passes and their waits. */
class ClusterMetricsTest {
    @Test
    void tensorRanksCountForwardTimeAndWaits() throws Exception {
        Path model = Files.createTempFile("metrics-model", ".gguf");
        try {
            ModelGenerator.write(ShardedForwardTest.FOUR_LAYERS, GgmlType.F32, 7, model);
            try (InProcessCluster cluster = new InProcessCluster(model, 2, ClusterFile.Parallelism.TENSOR, null, 64)) {
                assertThat(value(ClusterMetrics.render(cluster.nodes.get(0)), "inference_node_cluster_forward_microseconds")).isZero();
                int[] prompt = {1, 17, 300, 42};
                float[] logits = cluster.root.forward().forward(prompt, 0, prompt.length, 0);
                assertThat(logits).hasSize(512); // the whole vocabulary, half of it gathered from rank 1
                String rank0 = ClusterMetrics.render(cluster.nodes.get(0));
                long forward = value(rank0, "inference_node_cluster_forward_microseconds");
                assertThat(forward).isPositive();
                assertThat(value(rank0, "inference_node_cluster_allreduce_wait_microseconds")
                        + value(rank0, "inference_node_cluster_gather_wait_microseconds")).isLessThanOrEqualTo(forward);
                // rank 1 ran the same pass as a worker (asked by rank 0's command); its counter moves when it is done
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (value(ClusterMetrics.render(cluster.nodes.get(1)), "inference_node_cluster_forward_microseconds") == 0
                        && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(value(ClusterMetrics.render(cluster.nodes.get(1)), "inference_node_cluster_forward_microseconds")).isPositive();
                // without -Dmacfleet.node.phase-profile the per-part lines are absent
                assertThat(rank0).doesNotContain("inference_node_phase_microseconds");
            }
        } finally {
            Files.deleteIfExists(model);
        }
    }

    private static long value(String metrics, String name) {
        Matcher matcher = Pattern.compile("(?m)^" + name + " (\\d+)$").matcher(metrics);
        assertThat(matcher.find()).as(name + " in\n" + metrics).isTrue();
        return Long.parseLong(matcher.group(1));
    }
}
