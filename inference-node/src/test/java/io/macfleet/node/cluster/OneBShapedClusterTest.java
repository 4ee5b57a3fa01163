package io.macfleet.node.cluster;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The 1b-shaped Q8_0 model (1.1 GB, 16 layers, 32 query heads in 8 KV groups) with ranks as processes: tensor 2,
 * 3 (uneven: 3/3/2 KV heads) and 4 ranks, pipeline 2 and 3 stages, each the same 32 greedy tokens as one node.
 * One prompt per configuration: on a shared 2-core machine this model decodes at about 3 tokens/s in one process,
 * so the class costs a few minutes (the model is written once, about a minute).
 */
class OneBShapedClusterTest {
    static Path model;

    @BeforeAll
    static void writeModel() throws IOException {
        model = Files.createTempFile("one-b-shaped", ".gguf");
        ModelGenerator.write(ModelGenerator.ONE_B, GgmlType.Q8_0, 42, model);
    }

    @AfterAll
    static void deleteModel() throws IOException {
        Files.deleteIfExists(model);
    }

    @Test
    void tensorAndPipelineGiveTheGreedyTokensOfOneNode() throws Exception {
        List<String> prompt = List.of("the quick brown fox");
        List<String> expected = ClusterProcessTest.singleNode(model, prompt, 256);
        for (int ranks : new int[] {2, 3, 4}) {
            ClusterProcessTest.assertSameAsOneNode(model, ranks, ClusterFile.Parallelism.TENSOR, prompt, expected);
        }
        for (int ranks : new int[] {2, 3}) {
            ClusterProcessTest.assertSameAsOneNode(model, ranks, ClusterFile.Parallelism.PIPELINE, prompt, expected);
        }
    }
}
