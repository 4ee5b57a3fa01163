package io.macfleet.models.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.cabling.ClusterCabling;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeService;
import io.macfleet.facts.SimulatedInventory;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.runtime.InferenceRuntimes;
import io.macfleet.runtime.RuntimeCluster;
import io.macfleet.runtime.RuntimeService;
import io.macfleet.ssh.InMemoryHostKeyStore;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTransport;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * The set-up the placement tests and the benchmark share: simulated Macs cabled as a full mesh with loopback
 * "Thunderbolt" addresses on every cable end, the inventory applied, the facts gathered, and the cluster's machines as
 * {@link RuntimeService#cluster} gives them (rank order, each Mac's address toward each peer), as production does.
 */
final class SimulatedPlacement implements AutoCloseable {
    final SimulatedInventory simulation;
    final RuntimeService runtimes;
    final List<RuntimeCluster.Machine> machines;
    final SshSettings settings;
    final int port;
    final NodeService nodes;

    private SimulatedPlacement(SimulatedInventory simulation, RuntimeService runtimes, List<RuntimeCluster.Machine> machines, SshSettings settings,
                               int port, NodeService nodes) {
        this.nodes = nodes;
        this.simulation = simulation;
        this.runtimes = runtimes;
        this.machines = machines;
        this.settings = settings;
        this.port = port;
    }

    static SimulatedPlacement start(Path directory, int count, String baseAddress) throws Exception {
        SimulatedInventory simulation = SimulatedInventory.start(directory, count, baseAddress);
        List<String> names = java.util.stream.IntStream.rangeClosed(1, count).mapToObj(index -> SimulatedInventory.name(index, count)).toList();
        if (count > 1) {
            simulation.cableFullMesh(names);
        }
        simulation.fleet.assignThunderboltLoopbackAddresses();
        Path inventory = simulation.writeInventory(List.of(SimulatedInventory.ClusterSpec.fullMesh("llm-a", names)), Map.of());
        LoadResult loaded = InventoryLoader.load(inventory);
        assertThat(loaded.errors()).isEmpty();
        simulation.desiredState.apply(loaded.inventory(), "test", inventory.toString());
        SshSettings settings = SimulatedInventory.settings(Duration.ofSeconds(120));
        simulation.facts.gather(simulation.desiredState.machines("llm-a"), settings);
        ClusterCabling cabling = new ClusterCabling(simulation.facts);
        InMemoryHostKeyStore hostKeys = new InMemoryHostKeyStore();
        NodeService nodes = new NodeService(simulation.desiredState, cabling, simulation.facts, hostKeys, event -> {
        }, new NodeDeploymentStore(simulation.dataSource), Clock.systemUTC());
        RuntimeService runtimes = new RuntimeService(simulation.desiredState, nodes, cabling, simulation.facts, hostKeys, event -> {
        }, Clock.systemUTC(), InferenceRuntimes.standard());
        List<RuntimeCluster.Machine> machines = runtimes.cluster("llm-a", Optional.empty(), Optional.empty()).machines();
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        return new SimulatedPlacement(simulation, runtimes, machines, settings, port, nodes);
    }

    SshRun openRun() {
        return new SshTransport(settings, new InMemoryHostKeyStore(), event -> {
        }, Clock.systemUTC()).openRun();
    }

    PlacementEngine.Settings engineSettings(int chunkBytes) {
        return new PlacementEngine.Settings(port, chunkBytes, Duration.ofSeconds(180), 5);
    }

    /** A file of random bytes and its SHA-256, placed as {@code path}. */
    static PlacedFile randomFile(Path directory, String path, long size, long seed) throws IOException {
        Path file = directory.resolve(path.replace('/', '_'));
        MessageDigest digest = sha256();
        Random random = new Random(seed);
        byte[] block = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long written = 0; written < size; written += block.length) {
                random.nextBytes(block);
                int count = (int) Math.min(block.length, size - written);
                out.write(block, 0, count);
                digest.update(block, 0, count);
            }
        }
        return new PlacedFile(file, path, size, HexFormat.of().formatHex(digest.digest()));
    }

    static String sha256(Path file) throws IOException {
        MessageDigest digest = sha256();
        try (var in = Files.newInputStream(file)) {
            byte[] block = new byte[1 << 20];
            int count;
            while ((count = in.read(block)) > 0) {
                digest.update(block, 0, count);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Where a placed file lies in a simulated Mac's file system. */
    Path onMac(String machine, PlacedFile file) {
        return simulation.fleet.machine(machine).resolve(file.remotePath());
    }

    @Override
    public void close() {
        simulation.close();
    }
}
