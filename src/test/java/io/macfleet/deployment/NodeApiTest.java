package io.macfleet.deployment;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** REST: a cluster's node state read from simulated Macs, and what a deploy request is refused for. */
@QuarkusTest
class NodeApiTest {

    static SimulatedInventory simulation;

    @Inject
    DesiredStateStore store;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-node-api"), 2, "127.0.0.71");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @BeforeEach
    void apply() throws Exception {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-n", List.of("studio-01", "studio-02"))), Map.of());
        store.apply(InventoryLoader.load(inventory).inventory(), "node-api-test", inventory.toString());
    }

    @Test
    void statusOfAClusterWithoutTheNodeReadsEveryRankFromItsMac() {
        viewer().when().get("/api/v1/clusters/llm-n/node").then().log().ifValidationFails().statusCode(200)
                .body("cluster", equalTo("llm-n"))
                .body("serving", equalTo(false))
                .body("ranks", hasSize(2))
                .body("ranks[0].machine", equalTo("studio-01"))
                .body("ranks[0].state", equalTo("not deployed"))
                .body("ranks[1].rank", equalTo(1));
        viewer().when().get("/api/v1/clusters/llm-nope/node").then().statusCode(404)
                .body("detail", containsString("no cluster named 'llm-nope'"));
    }

    @Test
    void deployRequestsAreForOperatorsAndNeedAModelTheServerCanRead() {
        viewer().contentType("application/json").body("{}").when().post("/api/v1/clusters/llm-n/node/deploy").then().statusCode(403);
        operator().contentType("application/json").body("{\"model\":\"models/tiny.gguf\"}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("'model' must be an absolute path"));
        operator().contentType("application/json").body("{\"model\":\"/nonexistent/tiny.gguf\"}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("model /nonexistent/tiny.gguf is not a readable file"));
        operator().contentType("application/json").body("{}").when().post("/api/v1/clusters/llm-n/node/deploy")
                .then().statusCode(400).body("detail", containsString("no --model given and cluster llm-n names no inference.model"));
    }
}
