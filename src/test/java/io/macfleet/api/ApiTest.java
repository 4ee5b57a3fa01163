package io.macfleet.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import static io.macfleet.accounts.TestAccounts.viewer;

import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.ExampleInventory;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The read-only REST API over the applied example inventory (as a viewer), plus health, OpenAPI and metrics (open to all). */
@QuarkusTest
class ApiTest {

    @Inject
    DesiredStateStore store;

    @BeforeEach
    void applyTheExample() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-api-test");
        ExampleInventory.writeTo(directory, false);
        store.apply(InventoryLoader.load(directory).inventory(), "api-test", directory.toString());
    }

    @Test
    void clusters() {
        viewer().when().get("/api/v1/clusters").then().statusCode(200)
                .body("name", contains("llm-a"))
                .body("[0].macosVersion", equalTo("26.2"))
                .body("[0].topology.kind", equalTo("full-mesh"))
                .body("[0].inference.parallelism", equalTo("tensor"))
                .body("[0].machines", contains("studio-01", "studio-02", "studio-03", "studio-04"));
        viewer().when().get("/api/v1/clusters/llm-a").then().statusCode(200).body("topology.links", hasSize(6));
    }

    @Test
    void machines() {
        viewer().when().get("/api/v1/machines").then().statusCode(200)
                .body("name", contains("studio-01", "studio-02", "studio-03", "studio-04"))
                .body("memoryGb", contains(512, 512, 256, 256));
        viewer().queryParam("cluster", "llm-a").when().get("/api/v1/machines").then().statusCode(200).body("$", hasSize(4));
        viewer().when().get("/api/v1/machines/studio-01").then().statusCode(200)
                .body("address", equalTo("192.168.50.11"))
                .body("role", equalTo("coordinator"))
                .body("model", equalTo("Mac15,14"))
                .body("ssh.privateKey", equalTo("file:~/.ssh/macfleet_ed25519"));
    }

    @Test
    void unknownNamesAreProblem404s() {
        viewer().when().get("/api/v1/machines/studio-99").then().statusCode(404)
                .contentType("application/problem+json")
                .body("status", equalTo(404))
                .body("title", equalTo("Not Found"))
                .body("detail", equalTo("no machine named 'studio-99' in the applied inventory"))
                .body("instance", equalTo("/api/v1/machines/studio-99"));
        viewer().when().get("/api/v1/clusters/nope").then().statusCode(404).contentType("application/problem+json");
    }

    @Test
    void badParametersAreProblem400s() {
        viewer().queryParam("limit", "many").when().get("/api/v1/audit").then().statusCode(400)
                .contentType("application/problem+json").body("detail", equalTo("limit 'many' is not a number; expected 1 to 10000"));
        viewer().queryParam("since", "last week").when().get("/api/v1/audit").then().statusCode(400)
                .contentType("application/problem+json");
        viewer().queryParam("limit", "0").when().get("/api/v1/audit").then().statusCode(400);
        viewer().queryParam("cluster", "nope").when().get("/api/v1/machines").then().statusCode(400)
                .contentType("application/problem+json");
    }

    @Test
    void auditIsFilterable() {
        viewer().queryParam("actor", "api-test").queryParam("action", "inventory.apply").queryParam("limit", "1")
                .when().get("/api/v1/audit").then().statusCode(200)
                .body("$", hasSize(1))
                .body("[0].actor", equalTo("api-test"))
                .body("[0].machine", nullValue())
                .body("[0].outcome", equalTo("SUCCESS"));
        viewer().queryParam("since", "2999-01-01").when().get("/api/v1/audit").then().statusCode(200).body("$", hasSize(0));
    }

    @Test
    void healthOpenApiAndMetrics() {
        given().when().get("/q/health/ready").then().statusCode(200).body("checks.name", hasItem("database"));
        given().accept("application/json").when().get("/q/openapi").then().statusCode(200)
                .body("paths.keySet()", hasItem("/api/v1/machines/{name}"))
                // Answers are typed records, so the document describes them (not an untyped object).
                .body("components.schemas.keySet()", hasItems("NodeStatusBody", "RankBody", "LastDeploymentBody", "DeployStartedBody",
                        "RestartBody", "LatestFactsBody", "FactsHistoryBody", "FleetStatesBody", "MachineBody", "FaultsSummary", "CableBody"))
                .body("components.schemas.RankBody.properties.keySet()", hasItems("rank", "machine", "state", "pid", "runs", "lastExit", "error"))
                .body("paths.'/api/v1/clusters/{name}/node'.get.responses.'200'.content.'application/json'.schema.'$ref'",
                        equalTo("#/components/schemas/NodeStatusBody"));
        // Metrics list every route with its counts: not for anonymous callers (issue 14, item 11).
        given().when().get("/q/metrics").then().statusCode(401);
        viewer().when().get("/q/metrics").then().statusCode(200).body(not(equalTo("")));
    }
}
