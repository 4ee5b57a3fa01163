package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.database.PostgresServer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Campaign state (migration V7_1) on a real PostgreSQL server: a failed preflight, the fix, a resume stopped abruptly
 * while nodes are being started, and a new engine that finishes it without sending anything twice.
 */
class PostgresCampaignTest {

    @Test
    void aCampaignFailsResumesAndSurvivesAnAbruptStopOnPostgresql() throws Exception {
        try (PostgresServer server = PostgresServer.start();
             CampaignFixture fixture = CampaignFixture.start(Files.createTempDirectory("macfleet-campaign-pg"), "127.0.0.91", server.url())) {
            fixture.mac("studio-03").setBootstrapTokenEscrowed(false);
            CampaignView blocked = fixture.campaigns().apply(CampaignFixture.to262(true), "gina");
            assertThat(blocked.status()).isEqualTo("failed");
            assertThat(blocked.clusters().getFirst().machines()).filteredOn(machine -> machine.phase().equals("blocked"))
                    .extracting(CampaignView.MachineView::machine).containsExactly("studio-03");
            assertThat(fixture.hub.declarationWrites()).isEmpty();

            fixture.mac("studio-03").setBootstrapTokenEscrowed(true);
            AtomicBoolean stopped = new AtomicBoolean();
            OsUpdateCampaigns stopping = fixture.campaigns((campaign, boundary) -> {
                if (boundary.equals("sent studio-02") && stopped.compareAndSet(false, true)) {
                    throw new CampaignCrashResumeTest.Crash(boundary);
                }
            }, Duration.ZERO);
            try {
                stopping.resume(blocked.id(), "gina");
            } catch (CampaignCrashResumeTest.Crash expected) {
                // The engine stopped between two nodes' starts.
            }
            assertThat(stopped).isTrue();
            assertThat(fixture.campaigns().campaign(blocked.id()).orElseThrow().status()).isEqualTo("running");
            CampaignView end = fixture.campaigns((campaign, boundary) -> { }, Duration.ZERO).resume(blocked.id(), "gina");
            assertThat(end.status()).as(end.toString()).isEqualTo("succeeded");
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.hub.declarationChanges()).hasSize(4);
            assertThat(fixture.hub.assignmentChanges()).hasSize(4);
            for (String machine : fixture.machines) {
                assertThat(fixture.hub.deliveries(fixture.enrollment(machine))).doesNotHaveDuplicates().hasSize(4);
            }
        }
    }
}
