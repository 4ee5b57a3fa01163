package io.macfleet.demo;

import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.Scenario;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.sshd.common.util.security.SecurityUtils;

/**
 * What `macfleet demo` runs: a simulated fleet of Mac Studios, the SSH key that opens them and an inventory
 * directory describing them. The simulator's control API reaches the running demo through {@link RunningDemo} (a CDI
 * bean the demo command hands it to); nothing about a demo is static, so tests start several side by side.
 */
public final class DemoEnvironment implements AutoCloseable {
    /** The cluster the demo inventory declares, and the macOS version it targets. */
    public static final String CLUSTER = "llm-a";
    public static final String TARGET_MACOS = "26.2";
    /** The build of {@link #TARGET_MACOS} the demo updates to (every node of a cluster lands on the same build). */
    public static final String TARGET_BUILD = "25C56";
    public static final String DEMO_MACOS = "26.1";
    public static final String VOLUME_OWNER_PASSWORD = "macfleet-demo";

    /** The most Macs a demo runs; they form clusters of {@value #CLUSTER_SIZE} (the last one smaller). */
    public static final int MAXIMUM_MACHINES = 250;
    public static final int CLUSTER_SIZE = 4;

    /** How to start the demo. */
    /** @param nanoHub a real NanoHUB binary to enroll the Macs in (`--nanohub`), or null for the simulated NanoHUB */
    public record Options(Path directory, int machines, String baseAddress, int sshPort, Duration rebootDuration, Path scenario, Path nanoHub) {
        public Options {
            if (machines < 2 || machines > MAXIMUM_MACHINES) {
                // One Mac makes no cluster: a full mesh needs 2 to 6.
                throw new IllegalArgumentException("--machines must be between 2 and " + MAXIMUM_MACHINES + ", got " + machines);
            }
            if (nanoHub != null && !Files.isExecutable(nanoHub)) {
                throw new IllegalArgumentException("--nanohub " + nanoHub + " is not an executable file (NanoHUB's binary, e.g. ../shared/tools/nanohub/bin/nanohub)");
            }
        }

        public Options(Path directory, int machines, String baseAddress, int sshPort, Duration rebootDuration, Path scenario) {
            this(directory, machines, baseAddress, sshPort, rebootDuration, scenario, null);
        }
    }

    private final Options options;
    private final SimulatedFleet fleet;
    private final Path privateKey;
    private final Path inventoryDirectory;
    private final List<String> links;
    /** The MDM server and its devices, closed with the demo (the simulated NanoHUB, or a real one with its Macs). */
    private final List<AutoCloseable> mdm = new CopyOnWriteArrayList<>();
    private final List<Runnable> closeActions = new CopyOnWriteArrayList<>();

    private DemoEnvironment(Options options, SimulatedFleet fleet, Path privateKey, Path inventoryDirectory, List<String> links) {
        this.options = options;
        this.fleet = fleet;
        this.privateKey = privateKey;
        this.inventoryDirectory = inventoryDirectory;
        this.links = links;
    }

    /** Runs {@code action} when this demo is closed (e.g. {@link RunningDemo} forgets it). */
    void onClose(Runnable action) {
        closeActions.add(action);
    }

