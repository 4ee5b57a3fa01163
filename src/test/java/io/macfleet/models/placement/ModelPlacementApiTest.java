package io.macfleet.models.placement;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.hamcrest.Matchers.containsString;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * REST: what a placement request is refused for before anything starts (the placement itself is covered on simulated
 * Macs by PlacementEngineTest and ModelPlaceCommandTest).
 */
@QuarkusTest
class ModelPlacementApiTest {

    @Test
    void aPlacementRequestIsRefusedWithAProblemForBadInputAndViewersCannotStartOne() {
        operator().contentType("application/json").body("{}").when().post("/api/v1/clusters/llm-a/model-placements")
                .then().statusCode(400).body("detail", containsString("'model' is missing"));
        operator().contentType("application/json").body("{\"model\":\"tiny\"}").when().post("/api/v1/clusters/llm-nope/model-placements")
                .then().statusCode(404).body("detail", containsString("no cluster named 'llm-nope'"));
        viewer().contentType("application/json").body("{\"model\":\"tiny\"}").when().post("/api/v1/clusters/llm-nope/model-placements")
                .then().statusCode(403);
        viewer().when().get("/api/v1/clusters/llm-nope/model-placements/latest")
                .then().statusCode(404).body("detail", containsString("no model placement of cluster 'llm-nope'"));
    }

    @Inject
    DataSource dataSource;

    @Test
    void aStoredPlacementIsAnsweredFromTheDatabaseAndOneWhoseProcessStoppedReadsAsInterrupted() {
        PlacementStore store = new PlacementStore(dataSource);
        // As a placement that was running when the service stopped: its heartbeat is a minute old.
        store.start("api-test-1", "llm-api", "tiny", "alice", Instant.now().minusSeconds(120), 2000, List.of("studio-01", "studio-02"));
        store.progress("api-test-1", Map.of("studio-01", 1000L, "studio-02", 500L), Instant.now().minusSeconds(60));

        viewer().when().get("/api/v1/clusters/llm-api/model-placements/latest").then().statusCode(200)
                .body("id", equalTo("api-test-1"))
                .body("state", equalTo("interrupted"))
                .body("succeeded", nullValue())
                .body("machines[0].machine", equalTo("studio-01"))
                .body("machines[0].bytesWritten", equalTo(1000))
                .body("machines[0].percent", equalTo(50))
                .body("machines[1].percent", equalTo(25));
        viewer().when().get("/api/v1/clusters/llm-api/model-placements/api-test-1").then().statusCode(200).body("state", equalTo("interrupted"));
        viewer().when().get("/api/v1/clusters/llm-other/model-placements/api-test-1").then().statusCode(404);

        store.start("api-test-2", "llm-api", "tiny", "alice", Instant.now(), 2000, List.of("studio-01"));
        viewer().when().get("/api/v1/clusters/llm-api/model-placements/latest").then().statusCode(200)
                .body("id", equalTo("api-test-2")).body("state", equalTo("running"));
        store.fail("api-test-2", "broken", Instant.now());
        viewer().when().get("/api/v1/clusters/llm-api/model-placements/api-test-2").then().statusCode(200)
                .body("state", equalTo("failed")).body("error", equalTo("broken"));
    }
}
