package io.macfleet.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshSettings;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The set-up the runtime tests on simulated Macs share: the inventory applied, llm-a's facts gathered, the service. */
final class SimulatedRuntimes {

    private SimulatedRuntimes() {
    }

    /** Applies {@code inventory} (it must load without errors), gathers the facts of llm-a and returns the runtimes' service. */
    static RuntimeService serviceFor(SimulatedInventory simulation, Path inventory, SshSettings settings) throws Exception {
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).isEmpty();
        simulation.desiredState.apply(loaded.inventory(), "test", inventory.toString());
        simulation.facts.gather(simulation.desiredState.machines("llm-a"), settings);
        ClusterCabling cabling = new ClusterCabling(simulation.facts);
        InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();
        NodeService nodes = new NodeService(simulation.desiredState, cabling, simulation.facts, hostKeys, event -> {
        }, new NodeDeploymentStore(simulation.dataSource), Clock.systemUTC());
        RuntimeService runtimes = new RuntimeService(simulation.desiredState, nodes, cabling, simulation.facts, hostKeys, event -> {
        }, Clock.systemUTC(), InferenceRuntimes.standard());
        runtimes.readyTimeout(Duration.ofSeconds(120));
        return runtimes;
    }

    /**
     * An MLX model directory as mlx-community publishes one (config.json, weights), plus the GGUF the simulator's
     * stand-in for mlx_lm.server answers with (the simulator has no MLX).
     */
    static Path mlxModel(Path directory) throws Exception {
        Path model = Files.createDirectories(directory.resolve("Qwen3-0.6B-4bit"));
        Files.writeString(model.resolve("config.json"), "{\"model_type\": \"qwen3\"}");
        Files.writeString(model.resolve("model.safetensors"), "weights");
        Files.copy(io.macfleet.deployment.NodeJars.tinyModel(directory, 11), model.resolve("macfleet-stand-in.gguf"));
        return model;
    }

    /**
     * Writes the inventory of cluster llm-a over {@code names} (full mesh) running {@code runtime} on {@code httpPort}
     * with {@code model}, and returns its directory; {@code settings} are the lines of {@code inference.settings}
     * (each ending in a newline, not indented).
     */
    static Path runtimeInventory(SimulatedInventory simulation, List<String> names, String runtime, int httpPort, Path model, String settings)
            throws Exception {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", names)), Map.of());
        Path yaml = inventory.resolve("macfleet.yaml");
        String block = """
                    inference:
                      runtime: %s
                      port: %d
                      model: %s
                      settings:
                """.formatted(runtime, httpPort, model) + settings.lines().map(line -> "        " + line + "\n").reduce("", String::concat);
        String original = Files.readString(yaml);
        if (!original.contains("      kind: full-mesh\n")) {
            throw new IllegalStateException("the simulated inventory no longer has the cabling line the inference block goes after: " + yaml);
        }
        Files.writeString(yaml, original.replace("      kind: full-mesh\n", "      kind: full-mesh\n" + block));
        return inventory;
    }

    /** {@link #runtimeInventory} for MLX {@code mlxVersion} and mlx-lm {@code mlxLmVersion}, a free coordinator port, and {@code moreSettings}. */
    static Path mlxInventory(SimulatedInventory simulation, List<String> names, int httpPort, Path model, String mlxVersion,
                             String mlxLmVersion, String moreSettings) throws Exception {
        return runtimeInventory(simulation, names, "mlx", httpPort, model, """
                mlxVersion: "%s"
                mlxLmVersion: "%s"
                coordinatorPort: %d
                """.formatted(mlxVersion, mlxLmVersion, freePort()) + moreSettings);
    }

    static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
