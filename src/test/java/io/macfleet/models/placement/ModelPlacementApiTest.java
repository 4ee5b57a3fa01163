package io.macfleet.models.placement;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.hamcrest.Matchers.containsString;

import io.quarkus.test.junit.QuarkusTest;
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
}
