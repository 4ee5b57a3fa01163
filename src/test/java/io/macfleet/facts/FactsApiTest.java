package io.macfleet.facts;

import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.startsWith;

import io.macfleet.api.JsonShape;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** REST: facts and drift of a machine, a cluster's cabling as JSON and as SVG, from facts gathered from simulated Macs. */
@QuarkusTest
class FactsApiTest {

    private static final List<String> CLUSTER = SimulatedCluster.MEMBERS;
    static SimulatedCluster simulation;
    static boolean gathered;

    @Inject
    DesiredStateStore store;

    @Inject
    FactsService facts;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedCluster.start("facts-api", 5, "127.0.0.61");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    /** Other test classes share this database: apply this inventory (studio-04 said to have 512 GB: drift) before each test. */
    @BeforeEach
    void applyAndGatherOnce() throws Exception {
        simulation.apply(store, "facts-api-test", Map.of("studio-04", 512));
        if (!gathered) {
            simulation.gather(facts);
            gathered = true;
        }
    }

    @Test
    void latestFactsWithDrift() {
        viewer().when().get("/api/v1/machines/studio-01/facts").then().statusCode(200)
                .body("machine", equalTo("studio-01"))
                .body("facts.modelIdentifier", equalTo("Mac15,14"))
                .body("facts.chip", equalTo("Apple M3 Ultra"))
                .body("facts.memoryBytes", equalTo(512L << 30))
                .body("facts.serialNumber", equalTo(simulation.fleet.machine("studio-01").spec().serialNumber()))
                .body("facts.macosVersion", equalTo("26.2"))
                .body("facts.thunderboltPorts", hasSize(6))
                .body("facts.rdmaEnabled", equalTo(true))
                .body("facts.observedAt", startsWith("20"))
                .body("drift", empty());
        String drifting = viewer().when().get("/api/v1/machines/studio-04/facts").then().statusCode(200)
                .body("drift.field", contains("memoryGb")).extract().asString();
        assertThat(JsonShape.fieldNames(drifting, "")).containsExactly("machine", "facts", "drift");
        assertThat(JsonShape.fieldNames(drifting, "/drift/0")).containsExactly("machine", "field", "expected", "observed", "message");
        viewer().when().get("/api/v1/machines/studio-04/drift").then().statusCode(200)
                .body("machine", equalTo("studio-04"))
                .body("differences[0].expected", equalTo("512"))
                .body("differences[0].observed", equalTo("256"));
    }

    @Test
    void history() {
        viewer().queryParam("history", true).when().get("/api/v1/machines/studio-02/facts").then().statusCode(200)
                .body("machine", equalTo("studio-02"))
                .body("history.size()", greaterThanOrEqualTo(1))
                .body("history[0].machine", equalTo("studio-02"));
        String answer = viewer().queryParam("history", true).when().get("/api/v1/machines/studio-02/facts").then().statusCode(200)
                .extract().asString();
        assertThat(JsonShape.fieldNames(answer, "")).containsExactly("machine", "history");
    }

    @Test
    void unknownMachineAndMissingFactsAreProblem404s() {
        viewer().when().get("/api/v1/machines/studio-99/facts").then().statusCode(404)
                .contentType("application/problem+json")
                .body("status", equalTo(404))
                .body("detail", equalTo("no machine named 'studio-99' in the applied inventory"));
        // studio-05 is in the inventory but was never gathered.
        viewer().when().get("/api/v1/machines/studio-05/facts").then().statusCode(404)
                .contentType("application/problem+json")
                .body("detail", equalTo("no facts stored for machine 'studio-05' yet (run `macfleet facts studio-05`)"));
        viewer().when().get("/api/v1/machines/studio-05/drift").then().statusCode(404);
    }

    @Test
    void clusterCablingAsJsonAndSvg() {
        viewer().when().get("/api/v1/clusters/llm-a/cabling").then().log().ifValidationFails().statusCode(200)
                .contentType("application/json")
                .body("cluster", equalTo("llm-a"))
                .body("passed", equalTo(true))
                .body("links", hasSize(6));
        String svg = viewer().when().get("/api/v1/clusters/llm-a/cabling.svg").then().statusCode(200)
                .contentType("image/svg+xml").extract().asString();
        assertThat(svg).contains("<svg").contains("studio-01").contains("studio-04").contains("</svg>");
        viewer().when().get("/api/v1/clusters/llm-z/cabling").then().statusCode(404).contentType("application/problem+json")
                .body("detail", equalTo("no cluster named 'llm-z' in the applied inventory"));
        viewer().when().get("/api/v1/clusters/llm-z/cabling.svg").then().statusCode(404);
    }
}
