package io.macfleet.facts;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.api.JsonShape;
import io.macfleet.command.ExitCodes;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `macfleet facts`, `facts show`, `drift` and the live `cabling` commands against simulated Macs, exit codes asserted. */
@QuarkusMainTest
class FactsCliTest {

    private static final List<String> CLUSTER = List.of("studio-01", "studio-02", "studio-03", "studio-04");
    private static final ObjectMapper JSON = new ObjectMapper();
    static SimulatedInventory simulation;
    static Path inventory;
    static Path driftingInventory;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-facts-cli"), 4, "127.0.0.71");
        simulation.cableFullMesh(CLUSTER);
        List<SimulatedInventory.ClusterSpec> clusters = List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", CLUSTER));
        inventory = simulation.writeInventory(clusters, Map.of());
        driftingInventory = simulation.writeInventory(clusters, Map.of("studio-02", 512));
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }


    @Test
    void gatherShowDriftAndCheckTheCabling(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();

        LaunchResult gathered = launcher.launch("facts", "--cluster", "llm-a", "--parallel", "4");
        assertThat(gathered.exitCode()).as(gathered.getErrorOutput()).isEqualTo(ExitCodes.OK);
        assertThat(output(gathered)).contains("studio-01        ok      Mac Studio Mac15,14, Apple M3 Ultra, serial ", "512 GB, macOS 26.2 (25C56)",
                "studio-04        ok      ", "facts: 4 of 4 machine(s) gathered and stored in ", "(4 in parallel)");

        LaunchResult shown = launcher.launch("facts", "show", "studio-02", "--json");
        assertThat(shown.exitCode()).isZero();
        JsonNode facts = JSON.readTree(output(shown));
        assertThat(facts.get("machine").asText()).isEqualTo("studio-02");
        assertThat(facts.get("memoryBytes").asLong()).isEqualTo(256L << 30);
        assertThat(facts.get("thunderboltPorts")).hasSize(6);

        LaunchResult text = launcher.launch("facts", "show", "studio-01");
        assertThat(text.exitCode()).isZero();
        assertThat(output(text)).contains("model:               Mac Studio (Mac15,14)", "memory:              512 GB", "macOS:               26.2 (25C56)");

        assertThat(launcher.launch("drift", "--cluster", "llm-a").exitCode()).isEqualTo(ExitCodes.OK);

        LaunchResult check = launcher.launch("cabling", "check", "llm-a");
        assertThat(check.exitCode()).as(output(check)).isEqualTo(ExitCodes.OK);
        LaunchResult refreshed = launcher.launch("cabling", "check", "llm-a", "--refresh", "--json");
        assertThat(refreshed.exitCode()).isEqualTo(ExitCodes.OK);
        assertThat(JSON.readTree(output(refreshed)).get("passed")).as(output(refreshed)).isNotNull();
        assertThat(JSON.readTree(output(refreshed)).get("passed").asBoolean()).isTrue();

        LaunchResult plan = launcher.launch("cabling", "plan", "llm-a");
        assertThat(plan.exitCode()).isZero();
        assertThat(output(plan)).contains("Cabling sheet for cluster llm-a: 4 machines, full mesh, 6 Thunderbolt 5 cables");

        LaunchResult config = launcher.launch("cabling", "config", "llm-a", "--format", "mlx-jaccl");
        assertThat(config.exitCode()).as(config.getErrorOutput()).isZero();
        JsonNode hostfile = JSON.readTree(output(config));
        assertThat(hostfile.get("backend").asText()).isEqualTo("jaccl");
        assertThat(hostfile.get("hosts")).hasSize(4);

        // The inventory now says studio-02 has 512 GB; it has 256.
        assertThat(launcher.launch("inventory", "apply", driftingInventory.toString()).exitCode()).isZero();
        LaunchResult drift = launcher.launch("drift", "--cluster", "llm-a");
        assertThat(drift.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(output(drift)).contains("studio-02: has 256 GB of memory, the inventory says 512 GB",
                "Drift: 1 of 4 machine(s) differ from the inventory.");
    }

    /** Issue 13: machines never gathered are unknown to `drift`, not "2 of 2 differ". */
    @Test
    void driftWithoutAnyFactsIsUnknownNotDrifted(QuarkusMainLauncher launcher) throws Exception {
        Path bare = Files.createTempDirectory("macfleet-never-gathered");
        Files.writeString(bare.resolve("macfleet.yaml"), """
                defaults:
                  ssh:
                    user: admin
                    privateKey: "file:%s"
                machines:
                  - name: never-01
                    address: 127.0.0.201
                    memoryGb: 512
                  - name: never-02
                    address: 127.0.0.202
                    memoryGb: 256
                """.formatted(simulation.privateKey()));
        LaunchResult applied = launcher.launch("inventory", "apply", bare.toString());
        assertThat(applied.exitCode()).as(applied.getErrorOutput()).isZero();

        LaunchResult drift = launcher.launch("drift");
        assertThat(drift.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(output(drift)).contains("Drift unknown: no facts yet for any of the 2 machine(s) (run macfleet facts).")
                .doesNotContain("differ");
        JsonNode json = JSON.readTree(output(launcher.launch("drift", "--json")));
        assertThat(json.get("unknown").asInt()).isEqualTo(2);
        assertThat(json.get("drifted").asInt()).isZero();
    }

    @Test
    void usageErrorsAndFailures(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();

        LaunchResult unknown = launcher.launch("facts", "studio-01", "studio-99");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.getErrorOutput()).contains("unknown machine(s) studio-99: not in the applied inventory");
        assertThat(launcher.launch("facts", "--cluster", "llm-z").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(launcher.launch("facts", "--cluster", "llm-a", "studio-01").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(launcher.launch("facts", "show", "studio-99").exitCode()).isEqualTo(ExitCodes.USAGE);
        // An inventory is applied: the name is what is wrong, so the known clusters are named, no `inventory apply` suggested.
        LaunchResult driftUnknown = launcher.launch("drift", "--cluster", "llm-z");
        assertThat(driftUnknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(driftUnknown.getErrorOutput()).contains("no cluster named 'llm-z' in the applied inventory (known: llm-a")
                .doesNotContain("inventory apply");
        assertThat(launcher.launch("cabling", "check").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(launcher.launch("cabling", "check", "llm-z").exitCode()).isEqualTo(ExitCodes.USAGE);

        simulation.fleet.machine("studio-03").faults().setGarbage(true);
        try {
            LaunchResult failed = launcher.launch("facts", "studio-03", "studio-04");
            assertThat(failed.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(output(failed)).contains("studio-03        FAILED  studio-03: `sw_vers`: sw_vers: no ProductVersion: line",
                    "studio-04        ok      ", "facts: 1 of 2 machine(s) gathered and stored", "1 failed, nothing stored for them");

            // --json: each machine with its facts or its error (the other left out), then the counts.
            LaunchResult failedJson = launcher.launch("facts", "studio-03", "studio-04", "--json");
            assertThat(failedJson.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
            String json = output(failedJson);
            assertThat(JsonShape.fieldNames(json, "")).containsExactly("results", "gathered", "failed", "parallel", "elapsedMs");
            JsonNode report = JSON.readTree(json);
            assertThat(report.get("gathered").asInt()).isEqualTo(1);
            assertThat(report.get("failed").asInt()).isEqualTo(1);
            for (int index = 0; index < 2; index++) {
                List<String> names = JsonShape.fieldNames(json, "/results/" + index);
                if (report.get("results").get(index).get("machine").asText().equals("studio-03")) {
                    assertThat(names).containsExactly("machine", "ok", "error", "durationMs");
                    assertThat(report.get("results").get(index).get("error").asText()).contains("sw_vers: no ProductVersion");
                } else {
                    assertThat(names).containsExactly("machine", "ok", "facts", "durationMs");
                    assertThat(report.get("results").get(index).get("facts").get("machine").asText()).isEqualTo("studio-04");
                }
            }
        } finally {
            simulation.fleet.machine("studio-03").faults().clear();
        }
    }
}
