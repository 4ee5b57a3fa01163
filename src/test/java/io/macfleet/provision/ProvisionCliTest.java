package io.macfleet.provision;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.command.ExitCodes;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `macfleet provision` and friends in-process: non-interactive stop at the Recovery step (exit 3), dry run, runs, show, validate, usage errors. */
@QuarkusMainTest
class ProvisionCliTest {

    static ProvisioningFixture fixture;

    @BeforeAll
    static void start() throws Exception {
        fixture = ProvisioningFixture.start(Files.createTempDirectory("macfleet-provision-cli"), 2, "127.0.0.121");
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }


    @Test
    void provisionStopsForAPersonThenShowsTheRun(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", fixture.inventory.toString()).exitCode()).isZero();

        LaunchResult plan = launcher.launch("provision", "llm-a", "--dry-run");
        assertThat(plan.exitCode()).as(plan.getErrorOutput()).isEqualTo(ExitCodes.OK);
        assertThat(output(plan)).contains("Dry run of playbook provision", "nothing is changed", "studio-02:", "power-settings",
                "would-run", "rdma-enabled", "needs-operator", "cabling", "runs-after-all");

        LaunchResult stopped = launcher.launch("provision", "llm-a", "--non-interactive", "--actor", "frank");
        assertThat(stopped.exitCode()).as(output(stopped) + stopped.getErrorOutput()).isEqualTo(ExitCodes.NEEDS_OPERATOR);
        assertThat(output(stopped)).contains("Run 1: playbook provision on 2 machine(s): studio-01, studio-02",
                "studio-01      power-settings             done", "Run 1 waiting-for-operator in",
                "studio-02      waiting-for-operator",
                "A person must do this on studio-01 (step rdma-enabled is waiting-for-operator):",
                "Enable RDMA over Thunderbolt in macOS Recovery on studio-01", "7. Type: rdma_ctl enable",
                "POST /api/v1/runs/1/machines/studio-01/steps/rdma-enabled/confirmation")
                .doesNotContain(ProvisioningFixture.VOLUME_OWNER_PASSWORD);

        // Run again: the same run continues; what was done is not redone.
        LaunchResult again = launcher.launch("provision", "llm-a", "--non-interactive");
        assertThat(again.exitCode()).isEqualTo(ExitCodes.NEEDS_OPERATOR);
        assertThat(output(again)).contains("Resuming run 1", "studio-01      power-settings             done",
                "done earlier in this run; the check still passes");

        LaunchResult runs = launcher.launch("provision", "runs");
        assertThat(runs.exitCode()).isZero();
        assertThat(output(runs)).contains("1     provision        llm-a        waiting-for-operator", "frank")
                .containsPattern("frank +.*\\d+ waiting-for-operator, \\d+ done").doesNotContainPattern("[a-z-]+=[0-9]");
        assertThat(output(stopped)).contains("Recap of run 1:", "machine          ok  changed  skipped  failed waiting-for-a-person")
                .containsPattern("studio-01 +\\d+ +[1-9]\\d* +\\d+ +0 +1\\n");

        LaunchResult show = launcher.launch("provision", "show", "1");
        assertThat(show.exitCode()).isZero();
        assertThat(output(show)).contains("Run 1: playbook provision, waiting-for-operator", "studio-01 (waiting-for-operator):",
                "power-settings             done                   attempts 1", "rdma-enabled               waiting-for-operator", "cabling                    pending");
        assertThat(launcher.launch("provision", "show", "42").exitCode()).isEqualTo(ExitCodes.USAGE);

        for (String machine : fixture.machines) {
            fixture.enableRdmaInRecovery(machine);
        }
        LaunchResult done = launcher.launch("provision", "llm-a", "--non-interactive");
        assertThat(done.exitCode()).as(output(done)).isEqualTo(ExitCodes.OK);
        assertThat(output(done)).contains("Resuming run 1", "studio-02      rdma-enabled               skipped-already-done", "Run 1 succeeded in");
    }

    @Test
    void usageErrorsAndValidation(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", fixture.inventory.toString()).exitCode()).isZero();
        LaunchResult unknownCluster = launcher.launch("provision", "llm-z");
        assertThat(unknownCluster.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknownCluster.getErrorOutput()).contains("no cluster named 'llm-z'");
        LaunchResult unknownStep = launcher.launch("provision", "llm-a", "--only", "nope");
        assertThat(unknownStep.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknownStep.getErrorOutput()).contains("playbook provision has no step 'nope'; its steps: reachable, facts,");
        assertThat(launcher.launch("provision").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(launcher.launch("provision", "llm-a", "--machine", "studio-09").exitCode()).isEqualTo(ExitCodes.USAGE);
        // Rolling runs: out-of-range batch sizes and failure shares are usage errors that name the option, before any SSH.
        LaunchResult negativeSerial = launcher.launch("provision", "llm-a", "--serial", "-1");
        assertThat(negativeSerial.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(negativeSerial.getErrorOutput()).contains("macfleet provision: --serial -1 is negative");
        LaunchResult tooManyFailures = launcher.launch("provision", "llm-a", "--serial", "2", "--max-fail-percent", "101");
        assertThat(tooManyFailures.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(tooManyFailures.getErrorOutput()).contains("macfleet provision: --max-fail-percent 101 is out of range; expected 0 to 100");

        LaunchResult valid = launcher.launch("playbook", "validate", "playbooks");
        assertThat(valid.exitCode()).isZero();
        assertThat(output(valid)).contains("playbooks: valid");
        Path broken = Files.createTempFile("broken", ".yaml");
        Files.writeString(broken, "steps:\n  - name: a\n    type: mdm\n");
        LaunchResult invalid = launcher.launch("provision", "validate", broken.toString());
        assertThat(invalid.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(invalid.getErrorOutput()).contains(broken + ":3:5: step type 'mdm' is not available yet: it arrives with the MDM integration issue",
                "1 error(s) in " + broken);
        LaunchResult badPlaybook = launcher.launch("provision", "llm-a", "--playbook", broken.toString());
        assertThat(badPlaybook.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(badPlaybook.getErrorOutput()).contains("invalid playbook:", broken + ":3:5:");
    }
}
