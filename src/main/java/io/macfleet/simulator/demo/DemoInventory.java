package io.macfleet.simulator.demo;

import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Writes the inventory (README format) that describes a running demo fleet. */
final class DemoInventory {
    private DemoInventory() {
    }

    static Path write(Path directory, SimulatedFleet fleet, Path privateKey, Path volumeOwnerPasswordFile, List<String> links,
                      boolean fullMesh) throws IOException {
        Files.createDirectories(directory);
        StringBuilder yaml = new StringBuilder();
        yaml.append("# Written by `macfleet demo` for the simulated Mac Studios it runs; rewritten at every start.\n");
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: ").append(quote("file:" + privateKey)).append('\n');
        yaml.append("  model: Mac15,14\n");
        yaml.append("  volumeOwner:\n    user: admin\n    password: ").append(quote("file:" + volumeOwnerPasswordFile)).append('\n');
        yaml.append("groups:\n  studio-512:\n    memoryGb: 512\n  studio-256:\n    memoryGb: 256\n");
        yaml.append("clusters:\n  - name: ").append(DemoEnvironment.CLUSTER).append('\n');
        yaml.append("    macosVersion: \"").append(DemoEnvironment.TARGET_MACOS).append("\"\n");
        yaml.append("    topology:\n      kind: ").append(fullMesh ? "full-mesh" : "explicit").append("\n      links:\n");
        for (String link : links) {
            yaml.append("        - ").append(link).append('\n');
        }
        // The small model `macfleet demo` generates and deploys (DemoNode.model): `macfleet node deploy llm-a` redeploys it.
        yaml.append("    inference:\n      model: ").append(quote(directory.getParent().resolve("models").resolve("macfleet-tiny-f32.gguf").toString()))
                .append("\n      parallelism: tensor\n      port: 8080\n");
        yaml.append("machines:\n");
        boolean first = true;
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append('\n');
            yaml.append("    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append('\n');
            yaml.append("      hostKey: ").append(quote(DemoEnvironment.hostKeyFingerprint(fleet, mac.name()))).append('\n');
            yaml.append("    serialNumber: ").append(mac.spec().serialNumber()).append('\n');
            yaml.append("    cluster: ").append(DemoEnvironment.CLUSTER).append('\n');
            yaml.append("    groups: [studio-").append(mac.spec().memoryGb()).append("]\n");
            if (first) {
                yaml.append("    role: coordinator\n");
                first = false;
            }
            yaml.append("    labels:\n      simulated: \"true\"\n");
        }
        Path file = directory.resolve("macfleet.yaml");
        Files.writeString(file, yaml.toString());
        return file;
    }

    private static String quote(String value) {
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
