package io.macfleet.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `macfleet demo`'s environment: four meshed Studios, a key that opens them, an inventory that matches. */
class DemoEnvironmentTest {

    @Test
    void resetRestoresTheFleetAsDelivered(@TempDir Path directory) throws Exception {
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 2, "127.0.0.71", 0, Duration.ofSeconds(1), null))) {
            var fleet = demo.fleet();
            var studio1 = fleet.machine("studio-01");
            studio1.setRdmaEnabled(true);
            studio1.setThunderboltBridgeActive(false);
            studio1.setRelease(io.macfleet.simulator.MacosRelease.of("26.2"));
            studio1.setPowerSetting("sleep", "0");
            Files.writeString(studio1.resolve("/etc/ssh/sshd_config.d/010-macfleet.conf"), "PasswordAuthentication no\n");
            fleet.inject(io.macfleet.simulator.FaultStep.machine("studio-02", "hang"));
            fleet.cabling().unplug(fleet.cabling().all().getFirst().a());
            assertThat(fleet.cabling().all()).isEmpty();

            String result = demo.reset();

            assertThat(result).isEqualTo("2 Macs restored as delivered (macOS 26.1, RDMA off, Thunderbolt Bridge on, no faults, enrolled in MDM again) and 1 Thunderbolt 5 cables plugged as at start");
            var state = studio1.snapshot();
            assertThat(state.rdmaEnabled()).isFalse();
            assertThat(state.thunderboltBridgeActive()).isTrue();
            assertThat(state.release().version()).isEqualTo("26.1");
            assertThat(state.mdmEnrolled()).as("ADE enrolls an erased Mac again").isTrue();
            assertThat(state.bootstrapTokenEscrowed()).isTrue();
            assertThat(state.powerSettings()).containsEntry("sleep", "1");
            assertThat(Files.exists(studio1.resolve("/etc/ssh/sshd_config.d/010-macfleet.conf"))).isFalse();
            assertThat(Files.exists(studio1.resolve("/etc/ssh/sshd_config.d/100-macos.conf"))).isTrue();
            assertThat(fleet.machine("studio-02").faults().hang()).isFalse();
            assertThat(fleet.sshReachable("studio-01")).isTrue();
            assertThat(fleet.cabling().all()).hasSize(1);
        }
    }

    @Test
    void largeDemosFormClustersOfFourAndTheirInventoryIsValid(@TempDir Path directory) throws Exception {
        try (DemoEnvironment demo = DemoEnvironment.start(new DemoEnvironment.Options(directory, 10, "127.0.0.61", 0, Duration.ofSeconds(1), null))) {
            io.macfleet.inventory.LoadResult loaded = io.macfleet.inventory.InventoryLoader.load(demo.inventoryDirectory());
            assertThat(loaded.errors()).isEmpty();
            assertThat(loaded.inventory().clusters()).extracting(io.macfleet.inventory.Cluster::name).containsExactly("llm-a", "llm-b", "llm-c");
            assertThat(loaded.inventory().machines()).filteredOn(machine -> "llm-c".equals(machine.cluster()))
                    .extracting(io.macfleet.inventory.Machine::name).containsExactly("studio-09", "studio-10");
            assertThat(loaded.inventory().machines()).filteredOn(machine -> machine.role() == io.macfleet.inventory.Machine.Role.COORDINATOR)
                    .extracting(io.macfleet.inventory.Machine::name).containsExactly("studio-01", "studio-05", "studio-09");
            // Two meshes of four and one of two: 6 + 6 + 1 cables, none between clusters.
            assertThat(demo.links()).hasSize(13).noneMatch(link -> link.contains("studio-04") && link.contains("studio-05"));
            assertThat(demo.summary(8480)).contains("3 clusters of up to 4 (llm-a to llm-c)");
        }
        assertThat(DemoEnvironment.clusters(java.util.stream.IntStream.rangeClosed(1, 200).mapToObj(i -> "m" + i).toList()))
                .hasSize(50).allSatisfy((name, members) -> assertThat(members).hasSize(4)).containsKey("llm-ax");
        // A lone Mac left over joins the cluster before it: a cluster of one is no mesh.
        assertThat(DemoEnvironment.clusters(List.of("a", "b", "c", "d", "e")).values()).extracting(List::size).containsExactly(5);
        assertThat(DemoEnvironment.clusters(List.of("a", "b", "c")).values()).extracting(List::size).containsExactly(3);
        assertThat(DemoEnvironment.clusterName(25)).isEqualTo("llm-z");
        assertThat(DemoEnvironment.clusterName(26)).isEqualTo("llm-aa");
    }

    @Test
    void demoComesUpWithAMatchingInventoryAndAWorkingKey(@TempDir Path directory) throws Exception {
        RunningDemo running = new RunningDemo();
        try (DemoEnvironment demo = running.start(new DemoEnvironment.Options(directory, 4, "127.0.0.41", 0, Duration.ofSeconds(1), null))) {
            assertThat(running.current()).containsSame(demo);
            assertThat(demo.links()).hasSize(6).contains("studio-01:3 <-> studio-02:3", "studio-03:3 <-> studio-04:3");

            JsonNode inventory = new ObjectMapper(new YAMLFactory()).readTree(demo.inventoryDirectory().resolve("macfleet.yaml").toFile());
            assertThat(inventory.at("/defaults/ssh/privateKey").asText()).isEqualTo("file:" + demo.privateKey());
            assertThat(inventory.at("/clusters/0/name").asText()).isEqualTo("llm-a");
            assertThat(inventory.at("/clusters/0/macosVersion").asText()).isEqualTo("26.2");
            assertThat(inventory.at("/clusters/0/topology/links")).hasSize(6);
            JsonNode machines = inventory.get("machines");
            assertThat(machines).hasSize(4);
            assertThat(machines.get(0).get("groups").get(0).asText()).isEqualTo("studio-512");
            assertThat(machines.get(3).get("groups").get(0).asText()).isEqualTo("studio-256");
            assertThat(machines.get(0).get("role").asText()).isEqualTo("coordinator");

            JsonNode studio2 = machines.get(1);
            AtomicReference<PublicKey> hostKey = new AtomicReference<>();
            try (SSHClient client = new SSHClient()) {
                client.addHostKeyVerifier(new HostKeyVerifier() {
                    @Override
                    public boolean verify(String host, int port, PublicKey key) {
                        hostKey.set(key);
                        return true;
                    }

                    @Override
                    public List<String> findExistingAlgorithms(String host, int port) {
                        return List.of();
                    }
                });
                client.connect(studio2.get("address").asText(), studio2.at("/ssh/port").asInt());
                client.authPublickey("admin", client.loadKeys(demo.privateKey().toString()));
                try (Session session = client.startSession()) {
                    Session.Command command = session.exec("sw_vers -productVersion; sysctl -n hw.memsize; rdma_ctl status");
                    String out = new String(command.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    command.join(5, TimeUnit.SECONDS);
                    assertThat(out).isEqualTo("26.1\n549755813888\ndisabled\n");
                }
            }
            assertThat(KeyUtils.getFingerPrint(hostKey.get())).isEqualTo(studio2.at("/ssh/hostKey").asText());
            assertThat(studio2.get("address").asText()).isEqualTo("127.0.0.42");
            assertThat(Files.readString(directory.resolve("secrets/volume-owner-password"))).isEqualTo(DemoEnvironment.VOLUME_OWNER_PASSWORD);
            assertThat(demo.summary(8480)).contains("studio-04", "macfleet demo recovery studio-02 \"rdma_ctl enable\"");
        }
        assertThat(running.current()).as("a closed demo is forgotten").isEmpty();
    }
}
