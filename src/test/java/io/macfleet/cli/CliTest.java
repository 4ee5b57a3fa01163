package io.macfleet.cli;

import io.macfleet.command.ExitCodes;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.inventory.ExampleInventory;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The `macfleet` command line, run in-process the way the launcher runs it; exit codes asserted. */
@QuarkusMainTest
class CliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path directory;

    private Path example() throws Exception {
        Path inventory = directory.resolve("inventory");
        ExampleInventory.writeTo(inventory, false);
        return inventory;
    }

    /** The test database is shared by every test of the run: start from an empty desired state. */
    private void reset(QuarkusMainLauncher launcher) throws Exception {
        Path empty = Files.createDirectories(directory.resolve("empty"));
        Files.writeString(empty.resolve("empty.yaml"), "machines: []\n");
        assertThat(launcher.launch("inventory", "apply", empty.toString(), "--actor", "reset").exitCode()).isZero();
    }

    /** The main-test launcher mixes captured log lines into the output; real runs log to stderr. */
    private static String withoutLogLines(LaunchResult result) {
        return result.getOutput().lines().filter(line -> !line.matches("^\\d\\d:\\d\\d:\\d\\d .*"))
                .collect(java.util.stream.Collectors.joining("\n"));
    }

    @Test
    void validateAcceptsTheExample(QuarkusMainLauncher launcher) throws Exception {
        LaunchResult result = launcher.launch("inventory", "validate", example().toString());
        assertThat(result.exitCode()).isEqualTo(ExitCodes.OK);
        assertThat(result.getOutput()).contains("is valid: 1 cluster(s), 4 machine(s)");
    }

    @Test
    void validateListsEveryErrorWithItsPositionAndExitsOne(QuarkusMainLauncher launcher) throws Exception {
        Path inventory = example();
        Files.writeString(inventory.resolve("machines.yaml"), Files.readString(inventory.resolve("machines.yaml"))
                .replace("address: 192.168.50.12", "address: 192.168.50.11")
                .replace("groups: [studio-256]", "groups: [studio-128]"));
        LaunchResult result = launcher.launch("inventory", "validate", inventory.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(result.getErrorOutput()).contains(
                inventory.resolve("machines.yaml") + ":9:5: address 192.168.50.11 port 22 of machine 'studio-02' is already used by machine 'studio-01'",
                inventory.resolve("machines.yaml") + ":16:14: unknown group 'studio-128'; expected one of: studio-256, studio-512",
                "2 error(s) in inventory");
    }

    @Test
    void validateOfAMissingDirectoryIsAUsageError(QuarkusMainLauncher launcher) {
        LaunchResult result = launcher.launch("inventory", "validate", directory.resolve("nowhere").toString());
        assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.getErrorOutput()).contains("not a directory");
    }

    @Test
    void aDirectoryWithoutYamlIsAUsageErrorNotAnEmptyInventory(QuarkusMainLauncher launcher) throws Exception {
        Path empty = Files.createDirectories(directory.resolve("typo"));
        LaunchResult result = launcher.launch("inventory", "apply", empty.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.getErrorOutput()).contains("no *.yaml or *.yml files; expected an inventory directory");
    }

    @Test
    void planApplyPlanAgainAndTheAuditLog(QuarkusMainLauncher launcher) throws Exception {
        reset(launcher);
        Path inventory = example();
        String actor = "tester-" + UUID.randomUUID();

        LaunchResult plan = launcher.launch("inventory", "plan", inventory.toString());
        assertThat(plan.exitCode()).isZero();
        assertThat(plan.getOutput()).contains("+ cluster llm-a", "+ machine studio-04", "memoryGb = 256", "Plan: 5 to add, 0 to change, 0 to remove.");

        LaunchResult apply = launcher.launch("inventory", "apply", inventory.toString(), "--actor", actor);
        assertThat(apply.exitCode()).isZero();
        assertThat(apply.getOutput()).contains("Apply complete: 5 added, 0 changed, 0 removed.");

        LaunchResult again = launcher.launch("inventory", "plan", "--json", inventory.toString());
        assertThat(again.exitCode()).isZero();
        JsonNode json = JSON.readTree(withoutLogLines(again));
        assertThat(json.get("changes")).isEmpty();
        assertThat(json.get("add").asInt()).isZero();

        Files.writeString(inventory.resolve("fleet.yaml"), Files.readString(inventory.resolve("fleet.yaml")).replace("memoryGb: 256", "memoryGb: 192"));
        LaunchResult changed = launcher.launch("inventory", "plan", inventory.toString());
        assertThat(changed.getOutput()).contains("~ machine studio-03", "memoryGb: 256 -> 192", "Plan: 0 to add, 2 to change, 0 to remove.");

        LaunchResult audit = launcher.launch("audit", "--actor", actor, "--action", "inventory.apply", "--json");
        assertThat(audit.exitCode()).isZero();
        JsonNode entries = JSON.readTree(withoutLogLines(audit));
        assertThat(entries.isArray()).as(audit.getOutput()).isTrue();
        assertThat(entries).hasSize(1);
        assertThat(entries.get(0).get("detail").asText()).contains("5 added, 0 changed, 0 removed");

        LaunchResult machineAudit = launcher.launch("audit", "--actor", actor, "--machine", "studio-02");
        assertThat(machineAudit.getOutput()).contains("inventory.machine.add").doesNotContain("studio-03");
    }

    @Test
    void applyOfAnInvalidInventoryChangesNothing(QuarkusMainLauncher launcher) throws Exception {
        reset(launcher);
        Path inventory = example();
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();
        Files.writeString(inventory.resolve("clusters.yaml"), Files.readString(inventory.resolve("clusters.yaml"))
                .replace("\"26.2\"", "\"9.1\""));
        Files.writeString(inventory.resolve("extra.yaml"), "machines:\n  - name: studio-09\n    address: 192.168.50.19\n");

        LaunchResult apply = launcher.launch("inventory", "apply", inventory.toString());
        assertThat(apply.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(apply.getErrorOutput()).contains("clusters.yaml:3:5: macosVersion '9.1' is not a valid macOS version", "Nothing was applied.");

        Files.delete(inventory.resolve("extra.yaml"));
        Files.writeString(inventory.resolve("clusters.yaml"), Files.readString(inventory.resolve("clusters.yaml")).replace("\"9.1\"", "\"26.2\""));
        assertThat(launcher.launch("inventory", "plan", inventory.toString()).getOutput()).contains("No changes.");
    }

    @Test
    void auditRejectsABadTime(QuarkusMainLauncher launcher) {
        LaunchResult result = launcher.launch("audit", "--since", "yesterday");
        assertThat(result.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(result.getErrorOutput()).contains("--since 'yesterday' is not a time; expected ISO 8601");
    }

    @Test
    void exampleWritesTheInventoryOnceAndRefusesToOverwrite(QuarkusMainLauncher launcher) {
        Path target = directory.resolve("written");
        LaunchResult first = launcher.launch("inventory", "example", target.toString());
        assertThat(first.exitCode()).isZero();
        assertThat(target.resolve("machines.yaml")).exists();
        LaunchResult second = launcher.launch("inventory", "example", target.toString());
        assertThat(second.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(second.getErrorOutput()).contains("already exists");
    }

    @Test
    void anUnknownOptionIsAUsageError(QuarkusMainLauncher launcher) {
        assertThat(launcher.launch("inventory", "plan", "--colour").exitCode()).isEqualTo(ExitCodes.USAGE);
    }
}
