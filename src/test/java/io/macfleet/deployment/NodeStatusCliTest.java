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
}
