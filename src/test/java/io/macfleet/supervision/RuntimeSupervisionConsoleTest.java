package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.accounts.Role;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.runtime.MlxRuntime;
import io.macfleet.runtime.RuntimeService;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console's supervision page and cluster card for a cluster served by a runtime other than the bundled node: an MLX
 * cluster deployed on four simulated Macs (the mlx_lm.server stand-in on each), looked at by the service's own
 * supervision of runtimes, shown with its endpoint, every Mac's daemon and its health, and each daemon's log for
 * operators.
 */
@QuarkusTest
class RuntimeSupervisionConsoleTest {

    static SimulatedCluster cluster;
    static Path model;

    @Inject
    DesiredStateStore desiredState;

    @Inject
    FactsService facts;

    @Inject
    RuntimeService runtimes;

    @Inject
    SupervisionService supervision;

    @BeforeAll
    static void start() throws Exception {
        cluster = SimulatedCluster.start("runtime-console", 4, "127.0.149.11");
        cluster.fleet.assignThunderboltLoopbackAddresses();
        model = Files.createDirectories(Files.createTempDirectory("macfleet-runtime-console").resolve("Qwen3-0.6B-4bit"));
        Files.writeString(model.resolve("config.json"), "{\"model_type\": \"qwen3\"}");
        Files.writeString(model.resolve("model.safetensors"), "weights");
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void anMlxClusterShowsItsEndpointEveryMacsDaemonItsHealthAndItsLogOnTheSupervisionPageAndTheClusterCard() throws Exception {
        int port = freePort();
        int coordinator = freePort();
        cluster.apply(desiredState, "test", yaml -> yaml.replace("      kind: full-mesh\n", """
                      kind: full-mesh
                    inference:
                      runtime: mlx
                      port: %d
                      model: %s
                      settings:
                        mlxVersion: "0.29.3"
                        mlxLmVersion: "0.28.2"
                        coordinatorPort: %d
                """.formatted(port, model, coordinator)));
        cluster.gather(facts);
        runtimes.readyTimeout(Duration.ofSeconds(120));
        runtimes.deploy(SimulatedCluster.NAME, Optional.empty(), SimulatedInventory.settings(Duration.ofSeconds(60)), NodeDeployer.Listener.NONE);
        supervision.superviseRuntimes();

        TestAccounts.Session operator = TestAccounts.login(Role.OPERATOR);
        Document page = Jsoup.parse(operator.request().when().get("/console/supervision").then().statusCode(200).extract().asString());
        assertThat(page.select("#no-supervised-clusters")).isEmpty();
        Element section = page.selectFirst("section.runtime-cluster[data-cluster=llm-a]");
        assertThat(section).as(page.select("main").html()).isNotNull();
        assertThat(section.attr("data-runtime")).isEqualTo(MlxRuntime.NAME);
        assertThat(section.select("h2 .badge").text()).isEqualTo("serving");
        assertThat(section.select("code.endpoint").text()).isEqualTo(runtimes.endpoint(SimulatedCluster.NAME));
        assertThat(section.select("tbody tr")).hasSize(4);
        for (String machine : SimulatedCluster.MEMBERS) {
            Element row = section.selectFirst("tr[data-machine=" + machine + "]");
            assertThat(row).isNotNull();
            assertThat(row.attr("data-label")).isEqualTo(MlxRuntime.LABEL);
            assertThat(row.select(".badge").text()).isEqualTo("ready");
            assertThat(row.select("a[href]").attr("href")).isEqualTo("/console/supervision?cluster=llm-a&machine=" + machine + "#log");
        }

        Document log = Jsoup.parse(operator.request().when().get("/console/supervision?cluster=llm-a&machine=studio-02").then().statusCode(200)
                .extract().asString());
        assertThat(log.select("#log h2").text()).isEqualTo("Log of llm-a on studio-02");
        assertThat(log.select("#log pre").text()).contains("group formed");
        TestAccounts.login(Role.VIEWER).request().when().get("/console/supervision?cluster=llm-a&machine=studio-02").then().statusCode(403);

        // The upgrade preview over REST reads every Mac's build: the plan's venv is the one running, so nothing would change.
        TestAccounts.viewer().when().get("/api/v1/clusters/llm-a/node/upgrade").then().statusCode(200)
                .body("runtime", org.hamcrest.Matchers.equalTo("mlx")).body("changes", org.hamcrest.Matchers.equalTo(false))
                .body("machines.from", org.hamcrest.Matchers.everyItem(org.hamcrest.Matchers.equalTo("mlx 0.29.3, mlx-lm 0.28.2")))
                .body("machines.machine", org.hamcrest.Matchers.contains(SimulatedCluster.MEMBERS.toArray()));
        TestAccounts.viewer().when().post("/api/v1/clusters/llm-a/node/upgrade").then().statusCode(403);
        TestAccounts.viewer().when().get("/api/v1/clusters/llm-nope/node/upgrade").then().statusCode(404)
                .body(org.hamcrest.Matchers.containsString("no cluster named 'llm-nope'"));

        String card = operator.request().when().get("/console/clusters/llm-a/node").then().statusCode(200).extract().asString();
        Document part = Jsoup.parse(card);
        assertThat(part.select(".node-state .badge").text()).isEqualTo("serving");
        assertThat(part.select(".node-state").text()).contains("mlx · endpoint " + runtimes.endpoint(SimulatedCluster.NAME), "4 of 4 daemons ready");
    }

    static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
