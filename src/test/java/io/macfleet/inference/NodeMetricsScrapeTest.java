package io.macfleet.inference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.deployment.NodeJars;
import io.macfleet.runtime.BundledRuntime;
import io.macfleet.runtime.InferenceCounters;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * macfleet's scrape of the real bundled node (its jar, the tiny model, an API key file), as {@link InferenceScraper}
 * does it for a cluster: /metrics refuses a scrape without the key, and with it the node's counters come back in
 * macfleet's terms after one completion.
 */
class NodeMetricsScrapeTest {

    private static final String KEY = "0123456789abcdef0123456789abcdef";

    @TempDir
    Path directory;

    @Test
    void theNodesMetricsAreScrapedWithTheKeyAndReadAsRequestsTokensAndFirstTokens() throws Exception {
        Path model = NodeJars.tinyModel(directory, 3);
        Path key = directory.resolve("api.key");
        Files.writeString(key, KEY);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Process node = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--add-modules",
                "jdk.incubator.vector", "-jar", NodeJars.nodeJar().toString(), "serve", "--model", model.toString(), "--host", "127.0.0.1",
                "--port", Integer.toString(port), "--threads", "1", "--api-key", "file:" + key))
                .redirectErrorStream(true).redirectOutput(directory.resolve("node.log").toFile()).start();
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + port;
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (System.nanoTime() < deadline && !healthy(http, base)) {
                assertThat(node.isAlive()).as(Files.readString(directory.resolve("node.log"))).isTrue();
                Thread.sleep(200);
            }
            HttpResponse<String> completion = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                    .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"Hi\",\"max_tokens\":4}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);

            URI metrics = InferenceScraper.metricsUri(base + "/v1", new BundledRuntime().metricsPath().orElseThrow());
            assertThatThrownBy(() -> InferenceScraper.fetch(http, new BundledRuntime(), metrics, Optional.empty())).hasMessageContaining("HTTP 401");
            InferenceCounters counters = InferenceScraper.fetch(http, new BundledRuntime(), metrics, Optional.of(KEY));
            assertThat(counters.requestsByOutcome()).containsEntry("ok", 1.0).containsEntry("rejected", 0.0);
            assertThat(counters.promptTokens().orElse(0)).isPositive();
            assertThat(counters.generatedTokens()).hasValue(4);
            assertThat(counters.firstToken().count()).isEqualTo(1);
            assertThat(counters.firstToken().bounds()).containsExactlyElementsOf(java.util.Arrays.stream(InferenceMetrics.FIRST_TOKEN_BOUNDS).boxed().toList());
            assertThat(counters.queueDepth()).hasValue(0);
        } finally {
            node.destroy();
            if (!node.waitFor(20, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
    }

    private static boolean healthy(HttpClient http, String base) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(base + "/health")).timeout(Duration.ofSeconds(5)).GET().build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (Exception notYet) {
            return false;
        }
    }
}