    public static DemoEnvironment start(Options options) throws IOException {
        Path directory = options.directory().toAbsolutePath();
        Files.createDirectories(directory);
        // Under secrets/: the only place (besides ~/.ssh) an inventory may name a secret file (docs/security.md).
        Path privateKey = directory.resolve("secrets").resolve("id_ecdsa_macfleet_demo");
        PublicKey publicKey = loadOrCreateKey(privateKey);
        Path passwordFile = directory.resolve("secrets").resolve("volume-owner-password");
        writeSecret(passwordFile, VOLUME_OWNER_PASSWORD);

        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state"))
                .authorizedKey(publicKey)
                .baseAddress(options.baseAddress())
                .basePort(options.sshPort())
                .rebootDuration(options.rebootDuration())
                .latestRelease(TARGET_MACOS)
                .volumeOwner("admin", VOLUME_OWNER_PASSWORD);
        int bigOnes = (options.machines() + 1) / 2;
        for (int i = 1; i <= options.machines(); i++) {
            builder.machine(MacSpec.macStudioM3Ultra(name(i, options.machines()), i <= bigOnes ? 512 : 256), MacosRelease.of(DEMO_MACOS), false);
        }
        SimulatedFleet fleet = builder.build().start();
        List<String> links;
        Map<String, List<String>> clusters = clusters(fleet.machines().stream().map(SimulatedMac::name).toList());
        try {
            links = new ArrayList<>();
            for (List<String> members : clusters.values()) {
                links.addAll(fleet.cableFullMesh(members));
            }
            if (options.scenario() != null) {
                Scenario.load(options.scenario()).applyTo(fleet);
            }
        } catch (IOException | RuntimeException e) {
            fleet.close();
            throw e;
        }
        // The fleet's MDM server: a simulated NanoHUB with every Mac enrolled (as through Automated Device Enrollment, bootstrap
        // token escrowed), so `macfleet os-update apply llm-a --to 26.2 --build 25C56 --yes` updates them through declarations.
        Path mdmKeyFile = directory.resolve("secrets").resolve("nanohub-api-key");
        writeSecret(mdmKeyFile, java.util.UUID.randomUUID().toString());
        io.macfleet.simulator.mdm.UpdateTimings timings = new io.macfleet.simulator.mdm.UpdateTimings(Duration.ofMillis(250), Duration.ofSeconds(3),
                Duration.ofSeconds(3), Duration.ofSeconds(20));
        List<AutoCloseable> mdmParts = new ArrayList<>();
        io.macfleet.simulator.mdm.MdmDevices devices;
        String mdmUrl;
        try {
            if (options.nanoHub() == null) {
                io.macfleet.simulator.mdm.SimulatedNanoHub hub = new io.macfleet.simulator.mdm.SimulatedNanoHub("127.0.0.1", 0, Files.readString(mdmKeyFile), timings);
                mdmParts.add(hub);
                devices = hub;
                mdmUrl = hub.url().toString();
            } else {
                // The real server (--nanohub): its CA issues the Macs' identity certificates; they speak Apple's check-in
                // protocol to it. File storage under the demo directory; no push certificate, so pushes fail and the
                // Macs find their commands at their next check-in.
                io.macfleet.simulator.mdm.MdmCertificateAuthority authority = io.macfleet.simulator.mdm.MdmCertificateAuthority.create("macfleet demo MDM CA");
                Path serverDirectory = directory.resolve("nanohub");
                deleteRecursively(serverDirectory.resolve("db"));
                io.macfleet.simulator.mdm.NanoHubProcess server = io.macfleet.simulator.mdm.NanoHubProcess.start(options.nanoHub().toAbsolutePath(),
                        serverDirectory, Files.readString(mdmKeyFile).strip(), authority, "file", null);
                mdmParts.add(server);
                io.macfleet.simulator.mdm.CheckInDevices checkIn = new io.macfleet.simulator.mdm.CheckInDevices(server.serverUrl(), server.checkInUrl(),
                        io.macfleet.simulator.mdm.NanoHubProcess.CERTIFICATE_HEADER, authority, timings);
                mdmParts.addFirst(checkIn);
                devices = checkIn;
                mdmUrl = server.url().toString();
            }
            for (SimulatedMac mac : fleet.machines()) {
                mac.setMdmEnrolled(true);
                mac.setBootstrapTokenEscrowed(true);
                devices.enroll(mac.spec().hardwareUuid(), new io.macfleet.simulator.mdm.SimulatedMacHost(fleet, mac));
            }
        } catch (IOException | RuntimeException e) {
            closeAll(mdmParts);
            fleet.close();
            throw e;
        }
        Path inventory = directory.resolve("inventory");
        DemoInventory.write(inventory, fleet, privateKey, passwordFile, clusters, links, mdmUrl, mdmKeyFile);
        DemoEnvironment demo = new DemoEnvironment(options, fleet, privateKey, inventory, links);
        demo.mdm.addAll(mdmParts);
        return demo;
    }

    static String name(int index, int count) {
        return count >= 100 ? String.format("studio-%03d", index) : String.format("studio-%02d", index);
    }

    /**
     * The demo's clusters: {@value #CLUSTER_SIZE} Macs each, fully meshed (the last cluster smaller), named llm-a, llm-b,
     * ... llm-z, llm-aa, ...; the first is {@link #CLUSTER}. A single Mac left over joins the cluster before it (5 Macs,
     * still a full mesh), since a cluster of one is no mesh.
     */
    static Map<String, List<String>> clusters(List<String> machines) {
        Map<String, List<String>> clusters = new LinkedHashMap<>();
        int start = 0;
        while (start < machines.size()) {
            int end = machines.size() - (start + CLUSTER_SIZE) == 1 ? machines.size() : Math.min(machines.size(), start + CLUSTER_SIZE);
            clusters.put(clusterName(clusters.size()), List.copyOf(machines.subList(start, end)));
            start = end;
        }
        return clusters;
    }

