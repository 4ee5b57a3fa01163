package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An MLX cluster with {@code inference.settings.apiKey} on 2 simulated Macs (own loopback base 127.0.99.x): rank 0's
 * mlx_lm.server (the stand-in, answering with the bundled engine) on 127.0.0.1 behind {@code inference-node proxy} on the
 * management address and the cluster's port; an anonymous request is 401, a keyed one is answered, status and the
 * supervisor say serving.
 */
class MlxApiKeyOnSimulatorTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "mlx-proxy-key-0123456789abcdef0123456789";

    @TempDir
    static Path directory;
    static SimulatedInventory simulation;
    static RuntimeService runtimes;
    static SshSettings settings;
    static int httpPort;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(directory, 2, "127.0.99.11");
        List<String> names = List.of("studio-01", "studio-02");
        simulation.cableFullMesh(names);
        simulation.fleet.assignThunderboltLoopbackAddresses();
        httpPort = SimulatedRuntimes.freePort();
        Path model = SimulatedRuntimes.mlxModel(directory);
        Path keyFile = directory.resolve("mlx-api.key");
        Files.writeString(keyFile, KEY + "\n");
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        Path inventory = SimulatedRuntimes.mlxInventory(simulation, names, httpPort, model, "0.29.3", "0.28.2", "apiKey: \"file:" + keyFile + "\"\n");
        settings = SimulatedInventory.settings(Duration.ofSeconds(60));
        runtimes = SimulatedRuntimes.serviceFor(simulation, inventory, settings);
    }

    @AfterAll
    static void stop() {
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    void anAnonymousRequestIsRefusedAKeyedOneAnsweredAndTheClusterServes() throws Exception {
        RuntimePlan plan = runtimes.plan("llm-a", Optional.empty(), Optional.empty());
        String planJson = JSON.writeValueAsString(RuntimePlans.body(plan));
        assertThat(planJson).doesNotContain(KEY);
        JsonNode head = JSON.readTree(planJson).get("machines").get(0);
        assertThat(head.get("rank").asInt()).isZero();
        JsonNode proxy = null;
        JsonNode server = null;
        for (JsonNode daemon : head.get("daemons")) {
            if (daemon.get("label").asText().equals(MlxRuntime.PROXY_LABEL)) {
                proxy = daemon;
            } else {
                server = daemon;
            }
        }
        assertThat(proxy).as("the proxy daemon in the plan").isNotNull();
        String management = URI.create(plan.endpoint()).getHost();
        assertThat(proxy.get("programArguments").toString()).contains("\"proxy\"", "\"--listen\",\"" + management + ":" + httpPort + "\"",
                "\"--to\",\"127.0.0.1:", "\"--api-key\",\"file:" + MlxRuntime.API_KEY_FILE + "\"");
        assertThat(server.get("programArguments").toString()).contains("\"--host\",\"127.0.0.1\"");
        assertThat(plan.notes()).anySatisfy(note -> assertThat(note).contains("API key", MlxRuntime.PROXY_LABEL));

        RuntimeDeployer.Outcome outcome = runtimes.deploy("llm-a", Optional.empty(), settings, io.macfleet.deployment.NodeDeployer.Listener.NONE);
        assertThat(outcome.switched()).isTrue();
        assertThat(outcome.endpoint()).isEqualTo("http://" + management + ":" + httpPort + "/v1");

        HttpResponse<String> anonymous = chat(outcome.endpoint(), null);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.body()).contains("invalid_api_key").doesNotContain("choices");
        assertThat(chat(outcome.endpoint(), "not-the-key-0123456789").statusCode()).isEqualTo(401);

        HttpResponse<String> keyed = chat(outcome.endpoint(), KEY);
        assertThat(keyed.statusCode()).isEqualTo(200);
        assertThat(keyed.body()).contains("simulated mlx_lm.server stand-in", "bundled engine on macfleet-stand-in.gguf", "\"choices\"");

        assertThat(simulation.fleet.machine("studio-01").launchd().pid(MlxRuntime.PROXY_LABEL)).isPresent();
        assertThat(simulation.fleet.machine("studio-02").launchd().pid(MlxRuntime.PROXY_LABEL)).isEmpty();
        // Two ranks and the proxy, all ready; the supervisor sees the cluster serving through the proxy's /health.
        assertThat(runtimes.status("llm-a", settings)).hasSize(3).allSatisfy(daemon -> assertThat(daemon.ready()).as(daemon.toString()).isTrue());
        try (io.macfleet.ssh.SshRun run = new io.macfleet.ssh.SshTransport(settings, new InMemoryHostKeyStore(), event -> {
        }, Clock.systemUTC()).openRun()) {
            RuntimeSupervisor supervisor = new RuntimeSupervisor("llm-a", new MlxRuntime(), plan.machines().stream().map(RuntimePlan.MachinePlan::ssh).toList(),
                    Duration.ofSeconds(60), Clock.systemUTC());
            assertThat(supervisor.round(run)).isInstanceOf(RuntimeSupervisor.Decision.Serving.class);
        }
    }

    private static HttpResponse<String> chat(String endpoint, String key) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint + "/chat/completions")).timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4}"));
            if (key != null) {
                request.header("Authorization", "Bearer " + key);
            }
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }
}
