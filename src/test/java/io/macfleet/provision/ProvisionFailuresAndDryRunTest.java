package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.macfleet.simulator.FaultStep;
import io.macfleet.simulator.SimulatedMac;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A machine that never comes back from a reboot fails alone; a dry run changes nothing anywhere. */
class ProvisionFailuresAndDryRunTest {

    ProvisioningFixture fixture;

    @BeforeEach
    void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-provision-failures"), 4, "127.0.0.91");
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    @Test
    void aMachineThatNeverComesBackFromItsRebootFailsAloneWithTheTimeout() {
        for (SimulatedMac mac : fixture.fleet.machines()) {
            mac.setRdmaEnabled(true);
        }
        fixture.fleet.inject(FaultStep.machine("studio-02", "reboot-never-returns"));
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        RunOutcome outcome = fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(),
                "src/test/resources/playbooks/bridge-and-reboot.yaml", null, null, false, null), "carol", new ProvisioningListener() {
                    @Override
                    public void stepFinished(String machine, String step, StepStatus status, String summary) {
                        lines.add(machine + " " + step + " " + status.label() + " " + summary);
                    }
                });

        assertThat(outcome.machines()).containsEntry("studio-02", "failed").containsEntry("studio-01", "ready")
                .containsEntry("studio-03", "ready").containsEntry("studio-04", "ready");
        assertThat(outcome.messages().get("studio-02")).isEqualTo("reboot: studio-02 did not come back after the reboot: no SSH answer within"
                + " the timeout of 3 s (check its power and network, or whether it is stuck in startup options or Recovery)");
        assertThat(ProvisionCommand.exitCode(outcome)).isEqualTo(1);
        Map<String, String> statuses = new java.util.HashMap<>();
        fixture.service.run(outcome.runId()).orElseThrow().steps().forEach(step -> statuses.put(step.machine() + "/" + step.step(), step.status()));
        assertThat(statuses).containsEntry("studio-02/reboot", "failed").containsEntry("studio-02/after-reboot", "pending")
                .containsEntry("studio-01/reboot", "done").containsEntry("studio-03/after-reboot", "skipped-already-done");
        assertThat(outcome.status()).isEqualTo("failed");

        // A cluster step does not wait forever for a machine that failed before it: it runs with the others and names it.
        RunOutcome cabled = fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(),
                "src/test/resources/playbooks/reach-and-cable.yaml", null, null, false, null), "carol", new ProvisioningListener() {
                    @Override
                    public void stepFinished(String machine, String step, StepStatus status, String summary) {
                        lines.add(machine + " " + step + " " + status.label() + " " + summary);
                    }
                });
        assertThat(cabled.messages().get("studio-02")).startsWith("reachable: studio-02 (").contains("unreachable");
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("studio-01 cabling failed").contains("did not reach this step: studio-02"));
    }

    @Test
    void aRollingRunStopsBeforeTheNextBatchWhenTooManyOfABatchFailed() {
        fixture.fleet.powerOff("studio-01");
        ProvisioningService.Options rolling = new ProvisioningService.Options(4, false, java.time.Duration.ofSeconds(2),
                java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(20), 1, 0);

        RunOutcome outcome = fixture.service.start(new ProvisioningService.Request(ProvisioningFixture.CLUSTER, List.of(),
                "src/test/resources/playbooks/reach-and-cable.yaml", null, null, false, rolling), "carol", new ProvisioningListener() {
                });

        List<String> order = List.copyOf(outcome.machines().keySet());
        int failedAt = order.indexOf("studio-01");
        assertThat(outcome.machines()).containsEntry("studio-01", "failed");
        for (int index = 0; index < order.size(); index++) {
            String machine = order.get(index);
            if (index < failedAt) {
                assertThat(outcome.machines().get(machine)).as(machine + " ran in an earlier batch, which did not stop the run").isNotEqualTo("failed");
            } else if (index > failedAt) {
                assertThat(outcome.messages().get(machine)).as(machine).isEqualTo("not started: more than 0% of an earlier batch failed (--max-fail-percent)");
            }
        }
        assertThat(failedAt).as("batches of one, in order: studio-01 is not last").isLessThan(order.size() - 1);
        assertThat(outcome.status()).isEqualTo("failed");
        assertThat(fixture.service.run(outcome.runId()).orElseThrow().run().options()).containsEntry("serial", 1).containsEntry("maxFailPercent", 0);
        assertThatIllegalArgumentException().isThrownBy(() -> new ProvisioningService.Options(4, false, java.time.Duration.ofSeconds(2),
                java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(20), 1, 101)).withMessage("--max-fail-percent 101 is out of range; expected 0 to 100");
    }

    @Test
    void aMacDoneMeanwhileIsCheckedAgainAndNotAskedFor() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "ines");
        java.util.concurrent.CompletableFuture<RunOutcome> run = java.util.concurrent.CompletableFuture.supplyAsync(() -> fixture.service.start(
                new ProvisioningService.Request(null, List.of("studio-03", "studio-04"), "src/test/resources/playbooks/rdma-quick.yaml", null, null,
                        false, null), "ines", listener));
        // Both Macs must be waiting before either goes into Recovery: a Mac the run has not reached yet would be found
        // unreachable (it is in Recovery) instead of waiting, which is another test (a loaded machine showed it).
        java.util.regex.Matcher first = console.await(java.util.regex.Pattern.compile("\\n  (studio-0[34]) (studio-0[34]) > $"), 0,
                java.time.Duration.ofSeconds(30), run);
        String asked = first.group(1);
        String other = first.group(2);
        assertThat(other).isNotEqualTo(asked);
        // The person does both Macs in Recovery but says so for one only: the other is checked again while waiting.
        fixture.enableRdmaInRecovery(asked);
        fixture.enableRdmaInRecovery(other);
        console.type("done " + asked);

        RunOutcome outcome = run.get(60, java.util.concurrent.TimeUnit.SECONDS);

        assertThat(outcome.machines()).containsEntry("studio-03", "ready").containsEntry("studio-04", "ready");
        assertThat(console.text()).contains(other + ": done meanwhile (checked again), no longer waiting for a person");
        assertThat(fixture.service.run(outcome.runId()).orElseThrow().steps()).filteredOn(step -> step.machine().equals(other)).singleElement()
                .satisfies(step -> assertThat(step.summary()).startsWith("done meanwhile (checked again before asking): "));
    }

    @Test
    void aDryRunChangesNeitherTheDatabaseNorAnyMachine() throws IOException {
        List<String> databaseBefore = fixture.databaseSnapshot();
        List<String> machinesBefore = machineStates();

        ProvisioningService.Plan plan = fixture.service.plan(ProvisioningService.Request.cluster(ProvisioningFixture.CLUSTER));

        assertThat(fixture.databaseSnapshot()).isEqualTo(databaseBefore);
        assertThat(machineStates()).isEqualTo(machinesBefore);
        assertThat(plan.wouldResumeRun()).isNull();
        assertThat(plan.machines()).hasSize(4);
        Map<String, String> verdicts = new java.util.LinkedHashMap<>();
        plan.machines().getFirst().steps().forEach(step -> verdicts.put(step.step(), step.verdict()));
        assertThat(verdicts).containsExactly(Map.entry("reachable", "already-done"), Map.entry("facts", "already-done"),
                Map.entry("power-settings", "would-run"), Map.entry("sshd-drop-in", "would-run"), Map.entry("ssh-hardened", "would-fail"),
                Map.entry("thunderbolt-bridge-off", "would-run"), Map.entry("bootstrap-token-escrowed", "would-run"),
                Map.entry("rdma-enabled", "needs-operator"), Map.entry("cabling", "runs-after-all"));
    }

    @Test
    void aFailedVerificationSaysWhatIsStillWrongAndTheStepIsAskedAgain() throws Exception {
        ConsoleTranscript console = new ConsoleTranscript();
        ConsoleListener listener = new ConsoleListener(console.out, console.input(), false, true, "hank");
        java.util.concurrent.CompletableFuture<RunOutcome> run = java.util.concurrent.CompletableFuture.supplyAsync(() -> fixture.service.start(
                new ProvisioningService.Request(null, List.of("studio-03"), "src/test/resources/playbooks/rdma-quick.yaml", null, null, false, null),
                "hank", listener));
        console.await(java.util.regex.Pattern.compile("\\n  studio-03 > $"), 0, java.time.Duration.ofSeconds(30), run);
        int from = console.text().length();
        console.type("done");
        // Nothing was done in Recovery: the verification says so, and the walkthrough is shown again.
        console.await(java.util.regex.Pattern.compile("studio-03: NOT verified: rdma_ctl status does not say enabled"), from, java.time.Duration.ofSeconds(30), run);
        console.await(java.util.regex.Pattern.compile("Why: after the confirmation by hank, still wrong: rdma_ctl status does not say enabled[^\\n]*\\n(.*\\n)*  studio-03 > $"),
                from, java.time.Duration.ofSeconds(30), run);
        fixture.enableRdmaInRecovery("studio-03");
        console.type("done");
        RunOutcome outcome = run.get(60, java.util.concurrent.TimeUnit.SECONDS);

        assertThat(outcome.machines()).containsExactly(Map.entry("studio-03", "ready"));
        assertThat(fixture.service.run(outcome.runId()).orElseThrow().confirmations()).extracting(RunView.Confirmation::verified).containsExactly(false, true);
        assertThat(console.text()).contains("studio-03: verified");
    }

    /** Every simulated machine's state and every file of its file system, as text. */
    private List<String> machineStates() throws IOException {
        List<String> states = new ArrayList<>();
        for (SimulatedMac mac : fixture.fleet.machines()) {
            SimulatedMac.Snapshot snapshot = mac.snapshot();
            states.add(mac.name() + " " + snapshot.rdmaEnabled() + " " + snapshot.rdmaAfterReboot() + " " + snapshot.bootstrapTokenEscrowed()
                    + " " + snapshot.thunderboltBridgeActive() + " " + snapshot.power() + " " + snapshot.bootTime() + " " + snapshot.powerSettings()
                    + " " + snapshot.release() + " " + snapshot.ipv4());
            try (Stream<Path> files = Files.walk(mac.root())) {
                for (Path file : files.sorted().toList()) {
                    states.add(mac.root().relativize(file) + (Files.isRegularFile(file) ? " " + Files.readString(file) : "/"));
                }
            }
        }
        return states;
    }
}
