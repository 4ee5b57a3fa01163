package io.macfleet.health;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.cabling.PortPlan;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.PortRef;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules (docs/prometheus/macfleet-rules.yml) in the real Prometheus from Debian (/usr/bin/prometheus,
 * /usr/bin/promtool; {@code apt-get install prometheus}): promtool accepts them; a Prometheus started by this test on a
 * free loopback port, with a generated configuration (1 s scrape and evaluation), scrapes {@code /q/metrics} of the
 * service with a viewer's API token while the service reads the health of four simulated Macs; its query API shows
 * the series, and the overheating and kernel-panic rules fire once the simulator injects those faults. The rules' {@code
 * for:} durations are shortened to 1 s in the copy Prometheus loads (the expressions are the shipped ones), so the test
 * waits seconds, not minutes. Skipped when Prometheus is not installed, failed then when CI=true.
 */
@QuarkusTest
class PrometheusAlertsTest {

    private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
    private static final Path PROMTOOL = Path.of("/usr/bin/promtool");
    private static final Path RULES = Path.of("docs/prometheus/macfleet-rules.yml");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static SimulatedCluster simulation;
    static Process prometheus;
    static ProcessBuilder llama;
    static Process llamaServer;
    static Path directory;

    @Inject
    DesiredStateStore store;

    @Inject
    MacHealthService health;

