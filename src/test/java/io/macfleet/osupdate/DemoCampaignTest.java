package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.demo.DemoEnvironment;
import io.macfleet.ssh.SshSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's four Macs go from 26.1 to 26.2 (25C56) through the demo's simulated NanoHUB with one campaign, wired as
 * the service wires it (the MDM method built from the inventory's mdm: section), once the cluster is provisioned (RDMA
 * on, Thunderbolt Bridge off: what `macfleet provision llm-a` and its Recovery step do); drift is clean afterwards.
 */
class DemoCampaignTest {
    @TempDir
    Path directory;

    @Test
    void theDemoClusterIsUpdatedInOneCampaignAndDriftIsCleanAfterwards() throws Exception {
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 4, "127.0.0.81", 0, Duration.ofMillis(500), null));
             AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:demo-campaign-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            for (SimulatedMac mac : demo.fleet().machines()) {
                mac.setRdmaEnabled(true);
                mac.setThunderboltBridgeActive(false);
            }
            DesiredStateStore desiredState = new DesiredStateStore(dataSource);
            LoadResult loaded = InventoryLoader.load(demo.inventoryDirectory());
            assertThat(loaded.valid()).as(String.valueOf(loaded.errors())).isTrue();
            desiredState.apply(loaded.inventory(), "demo", demo.inventoryDirectory().toString());
            FactsService facts = new FactsService(dataSource, desiredState);
            List<String> names = desiredState.machines("llm-a").stream().map(machine -> machine.name()).toList();
            assertThat(facts.drift(desiredState.machines("llm-a"))).anyMatch(Drift.Report::drifted);

            OsUpdateCampaigns campaigns = new OsUpdateCampaigns(dataSource, desiredState, facts, new ClusterCabling(facts),
                    List.of(new MdmUpdateMethod(desiredState, facts)),
                    new OsUpdateCampaigns.Options(SshSettings.defaults("demo"), Duration.ofMillis(500), PhaseDeadlines.all(Duration.ofSeconds(90)), Duration.ofSeconds(60)));
            CampaignView end = campaigns.apply(OsUpdateCampaigns.Request.of(List.of("llm-a"), "26.2", Optional.of("25C56")), "demo");

            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(demo.fleet().machines()).allSatisfy(mac -> assertThat(mac.snapshot().release().build()).isEqualTo("25C56"));
            assertThat(names).hasSize(4);
            assertThat(facts.drift(desiredState.machines("llm-a"))).noneMatch(Drift.Report::drifted);
        }
    }

    /**
     * The newcomer's path: `macfleet demo reset` (every Mac as delivered), provisioning (RDMA on, bridge off), then
     * `os-update plan` has nothing to block and `apply` updates through MDM. Run with the simulated NanoHUB and with the
     * real one (`demo --nanohub`; skipped without ../shared, required on CI).
     */
    @ParameterizedTest(name = "real NanoHUB: {0}")
    @ValueSource(booleans = {false, true})
    void afterAResetTheDemoClusterStillUpdatesThroughMdm(boolean realNanoHub) throws Exception {
        Path nanoHub = realNanoHub ? io.macfleet.mdm.real.RealNanoHub.binary() : null;
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 4, "127.0.7.21", 0, Duration.ofMillis(500), null, nanoHub));
             AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:demo-reset-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            assertThat(demo.reset()).contains("enrolled in MDM again");
            for (SimulatedMac mac : demo.fleet().machines()) {
                assertThat(mac.snapshot().mdmEnrolled()).isTrue();
                mac.setRdmaEnabled(true);
                mac.setThunderboltBridgeActive(false);
            }
            DesiredStateStore desiredState = new DesiredStateStore(dataSource);
            LoadResult loaded = InventoryLoader.load(demo.inventoryDirectory());
            assertThat(loaded.valid()).as(String.valueOf(loaded.errors())).isTrue();
            desiredState.apply(loaded.inventory(), "demo", demo.inventoryDirectory().toString());
            FactsService facts = new FactsService(dataSource, desiredState);
            OsUpdateCampaigns campaigns = new OsUpdateCampaigns(dataSource, desiredState, facts, new ClusterCabling(facts),
                    List.of(new MdmUpdateMethod(desiredState, facts)),
                    new OsUpdateCampaigns.Options(SshSettings.defaults("demo"), Duration.ofMillis(500), PhaseDeadlines.all(Duration.ofSeconds(90)), Duration.ofSeconds(60)));
            OsUpdateCampaigns.Request request = OsUpdateCampaigns.Request.of(List.of("llm-a"), "26.2", Optional.of("25C56"));

            OsUpdateCampaigns.Plan plan = campaigns.plan(request);
            assertThat(plan.passed()).as(plan.toString()).isTrue();
            CampaignView end = campaigns.apply(request, "demo");

            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(demo.fleet().machines()).allSatisfy(mac -> assertThat(mac.snapshot().release().build()).isEqualTo("25C56"));
            assertThat(facts.drift(desiredState.machines("llm-a"))).noneMatch(Drift.Report::drifted);
            if (realNanoHub) {
                assertThat(loaded.inventory().mdm().url()).doesNotContain(":0");
                assertThat(java.nio.file.Files.readString(directory.resolve("nanohub").resolve("nanohub.log"))).contains("Authenticate");
            }
        }
    }

    @Test
    void aMacThatIsNotEnrolledIsBlockedAsNotEnrolled() throws Exception {
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 4, "127.0.7.31", 0, Duration.ofMillis(500), null));
             AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:demo-unenrolled-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            for (SimulatedMac mac : demo.fleet().machines()) {
                mac.setRdmaEnabled(true);
                mac.setThunderboltBridgeActive(false);
            }
            demo.fleet().machine("studio-02").setMdmEnrolled(false);
            demo.fleet().machine("studio-02").setBootstrapTokenEscrowed(false);
            DesiredStateStore desiredState = new DesiredStateStore(dataSource);
            desiredState.apply(InventoryLoader.load(demo.inventoryDirectory()).inventory(), "demo", demo.inventoryDirectory().toString());
            FactsService facts = new FactsService(dataSource, desiredState);
            OsUpdateCampaigns campaigns = new OsUpdateCampaigns(dataSource, desiredState, facts, new ClusterCabling(facts),
                    List.of(new MdmUpdateMethod(desiredState, facts)),
                    new OsUpdateCampaigns.Options(SshSettings.defaults("demo"), Duration.ofMillis(500), PhaseDeadlines.all(Duration.ofSeconds(90)), Duration.ofSeconds(60)));
            OsUpdateCampaigns.Plan plan = campaigns.plan(OsUpdateCampaigns.Request.of(List.of("llm-a"), "26.2", Optional.of("25C56")));
            PreflightResult studio02 = plan.clusters().getFirst().machines().stream().filter(result -> result.machine().equals("studio-02")).findFirst().orElseThrow();
            assertThat(studio02.findings()).singleElement().satisfies(finding -> {
                assertThat(finding.check()).isEqualTo(PreflightFinding.Check.ENROLLED);
                assertThat(finding.problem()).contains("not enrolled in MDM");
                assertThat(finding.fix()).contains("macfleet mdm status studio-02").doesNotContain("bootstrap-token");
            });
        }
    }
}
