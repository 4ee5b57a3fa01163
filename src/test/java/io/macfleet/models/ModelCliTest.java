package io.macfleet.models;

import static io.macfleet.testing.CommandOutput.output;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.command.ExitCodes;
import io.macfleet.deployment.NodeJars;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * `macfleet model add|list|show|fit|remove` with exit codes and JSON, on a real GGUF made by the bundled node's
 * make-model (its header as the node's own writer lays it out).
 */
@QuarkusMainTest
class ModelCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void addListShowFitRemoveAndRefusals(QuarkusMainLauncher launcher) throws Exception {
        Path directory = Files.createTempDirectory("macfleet-model-cli");
        Path gguf = NodeJars.tinyModel(directory, 5);
        // The store under target/macfleet-test-home outlives the in-memory database: a name of this run only.
        String name = "tiny-" + ProcessHandle.current().pid();

        LaunchResult added = launcher.launch("model", "add", name, gguf.toString(), "--json");
        assertThat(added.exitCode()).as(added.getErrorOutput()).isEqualTo(ExitCodes.OK);
        JsonNode model = JSON.readTree(output(added));
        assertThat(model.get("name").asText()).isEqualTo(name);
        assertThat(model.get("format").asText()).isEqualTo("gguf");
        assertThat(model.get("architecture").asText()).isEqualTo("llama");
        assertThat(model.get("quantization").asText()).isEqualTo("F32");
        assertThat(model.get("files").get(0).get("sha256").asText()).isEqualTo(HuggingFaceHub.sha256(gguf));
        assertThat(model.get("totalBytes").asLong()).isEqualTo(Files.size(gguf));

        LaunchResult again = launcher.launch("model", "add", name, gguf.toString());
        assertThat(again.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(again.getErrorOutput()).contains("macfleet model add: model " + name + " is already in the catalogue (remove it first)");

        Path notes = Files.writeString(directory.resolve("notes.txt"), "no weights here");
        LaunchResult notAModel = launcher.launch("model", "add", "notes", notes.toString());
        assertThat(notAModel.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(notAModel.getErrorOutput()).contains("macfleet model add: not a model: " + notes + " holds neither a GGUF file nor an MLX config.json");

        LaunchResult listed = launcher.launch("model", "list");
        assertThat(listed.exitCode()).isZero();
        assertThat(output(listed)).contains("NAME", name, "gguf", "llama", "F32", "bundled,llama.cpp");
        LaunchResult listedJson = launcher.launch("model", "list", "--json");
        assertThat(JSON.readTree(output(listedJson)).findValuesAsText("name")).contains(name).doesNotContain("notes");

        LaunchResult shown = launcher.launch("model", "show", name);
        assertThat(shown.exitCode()).isZero();
        assertThat(output(shown)).contains(HuggingFaceHub.sha256(gguf), "source:   " + gguf, "models/" + name);

        Path inventory = Files.createTempDirectory("macfleet-model-cli-inventory");
        assertThat(launcher.launch("inventory", "example", inventory.resolve("fleet").toString()).exitCode()).isZero();
        assertThat(launcher.launch("inventory", "apply", inventory.resolve("fleet").toString()).exitCode()).isZero();
        LaunchResult fits = launcher.launch("model", "fit", "llm-a", name);
        assertThat(fits.exitCode()).as(output(fits)).isEqualTo(ExitCodes.OK);
        assertThat(output(fits)).contains("on cluster llm-a, context 4096 x 1 slot(s): fits", "studio-03: needs ",
                "of 192.00 GiB usable (default 75 % of 256.00 GiB from the inventory's memoryGb (iogpu.wired_limit_mb not gathered))");
        LaunchResult tooLong = launcher.launch("model", "fit", "llm-a", name, "--context", "2000000000", "--slots", "64", "--json");
        assertThat(tooLong.exitCode()).isEqualTo(ExitCodes.CHECK_FAILED);
        assertThat(JSON.readTree(output(tooLong)).get("fits").asBoolean()).isFalse();
        LaunchResult unknownMac = launcher.launch("model", "add", "via-model", "hf:unsloth/Tiny-GGUF@main", "--via", "studio-99");
        assertThat(unknownMac.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknownMac.getErrorOutput()).contains("--via studio-99: no machine named 'studio-99' in the applied inventory");
        LaunchResult unknownCluster = launcher.launch("model", "fit", "llm-x", name);
        assertThat(unknownCluster.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknownCluster.getErrorOutput()).contains("no cluster llm-x in the applied inventory");

        // node plan checks a catalogue model against the Macs' memory before planning: 2G tokens x 64 slots of the tiny model's cache does not fit.
        Path clusters = inventory.resolve("fleet/clusters.yaml");
        Files.writeString(clusters, Files.readString(clusters).replace("model: /opt/models/Llama-3.3-70B-Instruct-Q8_0.gguf",
                "model: " + name + "\n      runtime: llama.cpp\n      settings:\n        context: 2000000000\n        parallel: 64"));
        assertThat(launcher.launch("inventory", "apply", inventory.resolve("fleet").toString()).exitCode()).isZero();
        LaunchResult plan = launcher.launch("node", "plan", "llm-a");
        assertThat(plan.exitCode()).as(output(plan)).isEqualTo(ExitCodes.USAGE);
        assertThat(plan.getErrorOutput()).contains("on cluster llm-a, context 2000000000 x 64 slot(s): does not fit", "GiB short");

        LaunchResult removed = launcher.launch("model", "remove", name);
        assertThat(removed.exitCode()).isZero();
        assertThat(output(removed)).contains("removed " + name);
        LaunchResult gone = launcher.launch("model", "show", name, "--json");
        assertThat(gone.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(gone.getErrorOutput()).contains("no model " + name + " in the catalogue");
        assertThat(launcher.launch("model", "remove", name).exitCode()).isEqualTo(ExitCodes.USAGE);
    }
}
