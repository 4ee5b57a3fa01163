package io.macfleet.provision;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * REST, as the console uses it: start a run, watch it wait for a person, confirm the Recovery step before and after
 * it was done (what is still wrong; verified), and the run continues by itself to succeeded.
 */
@QuarkusTest
class ProvisioningApiTest {

    static ProvisioningFixture fixture;

    @Inject
    DesiredStateStore store;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-provision-api"), 4, "127.0.0.111");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    void startWaitConfirmAndContinue() throws Exception {
        store.apply(InventoryLoader.load(fixture.inventory).inventory(), "api-test", fixture.inventory.toString());

        given().contentType(ContentType.JSON).body(Map.of("cluster", "llm-z")).post("/api/v1/runs")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("llm-z"));
        given().get("/api/v1/runs/999").then().statusCode(404).contentType("application/problem+json");

        int id = given().contentType(ContentType.JSON).header("X-Macfleet-Actor", "dave")
                .body(Map.of("cluster", "llm-a", "playbook", "rdma-enable")).post("/api/v1/runs")
                .then().statusCode(202).extract().path("id");
        awaitStatus(id, "waiting-for-operator");
        given().get("/api/v1/runs/" + id).then().statusCode(200)
                .body("run.startedBy", equalTo("dave"))
                .body("machines.studio-01", equalTo("waiting-for-operator"))
                .body("steps.find { it.machine == 'studio-03' }.status", equalTo("waiting-for-operator"))
                .body("steps.find { it.machine == 'studio-03' }.summary", containsString("Press and hold the power button"));
        given().get("/api/v1/runs").then().statusCode(200).body("[0].id", equalTo(id)).body("[0].status", equalTo("waiting-for-operator"));

        String confirm = "/api/v1/runs/" + id + "/machines/studio-01/steps/rdma-enabled/confirmation";
        // Confirmed before anything was done: the verification says what is still wrong.
        given().header("X-Macfleet-Actor", "erin").post(confirm).then().statusCode(200)
                .body("verified", equalTo(false)).body("detail", containsString("rdma_ctl status does not say enabled"));

        for (String machine : fixture.machines) {
            fixture.enableRdmaInRecovery(machine);
        }
        given().header("X-Macfleet-Actor", "erin").post(confirm).then().statusCode(200)
                .body("verified", equalTo(true)).body("resumed", equalTo(true)).body("detail", containsString("as expected"));
        awaitStatus(id, "succeeded");
        given().get("/api/v1/runs/" + id).then().statusCode(200)
                .body("machines.studio-04", equalTo("ready"))
                .body("steps.find { it.machine == 'studio-01' }.status", equalTo("done"))
                .body("steps.find { it.machine == 'studio-02' }.status", equalTo("skipped-already-done"))
                .body("confirmations.size()", equalTo(2))
                .body("confirmations[0].verified", equalTo(false))
                .body("confirmations[1].actor", equalTo("erin"));
        given().post(confirm).then().statusCode(409).contentType("application/problem+json").body("detail", containsString("not waiting-for-operator"));
        given().post("/api/v1/runs/" + id + "/machines/studio-09/steps/rdma-enabled/confirmation").then().statusCode(404);
    }

    private static void awaitStatus(int id, String status) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = given().get("/api/v1/runs/" + id).then().statusCode(200).extract().path("run.status");
            if (status.equals(seen)) {
                return;
            }
            Thread.sleep(100);
        }
        assertThat(seen).as("status of run " + id).isEqualTo(status);
    }
}
