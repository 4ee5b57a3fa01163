package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.GenerationOptions;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.grammar.GrammarConstraint;
import io.macfleet.node.grammar.Node;
import io.macfleet.node.grammar.SchemaCompiler;
import io.macfleet.node.json.Json;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.LlamaConfig;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The grammar mask is applied on rank 0 where sampling happens: a 2-rank tensor and a 2-rank pipeline cluster give
 * the same constrained text as one node for the same seed.
 */
class ConstrainedClusterTest {
    private static final String SCHEMA = """
            {"type":"object","additionalProperties":false,"required":["name","n","tags"],"properties":{
              "name":{"type":"string"},"n":{"type":"integer"},"tags":{"type":"array","items":{"enum":["a","b"]}}}}""";

    @Test
    void tensorAndPipelineClustersConstrainAsOneNode() throws Exception {
        Path model = TestModels.tiny(GgmlType.Q8_0);
        Node grammar = SchemaCompiler.compile(Json.parse(SCHEMA));
        List<String> single;
        try (InferenceEngine engine = InferenceEngine.load(model, 128, 1)) {
            single = texts(engine, grammar);
        }
        for (ClusterFile.Parallelism parallelism : ClusterFile.Parallelism.values()) {
            String text = ClusterFile.loopback(2, parallelism, LaunchLocal.freePorts(2), LaunchLocal.freePorts(2));
            ClusterFile cluster = ClusterFile.parse(text, "test");
            ClusterNode worker = new ClusterNode(cluster, 1);
            ClusterNode root = new ClusterNode(cluster, 0);
            try (GgufFile file = GgufFile.open(model); WorkerPool pool = new WorkerPool(1)) {
                Thread.ofPlatform().daemon().name("constrained-rank-1").start(() -> {
                    worker.place(file, LlamaConfig.from(file), 128, pool);
                    worker.serveWorker();
                });
                try (InferenceEngine engine = InferenceEngine.load(model, 128, 1, root)) {
                    long deadline = System.nanoTime() + 30_000_000_000L;
                    while (root.problem() != null) {
                        assertThat(System.nanoTime()).as("cluster forms").isLessThan(deadline);
                        Thread.sleep(20);
                    }
                    assertThat(texts(engine, grammar)).as(parallelism.toString()).isEqualTo(single);
                }
            } finally {
                root.close();
                worker.close();
            }
        }
    }

    private static List<String> texts(InferenceEngine engine, Node grammar) {
        return java.util.stream.LongStream.rangeClosed(1, 3).mapToObj(seed -> engine.generate(
                engine.encodeCompletion("JSON:"), new SamplingParameters(0.8f, 0, 1, 0, seed, 60, List.of()),
                new GenerationOptions(new GrammarConstraint(grammar, engine.tokenizer()), -1, 0, 0), t -> { })
                .text()).toList();
    }
}
