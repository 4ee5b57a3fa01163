package io.macfleet.facts;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.cabling.PortPlan;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.Cable;
import io.macfleet.simulator.LinkSpeed;
import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.demo.DemoEnvironment;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.SshSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Simulated Mac Studios (real SSH servers on loopback), an H2 database, and an applied inventory describing
 * them: what the facts and live cabling tests share. Machines are studio-01.. with RDMA on, macOS 26.2,
 * odd ones 512 GB, even ones 256 GB, Thunderbolt Bridge off.
 */
public final class SimulatedInventory implements AutoCloseable {

    /** A cluster of the inventory; {@code explicitLinks} null for a full mesh. */
    public record ClusterSpec(String name, String macosVersion, List<String> machines, List<String> explicitLinks) {
        public static ClusterSpec fullMesh(String name, List<String> machines) {
            return new ClusterSpec(name, "26.2", machines, null);
        }
    }

    // Held so the level settings are not garbage-collected with the loggers.
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"),
            Logger.getLogger("com.hierynomus"));

    public final SimulatedFleet fleet;
    public final AgroalDataSource dataSource;
    public final DesiredStateStore desiredState;
    public final FactsService facts;
    private final Path directory;
    private final Path privateKey;

    private SimulatedInventory(SimulatedFleet fleet, AgroalDataSource dataSource, Path directory, Path privateKey) {
        this.fleet = fleet;
        this.dataSource = dataSource;
        this.desiredState = new DesiredStateStore(dataSource);
        this.facts = new FactsService(dataSource, desiredState);
        this.directory = directory;
        this.privateKey = privateKey;
    }

    public static SimulatedInventory start(Path directory, int machines) throws IOException {
        return start(directory, machines, "127.0.0.11");
    }

    public static SimulatedInventory start(Path directory, int machines, String baseAddress) throws IOException {
        return start(directory, machines, baseAddress, new DatabaseSettings("jdbc:h2:mem:facts-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", null));
    }

    /** The same on a database of the caller's (e.g. a test's PostgreSQL server); the schema is migrated. */
    public static SimulatedInventory start(Path directory, int machines, String baseAddress, DatabaseSettings database) throws IOException {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
        KeyPair key = SshKeys.generate();
        Path privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "facts-test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic()).baseAddress(baseAddress);
        for (int index = 1; index <= machines; index++) {
            builder.machine(MacSpec.macStudioM3Ultra(name(index, machines), index % 2 == 1 ? 512 : 256), MacosRelease.of("26.2"), true);
        }
        SimulatedFleet fleet = builder.build().start();
        AgroalDataSource dataSource = Database.open(database);
        SimulatedInventory simulation = new SimulatedInventory(fleet, dataSource, directory, privateKey);
        // Prepared for RDMA as provisioning leaves them: the simulator starts with the Thunderbolt Bridge on, as macOS does.
        simulation.heal();
        return simulation;
    }

    /** The private key every simulated Mac accepts (OpenSSH format; other SSH clients use it too, e.g. a benchmark's Ansible). */
    public Path privateKey() {
        return privateKey;
    }

    public static String name(int index, int count) {
        return count >= 100 ? String.format("studio-%03d", index) : String.format("studio-%02d", index);
    }

    /** SSH settings for tests: pinned host keys only, short limits. */
    public static SshSettings settings(Duration commandTimeout) {
        return SshSettings.defaults("test").withParallelism(16)
                .withLimits(new ExecutionLimits(Duration.ofSeconds(5), commandTimeout, 1024 * 1024));
    }

    /** Writes and applies an inventory of every simulated machine (host keys pinned) and these clusters. */
    public void apply(List<ClusterSpec> clusters, Map<String, Integer> memoryGbOverrides) throws IOException {
        Path inventory = writeInventory(clusters, memoryGbOverrides);
        LoadResult result = InventoryLoader.load(inventory);
        if (!result.valid()) {
            throw new IllegalStateException("test inventory is invalid: " + result.errors());
        }
        desiredState.apply(result.inventory(), "test", inventory.toString());
    }

    /** Writes an inventory directory of every simulated machine (host keys pinned) and these clusters. */
    public Path writeInventory(List<ClusterSpec> clusters, Map<String, Integer> memoryGbOverrides) throws IOException {
        StringBuilder yaml = new StringBuilder();
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: \"file:").append(privateKey).append("\"\n");
        yaml.append("  model: Mac15,14\n");
        if (!clusters.isEmpty()) {
            yaml.append("clusters:\n");
        }
        for (ClusterSpec cluster : clusters) {
            yaml.append("  - name: ").append(cluster.name()).append("\n    macosVersion: \"").append(cluster.macosVersion()).append("\"\n");
            yaml.append("    topology:\n      kind: ").append(cluster.explicitLinks() == null ? "full-mesh" : "explicit").append('\n');
            if (cluster.explicitLinks() != null) {
                yaml.append("      links:\n");
                cluster.explicitLinks().forEach(link -> yaml.append("        - \"").append(link).append("\"\n"));
            }
        }
        yaml.append("machines:\n");
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append("\n    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append("\n      hostKey: \"")
                    .append(DemoEnvironment.hostKeyFingerprint(fleet, mac.name())).append("\"\n");
            yaml.append("    serialNumber: ").append(mac.spec().serialNumber()).append('\n');
            yaml.append("    memoryGb: ").append(memoryGbOverrides.getOrDefault(mac.name(), mac.spec().memoryGb())).append('\n');
            clusters.stream().filter(cluster -> cluster.machines().contains(mac.name())).findFirst()
                    .ifPresent(cluster -> yaml.append("    cluster: ").append(cluster.name()).append('\n'));
        }
        Path inventory = directory.resolve("inventory-" + UUID.randomUUID());
        Files.createDirectories(inventory);
        Files.writeString(inventory.resolve("macfleet.yaml"), yaml.toString());
        return inventory;
    }

    /** Removes every cable, then cables the machines as macfleet's port plan for a full mesh says (ports 2 to 6). */
    public void cableFullMesh(List<String> machines) {
        for (Cable cable : fleet.cabling().all()) {
            fleet.cabling().unplug(cable.a());
        }
        for (Topology.Link link : PortPlan.fullMesh("test", machines).cables()) {
            fleet.cabling().plug(link.first().toString(), link.second().toString(), LinkSpeed.TB5);
        }
    }

    /** Every machine back to its healthy state: faults cleared, RDMA on, bridge off, macOS 26.2. */
    public void heal() {
        for (SimulatedMac mac : fleet.machines()) {
            mac.faults().clear();
            mac.setRdmaEnabled(true);
            mac.setThunderboltBridgeActive(false);
            mac.setRelease(MacosRelease.of("26.2"));
        }
    }

    @Override
    public void close() {
        fleet.close();
        dataSource.close();
        forgetSecurityProvidersOfQuarkusTests();
    }

    /**
     * SSH code running inside a Quarkus test registers BouncyCastle from the Quarkus class loader in the JVM-wide
     * provider list; plain tests that run later in the same JVM would then get keys of classes they cannot cast
     * (BC15EdDSAPublicKey is not their EdDSAPublicKey). Such a provider is replaced, at the same position, by the
     * same provider class from the application class loader: later Quarkus tests that look "BC" up by name still
     * find one, and plain tests get classes of their own loader.
     */
    static void forgetSecurityProvidersOfQuarkusTests() {
        java.security.Provider[] providers = java.security.Security.getProviders();
        for (int index = 0; index < providers.length; index++) {
            java.security.Provider provider = providers[index];
            ClassLoader loader = provider.getClass().getClassLoader();
            if (loader == null || !loader.getClass().getName().startsWith("io.quarkus.")) {
                continue;
            }
            java.security.Security.removeProvider(provider.getName());
            try {
                Object replacement = Class.forName(provider.getClass().getName(), true, ClassLoader.getSystemClassLoader())
                        .getDeclaredConstructor().newInstance();
                java.security.Security.insertProviderAt((java.security.Provider) replacement, index + 1);
            } catch (ReflectiveOperationException | RuntimeException e) {
                // Not on the application class path: leaving it out is still better than a provider of the wrong loader.
            }
        }
    }
}
