package io.macfleet.deployment;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.api.JsonShape;
import io.macfleet.command.ExitCodes;
import io.macfleet.facts.SimulatedInventory;
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

/** `macfleet node status --json` against simulated Macs: per cluster, the same rank objects as the REST answer. */
@QuarkusMainTest
class NodeStatusCliTest {

    static SimulatedInventory simulation;
    static Path inventory;

    @BeforeAll
    static void start() throws Exception {
        simulation = SimulatedInventory.start(Files.createTempDirectory("macfleet-node-cli"), 2, "127.0.0.201");
        inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-n", List.of("studio-01", "studio-02"))), Map.of());
    }

    @AfterAll
    static void stop() {
        simulation.close();
    }


    @Test
    void statusJsonIsEachClusterWithItsRanksLeavingOutWhatCouldNotBeRead(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();

        LaunchResult status = launcher.launch("node", "status", "llm-n", "--json");
        assertThat(status.exitCode()).as(status.getErrorOutput()).isEqualTo(ExitCodes.CHECK_FAILED);
        String json = output(status);
        assertThat(JsonShape.fieldNames(json, "")).containsExactly("llm-n");
        assertThat(JsonShape.fieldNames(json, "/llm-n")).containsExactly("runtime", "endpoint", "ranks");
        assertThat(new ObjectMapper().readTree(json).get("llm-n").get("runtime").asText()).isEqualTo("bundled");
        assertThat(new ObjectMapper().readTree(json).get("llm-n").get("endpoint").asText()).matches("http://127\\.[0-9.]+:[0-9]+/v1");
        assertThat(JsonShape.fieldNames(json, "/llm-n/ranks/1")).containsExactly("rank", "machine", "state", "lastExit");
        JsonNode rank = new ObjectMapper().readTree(json).get("llm-n").get("ranks").get(1);
        assertThat(rank.get("rank").asInt()).isEqualTo(1);
        assertThat(rank.get("machine").asText()).isEqualTo("studio-02");
        assertThat(rank.get("state").asText()).isEqualTo("not deployed");
    }

    @Test
    void planPrintsEachMacsDaemonAndFilesWithoutTouchingAnyMac(QuarkusMainLauncher launcher) throws Exception {
        assertThat(launcher.launch("inventory", "apply", inventory.toString()).exitCode()).isZero();
        Path model = NodeJars.tinyModel(Files.createTempDirectory("macfleet-node-plan"), 3);
        LaunchResult plan = launcher.launch("node", "plan", "llm-n", "--model", model.toString(), "--json");
        assertThat(plan.exitCode()).as(plan.getErrorOutput()).isZero();
        JsonNode body = new ObjectMapper().readTree(output(plan));
        assertThat(JsonShape.fieldNames(output(plan), "")).containsExactly("cluster", "runtime", "build", "endpoint", "health", "notes", "machines");
        assertThat(body.get("runtime").asText()).isEqualTo("bundled");
        JsonNode first = body.get("machines").get(0);
        assertThat(first.get("machine").asText()).isEqualTo("studio-01");
        assertThat(first.get("daemons").get(0).get("label").asText()).isEqualTo("io.macfleet.inference-node");
        assertThat(first.get("daemons").get(0).get("programArguments").toString()).contains("--rank", "serve");
        assertThat(first.get("files").toString()).contains(model.getFileName().toString(), "\"sha256\"");
        assertThat(simulation.fleet.machine("studio-01").launchd().labels()).as("nothing deployed").isEmpty();

        LaunchResult text = launcher.launch("node", "plan", "llm-n", "--model", model.toString());
        assertThat(output(text)).contains("Plan for cluster llm-n: runtime bundled", "daemon /Library/LaunchDaemons/io.macfleet.inference-node.plist",
                "nothing changed");
        LaunchResult unknown = launcher.launch("node", "plan", "llm-nope");
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.getErrorOutput()).contains("no cluster named 'llm-nope'");
    }
}
