package io.macfleet.osupdate;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.Jdbc;
import io.macfleet.testing.PackagedApplication;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Kill -9 of a real `macfleet os-update apply` process while its cluster updates (every node's update sent, the
 * campaign watching), then the same command again: it continues the one campaign to the end, and the simulated NanoHUB
 * (in this JVM) received each declaration, set member and assignment once, each revision delivered once per Mac.
 */
class CampaignKillResumeIT {

    /** How long one macfleet command of this test may take. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(300);

    @Test
    void aKilledApplyIsFinishedByTheNextProcessWithoutSendingTwice() throws Exception {
        // Under the test home's secrets/: the only place the failsafe JVM's secret policy lets an inventory name a key file.
        Path directory = Files.createTempDirectory(Files.createDirectories(Path.of("target", "macfleet-test-home", "secrets").toAbsolutePath()),
                "campaign-kill");
        Path home = directory.resolve("home");
        try (CampaignFixture fixture = CampaignFixture.start(directory, "127.0.0.151")) {
            Map<String, String> environment = Map.of("MACFLEET_HOME", home.toString(), "MACFLEET_SECRETS_DIRECTORIES", directory.toString());
            PackagedApplication.Result applied = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("inventory.log"), "inventory", "apply", fixture.inventory.toString());
            assertThat(applied.exitCode()).as(applied.output()).isZero();

            Process first = PackagedApplication.start(environment, directory.resolve("first.log"), "os-update", "apply", "llm-a", "--to", "26.2", "--build", "25C56", "--yes");
            String url = "jdbc:h2:file:" + home.resolve("db").resolve("macfleet") + ";AUTO_SERVER=TRUE";
            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                while (true) {
                    long sent = count(database, "select count(*) from os_update_machine where start_state = 'sent'");
                    if (sent == 4) {
                        first.destroyForcibly();
                        first.waitFor(10, TimeUnit.SECONDS);
                        break;
                    }
                    assertThat(first.isAlive()).as("the first process ended before it could be killed:\n" + Files.readString(directory.resolve("first.log")))
                            .isTrue();
                    assertThat(System.nanoTime()).as("every node's update sent within 180 s").isLessThan(deadline);
                    Thread.sleep(20);
                }
                assertThat(count(database, "select count(*) from os_update_campaign where status = 'running'")).isEqualTo(1);
            }
            assertThat(first.exitValue()).isNotZero();
            List<String> sentBeforeKill = List.copyOf(fixture.hub.assignmentChanges());
            assertThat(sentBeforeKill).hasSize(4);

            PackagedApplication.Result second = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("second.log"), "os-update", "apply", "llm-a", "--to", "26.2", "--build", "25C56", "--yes");
            assertThat(second.exitCode()).as(second.output()).isZero();
            assertThat(second.output()).contains("Campaign 1 succeeded: to 26.2 (25C56) via mdm");

            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                assertThat(count(database, "select count(*) from os_update_campaign")).isEqualTo(1);
                assertThat(count(database, "select count(*) from cluster_maintenance")).isZero();
            }
            assertThat(fixture.releases()).containsOnly("26.2 25C56");
            assertThat(fixture.machines).allMatch(fixture::serving);
            assertThat(fixture.hub.declarationChanges()).hasSize(4);
            assertThat(fixture.hub.setChanges()).hasSize(4);
            assertThat(fixture.hub.assignmentChanges()).isEqualTo(sentBeforeKill);
            for (String machine : fixture.machines) {
                assertThat(fixture.hub.deliveries(fixture.enrollment(machine))).doesNotHaveDuplicates().hasSize(4);
            }
        }
    }

    private static long count(AgroalDataSource database, String sql) {
        return Jdbc.withConnection(database, connection -> Jdbc.query(connection, sql, row -> row.getLong(1)).getFirst());
    }
}
