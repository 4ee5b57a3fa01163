package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.macfleet.database.Jdbc;
import io.macfleet.simulator.SimulatedMac;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A fresh 4-machine simulated cluster through the shipped provision.yaml to ready, the Recovery walkthrough answered
 * on the console prompt while the test plays the operator through the simulator's Recovery console; then a rerun
 * that does nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProvisionClusterTest {

    static ProvisioningFixture fixture;
    static long firstRun;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-provision"), 4, "127.0.0.81");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @Test
    @Order(1)
    void aFreshClusterGoesToReadyWithTheRecoveryStepDoneByAPerson() throws Exception {
        for (SimulatedMac mac : fixture.fleet.machines()) {
            assertThat(mac.snapshot().rdmaEnabled()).isFalse();
            assertThat(mac.snapshot().thunderboltBridgeActive()).isTrue();
        }
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "alice");
        long started = System.nanoTime();
        CompletableFuture<RunOutcome> run = CompletableFuture.supplyAsync(() -> fixture.service.start(
                ProvisioningService.Request.cluster(ProvisioningFixture.CLUSTER), "alice", listener));
        Set<String> walkedThrough = new HashSet<>();
        long operatorNanos = 0;
        int from = 0;
        boolean askedForDetails = false;
        List<Integer> askedTogether = new java.util.ArrayList<>();
        while (walkedThrough.size() < 4) {
            // Every Mac that needs Recovery is asked for at once (a person does them side by side): one title line names
            // them all, the steps follow once, and the prompt names every Mac still waiting.
            Matcher header = console.await(Pattern.compile("Enable RDMA over Thunderbolt in macOS Recovery on (studio-0\\d(?:, studio-0\\d)*) \\(run \\d+, step rdma-enabled\\)"),
                    from, Duration.ofSeconds(60), run);
            List<String> machines = List.of(header.group(1).split(", "));
            askedTogether.add(machines.size());
            int headerAt = from + header.start();
            from += header.end();
            Matcher prompt = console.await(Pattern.compile("\\n  ((?:studio-0\\d ?)+) > $"), from, Duration.ofSeconds(60), run);
            assertThat(List.of(prompt.group(1).strip().split(" "))).containsAll(machines);
            long promptAt = System.nanoTime();
            String walkthrough = console.text().substring(headerAt);
            for (String machine : machines) {
                assertThat(walkthrough).contains("Connect a display, keyboard and mouse to " + machine);
                assertThat(walkedThrough.add(machine)).as("each machine is walked through once").isTrue();
            }
            assertThat(walkthrough).contains("   1. Connect a display, keyboard and mouse to " + machines.getFirst(),
                    "Press and hold the power button (on the back of the Mac Studio) until \"Loading startup options\" appears",
                    "Click Options, then click Continue.", "Utilities > Terminal", "rdma_ctl enable", "   8. Type: reboot",
                    "You will see: ", machines.size() == 1 ? "Expect about 5 minutes until " + machines.getFirst() + " answers over SSH again."
                            : "Expect about 5 minutes until each of them answers over SSH again.");
            // Spoken to a person: why in words; the patterns and raw output only on request.
            assertThat(walkthrough).contains("Why: rdma_ctl status does not say enabled: RDMA is still off")
                    .doesNotContain("/^enabled/", "output does not match");
            if (!askedForDetails) {
                askedForDetails = true;
                int detailsFrom = console.text().length();
                console.type("details");
                console.await(Pattern.compile(machines.getFirst() + ": [^\\n]*`rdma_ctl status` output does not match /\\^enabled/"), detailsFrom,
                        Duration.ofSeconds(30), run);
            }
            for (String machine : machines) {
                fixture.enableRdmaInRecovery(machine);
            }
            operatorNanos += System.nanoTime() - promptAt;
            console.type(machines.size() == 1 ? "done" : "done all");
        }
        RunOutcome outcome = run.get(120, TimeUnit.SECONDS);
        System.out.println("provision: the Recovery walkthrough asked for the 4 Macs in groups of " + askedTogether);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        System.out.printf("provision: 4 machines to ready in %d ms, of which %d ms operator (Recovery) time%n", elapsed.toMillis(),
                Duration.ofNanos(operatorNanos).toMillis());
        listener.finish();
        ProvisionCommand.printSummary(console.out, outcome, true);

        assertThat(outcome.machines()).as(console.text()).containsOnly(Map.entry("studio-01", "ready"), Map.entry("studio-02", "ready"),
                Map.entry("studio-03", "ready"), Map.entry("studio-04", "ready"));
        assertThat(outcome.status()).isEqualTo("succeeded");
        assertThat(ProvisionCommand.exitCode(outcome)).isEqualTo(ExitCodes.OK);
        firstRun = outcome.runId();

        // Every machine is now what the playbook says.
        for (SimulatedMac mac : fixture.fleet.machines()) {
            SimulatedMac.Snapshot state = mac.snapshot();
            assertThat(state.rdmaEnabled()).isTrue();
            assertThat(state.thunderboltBridgeActive()).isFalse();
            assertThat(state.bootstrapTokenEscrowed()).isTrue();
            assertThat(state.powerSettings()).containsEntry("sleep", "0").containsEntry("displaysleep", "0").containsEntry("disksleep", "0")
                    .containsEntry("autorestart", "1").containsEntry("womp", "1");
            assertThat(Files.readString(mac.resolve("/etc/ssh/sshd_config.d/010-macfleet.conf"))).contains("PasswordAuthentication no",
                    "Installed by macfleet (playbook provision, step sshd-drop-in) on " + mac.name());
        }
        List<Map<String, Object>> steps = fixture.steps(firstRun);
        assertThat(steps).hasSize(4 * 9);
        assertThat(steps).filteredOn(step -> step.get("step").equals("power-settings")).allMatch(step -> step.get("status").equals("done"));
        assertThat(steps).filteredOn(step -> step.get("step").equals("rdma-enabled")).allMatch(step -> step.get("status").equals("done"));
        assertThat(steps).filteredOn(step -> step.get("step").equals("reachable")).allMatch(step -> step.get("status").equals("skipped-already-done"));
        assertThat(steps).filteredOn(step -> step.get("step").equals("cabling")).allMatch(step -> step.get("status").equals("skipped-already-done"));
        assertThat(steps).allMatch(step -> step.get("attempts").equals(1));
        assertThat(fixture.service.run(firstRun).orElseThrow().confirmations()).hasSize(4)
                .allMatch(confirmation -> confirmation.actor().equals("alice") && confirmation.verified());
        assertThat(console.text()).contains("studio-03      power-settings", "done", "verified", "Run " + firstRun + " succeeded in",
                "studio-04      ready");

        // Who confirmed is in the audit log; the volume owner's password is nowhere.
        assertThat(count("select count(*) from audit_event where action = 'provision.operator.confirm' and actor = 'alice'")).isEqualTo(4);
        assertThat(count("select count(*) from audit_event where detail like '%/usr/bin/expect -c%profiles install -type bootstraptoken%<secret on standard input>%'")).isEqualTo(4);
        // The password reached each Mac on standard input only: no process argument any local user could read
        // with ps (sshd's `zsh -c LINE`, every program started) ever held it, yet the token was escrowed with it.
        for (SimulatedMac mac : fixture.fleet.machines()) {
            assertThat(mac.processArguments()).anyMatch(arguments -> arguments.startsWith("/usr/bin/sudo -n /usr/bin/profiles install -type bootstraptoken"))
                    .noneMatch(arguments -> arguments.contains(ProvisioningFixture.VOLUME_OWNER_PASSWORD));
        }
        assertThat(count("select count(*) from audit_event where detail like '%" + ProvisioningFixture.VOLUME_OWNER_PASSWORD + "%'")).isZero();
        assertThat(count("select count(*) from provisioning_step where summary like '%" + ProvisioningFixture.VOLUME_OWNER_PASSWORD + "%'")).isZero();
        assertThat(console.text()).doesNotContain(ProvisioningFixture.VOLUME_OWNER_PASSWORD);
    }

    @Test
    @Order(2)
    void aRerunAfterSuccessDoesNothing() throws Exception {
        long pmsetBefore = fixture.auditCount("studio-01", "%pmset -a%");
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "bob");
        RunOutcome outcome = fixture.service.start(ProvisioningService.Request.cluster(ProvisioningFixture.CLUSTER), "bob", listener);
        listener.finish();
        System.out.printf("provision rerun (everything already done): 4 machines in %d ms%n", outcome.elapsed().toMillis());

        assertThat(outcome.runId()).isNotEqualTo(firstRun);
        assertThat(outcome.resumed()).isFalse();
        assertThat(outcome.status()).isEqualTo("succeeded");
        assertThat(fixture.steps(outcome.runId())).hasSize(36).allSatisfy(step ->
                assertThat(step.get("status")).as(step.toString()).isEqualTo("skipped-already-done"));
        assertThat(console.text()).doesNotContain(" done  ", "waiting-for-operator", " > ");
        assertThat(console.text().lines().filter(line -> line.contains("skipped-already-done")).count()).isEqualTo(36);
        assertThat(fixture.auditCount("studio-01", "%pmset -a%")).isEqualTo(pmsetBefore);
    }

    private static long count(String sql) {
        return Jdbc.withConnection(fixture.dataSource, connection -> Jdbc.query(connection, sql, row -> row.getLong(1)).getFirst());
    }
}
