package io.macfleet.demo;

import io.macfleet.runtime.RuntimeDeployer;
import io.macfleet.runtime.RuntimePlan;
import io.macfleet.runtime.RuntimeService;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.command.Actors;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.SshSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What {@code macfleet demo --runtime mlx} does at the end instead of deploying the bundled node: the demo cluster
 * switched to the MLX runtime and deployed, each simulated Mac's rank a LaunchDaemon running the simulator's
 * mlx_lm.server stand-in (there is no MLX off Apple silicon) with the environment and files mlx.launch would give it.
 */
public final class DemoMlx {

    private DemoMlx() {
    }

    /** The demo cluster switched to MLX and deployed; what serves, or empty after saying why not. */
    public static Optional<DemoLlamaCpp.Serving> deploy(RuntimeService runtimes, DesiredStateStore desiredState, ClusterCabling cabling, SimulatedFleet fleet,
                                                       Path inventoryDirectory, String cluster, Path demoDirectory, PrintWriter out) {
        try {
            fleet.assignThunderboltLoopbackAddresses();
            Path model = demoModel(demoDirectory);
            // The stand-in's rank 0 serves this GGUF with the bundled engine in MLX's place (answers labelled as such).
            Files.copy(io.macfleet.demo.DemoNode.ensureModel(demoDirectory, out), model.resolve("macfleet-stand-in.gguf"),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Path file = inventoryDirectory.resolve("macfleet.yaml");
            Files.writeString(file, withMlx(Files.readString(file), cluster, model));
            LoadResult loaded = InventoryLoader.load(inventoryDirectory);
            if (!loaded.valid()) {
                throw new IllegalStateException("the demo inventory with mlx is invalid: " + loaded.errors());
            }
            desiredState.apply(loaded.inventory(), Actors.DEMO, inventoryDirectory.toString());
            SshSettings settings = SshSettings.defaults(Actors.DEMO).withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(60)));
            cabling.cluster(cluster, Optional.of(settings));
            RuntimePlan plan = runtimes.plan(cluster, Optional.empty(), Optional.empty());
            out.println("Deploying MLX (" + plan.build() + ", " + plan.notes().getFirst() + ") to the simulated Macs of " + cluster + " ...");
            out.flush();
            RuntimeDeployer.Outcome outcome = runtimes.deploy(cluster, Optional.empty(), settings, NodeDeployer.Listener.NONE);
            out.println(outcome.summary());
            List<RuntimeService.DaemonStatus> daemons = runtimes.status(cluster, settings);
            long ready = daemons.stream().filter(RuntimeService.DaemonStatus::ready).count();
            out.println();
            out.println("  macfleet node plan " + cluster + " --json    # each rank's environment and device or host file");
            out.println("  curl -s " + outcome.endpoint() + "/chat/completions -H 'Content-Type: application/json' \\");
            out.println("    -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'");
            out.println();
            String sentence = cluster + ": " + ready + " of " + daemons.size() + " simulated Macs running mlx_lm.server ranks (the simulator's"
                    + " stand-in, no MLX off Apple silicon), " + plan.notes().getFirst() + ", rank 0 serving at " + outcome.endpoint();
            out.flush();
            return Optional.of(new DemoLlamaCpp.Serving(outcome.endpoint(), sentence));
        } catch (IOException | RuntimeException e) {
            out.println("MLX was not deployed: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            out.flush();
            return Optional.empty();
        }
    }

    /**
     * A tiny MLX-shaped model directory for the stand-in: config.json and one safetensors file holding no tensors (an
     * 8-byte little-endian header length, then the JSON header, as the safetensors format defines).
     */
    public static Path demoModel(Path demoDirectory) throws IOException {
        // Under the models directory: only files there are sent to the Macs (issue 29).
        Path model = Files.createDirectories(demoDirectory.resolve("models").resolve("mlx-demo-model"));
        Files.writeString(model.resolve("config.json"), "{\"model_type\": \"llama\", \"note\": \"macfleet demo: the simulator's mlx_lm.server stand-in serves macfleet-stand-in.gguf with the bundled engine; it reads no safetensors\"}\n");
        byte[] header = "{\"__metadata__\":{\"format\":\"mlx\"}}".getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(8 + header.length).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(header.length).put(header);
        Files.write(model.resolve("model.safetensors"), buffer.array());
        return model;
    }

    /** The demo inventory's text with the cluster's inference switched to MLX. */
    public static String withMlx(String yaml, String cluster, Path model) {
        int entry = yaml.indexOf("  - name: " + cluster + "\n");
        int inference = entry < 0 ? -1 : yaml.indexOf("    inference:\n", entry);
        if (inference < 0) {
            throw new IllegalStateException("the demo inventory has no inference section for " + cluster);
        }
        int next = yaml.indexOf("\n  - ", inference + 1);
        int runtime = yaml.indexOf("      runtime: ", inference);
        if (runtime >= 0 && (next < 0 || runtime < next)) {
            return yaml;
        }
        int modelLine = yaml.indexOf("      model: ", inference);
        if (modelLine >= 0 && (next < 0 || modelLine < next)) {
            int end = yaml.indexOf('\n', modelLine);
            yaml = yaml.substring(0, modelLine) + yaml.substring(end + 1);
        }
        int after = inference + "    inference:\n".length();
        return yaml.substring(0, after) + "      runtime: mlx\n      model: \"" + model + "\"\n      settings:\n        mlxVersion: \"0.29.3\"\n"
                + "        mlxLmVersion: \"0.28.2\"\n" + yaml.substring(after);
    }
}
