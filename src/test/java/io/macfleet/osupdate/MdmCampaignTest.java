package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 4-Mac cluster updated through the simulated NanoHUB: every node ends on exactly 26.2 (25C56), the inference daemon
 * is stopped before any node changes and runs again only once all are verified, and each declaration, set membership
 * and assignment reached the server once.
 */
class MdmCampaignTest {
    @TempDir
    Path directory;

    @Test
    void aClusterIsUpdatedInLockstepAndServesAgainOnlyWhenEveryNodeIsOnTheTarget() throws Exception {
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.61")) {
            OsUpdateCampaigns campaigns = fixture.campaigns();
            assertThat(fixture.machines).allMatch(fixture::serving);
            CampaignView end;
            try (CampaignFixture.MixedVersionWatch watch = fixture.new MixedVersionWatch()) {
                end = campaigns.apply(CampaignFixture.to262(true), "alice");
                assertThat(watch.violations).isEmpty();
            }
            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(end.clusters().getFirst().step()).isEqualTo("done");
            assertThat(end.clusters().getFirst().machines()).allSatisfy(machine -> {
                assertThat(machine.phase()).isEqualTo("done");
                assertThat(machine.osVersion()).contains("26.2");
                assertThat(machine.buildVersion()).contains("25C56");
            });
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(campaigns.maintenance()).isEmpty();
            // Four declarations stored once, four set members, one assignment per Mac; each revision fetched once per Mac.
            assertThat(fixture.hub.declarationChanges()).hasSize(4);
            assertThat(fixture.hub.setChanges()).hasSize(4);
            assertThat(fixture.hub.assignmentChanges()).hasSize(4);
            for (String machine : fixture.machines) {
                List<String> deliveries = fixture.hub.deliveries(fixture.enrollment(machine));
                assertThat(deliveries).doesNotHaveDuplicates().hasSize(4);
            }
            assertThat(fixture.auditCount("os-update.send", "campaign " + end.id() + ": declaration %softwareupdate.enforcement (changed)")).isEqualTo(1);
            assertThat(fixture.auditCount("os-update.drain", "campaign " + end.id() + ":%bootout%")).isEqualTo(4);
            assertThat(fixture.auditCount("os-update.cluster", "%back in service")).isEqualTo(1);
        }
    }
}
