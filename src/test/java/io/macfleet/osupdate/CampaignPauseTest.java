package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A campaign paused while its nodes update stops watching at once, stays drained and paused; resume finishes it. */
class CampaignPauseTest {
    @TempDir
    Path directory;

    @Test
    void aPausedCampaignStopsAndResumesToTheEnd() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.95")) {
            AtomicReference<OsUpdateCampaigns> self = new AtomicReference<>();
            OsUpdateCampaigns campaigns = fixture.campaigns((campaign, boundary) -> {
                if (boundary.equals("sent studio-04")) {
                    // Another user pauses it from the console while the nodes update.
                    self.get().pause(campaign, "bob");
                }
            }, Duration.ofSeconds(60));
            self.set(campaigns);

            CampaignView paused = campaigns.apply(CampaignFixture.to262(true), "alice");
            assertThat(paused.status()).isEqualTo("paused");
            assertThat(paused.clusters().getFirst().step()).isEqualTo("updating");
            assertThat(campaigns.maintenance()).containsKey(CampaignFixture.CLUSTER);
            assertThat(fixture.auditCount("os-update.pause", "campaign " + paused.id() + " paused")).isEqualTo(1);
            assertThatThrownBy(() -> campaigns.pause(paused.id(), "bob")).isInstanceOf(OsUpdateCampaigns.CampaignConflictException.class)
                    .hasMessageContaining("is paused: only a running campaign can be paused");

            CampaignView end = fixture.campaigns().resume(paused.id(), "alice");
            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(fixture.hub.assignmentChanges()).hasSize(4);
        }
    }
}
