package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.cabling.PortPlan;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.Jdbc;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.LinkSpeed;
import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.testing.PackagedApplication;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Kill and resume with real processes: the packaged macfleet provisions simulated Macs (running in this JVM, slowed
 * down so the run takes a few seconds), is killed (SIGKILL) once the database shows steps done and one running, and is
 * started again: it takes over the run at once (its owner process is gone), does not redo what was done and gets every
 * machine ready.
 */
class ProvisionKillResumeIT {

    /** How long one macfleet command of this test may take. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(180);

    @Test
    void aKilledRunIsResumedByTheNextProcessWithoutRedoingCompletedSteps() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-kill-resume");
        Path home = directory.resolve("home");
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "kill-resume");
        List<String> names = List.of("studio-01", "studio-02", "studio-03", "studio-04");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic())
                .baseAddress("127.0.0.101").rebootDuration(Duration.ofMillis(300)).volumeOwner("admin", ProvisioningFixture.VOLUME_OWNER_PASSWORD);
        for (String name : names) {
            builder.machine(MacSpec.macStudioM3Ultra(name, 512), MacosRelease.of("26.2"), true);
        }
        try (SimulatedFleet fleet = builder.build().start()) {
            for (SimulatedMac mac : fleet.machines()) {
                mac.setMdmEnrolled(true);
                // Slow enough that the run can be caught in the middle.
                mac.faults().setSlowMillis(150);
            }
            for (Topology.Link link : PortPlan.fullMesh("test", names).cables()) {
                fleet.cabling().plug(link.first().toString(), link.second().toString(), LinkSpeed.TB5);
            }
            Path inventory = ProvisioningFixture.writeInventory(directory, fleet, keyFile);
            // The key is handed over through the environment (env: reference), as a CI job would.
            Path file = inventory.resolve("macfleet.yaml");
            Files.writeString(file, Files.readString(file).replace("\"file:" + keyFile + "\"", "\"env:MACFLEET_IT_SSH_KEY\""));
            Map<String, String> environment = Map.of("MACFLEET_HOME", home.toString(), "MACFLEET_IT_SSH_KEY", Files.readString(keyFile),
                    // The volume owner's password file is in the test's directory: a secret directory for this run.
                    "MACFLEET_SECRETS_DIRECTORIES", directory.toString());

            PackagedApplication.Result applied = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("apply.log"), "inventory", "apply", inventory.toString());
            assertThat(applied.exitCode()).as(applied.output()).isZero();

            Process first = PackagedApplication.start(environment, directory.resolve("first.log"), "provision", "llm-a", "--non-interactive");
            String url = "jdbc:h2:file:" + home.resolve("db").resolve("macfleet") + ";AUTO_SERVER=TRUE";
            Map<String, String> atKill;
            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                while (true) {
                    Map<String, String> states = states(database);
                    boolean someDone = states.values().stream().anyMatch(state -> state.startsWith("done"));
                    boolean oneRunning = states.values().stream().anyMatch(state -> state.startsWith("running"));
                    if (someDone && oneRunning) {
                        first.destroyForcibly();
                        first.waitFor(10, TimeUnit.SECONDS);
                        atKill = states(database);
                        break;
                    }
                    assertThat(first.isAlive()).as("the first process ended before it could be killed mid-run:\n"
                            + Files.readString(directory.resolve("first.log"))).isTrue();
                    assertThat(System.nanoTime()).as("steps done and one running within 90 s").isLessThan(deadline);
                    Thread.sleep(20);
                }
            }
            assertThat(first.exitValue()).isNotZero();
            assertThat(atKill.values()).anyMatch(state -> state.startsWith("running"));
            // No process works on the run any more: it is shown as interrupted, not as running.
            PackagedApplication.Result listed = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("runs.log"), "provision", "runs");
            assertThat(listed.exitCode()).as(listed.output()).isZero();
            assertThat(listed.output()).containsPattern("(?m)^1 +provision +llm-a +interrupted ");

            PackagedApplication.Result second = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("second.log"), "provision", "llm-a", "--non-interactive");
            assertThat(second.exitCode()).as(second.output()).isZero();
            assertThat(second.output()).contains("Resuming run 1: playbook provision on 4 machine(s)", "Run 1 succeeded in");

            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                assertThat(count(database, "select count(*) from provisioning_run")).isEqualTo(1);
                Map<String, String> after = states(database);
                for (Map.Entry<String, String> step : atKill.entrySet()) {
                    if (step.getValue().startsWith("done")) {
                        // Done before the kill: still done, still one attempt (its check ran, its action did not).
                        assertThat(after.get(step.getKey())).as(step.getKey()).isEqualTo(step.getValue());
                    }
                }
                assertThat(after.values()).allMatch(state -> state.startsWith("done") || state.startsWith("skipped"));
                for (String machine : names) {
                    // Every change was made once at most, across both processes.
                    assertThat(count(database, "select count(*) from audit_event where machine = ? and detail like '%pmset -a%'", machine)).isLessThanOrEqualTo(1);
                    assertThat(count(database, "select count(*) from audit_event where machine = ? and detail like '%-setnetworkserviceenabled%'", machine)).isLessThanOrEqualTo(1);
                    assertThat(count(database, "select count(*) from audit_event where machine = ? and detail like '%profiles install%'", machine)).isLessThanOrEqualTo(1);
                }
            }
            for (SimulatedMac mac : fleet.machines()) {
                assertThat(mac.snapshot().thunderboltBridgeActive()).isFalse();
                assertThat(mac.snapshot().bootstrapTokenEscrowed()).isTrue();
                assertThat(mac.snapshot().powerSettings()).containsEntry("sleep", "0").containsEntry("autorestart", "1");
            }
        }
    }

    /** "machine/step" -> "status/attempts". */
    private static Map<String, String> states(AgroalDataSource database) {
        Map<String, String> states = new HashMap<>();
        Jdbc.withConnection(database, connection -> Jdbc.query(connection, "select machine, step, status, attempts from provisioning_step",
                row -> states.put(row.getString(1) + "/" + row.getString(2), row.getString(3) + "/" + row.getInt(4))));
        return states;
    }

    private static long count(AgroalDataSource database, String sql, Object... parameters) {
        return Jdbc.withConnection(database, connection -> Jdbc.query(connection, sql, row -> row.getLong(1), parameters).getFirst());
    }
}
