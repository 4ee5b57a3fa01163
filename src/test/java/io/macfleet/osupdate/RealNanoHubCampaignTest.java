package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.Drift;
import io.macfleet.mdm.real.RealNanoHub;
import io.macfleet.simulator.mdm.UpdateTimings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The campaign through the real NanoHUB (file storage): four simulated Macs enrolled over Apple's check-in protocol
 * with identity certificates from a test CA, updated from 26.1 (25B78) to 26.2 (25C56) in lockstep, verified over
 * SSH, drift clean; each declaration revision fetched once per Mac. There is no APNs: NanoHUB queues the sync and
 * reports the failed push, and the Macs pick it up at their next check-in.
 */
class RealNanoHubCampaignTest {
    @TempDir
    Path directory;

    @Test
    void aClusterIsUpdatedThroughTheRealNanoHub() throws Exception {
        UpdateTimings timings = new UpdateTimings(Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofMillis(300), Duration.ofMillis(600));
        try (RealNanoHub real = RealNanoHub.start(directory.resolve("mdm"), "file", null, timings);
             CampaignFixture fixture = CampaignFixture.start(directory, "127.0.7.1", real.devices, real.server.url(), RealNanoHub.API_KEY)) {
            OsUpdateCampaigns campaigns = fixture.campaigns();
            fixture.facts.gather(fixture.desiredState.machines(CampaignFixture.CLUSTER), fixture.ssh);
            assertThat(fixture.facts.drift(fixture.desiredState.machines(CampaignFixture.CLUSTER))).anyMatch(Drift.Report::drifted);
            CampaignView end;
            try (CampaignFixture.MixedVersionWatch watch = fixture.new MixedVersionWatch()) {
                end = campaigns.apply(CampaignFixture.to262(true), "alice");
                assertThat(watch.violations).isEmpty();
            }
            assertThat(end.status()).as(end + "\n" + real.devices.lastErrors() + "\n" + real.server.logTail()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            for (String machine : fixture.machines) {
                List<String> deliveries = real.devices.deliveries(fixture.enrollment(machine));
                assertThat(deliveries).doesNotHaveDuplicates().hasSize(4);
            }
            // The start of each node is recorded with the server's answer: stored, queued, push failed (no APNs here).
            assertThat(fixture.auditCount("os-update.send", "campaign " + end.id() + ":%queued, push failed: %push cert%")).isGreaterThanOrEqualTo(4);
            assertThat(fixture.facts.drift(fixture.desiredState.machines(CampaignFixture.CLUSTER))).noneMatch(Drift.Report::drifted);
        }
    }
}
