package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** launch-local starts N rank processes that answer on rank 0's port, and they end when the launcher is killed -9. */
class LaunchLocalTest {
    @Test
    void ranksServeAndDieWithTheLauncher() throws Exception {
        int port = LaunchLocal.freePorts(1)[0];
        Path log = Files.createTempFile("launch-local", ".log");
        Process launcher = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "-cp", RankProcesses.classPath(), "io.macfleet.node.Main",
                "launch-local", "--model", TestModels.tiny(GgmlType.Q8_0).toString(), "--ranks", "2",
                "--parallelism", "pipeline", "--port", Integer.toString(port), "--context", "256")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long deadline = System.nanoTime() + 120_000_000_000L;
            int status = 0;
            while (status != 200 && System.nanoTime() < deadline) {
                Thread.sleep(200);
                try {
                    status = RankProcesses.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
                } catch (java.io.IOException e) {
                    status = 0;
                }
            }
            assertThat(status).as(Files.readString(log)).isEqualTo(200);
            List<ProcessHandle> ranks = launcher.descendants().toList();
            assertThat(ranks).hasSize(2);
            launcher.destroyForcibly().waitFor();
            for (ProcessHandle rank : ranks) {
                rank.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(rank.isAlive()).isFalse();
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
    }
}
