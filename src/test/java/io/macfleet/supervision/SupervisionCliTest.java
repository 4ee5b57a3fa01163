package io.macfleet.supervision;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agroal.api.AgroalDataSource;
import io.macfleet.command.ExitCodes;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * `macfleet supervision` against statuses a supervising instance stored in the database the command reads: current,
 * with a reboot under way and an alert, stale; JSON; exit codes. The database is a file with H2's automatic server,
 * so this test writes the rows through a connection of its own, as another `macfleet serve` would.
 */
@QuarkusMainTest
@TestProfile(SupervisionCliTest.FileDatabase.class)
class SupervisionCliTest {

    /** One file database per test JVM (the profile and the test may see different class loaders, not different processes). */
    static final String URL = "jdbc:h2:file:" + Path.of(System.getProperty("java.io.tmpdir"), "macfleet-supervision-cli-"
            + ProcessHandle.current().pid(), "db") + ";AUTO_SERVER=TRUE";

    public static class FileDatabase implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("macfleet.database.url", URL);
        }
    }

    private static final String OTHER = "4242@control-1/0a1b2c3d";


    @Test
    void theSupervisorsLatestLookWithWhoLookedWhatIsUnderWayAndExitCodes(QuarkusMainLauncher launcher) throws Exception {
        Path inventory = Files.createTempDirectory("macfleet-supervision-cli");
        assertThat(launcher.launch("inventory", "example", inventory.resolve("fleet").toString()).exitCode()).isZero();
        assertThat(launcher.launch("inventory", "apply", inventory.resolve("fleet").toString()).exitCode()).isZero();

        LaunchResult unknown = launcher.launch("supervision", "llm-x");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.getErrorOutput()).contains("no cluster named 'llm-x' in the applied inventory");
        LaunchResult none = launcher.launch("supervision", "llm-a");
        assertThat(none.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(output(none)).contains("No supervision status for cluster llm-a yet");

        try (AgroalDataSource dataSource = Database.open(new DatabaseSettings(URL, "macfleet", null))) {
            SupervisionStatusStore store = new SupervisionStatusStore(dataSource);
            Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            List<RankObservation> serving = List.of(ClusterSupervisorTest.rank(0, RankObservation.Health.SERVING, 1, "0.1.0"),
                    ClusterSupervisorTest.rank(1, RankObservation.Health.SERVING, 1, "0.1.0"));
            store.save(SupervisionStatusStoreTest.status("llm-a", now, new Diagnosis.Serving(), serving, Optional.empty(), Optional.of(now)),
                    Map.of(0, now.minusSeconds(300), 1, now.minusSeconds(300)), OTHER);
            LaunchResult current = launcher.launch("supervision", "llm-a");
            assertThat(current.exitCode()).as(output(current)).isEqualTo(ExitCodes.OK);
            assertThat(output(current)).startsWith("llm-a  serving\n  seen by " + OTHER + " at ")
                    .contains("  rank machine      health      daemon       pid     runs  version          tokens/s  uptime",
                            "  0    studio-01    serving     running      100     1     0.1.0            -         5 min",
                            "  1    studio-02    serving     running      101     1     0.1.0            -         5 min");

            ClusterStatus down = SupervisionStatusStoreTest.status("llm-a", now.plusSeconds(1), new Diagnosis.RanksDown(List.of("rank 1 is missing"), false),
                    List.of(ClusterSupervisorTest.rank(0, RankObservation.Health.DEGRADED, 1, "0.1.0"),
                            ClusterSupervisorTest.rank(1, RankObservation.Health.UNREACHABLE, 2, null)), Optional.of("gave up after 3 restart(s)"), Optional.empty());
            store.save(new ClusterStatus(down.observation(), down.diagnosis(), 3, down.alert(), Optional.empty(),
                    Optional.of(new ClusterSupervisor.Acting("coordinated reboot", Instant.parse("2026-11-24T09:25:30Z")))), Map.of(), OTHER);
            LaunchResult acting = launcher.launch("supervision");
            assertThat(acting.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(output(acting)).contains("llm-a  not serving: rank 1 is missing", "ordered restarts 3",
                    "  under way: coordinated reboot since 2026-11-24 09:25:30 UTC", "  ALERT: gave up after 3 restart(s)");
            LaunchResult json = launcher.launch("supervision", "--json");
            JsonNode answer = SupervisionStatusStore.JSON.readTree(output(json));
            assertThat(answer.get(0).get("cluster").asText()).isEqualTo("llm-a");
            assertThat(answer.get(0).get("acting").asText()).isEqualTo("coordinated reboot");
            assertThat(answer.get(0).get("observedBy").asText()).isEqualTo(OTHER);
            assertThat(answer.get(0).get("stale").asBoolean()).isFalse();

            // Its supervisor stopped looking an hour ago: not presented as the current state.
            store.keepOnly(Set.of(), now.plusSeconds(3600));
            store.save(SupervisionStatusStoreTest.status("llm-a", now.minusSeconds(3600), new Diagnosis.Serving(), serving, Optional.empty(),
                    Optional.empty()), Map.of(), OTHER);
            LaunchResult stale = launcher.launch("supervision");
            assertThat(stale.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(output(stale)).startsWith("llm-a  NOT CURRENT, last seen by " + OTHER + " at ").contains(": serving");
            store.keepOnly(Set.of(), now.plusSeconds(3600));
        }
    }
}
