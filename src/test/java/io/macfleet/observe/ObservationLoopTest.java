package io.macfleet.observe;

import io.macfleet.facts.Reachability;
import io.macfleet.facts.ObservationStore;
import static io.macfleet.accounts.TestAccounts.operator;
import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.startsWith;

import io.macfleet.accounts.Role;
import io.macfleet.api.JsonShape;
import io.macfleet.accounts.TestAccounts;
import io.macfleet.fleet.FleetStatus;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.simulator.FaultStep;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 13: `macfleet serve` watches the machines by itself. Simulated Macs, the service's own scheduler, a short
 * interval: facts and "last seen" appear without anyone running `macfleet facts`; a Mac that hangs is shown unreachable
 * within one interval plus one timeout; "Refresh now" gathers at once (operators only); every view counts the same
 * ready machines.
 */
@QuarkusTest
@TestProfile(ObservationLoopTest.Observing.class)
class ObservationLoopTest {

    public static class Observing implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("macfleet.observation.enabled", "true", "macfleet.observation.interval", "2S",
                    "macfleet.observation.connect-timeout", "2S", "macfleet.observation.command-timeout", "2S");
        }
    }

    private static final List<String> CLUSTER = List.of("studio-01", "studio-02", "studio-03", "studio-04");
    private static final Duration INTERVAL_PLUS_TIMEOUT = Duration.ofSeconds(2).plus(Duration.ofSeconds(1)).plus(Duration.ofSeconds(4));
    static SimulatedInventory simulation;

    @Inject
    DesiredStateStore desiredState;

    @Inject
    ObservationStore reachability;

    @Inject
    FactsService facts;

    @Inject
    FleetStatus fleetStatus;

    @Inject
    FleetMetrics metrics;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-observe"), 4, "127.0.0.71");
        simulation.cableFullMesh(CLUSTER);
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    @Test
    void theServiceObservesByItselfAndShowsAHungMacUnreachableWithinOneIntervalPlusOneTimeout() throws Exception {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", CLUSTER)), Map.of());
        desiredState.apply(InventoryLoader.load(inventory).inventory(), "observe-test", inventory.toString());

        // Nobody gathers: the loop does, and keeps doing it.
        await(Duration.ofSeconds(60), () -> CLUSTER.stream().allMatch(name -> facts.latest(name).isPresent()
                && reachability.of(name).flatMap(Reachability::lastSeenAt).isPresent()));
        Instant firstSeen = reachability.of("studio-01").orElseThrow().lastSeenAt().orElseThrow();
        await(Duration.ofSeconds(20), () -> reachability.of("studio-01").orElseThrow().lastSeenAt().orElseThrow().isAfter(firstSeen));
        await(Duration.ofSeconds(20), () -> fleetStatus.fleet().ready() == 4);
        viewer().when().get("/api/v1/machines/studio-01/state").then().statusCode(200)
                .body("ready", equalTo(true)).body("reachability.observedBy", equalTo("service:observe"));
        String states = viewer().when().get("/api/v1/machines/states").then().statusCode(200)
                .body("ready", equalTo(4)).body("machines", hasSize(4)).extract().asString();
        assertThat(JsonShape.fieldNames(states, "")).containsExactly("ready", "machines");
        assertThat(JsonShape.fieldNames(states, "/machines/0"))
                .containsExactly("machine", "cluster", "ready", "notReadyBecause", "columns", "reachability");
        assertThat(fleetStatus.fleet().cluster("llm-a").orElseThrow().readiness().label()).isEqualTo("ready for tensor parallelism");

        simulation.fleet.inject(FaultStep.machine("studio-02", "hang"));
        try {
            Instant hungAt = Instant.now();
            await(INTERVAL_PLUS_TIMEOUT.plusSeconds(3), () -> reachability.of("studio-02").orElseThrow().unreachableSince().isPresent());
            Duration shownAfter = Duration.between(hungAt, Instant.now());
            assertThat(shownAfter).isLessThanOrEqualTo(INTERVAL_PLUS_TIMEOUT.plusSeconds(3));

            FleetStatus.Fleet fleet = fleetStatus.fleet();
            assertThat(fleet.machine("studio-02").orElseThrow().status("Reachable").orElseThrow().label()).startsWith("unreachable since");
            assertThat(fleet.ready()).isEqualTo(3);
            // The cluster card agrees with the machine counts: one notion of ready.
            assertThat(fleet.cluster("llm-a").orElseThrow().readiness().label()).isEqualTo("not ready");
            assertThat(fleet.cluster("llm-a").orElseThrow().readiness().detail()).contains("studio-02");
            viewer().when().get("/api/v1/machines/studio-02/state").then().statusCode(200)
                    .body("ready", equalTo(false)).body("notReadyBecause[0]", startsWith("Reachable: unreachable since"))
                    .body("reachability.lastError", startsWith("studio-02: "));

            // Fleet metrics for alerting, from the same notion of state, behind authentication.
            metrics.refresh();
            given().when().get("/q/metrics").then().statusCode(401);
            String scraped = viewer().when().get("/q/metrics").then().statusCode(200).extract().asString();
            assertThat(scraped).contains("macfleet_machines{state=\"unreachable\"} 1.0", "macfleet_machines{state=\"ready\"} 3.0",
                    "macfleet_facts_age_seconds{machine=\"studio-01\"}", "macfleet_facts_age_seconds{machine=\"studio-02\"}");
        } finally {
            simulation.heal();
        }

        // Refresh now: operators only; answers with the gathering's outcome and clears the unreachable mark.
        viewer().when().post("/api/v1/machines/studio-02/refresh").then().statusCode(403);
        operator().when().post("/api/v1/machines/studio-02/refresh").then().statusCode(200)
                .body("machines[0].machine", equalTo("studio-02")).body("machines[0].ok", equalTo(true));
        assertThat(reachability.of("studio-02").orElseThrow().unreachableSince()).isEmpty();
        operator().when().post("/api/v1/clusters/llm-a/refresh").then().statusCode(200)
                .body("machines.size()", equalTo(4));
        operator().when().post("/api/v1/clusters/llm-x/refresh").then().statusCode(404);

        // The console: operators see Refresh now on the machine and cluster pages and it brings them back to the page.
        TestAccounts.Session operatorSession = TestAccounts.login(Role.OPERATOR);
        TestAccounts.Session viewerSession = TestAccounts.login(Role.VIEWER);
        String machinePage = operatorSession.request().get("/console/machines/studio-02").then().statusCode(200).extract().asString();
        assertThat(machinePage).contains("id=\"refresh-machine\"", "id=\"machine-ready\"");
        assertThat(viewerSession.request().get("/console/machines/studio-02").then().statusCode(200).extract().asString())
                .doesNotContain("id=\"refresh-machine\"");
        assertThat(operatorSession.request().get("/console/clusters/llm-a").then().statusCode(200).extract().asString())
                .contains("id=\"refresh-cluster\"");
        operatorSession.request().post("/console/machines/studio-02/refresh").then().statusCode(303)
                .header("Location", org.hamcrest.Matchers.endsWith("/console/machines/studio-02"));
        operatorSession.request().post("/console/clusters/llm-a/refresh").then().statusCode(303)
                .header("Location", org.hamcrest.Matchers.endsWith("/console/clusters/llm-a"));
        viewerSession.request().post("/console/machines/studio-02/refresh").then().statusCode(403);
    }

    private static void await(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit);
            }
            Thread.sleep(100);
        }
    }
}
