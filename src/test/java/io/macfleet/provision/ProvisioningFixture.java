package io.macfleet.provision;

import io.agroal.api.AgroalDataSource;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.cabling.PortPlan;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.Jdbc;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.InventoryLoader;
import io.macfleet.inventory.LoadResult;
import io.macfleet.inventory.Topology;
import io.macfleet.simulator.LinkSpeed;
import io.macfleet.simulator.MacSpec;
import io.macfleet.simulator.MacosRelease;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A fresh simulated cluster as it comes out of the box (RDMA off, Thunderbolt Bridge on, default power settings,
 * sshd allowing passwords), enrolled in an MDM server that supports the bootstrap token, cabled as a full mesh on the
 * port plan; an H2 database with the inventory applied; the provisioning service wired by hand.
 */
final class ProvisioningFixture implements AutoCloseable {

    static final String CLUSTER = "llm-a";
    static final String VOLUME_OWNER_PASSWORD = "s3cret-volume-owner";
    private static final List<Logger> QUIET = List.of(Logger.getLogger("net.schmizz"), Logger.getLogger("org.apache.sshd"),
            Logger.getLogger("com.hierynomus"));

    final Path directory;
    final SimulatedFleet fleet;
    final AgroalDataSource dataSource;
    final DesiredStateStore desiredState;
    final FactsService facts;
    final ProvisioningService service;
    final Path privateKey;
    final Path inventory;
    final List<String> machines;

    private ProvisioningFixture(Path directory, SimulatedFleet fleet, AgroalDataSource dataSource, Path privateKey, Path inventory, List<String> machines) {
        this.directory = directory;
        this.fleet = fleet;
        this.dataSource = dataSource;
        this.desiredState = new DesiredStateStore(dataSource);
        this.facts = new FactsService(dataSource, desiredState);
        this.service = new ProvisioningService(dataSource, facts, new ClusterCabling(facts), Path.of("playbooks"), Clock.systemUTC());
        this.privateKey = privateKey;
        this.inventory = inventory;
        this.machines = machines;
    }

    static ProvisioningFixture start(Path directory, int count, String baseAddress) throws IOException {
        return start(directory, count, baseAddress, "jdbc:h2:mem:provision-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    static ProvisioningFixture start(Path directory, int count, String baseAddress, String databaseUrl) throws IOException {
        QUIET.forEach(logger -> logger.setLevel(Level.WARNING));
        KeyPair key = SshKeys.generate();
        Path privateKey = directory.resolve("id_ecdsa");
        SshKeys.write(key, privateKey, "provision-test");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic())
                .baseAddress(baseAddress).rebootDuration(Duration.ofMillis(300)).volumeOwner("admin", VOLUME_OWNER_PASSWORD);
        List<String> names = new ArrayList<>();
        for (int index = 1; index <= count; index++) {
            String name = String.format("studio-%02d", index);
            names.add(name);
            builder.machine(MacSpec.macStudioM3Ultra(name, index % 2 == 1 ? 512 : 256), MacosRelease.of("26.2"), false);
        }
        SimulatedFleet fleet = builder.build().start();
        for (SimulatedMac mac : fleet.machines()) {
            mac.setMdmEnrolled(true);
        }
        for (Topology.Link link : PortPlan.fullMesh("test", names).cables()) {
            fleet.cabling().plug(link.first().toString(), link.second().toString(), LinkSpeed.TB5);
        }
        AgroalDataSource dataSource = Database.open(new DatabaseSettings(databaseUrl, databaseUrl.startsWith("jdbc:postgresql") ? "postgres" : "sa", null));
        Path inventory = writeInventory(directory, fleet, privateKey);
        ProvisioningFixture fixture = new ProvisioningFixture(directory, fleet, dataSource, privateKey, inventory, names);
        LoadResult result = InventoryLoader.load(inventory);
        if (!result.valid()) {
            throw new IllegalStateException("test inventory is invalid: " + result.errors());
        }
        fixture.desiredState.apply(result.inventory(), "test", inventory.toString());
        return fixture;
    }

    static Path writeInventory(Path directory, SimulatedFleet fleet, Path privateKey) throws IOException {
        Path password = directory.resolve("volume-owner-password");
        Files.writeString(password, VOLUME_OWNER_PASSWORD + "\n");
        StringBuilder yaml = new StringBuilder();
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: \"file:").append(privateKey).append("\"\n");
        yaml.append("  model: Mac15,14\n  volumeOwner:\n    user: admin\n    password: \"file:").append(password).append("\"\n");
        yaml.append("clusters:\n  - name: ").append(CLUSTER).append("\n    macosVersion: \"26.2\"\n    topology:\n      kind: full-mesh\n");
        yaml.append("machines:\n");
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append("\n    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append("\n      hostKey: \"").append(fleet.hostKeyFingerprint(mac.name())).append("\"\n");
            yaml.append("    serialNumber: ").append(mac.spec().serialNumber()).append('\n');
            yaml.append("    memoryGb: ").append(mac.spec().memoryGb()).append('\n');
            yaml.append("    cluster: ").append(CLUSTER).append('\n');
        }
        Path inventory = directory.resolve("inventory");
        Files.createDirectories(inventory);
        Files.writeString(inventory.resolve("macfleet.yaml"), yaml.toString());
        return inventory;
    }

    /** What an operator does for the RDMA step: Recovery, rdma_ctl enable, reboot; returns once SSH answers again. */
    void enableRdmaInRecovery(String machine) throws InterruptedException {
        fleet.enterRecovery(machine);
        SimulatedFleet.RecoveryOutput enabled = fleet.recoveryConsole(machine, "rdma_ctl enable");
        if (enabled.exitCode() != 0) {
            throw new IllegalStateException("rdma_ctl enable failed in Recovery: " + enabled.output());
        }
        fleet.recoveryConsole(machine, "reboot");
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!fleet.sshReachable(machine)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(machine + " did not come back after the Recovery reboot");
            }
            Thread.sleep(20);
        }
    }

    /** Every row of every macfleet table, as text: for before/after comparisons. */
    List<String> databaseSnapshot() {
        return Jdbc.withConnection(dataSource, connection -> {
            List<String> rows = new ArrayList<>();
            List<String> tables = Jdbc.query(connection, "select table_name from information_schema.tables where table_schema = 'PUBLIC'"
                    + " order by table_name", row -> row.getString(1));
            for (String table : tables) {
                rows.addAll(Jdbc.query(connection, "select * from \"" + table + "\"", row -> {
                    StringBuilder line = new StringBuilder(table).append(':');
                    for (int column = 1; column <= row.getMetaData().getColumnCount(); column++) {
                        line.append(' ').append(row.getObject(column));
                    }
                    return line.toString();
                }));
            }
            return rows;
        });
    }

    long auditCount(String machine, String detailLike) {
        return Jdbc.withConnection(dataSource, connection -> Jdbc.query(connection,
                "select count(*) from audit_event where machine = ? and detail like ?", row -> row.getLong(1), machine, detailLike).getFirst());
    }

    List<Map<String, Object>> steps(long runId) {
        return service.run(runId).orElseThrow().steps().stream().map(step -> Map.<String, Object>of("machine", step.machine(), "step", step.step(),
                "status", step.status(), "attempts", step.attempts())).toList();
    }

    @Override
    public void close() {
        fleet.close();
        dataSource.close();
    }
}
