package io.macfleet.supervision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.audit.AuditEvent;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SshKeys;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor's rounds read the Macs every few seconds: those reads are not operator actions and leave no audit row
 * when they succeed; a read that fails still does, and the supervisor's actions audit every command. On two
 * simulated Macs over real SSH, with the transport {@link SupervisionService} uses for its rounds.
 */
class SupervisionPollingAuditTest {

    @TempDir
    Path directory;

    /** What one round asks of each Mac over SSH (NodeProbe: launchd, the rank's log, RDMA state). */
    private static final List<Command> ROUND = List.of(Command.reading("rdma_ctl", "status"), Command.reading("ibv_devinfo"),
            Command.reading("sw_vers"), Command.reading("hostname"));

    @Test
    void successfulPollingLeavesNoRowsFailuresAndActionsStillDo() throws Exception {
        KeyPair key = SshKeys.generate();
        Path privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "polling-audit-test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("fleet")).authorizedKey(key.getPublic()).baseAddress("127.0.71.11");
        for (String machine : List.of("studio-01", "studio-02")) {
            builder.machine(MacSpec.macStudioM3Ultra(machine, 512), MacosRelease.of("26.2"), true);
        }
        try (SimulatedFleet fleet = builder.build().start()) {
            Map<String, SshTarget> targets = new LinkedHashMap<>();
            for (String machine : List.of("studio-01", "studio-02")) {
                SimulatedFleet.Endpoint endpoint = fleet.endpoint(machine);
                targets.put(machine, SshTarget.of(machine, endpoint.host(), fleet.sshUser(), SecretReference.of("file:" + privateKey))
                        .withPort(endpoint.port()).withPinnedHostKey(fleet.hostKeyFingerprint(machine)));
            }
            int rounds = 5;

            List<AuditEvent> polling = new CopyOnWriteArrayList<>();
            try (SshMachineShell shell = new SshMachineShell(SupervisionService.pollingTransport(new InMemoryHostKeyStore(), polling::add), targets)) {
                poll(shell, targets, rounds);
                assertThat(polling).as("successful reads of the rounds").isEmpty();
                // A read that fails is worth a row: someone may need to look.
                shell.run("studio-01", Command.reading("launchctl", "print", "system/io.macfleet.not-installed"), Duration.ofSeconds(10));
            }
            assertThat(polling).singleElement().satisfies(row -> {
                assertThat(row.action()).isEqualTo("ssh.exec");
                assertThat(row.outcome()).isEqualTo(AuditEvent.Outcome.FAILURE);
                assertThat(row.actor()).isEqualTo(SupervisionService.ACTOR);
                assertThat(row.detail()).contains("launchctl print system/io.macfleet.not-installed");
            });

            // What every round wrote before (and what an action's transport still writes): a row per command.
            List<AuditEvent> everything = new CopyOnWriteArrayList<>();
            try (SshMachineShell shell = new SshMachineShell(new SshTransport(SshSettings.defaults(SupervisionService.ACTOR),
                    new InMemoryHostKeyStore(), everything::add), targets)) {
                poll(shell, targets, rounds);
            }
            assertThat(everything).hasSize(rounds * targets.size() * ROUND.size())
                    .allSatisfy(row -> assertThat(row.outcome()).isEqualTo(AuditEvent.Outcome.SUCCESS));
        }
    }

    private static void poll(SshMachineShell shell, Map<String, SshTarget> targets, int rounds) throws Exception {
        for (int round = 0; round < rounds; round++) {
            for (String machine : targets.keySet()) {
                for (Command command : ROUND) {
                    assertThat(shell.run(machine, command, Duration.ofSeconds(10)).exitStatus()).as(command.render()).isZero();
                }
            }
        }
    }
}