    @Inject
    io.macfleet.inference.InferenceScraper scraper;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @BeforeAll
    static void start() throws Exception {
        boolean installed = Files.isExecutable(PROMETHEUS) && Files.isExecutable(PROMTOOL);
        if (!installed && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("CI=true but " + PROMETHEUS + " or " + PROMTOOL + " is missing: apt-get install prometheus");
        }
        Assumptions.assumeTrue(installed, "Prometheus is not installed (" + PROMETHEUS + ", " + PROMTOOL + "): apt-get install prometheus");
        simulation = SimulatedCluster.start("prometheus-alerts", 4, "127.0.30.1");
        directory = Files.createTempDirectory("macfleet-prometheus");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (prometheus != null) {
            prometheus.destroy();
            if (!prometheus.waitFor(20, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly();
            }
        }
        if (llamaServer != null) {
            llamaServer.destroy();
            if (!llamaServer.waitFor(20, TimeUnit.SECONDS)) {
                llamaServer.destroyForcibly();
            }
        }
        if (simulation != null) {
            simulation.close();
        }
    }

    @Test
    void promtoolAcceptsTheRulesAndPrometheusFiresOnOverheatingAndAPanic() throws Exception {
        Process check = new ProcessBuilder(PROMTOOL.toString(), "check", "rules", RULES.toString()).redirectErrorStream(true).start();
        String checked = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(check.waitFor()).as(checked).isZero();
        assertThat(checked).contains("SUCCESS");

        // llm-a is served by a real llama-server (one process, on studio-01's address, as its head would listen): macfleet
        // scrapes its /metrics with the cluster's key and exports macfleet_inference_* for Prometheus.
        Path build = io.macfleet.runtime.LlamaCppBuild.required();
        Path model = io.macfleet.deployment.NodeJars.tinyModel(directory, 5);
        Path key = directory.resolve("llama.key");
        Files.writeString(key, "prometheus-test-key-5d1c");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        int llamaPort = freePort();
        String head = simulation.fleet.endpoint("studio-01").host();
        llama = new ProcessBuilder(build.resolve("llama-server").toString(), "-m", model.toString(), "--host", head, "--port",
                Integer.toString(llamaPort), "--metrics", "--api-key-file", key.toString(), "-c", "256", "-t", "1")
                .redirectErrorStream(true).redirectOutput(directory.resolve("llama-server.log").toFile());
        llama.environment().put("LD_LIBRARY_PATH", build.toString());
        llamaServer = llama.start();
        simulation.apply(store, "prometheus-test", Map.of(), yaml -> yaml.replace("      kind: full-mesh\n", """
                      kind: full-mesh
                    inference:
                      runtime: llama.cpp
                      port: %d
                      model: %s
                      settings:
                        build: %s
                        apiKey: "file:%s"
                """.formatted(llamaPort, model, build, key)));
        long started = System.nanoTime();
        List<MacHealth> first = health.round();
        System.out.printf("health of %d simulated Macs read in %.2f s%n", first.size(), (System.nanoTime() - started) / 1e9);
        // the links are up before the fault: Prometheus must have seen them up (the rule fires on a port that was up)
        assertThat(first).extracting(MacHealth::machine).containsExactlyInAnyOrderElementsOf(SimulatedCluster.MEMBERS);
        assertThat(first).allSatisfy(look -> assertThat(look.unreadable()).as(look.machine()).isEmpty());

        int prometheusPort = freePort();
        startPrometheus(prometheusPort);
        String base = "http://127.0.0.1:" + prometheusPort;

        // The series are there, one per Mac, as Prometheus scraped them from /q/metrics.
        for (String series : List.of("macfleet_mac_package_power_watts", "macfleet_mac_memory_pressure_ratio", "macfleet_mac_wired_memory_bytes",
                "macfleet_mac_wired_limit_bytes", "macfleet_mac_uptime_seconds", "macfleet_mac_health_age_seconds",
                "macfleet_mac_kernel_panics_total", "macfleet_mac_thermal_pressure_level", "macfleet_machines")) {
            JsonNode result = waitFor(base, series, Duration.ofSeconds(60), answer -> answer.size() >= (series.equals("macfleet_machines") ? 1 : 4));
            assertThat(result.size()).as(series).isGreaterThanOrEqualTo(1);
        }
        String llamaBase = "http://" + head + ":" + llamaPort;
        long ready = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < ready && completion(llamaBase) != 200) {
            assertThat(llamaServer.isAlive()).as(Files.readString(directory.resolve("llama-server.log"))).isTrue();
            Thread.sleep(500);
        }
        scraper.scrape();
        assertThat(completion(llamaBase)).isEqualTo(200);
        scraper.scrape();
        for (String series : List.of("macfleet_inference_generated_tokens_total{cluster=\"llm-a\"} > 0",
                "macfleet_inference_prompt_tokens_total{cluster=\"llm-a\"} > 0", "macfleet_inference_tokens_per_second{cluster=\"llm-a\"} > 0",
                "macfleet_inference_queue_depth{cluster=\"llm-a\"}", "macfleet_inference_joules_per_token{cluster=\"llm-a\"} > 0",
                "macfleet_inference_metrics_available{cluster=\"llm-a\",runtime=\"llama.cpp\"} == 1")) {
            assertThat(waitFor(base, series, Duration.ofSeconds(30), answer -> answer.size() == 1).size()).as(series).isEqualTo(1);
        }
        assertThat(scraper.describe(SimulatedCluster.NAME)).contains("J per token");
        assertThat(waitFor(base, "macfleet_mac_package_power_watts{machine=\"studio-02\"}", Duration.ofSeconds(10), answer -> answer.size() == 1)
                .get(0).get("value").get(1).asDouble()).isBetween(30.0, 50.0);
        assertThat(alerts(base)).noneMatch(alert -> alert.get("labels").get("alertname").asText().matches("MacfleetMacOverheating|MacfleetKernelPanic"));

        simulation.fleet.inject(FaultStep.machine("studio-02", "overheat"));
        simulation.fleet.inject(FaultStep.machine("studio-03", "kernel-panic"));
        simulation.fleet.inject(FaultStep.machine("studio-02", "wired-memory-high"));
        // the RDMA link between studio-01 and studio-04 goes down: both ends' ports turn PORT_DOWN
        Topology.Link cable = PortPlan.fullMesh(SimulatedCluster.NAME, SimulatedCluster.MEMBERS).cableBetween("studio-01", "studio-04").orElseThrow();
        simulation.fleet.inject(FaultStep.cable(new PortRef("studio-04", cable.endOf("studio-04").port()).toString(), "rdma-down"));
        health.round();

        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        List<String> firing = List.of();
        while (System.nanoTime() < deadline) {
            firing = alerts(base).stream().filter(alert -> alert.get("state").asText().equals("firing"))
                    .map(alert -> alert.get("labels").get("alertname").asText() + "/" + alert.get("labels").path("machine").asText()).toList();
            if (firing.containsAll(List.of("MacfleetMacOverheating/studio-02", "MacfleetKernelPanic/studio-03", "MacfleetRdmaPortDown/studio-04",
                    "MacfleetWiredMemoryNearLimit/studio-02"))) {
                break;
            }
            Thread.sleep(500);
        }
        System.out.println("firing in Prometheus: " + firing);
        assertThat(firing).contains("MacfleetMacOverheating/studio-02", "MacfleetKernelPanic/studio-03", "MacfleetMacPowerHigh/studio-02",
                "MacfleetWiredMemoryNearLimit/studio-02",
                "MacfleetRdmaPortDown/studio-01", "MacfleetRdmaPortDown/studio-04");
        // only where the faults are: the Macs' unused Thunderbolt ports are PORT_DOWN all along and raise nothing
        assertThat(firing).filteredOn(name -> name.startsWith("MacfleetRdmaPortDown/")).allMatch(name -> name.matches(".*/studio-0[14]"));
        assertThat(firing).filteredOn(name -> !name.startsWith("MacfleetRdmaPortDown/")).allMatch(name -> name.matches(".*/studio-0[23]"));

        // Every query of the Grafana dashboard is one Prometheus accepts (its variables set to "any").
        JsonNode dashboard = JSON.readTree(Path.of("docs/grafana/macfleet.json").toFile());
        int queries = 0;
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                String expression = target.get("expr").asText().replace("$cluster", ".*").replace("$machine", ".*");
                JsonNode answer = JSON.readTree(get(base + "/api/v1/query?query=" + URLEncoder.encode(expression, StandardCharsets.UTF_8)).body());
                assertThat(answer.get("status").asText()).as(panel.get("title").asText() + ": " + expression + " -> " + answer).isEqualTo("success");
                queries++;
            }
        }
        assertThat(queries).isGreaterThan(15);

        // The cluster page's energy line (the last scrape saw llama-server generating, every Mac's power is known).
        String page = TestAccounts.login(Role.VIEWER).request().get("/console/clusters/" + SimulatedCluster.NAME).then().statusCode(200)
                .extract().asString();
        assertThat(page).containsPattern("Energy per token: <span data-energy-per-token>[0-9.]+ J per token \\([0-9]+ W at [0-9.]+ tokens/s\\)</span>");
    }

    private void startPrometheus(int prometheusPort) throws IOException, InterruptedException {
        Path token = directory.resolve("token");
        Files.writeString(token, TestAccounts.token(Role.VIEWER));
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        // The shipped expressions, their waits shortened: a test cannot wait the minutes an operator's rule waits.
        Path rules = directory.resolve("macfleet-rules.yml");
        Files.writeString(rules, Files.readString(RULES).replaceAll("(?m)^(\\s+for: )\\S+$", "$11s"));
        Path config = directory.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                rule_files:
                  - %s
                scrape_configs:
                  - job_name: macfleet
                    metrics_path: /q/metrics
                    authorization:
                      type: Bearer
                      credentials_file: %s
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(rules, token, port));
        List<String> command = new ArrayList<>(List.of(PROMETHEUS.toString(), "--config.file=" + config, "--storage.tsdb.path=" + directory.resolve("data"),
                "--web.listen-address=127.0.0.1:" + prometheusPort, "--log.level=warn"));
        prometheus = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(directory.resolve("prometheus.log").toFile()).start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (get("http://127.0.0.1:" + prometheusPort + "/-/ready").statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (!prometheus.isAlive()) {
                break;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("Prometheus did not become ready: " + Files.readString(directory.resolve("prometheus.log")));
    }

    /** Polls an instant query until its result satisfies the condition (or the time is up) and returns the last result. */
    private static JsonNode waitFor(String base, String query, Duration patience, java.util.function.Predicate<JsonNode> condition) throws Exception {
        long deadline = System.nanoTime() + patience.toNanos();
        JsonNode result = JSON.createArrayNode();
        while (System.nanoTime() < deadline) {
            JsonNode answer = JSON.readTree(get(base + "/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8)).body());
            assertThat(answer.get("status").asText()).as(answer.toString()).isEqualTo("success");
            result = answer.get("data").get("result");
            if (condition.test(result)) {
                return result;
            }
            Thread.sleep(500);
        }
        return result;
    }

    /** The status of a short completion with the cluster's key (-1 when nothing answers yet). */
    private static int completion(String base) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions")).timeout(Duration.ofSeconds(60))
                    .header("Authorization", "Bearer prometheus-test-key-5d1c").header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"Hi\",\"max_tokens\":8}")).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static List<JsonNode> alerts(String base) throws Exception {
        JsonNode answer = JSON.readTree(get(base + "/api/v1/alerts").body());
        List<JsonNode> alerts = new ArrayList<>();
        answer.get("data").get("alerts").forEach(alerts::add);
        return alerts;
    }

    private static HttpResponse<String> get(String uri) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
