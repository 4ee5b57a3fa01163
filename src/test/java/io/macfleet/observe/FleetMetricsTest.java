package io.macfleet.observe;

import static io.macfleet.accounts.TestAccounts.viewer;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.PortPlan;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Topology;
import io.macfleet.provision.ProvisioningListener;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunOutcome;
import io.macfleet.simulator.FaultStep;
import io.macfleet.testing.SimulatedCluster;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 13's fleet metrics beyond machines by state (ObservationLoopTest): cabling findings by cluster, code and
 * severity, and provisioning runs by state, scraped from /q/metrics against simulated Macs.
 */
@QuarkusTest
class FleetMetricsTest {

    private static final List<String> CLUSTER = SimulatedCluster.MEMBERS;
    private static final String SUCCEEDED_RUNS = "macfleet_provisioning_runs{state=\"succeeded\"}";
    static SimulatedCluster simulation;

    @Inject
    DesiredStateStore store;

    @Inject
    FactsService facts;

    @Inject
    FleetMetrics metrics;

    @Inject
    ProvisioningService provisioning;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedCluster.start("fleet-metrics", 4, "127.0.6.21");
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }

    private void gather() {
        simulation.gather(facts);
    }

    private String scrape() {
        metrics.refresh();
        return viewer().when().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    /** The value of one series, 0 when it is absent (a gauge row with no runs of that state is not written). */
    private static double value(String scraped, String series) {
        Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$").matcher(scraped);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }

    @Test
    void findingsByCodeAndRunsByStateFollowTheFleet() throws Exception {
        simulation.apply(store, "metrics-test", Map.of());
        gather();
        String healthy = scrape();
        assertThat(healthy).doesNotContain("macfleet_cabling_findings{cluster=\"llm-a\"");
        double succeededBefore = value(healthy, SUCCEEDED_RUNS);

        RunOutcome run = provisioning.start(new ProvisioningService.Request("llm-a", List.of(), "src/test/resources/playbooks/reach-and-cable.yaml",
                null, null, true, new ProvisioningService.Options(4, false, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(20))),
                "metrics-test", new ProvisioningListener() {
                });
        assertThat(run.status()).isEqualTo("succeeded");

        Topology.Link cable = PortPlan.fullMesh("llm-a", CLUSTER).cableBetween("studio-02", "studio-03").orElseThrow();
        simulation.fleet.inject(FaultStep.cable(cable.endOf("studio-02").toString(), "unplug"));
        try {
            gather();
            String broken = scrape();
            assertThat(broken).contains("macfleet_cabling_findings{cluster=\"llm-a\",code=\"missing-link\",severity=\"error\"} 1.0");
            assertThat(value(broken, SUCCEEDED_RUNS)).isEqualTo(succeededBefore + 1);
        } finally {
            simulation.recable();
        }
        gather();
        assertThat(scrape()).doesNotContain("macfleet_cabling_findings{cluster=\"llm-a\"");
    }
}
