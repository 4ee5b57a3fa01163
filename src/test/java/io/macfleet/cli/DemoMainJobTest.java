package io.macfleet.cli;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.osupdate.MdmUpdateMethod;
import io.macfleet.osupdate.OsUpdateCampaigns;
import io.macfleet.osupdate.PhaseDeadlines;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.demo.DemoEnvironment;
import io.macfleet.ssh.SshSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code macfleet demo} does by default between the cabling check and the node's deployment, wired as the service
 * wires it: the demo's four Macs, as delivered (macOS 26.1, RDMA off, Thunderbolt Bridge on), are provisioned with the
 * shipped playbook (the demo typing into each Mac's Recovery Terminal) and then updated to 26.2 (25C56) through the
 * demo's simulated NanoHUB; afterwards nothing drifts. Run again on the finished cluster, it changes nothing.
 */
class DemoMainJobTest {
    @TempDir
    Path directory;

    @Test
    void theDemoProvisionsItsClusterThenUpdatesMacosAndAgainChangesNothing() throws Exception {
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 4, "127.0.0.91", 0, Duration.ofMillis(500), null));
             AgroalDataSource dataSource = Database.open(new DatabaseSettings("jdbc:h2:mem:demo-main-job-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null))) {
            assertThat(demo.fleet().machines()).allSatisfy(mac -> {
                assertThat(mac.snapshot().rdmaEnabled()).isFalse();
                assertThat(mac.snapshot().release().version()).isEqualTo(DemoEnvironment.DEMO_MACOS);
            });
            DesiredStateStore desiredState = new DesiredStateStore(dataSource);
            LoadResult loaded = InventoryLoader.load(demo.inventoryDirectory());
            assertThat(loaded.valid()).as(String.valueOf(loaded.errors())).isTrue();
            desiredState.apply(loaded.inventory(), "demo", demo.inventoryDirectory().toString());
            FactsService facts = new FactsService(dataSource, desiredState);
            ClusterCabling cabling = new ClusterCabling(facts);
            ProvisioningService provisioning = new ProvisioningService(dataSource, facts, cabling, Path.of("playbooks"), Clock.systemUTC());
            OsUpdateCampaigns campaigns = new OsUpdateCampaigns(dataSource, desiredState, facts, cabling, List.of(new MdmUpdateMethod(desiredState, facts)),
                    new OsUpdateCampaigns.Options(SshSettings.defaults("demo"), Duration.ofMillis(500), PhaseDeadlines.all(Duration.ofSeconds(90)),
                            Duration.ofSeconds(60)));

            StringWriter text = new StringWriter();
            PrintWriter out = new PrintWriter(text, true);
            assertThat(DemoMainJob.provision(provisioning, demo.fleet(), DemoEnvironment.CLUSTER, out)).as(text.toString()).isTrue();
            // The cabling step passes on 26.1 and names the version for the OS update that follows (it cannot fix it).
            assertThat(text.toString()).contains("not ready yet: every machine of cluster llm-a runs macOS 26.1");
            assertThat(DemoMainJob.updateMacos(campaigns, DemoEnvironment.CLUSTER, DemoEnvironment.TARGET_MACOS, DemoEnvironment.TARGET_BUILD, out))
                    .as(text.toString()).isTrue();

            assertThat(demo.fleet().machines()).allSatisfy(mac -> {
                assertThat(mac.snapshot().rdmaEnabled()).isTrue();
                assertThat(mac.snapshot().thunderboltBridgeActive()).isFalse();
                assertThat(mac.snapshot().release().build()).isEqualTo(DemoEnvironment.TARGET_BUILD);
            });
            assertThat(facts.drift(desiredState.machines(DemoEnvironment.CLUSTER))).noneMatch(Drift.Report::drifted);
            for (SimulatedMac mac : demo.fleet().machines()) {
                assertThat(text.toString()).contains(mac.name() + ": (the demo, in Recovery's Terminal) rdma_ctl enable, then reboot");
            }
            assertThat(text.toString()).contains("Recap of run").contains("succeeded");
            // What the demo did is attributed to it in the audit log (issue 13), the Recovery confirmations included.
            io.macfleet.audit.JdbcAuditLog audit = new io.macfleet.audit.JdbcAuditLog(dataSource);
            assertThat(audit.find(new io.macfleet.audit.AuditQuery(null, "provision.run", null, null, 10)))
                    .isNotEmpty().allSatisfy(entry -> assertThat(entry.event().actor()).isEqualTo("demo"));
            assertThat(audit.find(new io.macfleet.audit.AuditQuery(null, "os-update.*", null, null, 50)))
                    .isNotEmpty().allSatisfy(entry -> assertThat(entry.event().actor()).isEqualTo("demo"));

            // A second demo start on the same state: provisioning finds everything done, the Macs already run the target.
            StringWriter again = new StringWriter();
            PrintWriter secondOut = new PrintWriter(again, true);
            assertThat(DemoMainJob.provision(provisioning, demo.fleet(), DemoEnvironment.CLUSTER, secondOut)).as(again.toString()).isTrue();
            assertThat(again.toString()).doesNotContain("(the demo, in Recovery's Terminal)");
            assertThat(DemoMainJob.updateMacos(campaigns, DemoEnvironment.CLUSTER, DemoEnvironment.TARGET_MACOS, DemoEnvironment.TARGET_BUILD, secondOut))
                    .as(again.toString()).isTrue();
            assertThat(demo.fleet().machines()).allSatisfy(mac -> assertThat(mac.snapshot().release().build()).isEqualTo(DemoEnvironment.TARGET_BUILD));

            assertThat(DemoMainJob.conclusion("llm-a", true, true, "26.2 (25C56)", java.util.Optional.of("http://127.0.0.11:8080/v1"), "http://localhost:8480/console"))
                    .startsWith("Done: cluster llm-a provisioned (RDMA on, bridge off, cabling checked), every Mac on macOS 26.2 (25C56), serving the model at http://127.0.0.11:8080/v1.");
            assertThat(DemoMainJob.conclusion("llm-a", true, false, "26.2 (25C56)", java.util.Optional.empty(), "http://localhost:8480/console"))
                    .startsWith("Stopped short: cluster llm-a provisioned").contains("macOS not updated (macfleet os-update status)", "inference node not serving");
            assertThat(demo.summary(8480, true)).contains("Next, macfleet's main job on llm-a").doesNotContain("Provision the cluster from a second shell");
        }
    }
}
