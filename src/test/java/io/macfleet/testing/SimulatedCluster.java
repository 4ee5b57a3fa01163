package io.macfleet.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.facts.FactsService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.simulator.SimulatedFleet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Simulated Mac Studios (real SSH servers on loopback) for the tests of the running Quarkus service: studio-01 to
 * studio-04 form the cluster {@value #NAME}, cabled as a full mesh; any further machines are in no cluster. The
 * service's own beans are the test's (injected), so {@link #apply} and {@link #gather} take them: the inventory is
 * applied to, and the facts gathered into, the service's database, not the simulation's.
 * <p>
 * Start it in {@code @BeforeAll} and close it in {@code @AfterAll}; each test class gives its own loopback base
 * address so that classes sharing one Quarkus run never share a simulated Mac.
 */
public final class SimulatedCluster implements AutoCloseable {

    public static final String NAME = "llm-a";
    public static final List<String> MEMBERS = List.of("studio-01", "studio-02", "studio-03", "studio-04");
    /** How long one command may take while gathering: generous, the machine is shared with other builds. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

    /** The simulated Macs, to inject faults and change what they answer. */
    public final SimulatedFleet fleet;
    private final SimulatedInventory simulation;

    private SimulatedCluster(SimulatedInventory simulation) {
        this.simulation = simulation;
        this.fleet = simulation.fleet;
    }

    /**
     * Starts {@code machines} simulated Macs (at least the four of the cluster) from {@code baseAddress} on, in a new
     * temporary directory named after {@code purpose}, with the cluster's cables in place.
     */
    public static SimulatedCluster start(String purpose, int machines, String baseAddress) throws IOException {
        if (machines < MEMBERS.size()) {
            throw new IllegalArgumentException("the cluster " + NAME + " needs " + MEMBERS.size() + " machines, got " + machines);
        }
        SimulatedCluster cluster = new SimulatedCluster(SimulatedInventory.start(Files.createTempDirectory("macfleet-" + purpose), machines,
                baseAddress));
        cluster.recable();
        return cluster;
    }

    /**
     * Applies to the service an inventory of every simulated Mac (host keys pinned) and the cluster; {@code memoryGbClaims}
     * makes the inventory claim other amounts of memory than machines have (drift), e.g. {@code Map.of("studio-04", 512)}.
     */
    public void apply(DesiredStateStore store, String actor, Map<String, Integer> memoryGbClaims) throws IOException {
        apply(store, actor, memoryGbClaims, yaml -> yaml);
    }

    /** As {@link #apply(DesiredStateStore, String, Map)}, with the inventory's macfleet.yaml edited first (e.g. an inference section). */
    public void apply(DesiredStateStore store, String actor, Map<String, Integer> memoryGbClaims,
                      java.util.function.UnaryOperator<String> editYaml) throws IOException {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh(NAME, MEMBERS)), memoryGbClaims);
        Path yaml = inventory.resolve("macfleet.yaml");
        java.nio.file.Files.writeString(yaml, editYaml.apply(java.nio.file.Files.readString(yaml)));
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).as("the test inventory's errors").isEmpty();
        store.apply(loaded.inventory(), actor, inventory.toString());
    }

    /** As {@link #apply}, with the inventory's macfleet.yaml changed by {@code edit} first (e.g. to give the cluster a runtime). */
    public void apply(DesiredStateStore store, String actor, java.util.function.UnaryOperator<String> edit) throws IOException {
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh(NAME, MEMBERS)), Map.of());
        Path yaml = inventory.resolve("macfleet.yaml");
        Files.writeString(yaml, edit.apply(Files.readString(yaml)));
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).as("the test inventory's errors").isEmpty();
        store.apply(loaded.inventory(), actor, inventory.toString());
    }

    /** Gathers the cluster's facts over SSH through the service; fails the test when any machine could not be read. */
    public void gather(FactsService facts) {
        assertThat(facts.gather(facts.select(NAME, List.of()), SimulatedInventory.settings(COMMAND_TIMEOUT)).failed())
                .as("machines whose facts could not be gathered").isZero();
    }

    /** Puts every cable of the full mesh back (after a cabling fault). */
    public void recable() {
        simulation.cableFullMesh(MEMBERS);
    }

    /** Every Mac back to its healthy state: faults cleared, RDMA on, Thunderbolt Bridge off, macOS 26.2. */
    public void heal() {
        simulation.heal();
    }

    @Override
    public void close() {
        simulation.close();
    }
}
