package io.macfleet.osupdate;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.PortPlan;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.Jdbc;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Topology;
import io.macfleet.mdm.nanohub.NanoHubClient;
import io.macfleet.secrets.SecretReference;
import io.macfleet.simulator.LinkSpeed;
import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.simulator.mdm.MdmDevices;
import io.macfleet.simulator.mdm.SimulatedMacHost;
import io.macfleet.simulator.mdm.SimulatedNanoHub;
import io.macfleet.simulator.mdm.UpdateTimings;
import io.macfleet.ssh.SshSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A 4-Mac cluster on macOS 26.1 (25B78), RDMA on, cabled as a full mesh, each enrolled in a simulated NanoHUB with its
 * bootstrap token escrowed and the inference daemon loaded; an H2 database with the inventory (and its mdm: section)
 * applied; the campaign engine wired by hand with the MDM method and short phase deadlines.
 */
final class CampaignFixture implements AutoCloseable {
    static final String CLUSTER = "llm-a";
    static final String LABEL = OsUpdateCampaigns.DEFAULT_SERVICE_LABEL;
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"),
            Logger.getLogger("com.hierynomus"));
    private static final String PLIST = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>Label</key>
                <string>%s</string>
                <key>ProgramArguments</key>
                <array>
                    <string>/bin/sleep</string>
                    <string>600</string>
                </array>
                <key>RunAtLoad</key>
                <true/>
                <key>KeepAlive</key>
                <true/>
            </dict>
            </plist>
            """;

    final Path directory;
    final SimulatedFleet fleet;
    /** The simulated NanoHUB, or null when the cluster is enrolled in a real one. */
    final SimulatedNanoHub hub;
    /** Where the Macs are enrolled (the simulated NanoHUB or the real one). */
    MdmDevices devices;
    final AgroalDataSource dataSource;
    final DesiredStateStore desiredState;
    final FactsService facts;
    final ClusterCabling cabling;
    final NanoHubClient client;
    final List<String> machines;
    Path inventory;
    final SshSettings ssh = SshSettings.defaults("test");
    // Generous: the simulated Macs take milliseconds per phase, but a shared, loaded test machine can stall a reboot for seconds.
    final PhaseDeadlines deadlines = PhaseDeadlines.all(Duration.ofSeconds(20));

    private CampaignFixture(Path directory, SimulatedFleet fleet, SimulatedNanoHub hub, AgroalDataSource dataSource, NanoHubClient client,
                            List<String> machines) {
        this.directory = directory;
        this.fleet = fleet;
        this.hub = hub;
        this.dataSource = dataSource;
        this.desiredState = new DesiredStateStore(dataSource);
        this.facts = new FactsService(dataSource, desiredState);
        this.cabling = new ClusterCabling(facts);
        this.client = client;
        this.machines = machines;
    }

    static CampaignFixture start(Path directory, String baseAddress) throws IOException {
        return start(directory, baseAddress, "jdbc:h2:mem:campaign-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    static CampaignFixture start(Path directory, String baseAddress, String databaseUrl) throws IOException {
        SimulatedNanoHub hub = new SimulatedNanoHub("127.0.0.1", 0, "hub-key", UpdateTimings.forTests());
        return start(directory, baseAddress, databaseUrl, hub, hub, hub.url(), "hub-key");
    }

    /** The same cluster enrolled in another MDM server (the real NanoHUB: {@code devices} speak the check-in protocol to it). */
    static CampaignFixture start(Path directory, String baseAddress, MdmDevices devices, java.net.URI mdmUrl, String apiKeyText) throws IOException {
        return start(directory, baseAddress, "jdbc:h2:mem:campaign-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", null, devices, mdmUrl, apiKeyText);
    }

    private static CampaignFixture start(Path directory, String baseAddress, String databaseUrl, SimulatedNanoHub hub, MdmDevices devices,
                                         java.net.URI mdmUrl, String apiKeyText) throws IOException {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
        KeyPair key = SshKeys.generate();
        Path privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "campaign-test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic())
                .baseAddress(baseAddress).rebootDuration(Duration.ofMillis(300));
        List<String> names = new ArrayList<>();
        for (int index = 1; index <= 4; index++) {
            String name = String.format("studio-%02d", index);
            names.add(name);
            builder.machine(MacSpec.macStudioM3Ultra(name, 512), MacosRelease.of("26.1"), true);
        }
        SimulatedFleet fleet = builder.build().start();
        for (Topology.Link link : PortPlan.fullMesh("test", names).cables()) {
            fleet.cabling().plug(link.first().toString(), link.second().toString(), LinkSpeed.TB5);
        }
        for (SimulatedMac mac : fleet.machines()) {
            mac.setMdmEnrolled(true);
            mac.setBootstrapTokenEscrowed(true);
            mac.setThunderboltBridgeActive(false);
            devices.enroll(mac.spec().hardwareUuid(), new SimulatedMacHost(fleet, mac));
            Path plist = mac.resolve("/Library/LaunchDaemons/" + LABEL + ".plist");
            Files.createDirectories(plist.getParent());
            Files.writeString(plist, PLIST.formatted(LABEL));
            mac.launchd().bootstrap("/Library/LaunchDaemons/" + LABEL + ".plist");
        }
        Path apiKey = directory.resolve("nanohub-key");
        Files.writeString(apiKey, apiKeyText + "\n");
        AgroalDataSource dataSource = Database.open(new DatabaseSettings(databaseUrl, databaseUrl.startsWith("jdbc:postgresql") ? "postgres" : "sa", null));
        Path inventory = writeInventory(directory, fleet, privateKey, mdmUrl, apiKey);
        NanoHubClient client = new NanoHubClient(mdmUrl, SecretReference.of("file:" + apiKey), Duration.ofSeconds(5));
        CampaignFixture fixture = new CampaignFixture(directory, fleet, hub, dataSource, client, names);
        fixture.devices = devices;
        fixture.inventory = inventory;
        LoadResult result = InventoryLoader.load(inventory);
        if (!result.valid()) {
            throw new IllegalStateException("test inventory is invalid: " + result.errors());
        }
        fixture.desiredState.apply(result.inventory(), "test", inventory.toString());
        return fixture;
    }

    private static Path writeInventory(Path directory, SimulatedFleet fleet, Path privateKey, java.net.URI mdmUrl, Path apiKey) throws IOException {
        StringBuilder yaml = new StringBuilder();
        yaml.append("mdm:\n  url: \"").append(mdmUrl).append("\"\n  apiToken: \"file:").append(apiKey).append("\"\n");
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: \"file:").append(privateKey).append("\"\n");
        yaml.append("  model: Mac15,14\n");
        yaml.append("clusters:\n  - name: ").append(CLUSTER).append("\n    macosVersion: \"26.2\"\n    topology:\n      kind: full-mesh\n");
        yaml.append("machines:\n");
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append("\n    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append("\n      hostKey: \"").append(fleet.hostKeyFingerprint(mac.name())).append("\"\n");
            yaml.append("    serialNumber: ").append(mac.spec().serialNumber()).append('\n');
            yaml.append("    memoryGb: ").append(mac.spec().memoryGb()).append('\n');
            yaml.append("    cluster: ").append(CLUSTER).append('\n');
            yaml.append("    mdm:\n      enrollmentId: \"").append(mac.spec().hardwareUuid()).append("\"\n");
        }
        Path inventory = directory.resolve("inventory");
        Files.createDirectories(inventory);
        Files.writeString(inventory.resolve("macfleet.yaml"), yaml.toString());
        return inventory;
    }

    MdmUpdateMethod mdm() {
        return new MdmUpdateMethod(client, facts, ssh);
    }

    OsUpdateCampaigns campaigns() {
        return campaigns(StepBoundary.NONE, Duration.ofSeconds(60));
    }

    OsUpdateCampaigns campaigns(StepBoundary boundary, Duration leaseTimeout) {
        return new OsUpdateCampaigns(dataSource, desiredState, facts, cabling, List.of(mdm()),
                new OsUpdateCampaigns.Options(ssh, Duration.ofMillis(40), deadlines, leaseTimeout), boundary);
    }

    static OsUpdateCampaigns.Request to262(boolean withBuild) {
        return OsUpdateCampaigns.Request.of(List.of(CLUSTER), "26.2", withBuild ? Optional.of("25C56") : Optional.empty());
    }

    SimulatedMac mac(String name) {
        return fleet.machine(name);
    }

    String enrollment(String name) {
        return fleet.machine(name).spec().hardwareUuid();
    }

    /** Each Mac's version and build as sw_vers shows them. */
    List<String> releases() {
        return machines.stream().map(name -> mac(name).snapshot().release().version() + " " + mac(name).snapshot().release().build()).toList();
    }

    boolean serving(String name) {
        return mac(name).launchd().pid(LABEL).isPresent();
    }

    long auditCount(String action, String detailLike) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select count(*) from audit_event where action = ? and detail like ?", row -> row.getLong(1), action, detailLike).getFirst());
    }

    /**
     * Watches the cluster every few milliseconds and records each moment a node serves (its inference daemon runs)
     * while the nodes do not all run the same version and build.
     */
    final class MixedVersionWatch implements AutoCloseable {
        final List<String> violations = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean stop;

        MixedVersionWatch() {
            thread = Thread.ofPlatform().daemon().start(() -> {
                while (!stop) {
                    List<String> releases = releases();
                    boolean mixed = releases.stream().distinct().count() > 1;
                    for (String machine : machines) {
                        if (mixed && serving(machine)) {
                            violations.add(machine + " serving while the cluster runs " + releases);
                        }
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join();
        }
    }

    Map<String, Long> counters() {
        return Map.of("declarationChanges", (long) hub.declarationChanges().size(), "setChanges", (long) hub.setChanges().size(),
                "assignmentChanges", (long) hub.assignmentChanges().size(), "commands", (long) hub.commands().size());
    }

    @Override
    public void close() {
        if (hub != null) {
            hub.close();
        }
        fleet.close();
        dataSource.close();
    }
}
