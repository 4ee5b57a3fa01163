package io.macfleet.demo;

import io.macfleet.runtime.LlamaCppBuilds;
import io.macfleet.runtime.LlamaCppRuntime;
import io.macfleet.runtime.RuntimeDeployer;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What {@code macfleet demo --runtime llama.cpp} does at the end instead of deploying the bundled node: the real
 * llama.cpp programs (built once by .ci/llama-cpp.sh) deployed to the demo cluster's four simulated Macs, with
 * llama-server on the head and a ggml-rpc-server on each other Mac bound to its Thunderbolt loopback address.
 */
public final class DemoLlamaCpp {

    private DemoLlamaCpp() {
    }

    /** The endpoint and the sentence that says what serves there (the demo's last line). */
    public record Serving(String endpoint, String sentence) {
    }

    /** The demo cluster switched to llama.cpp and deployed; what serves, or empty after saying why not. */
    public static Optional<Serving> deploy(RuntimeService runtimes, DesiredStateStore desiredState, ClusterCabling cabling, SimulatedFleet fleet,
                                          Path inventoryDirectory, String cluster, Path model, PrintWriter out) {
        try {
            Path build = LlamaCppBuilds.buildWithScript(out);
            fleet.assignThunderboltLoopbackAddresses();
            Path file = inventoryDirectory.resolve("macfleet.yaml");
            Files.writeString(file, withLlamaCpp(Files.readString(file), cluster, build));
            LoadResult loaded = InventoryLoader.load(inventoryDirectory);
            if (!loaded.valid()) {
                throw new IllegalStateException("the demo inventory with llama.cpp is invalid: " + loaded.errors());
            }
            desiredState.apply(loaded.inventory(), Actors.DEMO, inventoryDirectory.toString());
            SshSettings settings = SshSettings.defaults(Actors.DEMO).withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(Duration.ofSeconds(60)));
            // The Thunderbolt addresses are read from the facts, as on real Macs.
            cabling.cluster(cluster, Optional.of(settings));
            out.println("Deploying llama.cpp (" + build + ") to the 4 simulated Macs of " + cluster + " ...");
            out.flush();
            RuntimeDeployer.Outcome outcome = runtimes.deploy(cluster, Optional.of(model), settings, NodeDeployer.Listener.NONE);
            out.println(outcome.summary());
            List<RuntimeService.DaemonStatus> daemons = runtimes.status(cluster, settings);
            List<RuntimeService.DaemonStatus> rpc = daemons.stream().filter(daemon -> daemon.label().equals(LlamaCppRuntime.RPC_LABEL) && daemon.ready()).toList();
            String head = daemons.stream().filter(daemon -> daemon.label().equals(LlamaCppRuntime.SERVER_LABEL) && daemon.ready())
                    .map(RuntimeService.DaemonStatus::machine).findFirst().orElseThrow(() -> new IllegalStateException("llama-server does not answer"));
            out.println();
            out.println("  curl -s " + outcome.endpoint() + "/chat/completions -H 'Content-Type: application/json' \\");
            out.println("    -d '{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}'");
            out.println();
            String sentence = (cluster + ": " + daemons.stream().map(RuntimeService.DaemonStatus::machine).distinct().count()
                    + " simulated Macs serving through llama-server on " + head + " with layers on " + rpc.size() + " ggml-rpc-servers ("
                    + String.join(", ", rpc.stream().map(daemon -> daemon.machine() + " " + daemon.transport().orElse("?")).toList())
                    + ") at " + outcome.endpoint());
            out.flush();
            return Optional.of(new Serving(outcome.endpoint(), sentence));
        } catch (IOException | RuntimeException e) {
            out.println("llama.cpp was not deployed: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            out.flush();
            return Optional.empty();
        }
    }

    /** The demo inventory's text with the cluster's inference switched to llama.cpp (one thread per process: one host). */
    static String withLlamaCpp(String yaml, String cluster, Path build) {
        int entry = yaml.indexOf("  - name: " + cluster + "\n");
        int inference = entry < 0 ? -1 : yaml.indexOf("    inference:\n", entry);
        if (inference < 0) {
            throw new IllegalStateException("the demo inventory has no inference section for " + cluster);
        }
        if (yaml.indexOf("      runtime: ", inference) >= 0 && yaml.indexOf("      runtime: ", inference) < yaml.indexOf("\n  - ", inference + 1)) {
            return yaml;
        }
        int after = inference + "    inference:\n".length();
        return yaml.substring(0, after) + "      runtime: llama.cpp\n      settings:\n        build: \"" + build + "\"\n        threads: 1\n"
                + yaml.substring(after);
    }
}
