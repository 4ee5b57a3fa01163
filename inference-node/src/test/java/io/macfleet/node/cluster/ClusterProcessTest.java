package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ranks as separate processes over loopback TCP give the same greedy completions (32 tokens) as one node, through
 * rank 0's OpenAI API; a rank with a different model or node version is refused with a message naming the
 * difference.
 */
class ClusterProcessTest {
    static final List<String> PROMPTS = List.of("the quick brown fox", "once upon a time in a land far away", "1 2 3 4 5");
    static Path fourLayers;

    @BeforeAll
    static void writeModel() throws IOException {
        fourLayers = Files.createTempFile("four-layers", ".gguf");
        io.macfleet.node.generator.ModelGenerator.write(ShardedForwardTest.FOUR_LAYERS, GgmlType.F32, 7, fourLayers);
    }

    @AfterAll
    static void deleteModel() throws IOException {
        Files.deleteIfExists(fourLayers);
    }

    static List<String> singleNode(Path model, List<String> prompts, int context) throws IOException {
        List<String> texts = new ArrayList<>();
        try (InferenceEngine engine = InferenceEngine.load(model, context, 1)) {
            for (String prompt : prompts) {
                texts.add(engine.generate(engine.encodeCompletion(prompt),
                        new SamplingParameters(0, 0, 1, 0, null, 32, List.of()), text -> { }).text());
            }
        }
        return texts;
    }

    static void assertSameAsOneNode(Path model, int ranks, ClusterFile.Parallelism parallelism, List<String> prompts)
            throws Exception {
        assertSameAsOneNode(model, ranks, parallelism, prompts, singleNode(model, prompts, 256));
    }

    static void assertSameAsOneNode(Path model, int ranks, ClusterFile.Parallelism parallelism, List<String> prompts,
                                    List<String> expected) throws Exception {
        try {
            assertSameAsOneNodeOnce(model, ranks, parallelism, prompts, expected);
        } catch (IllegalStateException e) {
            // The ranks' ports are found free, then released, then bound by the rank processes: on a shared machine
            // another program can take one in between. That says nothing about the node, so the cluster is started
            // once more on fresh ports; any other failure (or the same one twice) fails the test.
            if (e.getMessage() == null || !e.getMessage().contains("Address already in use")) {
                throw e;
            }
            System.err.println("a rank's port was taken by another program meanwhile; starting the cluster again on new ports");
            assertSameAsOneNodeOnce(model, ranks, parallelism, prompts, expected);
        }
    }

    private static void assertSameAsOneNodeOnce(Path model, int ranks, ClusterFile.Parallelism parallelism, List<String> prompts,
                                                List<String> expected) throws Exception {
        try (RankProcesses cluster = new RankProcesses(model, ranks, parallelism, 256)) {
            cluster.awaitHealthy(Duration.ofSeconds(120));
            for (int i = 0; i < prompts.size(); i++) {
                assertThat(cluster.complete(prompts.get(i), 32)).as("%s, %d ranks, prompt %d", parallelism, ranks, i)
                        .isEqualTo(expected.get(i));
            }
            assertThat(cluster.get(1, "/health").statusCode()).isEqualTo(200);
            assertThat(cluster.get(1, "/metrics").body()).contains("inference_node_cluster_complete 1")
                    .contains("inference_node_shard_weight_bytes")
                    // What the control plane's supervision compares across ranks (io.macfleet.supervision.NodeProbe).
                    .containsPattern("inference_node_info\\{version=\"[^\"]+\",model=\"\\d+ bytes, header sha256 [0-9a-f]+\"\\} 1");
            assertThat(cluster.get(1, "/v1/models").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void tensorTwoRanksTinyQuantized() throws Exception {
        assertSameAsOneNode(TestModels.tiny(GgmlType.Q8_0), 2, ClusterFile.Parallelism.TENSOR, PROMPTS);
    }

    @Test
    void tensorThreeAndFourRanksReplicatingKvHeads() throws Exception {
        assertSameAsOneNode(fourLayers, 3, ClusterFile.Parallelism.TENSOR, PROMPTS);
        assertSameAsOneNode(fourLayers, 4, ClusterFile.Parallelism.TENSOR, PROMPTS);
    }

    @Test
    void pipelineTwoAndThreeStages() throws Exception {
        assertSameAsOneNode(TestModels.tiny(GgmlType.Q8_0), 2, ClusterFile.Parallelism.PIPELINE, PROMPTS);
        assertSameAsOneNode(fourLayers, 3, ClusterFile.Parallelism.PIPELINE, PROMPTS);
    }

    @Test
    void aRankWithAnotherModelOrVersionIsRefusedByName() throws Exception {
        try (RankProcesses cluster = new RankProcesses(TestModels.tiny(GgmlType.Q8_0), 2, ClusterFile.Parallelism.TENSOR, 256)) {
            cluster.awaitHealthy(Duration.ofSeconds(120));
            cluster.processes[1].destroyForcibly().waitFor();
            Process other = cluster.start(1, TestModels.tiny(GgmlType.F32), List.of());
            assertThat(other.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(other.exitValue()).isEqualTo(2);
            assertThat(cluster.logText(1)).contains("rank 0 refused this rank (1): model differs");
            String health = cluster.get(0, "/health").body();
            assertThat(health).contains("refused rank 1: model differs");

            Process newer = cluster.start(1, TestModels.tiny(GgmlType.Q8_0), List.of("-Dmacfleet.node.version=9.9.9"));
            assertThat(newer.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(newer.exitValue()).isEqualTo(2);
            assertThat(cluster.logText(1)).contains("node version differs: rank 0 has 0.1.0-SNAPSHOT, rank 1 has 9.9.9");

            cluster.start(1, TestModels.tiny(GgmlType.Q8_0), List.of());
            cluster.awaitHealthy(Duration.ofSeconds(120));
            assertThat(cluster.complete("hello", 4)).isNotNull();
        }
    }
}
