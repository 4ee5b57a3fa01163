package io.macfleet.runtime;

import io.macfleet.deployment.LaunchDaemon;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * A runtime that exists only in test code (with its schema src/test/resources/schemas/runtimes/test-echo.schema.json):
 * adding a runtime is a class and a schema. One /bin/cat daemon per Mac, listening nowhere.
 */
public final class EchoRuntime implements InferenceRuntime {
    static final String LABEL = "io.macfleet.test-echo";

    @Override
    public String name() {
        return "test-echo";
    }

    @Override
    public String description() {
        return "a test runtime";
    }

    @Override
    public List<String> labels() {
        return List.of(LABEL);
    }

    @Override
    public RuntimePlan plan(RuntimeCluster cluster) {
        List<RuntimePlan.MachinePlan> machines = cluster.machines().stream().map(machine -> new RuntimePlan.MachinePlan(machine.name(), machine.rank(),
                "echo", machine.ssh(), List.of(), List.of(), List.of(new RuntimePlan.DaemonPlan(LaunchDaemon.node(LABEL, List.of("/bin/cat"),
                        Map.of("GREETING", String.valueOf(cluster.settings().getOrDefault("greeting", "hi"))), null), 0, List.of(),
                        new RuntimePlan.Probe.Tcp(machine.managementAddress(), 9))))).toList();
        String head = cluster.head().managementAddress();
        return new RuntimePlan(name(), cluster.name(), "echo 1", machines, "http://" + head + ":" + cluster.inference().port() + "/v1",
                new RuntimePlan.Probe.Http(URI.create("http://" + head + ":" + cluster.inference().port() + "/health")), List.of());
    }
}
