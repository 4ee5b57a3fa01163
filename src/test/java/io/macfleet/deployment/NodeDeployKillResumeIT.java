package io.macfleet.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.database.Database;
import io.macfleet.database.DatabaseSettings;
import io.macfleet.database.Jdbc;
import io.macfleet.simulator.SimulatedFleet;
import io.macfleet.simulator.SimulatedMac;
import io.macfleet.simulator.SshKeys;
import io.macfleet.testing.PackagedApplication;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of macfleet in the middle of `macfleet node deploy`: the packaged application deploys to four simulated
 * Macs (in this JVM, slowed down), is killed while it stages, and `macfleet node deploy CLUSTER` (no --model) takes
 * the same deployment up again and ends with the cluster serving.
 */
class NodeDeployKillResumeIT {

    /** How long one macfleet command of this test may take. */
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(300);

    @Test
    void aDeployKilledWhileStagingIsTakenUpAgainAndEndsServing() throws Exception {
        Path directory = Files.createTempDirectory("macfleet-node-kill");
        Path home = directory.resolve("home");
        KeyPair key = SshKeys.generate();
        Path keyFile = directory.resolve("id_ecdsa");
        SshKeys.write(key, keyFile, "node-kill");
        SimulatedFleet.Builder builder = SimulatedFleet.builder(directory.resolve("state")).authorizedKey(key.getPublic()).baseAddress("127.0.0.121");
        for (int i = 1; i <= 4; i++) {
            builder.macStudio("studio-0" + i, 512, "26.2");
        }
        Path model = NodeJars.tinyModel(directory, 11);
        int port = NodeDeploymentTest.freePortRange(8);
        try (SimulatedFleet fleet = builder.build().start()) {
            for (SimulatedMac mac : fleet.machines()) {
                mac.faults().setSlowMillis(300);
            }
            Path inventory = writeInventory(directory, fleet, keyFile, port);
            // The model is made in the test's directory: the models directory (issue 29) is that one.
            Map<String, String> environment = Map.of("MACFLEET_HOME", home.toString(), "MACFLEET_SECRETS_DIRECTORIES", directory.toString(),
                    "MACFLEET_NODE_JAR", NodeJars.nodeJar().toString(), "MACFLEET_MODELS_DIRECTORY", directory.toString());
            PackagedApplication.Result applied = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("apply.log"), "inventory", "apply", inventory.toString());
            assertThat(applied.exitCode()).as(applied.output()).isZero();

            Process first = PackagedApplication.start(environment, directory.resolve("first.log"), "node", "deploy", "llm-a", "--model", model.toString(),
                    "--accept-new-host-keys");
            String url = "jdbc:h2:file:" + home.resolve("db").resolve("macfleet") + ";AUTO_SERVER=TRUE";
            String phaseAtKill;
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (true) {
                boolean staged = fleet.machines().stream().anyMatch(mac -> {
                    try (var files = Files.list(mac.resolve(NodeLayout.NODE_DIRECTORY))) {
                        return files.anyMatch(file -> file.getFileName().toString().endsWith(".jar"));
                    } catch (java.io.IOException e) {
                        return false;
                    }
                });
                if (staged) {
                    first.destroyForcibly();
                    first.waitFor(10, TimeUnit.SECONDS);
                    break;
                }
                assertThat(first.isAlive()).as("ended before it could be killed:\n" + Files.readString(directory.resolve("first.log"))).isTrue();
                assertThat(System.nanoTime()).as("a jar staged within 120 s").isLessThan(deadline);
                Thread.sleep(20);
            }
            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                phaseAtKill = Jdbc.withConnection(database, connection -> Jdbc.query(connection,
                        "select phase from node_deployment", row -> row.getString(1))).getFirst();
            }
            assertThat(phaseAtKill).isEqualTo("staging");
            assertThat(fleet.machines()).allSatisfy(mac -> assertThat(mac.launchd().labels()).doesNotContain(NodeLayout.LABEL));
            for (SimulatedMac mac : fleet.machines()) {
                mac.faults().setSlowMillis(0);
            }

            PackagedApplication.Result second = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("second.log"), "node", "deploy", "llm-a", "--accept-new-host-keys");
            assertThat(second.exitCode()).as(second.output()).isZero();
            assertThat(second.output()).contains("switched 4 ranks", "Endpoint: http://127.0.0.121:" + port + "/v1");
            try (AgroalDataSource database = Database.open(new DatabaseSettings(url, "macfleet", null))) {
                List<String> phases = Jdbc.withConnection(database, connection -> Jdbc.query(connection,
                        "select phase from node_deployment", row -> row.getString(1)));
                assertThat(phases).containsExactly("serving");
            }
            assertThat(NodeDeploymentTest.chat("http://127.0.0.121:" + port + "/v1", home.resolve("node-keys").resolve("llm-a").resolve("api.key")).statusCode()).isEqualTo(200);
            PackagedApplication.Result stopped = PackagedApplication.run(RUN_TIMEOUT, environment, directory.resolve("stop.log"), "node", "stop", "llm-a", "--accept-new-host-keys");
            assertThat(stopped.exitCode()).as(stopped.output()).isZero();
        }
    }

    private static Path writeInventory(Path directory, SimulatedFleet fleet, Path privateKey, int port) throws Exception {
        StringBuilder yaml = new StringBuilder();
        yaml.append("defaults:\n  ssh:\n    user: ").append(fleet.sshUser()).append("\n    privateKey: \"file:").append(privateKey).append("\"\n");
        yaml.append("  model: Mac15,14\n");
        yaml.append("clusters:\n  - name: llm-a\n    macosVersion: \"26.2\"\n    topology:\n      kind: full-mesh\n");
        yaml.append("    inference:\n      parallelism: tensor\n      port: ").append(port).append('\n');
        yaml.append("machines:\n");
        for (SimulatedMac mac : fleet.machines()) {
            SimulatedFleet.Endpoint endpoint = fleet.endpoint(mac.name());
            yaml.append("  - name: ").append(mac.name()).append("\n    address: ").append(endpoint.host()).append('\n');
            yaml.append("    ssh:\n      port: ").append(endpoint.port()).append('\n');
            yaml.append("    memoryGb: ").append(mac.spec().memoryGb()).append('\n');
            yaml.append("    cluster: llm-a\n");
        }
        Path inventory = directory.resolve("inventory");
        Files.createDirectories(inventory);
        Files.writeString(inventory.resolve("macfleet.yaml"), yaml.toString());
        return inventory;
    }
}
