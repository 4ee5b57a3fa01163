package io.macfleet.demo;

import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Writes the inventory (README format) that describes a running demo fleet. */
final class DemoInventory {
    private DemoInventory() {
    }

    /**
     * @param clusters the demo's clusters and their machines, in order
     * @param links every cable, "studio-01:3 <-> studio-02:3"; each cluster lists (pins) its own
     * @param mdmUrl the simulated NanoHUB every Mac is enrolled in
     * @param mdmKeyFile its API key (a secret file)
     */
    static Path write(Path directory, SimulatedFleet fleet, Path privateKey, Path volumeOwnerPasswordFile, Map<String, List<String>> clusters,
                      List<String> links,
                      String mdmUrl, Path mdmKeyFile) throws IOException {
        Files.createDirectories(directory);
        StringBuilder yaml = new StringBuilder();
        yaml.append("# Written by `macfleet demo` for the simulated Mac Studios it runs; rewritten at every start.\n");
        yaml.append("mdm:\n  url: ").append(quote(mdmUrl)).append("\n  apiToken: ").append(quote("file:" + mdmKeyFile)).append('\n');
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: ").append(quote("file:" + privateKey)).append('\n');
        yaml.append("  model: Mac15,14\n");
        yaml.append("  volumeOwner:\n    user: admin\n    password: ").append(quote("file:" + volumeOwnerPasswordFile)).append('\n');
        yaml.append("groups:\n  studio-512:\n    memoryGb: 512\n  studio-256:\n    memoryGb: 256\n");
        yaml.append("clusters:\n");
        Map<String, String> clusterOf = new HashMap<>();
        for (Map.Entry<String, List<String>> cluster : clusters.entrySet()) {
            cluster.getValue().forEach(machine -> clusterOf.put(machine, cluster.getKey()));
            yaml.append("  - name: ").append(cluster.getKey()).append('\n');
            yaml.append("    macosVersion: \"").append(DemoEnvironment.TARGET_MACOS).append("\"\n");
            List<String> own = links.stream().filter(link -> cluster.getValue().contains(link.substring(0, link.indexOf(':')))).toList();
            yaml.append("    topology:\n      kind: full-mesh\n");
            if (!own.isEmpty()) {
                yaml.append("      links:\n");
                own.forEach(link -> yaml.append("        - ").append(link).append('\n'));
            }
            // The small model `macfleet demo` generates, adds to the model catalogue and deploys by name (DemoNode.CATALOGUE_NAME):
            // `macfleet node deploy llm-a` redeploys it.
            yaml.append("    inference:\n      model: ").append(io.macfleet.demo.DemoNode.CATALOGUE_NAME)
                    .append("\n      parallelism: tensor\n      port: 8080\n");
        }
        yaml.append("machines:\n");
        java.util.Set<String> coordinators = new java.util.HashSet<>();
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append('\n');
            yaml.append("    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append('\n');
            yaml.append("      hostKey: ").append(quote(DemoEnvironment.hostKeyFingerprint(fleet, mac.name()))).append('\n');
            yaml.append("    serialNumber: ").append(mac.spec().serialNumber()).append('\n');
            String cluster = clusterOf.get(mac.name());
            yaml.append("    cluster: ").append(cluster).append('\n');
            yaml.append("    groups: [studio-").append(mac.spec().memoryGb()).append("]\n");
            if (coordinators.add(cluster)) {
                yaml.append("    role: coordinator\n");
            }
            yaml.append("    mdm:\n      enrollmentId: ").append(quote(mac.spec().hardwareUuid())).append('\n');
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
