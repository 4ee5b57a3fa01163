package io.macfleet.node.cluster;

import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rank killed (kill -9) or stopped (SIGSTOP) in the middle of a streamed generation: rank 0 ends the stream
 * with an error event within 2 s, /health is 503 naming the rank, and the cluster forms again by itself once the
 * rank is back, without restarting rank 0.
 */
class ClusterFailureTest {
    /** Wide enough that a long generation takes seconds here (about 48 MB of F32 weights per token). */
    static final ModelGenerator.Shape SLOW = new ModelGenerator.Shape("macfleet-test-slow", 512, 4, 8, 2, 1536, 512, 4096);
    static Path model;

    @BeforeAll
    static void writeModel() throws IOException {
        model = Files.createTempFile("slow", ".gguf");
        ModelGenerator.write(SLOW, GgmlType.F32, 11, model);
    }

    /** The slow model for other test classes (written on first use, deleted at exit). */
    static synchronized Path slowModel() throws IOException {
        if (model == null || !Files.exists(model)) {
            writeModel();
            model.toFile().deleteOnExit();
        }
        return model;
    }

    @AfterAll
    static void deleteModel() throws IOException {
        Files.deleteIfExists(model);
    }

    /** Streams a long completion, runs {@code fault} after a few chunks, returns seconds from the fault to the error event. */
    static double secondsToErrorEvent(RankProcesses cluster, Runnable fault) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(cluster.uri(0, "/v1/completions")).timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(Map.of("prompt", "a long story", "max_tokens", 3500,
                        "temperature", 0, "stream", true)))).build();
        HttpResponse<Stream<String>> response = RankProcesses.HTTP.send(request, HttpResponse.BodyHandlers.ofLines());
        assertThat(response.statusCode()).isEqualTo(200);
        Iterator<String> lines = response.body().iterator();
        int chunks = 0;
        long faultAt = 0;
        while (lines.hasNext()) {
            String line = lines.next();
            if (!line.startsWith("data: ")) {
                continue;
            }
            assertThat(line).as("the stream finished before the fault").isNotEqualTo("data: [DONE]");
            if (line.contains("\"error\"")) {
                assertThat(faultAt).as("an error before the fault: " + line).isNotZero();
                assertThat(line).contains("cluster_incomplete");
                return (System.nanoTime() - faultAt) / 1e9;
            }
            if (++chunks == 5) {
                fault.run();
                faultAt = System.nanoTime();
            }
        }
        throw new AssertionError("the stream ended without an error event after " + chunks + " chunks");
    }

    static void signal(Process process, String name) {
        try {
            new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void killedAndStoppedRanksEndTheRequestAndTheClusterFormsAgain() throws Exception {
        try (RankProcesses cluster = new RankProcesses(model, 3, ClusterFile.Parallelism.TENSOR, 4096)) {
            cluster.awaitHealthy(Duration.ofSeconds(120));

            double killed = secondsToErrorEvent(cluster, () -> signal(cluster.processes[1], "KILL"));
            assertThat(killed).as("seconds from kill -9 to the error event").isLessThan(2.0);
            HttpResponse<String> health = cluster.get(0, "/health");
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains("rank 1");
            HttpResponse<String> refused = cluster.post("/v1/completions", Map.of("prompt", "x", "max_tokens", 2),
                    Duration.ofSeconds(10));
            assertThat(refused.statusCode()).isEqualTo(503);

            cluster.start(1, model, java.util.List.of());
            cluster.awaitHealthy(Duration.ofSeconds(120));
            assertThat(cluster.complete("after the restart", 4)).isNotNull();

            double stopped = secondsToErrorEvent(cluster, () -> signal(cluster.processes[2], "STOP"));
            assertThat(stopped).as("seconds from SIGSTOP to the error event").isLessThan(2.0);
            // Names rank 2: alone ("rank 2") or with a rank still re-joining after the cluster dissolved ("ranks 1, 2").
            assertThat(cluster.get(0, "/health").body()).containsPattern("ranks? (\\d+, )*2\\b");
            signal(cluster.processes[2], "CONT");
            cluster.awaitHealthy(Duration.ofSeconds(120));
            assertThat(cluster.complete("after SIGCONT", 4)).isNotNull();
            System.out.printf("failure detection: kill -9 %.2f s, SIGSTOP %.2f s%n", killed, stopped);
        }
    }

    /**
     * Ranks that spin through their waits ({@link WaitPolicy}) still check heartbeats and deadlines while spinning:
     * rank 0 spinning for the last stage's result notices it stopped (SIGSTOP) or killed within 2 s.
     */
    @Test
    void spinningRanksStillDetectAStoppedOrKilledPeer() throws Exception {
        try (RankProcesses cluster = new RankProcesses(model, 2, ClusterFile.Parallelism.PIPELINE, 4096,
                java.util.List.of("-D" + WaitPolicy.PROPERTY + "=spin"))) {
            cluster.awaitHealthy(Duration.ofSeconds(120));
            assertThat(cluster.get(0, "/metrics").body()).contains("inference_node_cluster_wait_spin_microseconds 250000");

            double stopped = secondsToErrorEvent(cluster, () -> signal(cluster.processes[1], "STOP"));
            assertThat(stopped).as("seconds from SIGSTOP to the error event").isLessThan(2.0);
            assertThat(cluster.get(0, "/health").body()).contains("rank 1");
            signal(cluster.processes[1], "CONT");
            cluster.awaitHealthy(Duration.ofSeconds(120));
            assertThat(cluster.complete("after SIGCONT", 4)).isNotNull();

            double killed = secondsToErrorEvent(cluster, () -> signal(cluster.processes[1], "KILL"));
            assertThat(killed).as("seconds from kill -9 to the error event").isLessThan(2.0);
            System.out.printf("failure detection with spinning ranks: SIGSTOP %.2f s, kill -9 %.2f s%n", stopped, killed);
        }
    }
}
