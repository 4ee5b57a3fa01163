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
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

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
}
