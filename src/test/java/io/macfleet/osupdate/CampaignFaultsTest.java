package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.macfleet.simulator.mdm.SimulatedMdmDevice;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults of single Macs stop or mark exactly that Mac, with the reason it gave and what to do; a failed preflight
 * changes nothing; a failed update leaves the cluster drained; after the fix, resume ends with every node on the target.
 */
class CampaignFaultsTest {
    @TempDir
    Path directory;

    @Test
    void anUnreadableBootstrapTokenStatusIsUnknownNotNotEscrowed() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.63")) {
            // Only `profiles` answers garbage on studio-02: its other facts are read, the escrow state is unknown.
            fixture.mac("studio-02").faults().garbleProgram("profiles");

            OsUpdateCampaigns.Plan plan = fixture.campaigns().plan(CampaignFixture.to262(true));

            assertThat(plan.passed()).isFalse();
            List<PreflightResult> machines = plan.clusters().getFirst().machines();
            PreflightResult blocked = machines.stream().filter(result -> result.machine().equals("studio-02")).findFirst().orElseThrow();
            assertThat(blocked.osVersion()).isPresent();
            assertThat(blocked.findings()).singleElement().satisfies(finding -> {
                assertThat(finding.check()).isEqualTo(PreflightFinding.Check.BOOTSTRAP_TOKEN);
                assertThat(finding.problem()).startsWith("whether a bootstrap token is escrowed is unknown: `profiles status -type bootstraptoken`: ");
            });
            assertThat(machines).filteredOn(result -> !result.machine().equals("studio-02")).allSatisfy(result -> assertThat(result.passed()).isTrue());
        }
    }

    @Test
    void aFailedPreflightSendsNothingAndNamesEachBlockedMachineWithItsFix() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.62")) {
            fixture.mac("studio-02").setBootstrapTokenEscrowed(false);
            fixture.mac("studio-03").faults().setDiskFull(true);
            OsUpdateCampaigns campaigns = fixture.campaigns();

            // Issue 29: a target other than the inventory's (26.2) is refused at plan and at apply, before anything is sent.
            OsUpdateCampaigns.Request elsewhere = OsUpdateCampaigns.Request.of(List.of(CampaignFixture.CLUSTER), "26.3", Optional.empty());
            assertThatThrownBy(() -> campaigns.plan(elsewhere)).isInstanceOf(OsUpdateCampaigns.InvalidCampaignException.class)
                    .hasMessageContaining("should run macOS 26.2 by the applied inventory, not 26.3");
            assertThatThrownBy(() -> campaigns.apply(elsewhere, "alice")).isInstanceOf(OsUpdateCampaigns.InvalidCampaignException.class);
            assertThat(campaigns.campaigns(10)).isEmpty();

            OsUpdateCampaigns.Plan plan = campaigns.plan(CampaignFixture.to262(true));
            assertThat(plan.passed()).isFalse();

            CampaignView failed = campaigns.apply(CampaignFixture.to262(true), "alice");
            assertThat(failed.status()).isEqualTo("failed");
            // A rerun takes the failed campaign up again instead of starting a new one that fails the same way.
            CampaignView rerun = campaigns.apply(CampaignFixture.to262(true), "alice");
            assertThat(rerun.id()).isEqualTo(failed.id());
            assertThat(rerun.status()).isEqualTo("failed");
            assertThat(campaigns.campaigns(10)).hasSize(1);
            CampaignView.ClusterView cluster = failed.clusters().getFirst();
            assertThat(cluster.failedStep()).contains("preflight");
            assertThat(cluster.failure().orElseThrow()).contains("studio-02, studio-03").contains("nothing was changed");
            Map<String, CampaignView.MachineView> machines = byName(cluster);
            assertThat(machines.get("studio-01").phase()).isEqualTo("checked");
            assertThat(machines.get("studio-04").phase()).isEqualTo("checked");
            assertThat(machines.get("studio-02").phase()).isEqualTo("blocked");
            assertThat(machines.get("studio-02").detail().orElseThrow()).contains("bootstrap-token: no bootstrap token is escrowed");
            assertThat(machines.get("studio-02").fix().orElseThrow()).contains("--playbook bootstrap-token");
            assertThat(machines.get("studio-03").phase()).isEqualTo("blocked");
            assertThat(machines.get("studio-03").detail().orElseThrow()).contains("free-disk: only 0 GiB free");
            assertThat(machines.get("studio-03").detail().orElseThrow()).doesNotContain("bootstrap");

            // Nothing reached the MDM server, no daemon was stopped, the cluster is not down for maintenance.
            assertThat(fixture.hub.declarationWrites()).isEmpty();
            assertThat(fixture.hub.assignmentChanges()).isEmpty();
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(campaigns.maintenance()).isEmpty();
            assertThat(fixture.releases()).containsOnly("26.1 25B78");

            fixture.mac("studio-02").setBootstrapTokenEscrowed(true);
            fixture.mac("studio-03").faults().setDiskFull(false);
            CampaignView resumed = campaigns.resume(failed.id(), "alice");
            assertThat(resumed.status()).as(resumed.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
        }
    }

    @Test
    void updateFaultsMarkExactlyTheirMachineAndLeaveTheClusterDrainedUntilResumed() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.63")) {
            fixture.hub.device(fixture.enrollment("studio-02")).faults().downloadFails = true;
            fixture.hub.device(fixture.enrollment("studio-03")).faults().wrongBuildAfterRestart = true;
            // studio-04 goes off as soon as its update is sent: it is off at the install time.
            java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
            OsUpdateCampaigns campaigns = fixture.campaigns((campaign, boundary) -> {
                if (boundary.equals("sent studio-04") && once.compareAndSet(false, true)) {
                    fixture.fleet.powerOff("studio-04");
                }
            }, java.time.Duration.ofSeconds(60));

            CampaignFixture.MixedVersionWatch watch = fixture.new MixedVersionWatch();
            CampaignView failed = campaigns.apply(CampaignFixture.to262(true), "alice");
            assertThat(failed.status()).isEqualTo("failed");
            CampaignView.ClusterView cluster = failed.clusters().getFirst();
            assertThat(cluster.failedStep()).contains("updating");
            assertThat(cluster.failure().orElseThrow()).contains("studio-02, studio-03, studio-04").contains("stays down for maintenance");
            Map<String, CampaignView.MachineView> machines = byName(cluster);
            assertThat(machines.get("studio-01").phase()).isEqualTo("done");
            assertThat(machines.get("studio-02").phase()).isEqualTo("failed");
            assertThat(machines.get("studio-02").detail().orElseThrow()).isEqualTo(SimulatedMdmDevice.DOWNLOAD_FAILED);
            assertThat(machines.get("studio-02").fix().orElseThrow()).contains("reaches Apple's update servers");
            assertThat(machines.get("studio-03").phase()).isEqualTo("failed");
            assertThat(machines.get("studio-03").detail().orElseThrow()).isEqualTo("came back on build 25C56a instead of 25C56");
            assertThat(machines.get("studio-04").phase()).isEqualTo("failed");
            assertThat(machines.get("studio-04").detail().orElseThrow()).contains("it does not answer over SSH: it is probably off");
            assertThat(machines.get("studio-04").fix().orElseThrow()).contains("power studio-04 on");
            // Drained: nobody serves a cluster of mixed versions.
            assertThat(fixture.machines).noneMatch(fixture::serving);
            assertThat(campaigns.maintenance()).containsKey(CampaignFixture.CLUSTER);

            fixture.hub.device(fixture.enrollment("studio-02")).faults().clear();
            fixture.hub.device(fixture.enrollment("studio-03")).faults().clear();
            fixture.fleet.powerOn("studio-04");
            CampaignView resumed = campaigns.resume(failed.id(), "alice");
            watch.close();
            assertThat(resumed.status()).as(resumed.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(campaigns.maintenance()).isEmpty();
            assertThat(watch.violations).isEmpty();
        }
    }

    private static Map<String, CampaignView.MachineView> byName(CampaignView.ClusterView cluster) {
        return cluster.machines().stream().collect(Collectors.toMap(CampaignView.MachineView::machine, Function.identity()));
    }
}