    static String clusterName(int index) {
        StringBuilder letters = new StringBuilder();
        int remaining = index;
        do {
            letters.insert(0, (char) ('a' + remaining % 26));
            remaining = remaining / 26 - 1;
        } while (remaining >= 0);
        return "llm-" + letters;
    }

    private static PublicKey loadOrCreateKey(Path privateKey) throws IOException {
        if (Files.isRegularFile(privateKey)) {
            try (var in = Files.newInputStream(privateKey)) {
                var pairs = SecurityUtils.loadKeyPairIdentities(null, () -> privateKey.toString(), in, null);
                if (pairs != null && pairs.iterator().hasNext()) {
                    return pairs.iterator().next().getPublic();
                }
            } catch (java.security.GeneralSecurityException | RuntimeException e) {
                // Unreadable: replaced below by a fresh key.
            }
        }
        KeyPair pair = SshKeys.generate();
        SshKeys.write(pair, privateKey, "macfleet-demo");
        return pair.getPublic();
    }

    private static void writeSecret(Path file, String value) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, value);
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException e) {
            // Not POSIX: nothing to restrict.
        }
    }

    /** SHA256 fingerprint of a machine's host key, as OpenSSH prints it. */
    public static String hostKeyFingerprint(SimulatedFleet fleet, String machine) {
        return fleet.hostKeyFingerprint(machine);
    }

    /**
     * `macfleet demo reset`: every Mac as delivered (macOS {@value #DEMO_MACOS}, RDMA off, Thunderbolt Bridge on, no faults,
     * fresh file system, enrolled again in the demo's MDM server as through Automated Device Enrollment) and the cables as at start (each cluster a full mesh); the scenario file is not applied again.
     *
     * @return what was done, in a sentence
     */
    public synchronized String reset() {
        for (io.macfleet.simulator.Cable cable : fleet.cabling().all()) {
            fleet.cabling().unplug(cable.a());
        }
        List<String> names = fleet.machines().stream().map(SimulatedMac::name).toList();
        try (var workers = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (String name : names) {
                workers.submit(() -> {
                    fleet.restoreAsDelivered(name, MacosRelease.of(DEMO_MACOS));
                    // Erased, a Mac in Automated Device Enrollment enrolls again at Setup Assistant and escrows its
                    // bootstrap token: the demo's Macs stay enrolled, so an OS update after a reset goes through MDM.
                    SimulatedMac mac = fleet.machine(name);
                    mac.setMdmEnrolled(true);
                    mac.setBootstrapTokenEscrowed(true);
                });
            }
        }
        int cables = 0;
        for (List<String> members : clusters(names).values()) {
            cables += fleet.cableFullMesh(members).size();
        }
        return names.size() + " Macs restored as delivered (macOS " + DEMO_MACOS + ", RDMA off, Thunderbolt Bridge on, no faults, enrolled in MDM again) and "
                + cables + " Thunderbolt 5 cables plugged as at start";
    }

    private String mdmServerName() {
        return options.nanoHub() == null ? "the simulated MDM server" : "the real NanoHUB (" + options.nanoHub() + ")";
    }

    private int clusterCount() {
        return (fleet.machines().size() + CLUSTER_SIZE - 1) / CLUSTER_SIZE;
    }

    public SimulatedFleet fleet() {
        return fleet;
    }

    public Path privateKey() {
        return privateKey;
    }

    /** The inventory directory `macfleet demo` wrote: apply it with the foundation's inventory loader. */
    public Path inventoryDirectory() {
        return inventoryDirectory;
    }

    public List<String> links() {
        return links;
    }

    public Options options() {
        return options;
    }

    /** What `macfleet demo --as-delivered` prints when it is up: the Macs stay as delivered, for a person to provision. */
    public String summary(int httpPort) {
        return summary(httpPort, false);
    }

    /**
     * What `macfleet demo` prints when it is up.
     *
     * @param mainJobFollows the demo goes on to provision and update the first cluster itself (its default)
     */
    public String summary(int httpPort, boolean mainJobFollows) {
        StringBuilder out = new StringBuilder();
        out.append("macfleet demo: ").append(fleet.machines().size()).append(" simulated Mac Studios (M3 Ultra, macOS ")
                .append(DEMO_MACOS).append(", RDMA off), ").append(clusterCount() == 1 ? "cluster " + CLUSTER : clusterCount() + " clusters of up to " + CLUSTER_SIZE + " (" + CLUSTER
                        + " to " + clusterName(clusterCount() - 1) + ")").append(" targeting macOS ").append(TARGET_MACOS).append("\n\n");
        out.append(String.format("  %-11s %-17s %6s  %s%n", "machine", "ssh", "memory", "serial"));
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            out.append(String.format("  %-11s %-17s %4d GB  %s%n", mac.name(), endpoint.host() + ":" + endpoint.port(), mac.spec().memoryGb(),
                    mac.spec().serialNumber()));
        }
        out.append("\n  cables: ").append(links.size()).append(" Thunderbolt 5 (").append(links.size() <= 6 ? String.join(", ", links) : "see the inventory").append(")\n");
        out.append("  inventory:  ").append(inventoryDirectory).append('\n');
        out.append("  SSH key:    ").append(privateKey).append('\n');
        SimulatedFleet.Endpoint first = fleet.endpoint(fleet.machines().iterator().next().name());
        out.append("\nWeb console: http://localhost:").append(httpPort).append("/console\n");
        out.append("\nTry:\n");
        out.append("  ssh -i ").append(privateKey).append(" -p ").append(first.port()).append(" -o StrictHostKeyChecking=no admin@")
                .append(first.host()).append(" system_profiler SPThunderboltDataType\n");
        out.append("  curl -H \"Authorization: Bearer $(cat ").append(options.directory().toAbsolutePath().resolve("api-token"))
                .append(")\" http://localhost:").append(httpPort).append("/api/v1/simulator/machines\n");
        out.append("  macfleet demo fault studio-02 hang            # and: macfleet demo fault studio-02 clear\n");
        out.append("  macfleet demo fault studio-01:2 unplug        # cable faults name a port\n");
        out.append("  macfleet demo recovery studio-02 --enter      # hold the power button: Recovery\n");
        out.append("  macfleet demo recovery studio-02 \"rdma_ctl enable\"\n");
        out.append("  macfleet demo recovery studio-02 reboot\n");
        if (mainJobFollows) {
            out.append("\nNext, macfleet's main job on ").append(CLUSTER).append(": provision it (the demo plays the person at each Mac's Recovery")
                    .append(" Terminal), update macOS to ").append(TARGET_MACOS).append(" through ").append(mdmServerName()).append(", deploy the inference node.\n");
            out.append("To do those steps yourself, as on real Macs: `macfleet demo reset` (every Mac as delivered again), then\n");
            out.append("  MACFLEET_HOME=").append(options.directory().toAbsolutePath()).append(" macfleet provision ").append(CLUSTER)
                    .append("   and   macfleet os-update apply ").append(CLUSTER).append(" --to ").append(TARGET_MACOS).append(" --build ")
                    .append(TARGET_BUILD).append(" --yes\n");
            out.append("\nStop with Ctrl-C.\n");
            return out.toString();
        }
        out.append("\nProvision the cluster from a second shell (the Recovery step for RDMA is walked through in the terminal):\n");
        out.append("  MACFLEET_HOME=").append(options.directory().toAbsolutePath()).append(" macfleet provision ").append(CLUSTER).append('\n');
        out.append("or from the web console: Clusters > ").append(CLUSTER).append(" > Provision ").append(CLUSTER)
                .append("; the run's page shows each Mac's Recovery walkthrough with \"Done, verify now\"\n");
        out.append("\nThen take the cluster from macOS ").append(DEMO_MACOS).append(" to ").append(TARGET_MACOS)
                .append(" in lockstep through ").append(mdmServerName()).append(" (drain, update all four, verify, undrain):\n");
        out.append("  MACFLEET_HOME=").append(options.directory().toAbsolutePath()).append(" macfleet os-update apply ").append(CLUSTER)
                .append(" --to ").append(TARGET_MACOS).append(" --build ").append(MacosRelease.of(TARGET_MACOS).build()).append(" --yes\n");
        out.append("\nStop with Ctrl-C.\n");
        return out.toString();
    }

    @Override
    public void close() {
        closeActions.forEach(Runnable::run);
        closeAll(mdm);
        fleet.close();
    }

    private static void closeAll(List<AutoCloseable> parts) {
        for (AutoCloseable part : parts) {
            try {
                part.close();
            } catch (Exception e) {
                System.err.println("demo: closing " + part.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (var files = Files.walk(path)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
