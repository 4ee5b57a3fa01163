package io.macfleet.provision;

import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
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
 * REST: start a run, watch it wait for a person, confirm the Recovery step before and after it was done (what is
 * still wrong; verified), and the run continues by itself to succeeded. Viewers read, operators act; the signed-in
 * user is the actor.
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

        String operatorName = io.macfleet.accounts.TestAccounts.user(io.macfleet.accounts.Role.OPERATOR);
        given().contentType(ContentType.JSON).body(Map.of("cluster", "llm-a")).post("/api/v1/runs")
                .then().statusCode(401).contentType("application/problem+json");
        viewer().contentType(ContentType.JSON).body(Map.of("cluster", "llm-a")).post("/api/v1/runs")
                .then().statusCode(403).contentType("application/problem+json").body("detail", containsString("operator"));
        operator().contentType(ContentType.JSON).body(Map.of("cluster", "llm-z")).post("/api/v1/runs")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("llm-z"));
        operator().contentType(ContentType.JSON).body(Map.of("cluster", "llm-a", "playbook", "/etc/passwd")).post("/api/v1/runs")
                .then().statusCode(400).contentType("application/problem+json").body("detail", containsString("not a path"));
        viewer().get("/api/v1/runs/999").then().statusCode(404).contentType("application/problem+json");

        int id = operator().contentType(ContentType.JSON)
                .body(Map.of("cluster", "llm-a", "playbook", "rdma-enable")).post("/api/v1/runs")
                .then().statusCode(202).extract().path("id");
        awaitStatus(id, "waiting-for-operator");
        viewer().get("/api/v1/runs/" + id).then().statusCode(200)
                .body("run.startedBy", equalTo(operatorName))
                .body("machines.studio-01", equalTo("waiting-for-operator"))
                .body("steps.find { it.machine == 'studio-03' }.status", equalTo("waiting-for-operator"))
                .body("steps.find { it.machine == 'studio-03' }.summary", containsString("Press and hold the power button"))
                .body("steps.find { it.machine == 'studio-03' }.operatorRequest.title", equalTo("Enable RDMA over Thunderbolt in macOS Recovery"))
                .body("steps.find { it.machine == 'studio-03' }.operatorRequest.instructions[2]", containsString("Press and hold the power button"))
                .body("steps.find { it.machine == 'studio-03' }.operatorRequest.whyNeeded", containsString("rdma_ctl status does not say enabled"));
        viewer().get("/api/v1/runs").then().statusCode(200).body("[0].id", equalTo(id)).body("[0].status", equalTo("waiting-for-operator"));

        String confirm = "/api/v1/runs/" + id + "/machines/studio-01/steps/rdma-enabled/confirmation";
        viewer().post(confirm).then().statusCode(403).contentType("application/problem+json");
        // Confirmed before anything was done: the verification says what is still wrong.
        String notYet = operator().post(confirm).then().statusCode(200)
                .body("verified", equalTo(false)).body("detail", containsString("rdma_ctl status does not say enabled"))
                .extract().path("detail");
        // Spoken to a person: no pattern and no raw output (the audit keeps those).
        assertThat(notYet).doesNotContain("/^", "output does not match");
        viewer().get("/api/v1/runs/" + id).then().statusCode(200)
                .body("confirmations[0].detail", equalTo(notYet));

        // A Mac that does not answer (still off after Recovery): not verified, why in words; no Java exception
        // name or server path in the answer.
        fixture.fleet.powerOff("studio-01");
        String unreachable = operator().post(confirm).then().statusCode(200).contentType(ContentType.JSON)
                .body("verified", equalTo(false)).body("detail", containsString("studio-01")).body("detail", containsString("not reachable over SSH"))
                .extract().asString();
        assertThat(unreachable).doesNotContainPattern("Exception|java\\.|io\\.macfleet|/tmp/|/work/|/home/|\\bat [a-z]+\\.");
        fixture.fleet.powerOn("studio-01");

        for (String machine : fixture.machines) {
            fixture.enableRdmaInRecovery(machine);
        }
        operator().post(confirm).then().statusCode(200)
                .body("verified", equalTo(true)).body("resumed", equalTo(true)).body("detail", containsString("as expected"));
        awaitStatus(id, "succeeded");
        viewer().get("/api/v1/runs/" + id).then().statusCode(200)
                .body("machines.studio-04", equalTo("ready"))
                .body("steps.find { it.machine == 'studio-01' }.operatorRequest", org.hamcrest.Matchers.nullValue())
                .body("steps.find { it.machine == 'studio-01' }.status", equalTo("done"))
                .body("steps.find { it.machine == 'studio-02' }.status", equalTo("skipped-already-done"))
                .body("confirmations.size()", equalTo(3))
                .body("confirmations[0].verified", equalTo(false))
                .body("confirmations[1].verified", equalTo(false))
                .body("confirmations[2].actor", equalTo(operatorName));
        operator().post(confirm).then().statusCode(409).contentType("application/problem+json").body("detail", containsString("not waiting-for-operator"));
        operator().post("/api/v1/runs/" + id + "/machines/studio-09/steps/rdma-enabled/confirmation").then().statusCode(404);
    }

    private static void awaitStatus(int id, String status) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            seen = viewer().get("/api/v1/runs/" + id).then().statusCode(200).extract().path("run.status");
            if (status.equals(seen)) {
                return;
            }
            Thread.sleep(100);
        }
        assertThat(seen).as("status of run " + id).isEqualTo(status);
    }
}
