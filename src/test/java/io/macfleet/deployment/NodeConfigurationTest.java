package io.macfleet.deployment;

import io.macfleet.runtime.NodeCommand;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.cabling.PeerConfiguration;
import io.macfleet.secrets.SecretReference;
import io.macfleet.ssh.SshTarget;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a deploy renders and reads without a Mac: the cluster file, the ports, df -k, and the log follower. */
class NodeConfigurationTest {

    private static RankTarget rank(int rank, String machine, String address, int memory) {
        return RankTarget.of(rank, machine, SshTarget.of(machine, address, "admin", SecretReference.of("env:KEY")), address, memory, 8080);
    }

    @Test
    void theClusterFileWeighsRanksByMemoryListsTheCablesAndFollowsTheSchema() throws IOException {
        List<RankTarget> ranks = List.of(rank(0, "studio-01", "10.0.0.11", 512), rank(1, "studio-02", "10.0.0.12", 512),
                rank(2, "studio-03", "10.0.0.13", 256));
        List<PeerConfiguration.PeerLink> links = List.of(
                new PeerConfiguration.PeerLink("studio-01", "studio-02", 2, "en2", "rdma_en2", "192.168.0.1", "192.168.0.2"),
                new PeerConfiguration.PeerLink("studio-02", "studio-01", 3, "en3", "rdma_en3", "192.168.0.2", "192.168.0.1"),
                new PeerConfiguration.PeerLink("studio-02", "studio-09", 4, "en4", "rdma_en4", "192.168.0.5", "192.168.0.6"));
        JsonNode file = new ObjectMapper().readTree(NodeClusterConfig.render("llm-a", "pipeline", ranks, links));
        assertThat(file.path("parallelism").asText()).isEqualTo("pipeline");
        assertThat(file.path("ranks").findValuesAsText("weight")).containsExactly("2", "2", "1");
        assertThat(file.path("ranks").get(0).path("httpPort").asInt()).isEqualTo(8080);
        assertThat(file.path("ranks").get(0).path("clusterPort").asInt()).isEqualTo(RankTarget.CLUSTER_PORT);
        JsonNode peer = file.path("ranks").get(0).path("peers").get(0);
        assertThat(peer.path("rank").asInt()).isEqualTo(1);
        assertThat(peer.path("peerAddress").asText()).isEqualTo("192.168.0.2");
        assertThat(peer.path("prefixLength").asInt()).isEqualTo(30);
        // A cable to a machine outside the cluster is not a peer.
        assertThat(file.path("ranks").get(1).path("peers")).hasSize(1);
        assertThat(file.path("ranks").get(2).has("peers")).isFalse();
        // What the schema refuses is never written.
        List<PeerConfiguration.PeerLink> bad = List.of(new PeerConfiguration.PeerLink("studio-01", "studio-02", 2, "thunderbolt0", "rdma_en2",
                "192.168.0.1", "192.168.0.2"));
        assertThatThrownBy(() -> NodeClusterConfig.render("llm-a", "tensor", ranks, bad))
                .hasMessageContaining("does not follow schemas/node-cluster.schema.json").hasMessageContaining("interface");
        assertThatThrownBy(() -> NodeClusterConfig.render("llm-a", "tensor", List.of(ranks.get(0), ranks.get(2)), List.of()))
                .hasMessageContaining("ranks of llm-a must be 0..1 once each, got [0, 2]");
    }

    private static io.macfleet.facts.FactsObservation observed(String machine, String interfaceName, String... ipv4) {
        io.macfleet.facts.MachineFacts facts = new io.macfleet.facts.MachineFacts(machine, java.time.Instant.EPOCH, "Mac15,14", "Mac Studio",
                "Apple M3 Ultra", 32, 24, 8, 80, 512L << 30, "SERIAL", "UUID", "26.2", "25C56", List.of(),
                List.of(new io.macfleet.facts.NetworkInterface(interfaceName, List.of("UP"), null, List.of(ipv4), List.of(), "active")),
                false, true, List.of(), false, false, 100, 1L << 40);
        return new io.macfleet.facts.FactsObservation(facts, java.util.Map.of());
    }

    @Test
    void onlyCablesWhoseAddressesAreConfiguredOnBothEndsGoIntoTheClusterFile() {
        List<PeerConfiguration.PeerLink> links = List.of(
                new PeerConfiguration.PeerLink("studio-01", "studio-02", 2, "en2", "rdma_en2", "192.168.0.1", "192.168.0.2"),
                new PeerConfiguration.PeerLink("studio-02", "studio-01", 3, "en3", "rdma_en3", "192.168.0.2", "192.168.0.1"));
        assertThat(NodeService.configuredLinks(links, java.util.Map.of("studio-01", observed("studio-01", "en2", "192.168.0.1/30"),
                "studio-02", observed("studio-02", "en3", "192.168.0.2/30")))).isEqualTo(links);
        // One end without its address (or on another interface): the ranks use their management addresses.
        assertThat(NodeService.configuredLinks(links, java.util.Map.of("studio-01", observed("studio-01", "en2", "192.168.0.1/30"),
                "studio-02", observed("studio-02", "en4", "192.168.0.2/30")))).isEmpty();
        assertThat(NodeService.configuredLinks(links, java.util.Map.of("studio-01", observed("studio-01", "en2", "192.168.0.13/30")))).isEmpty();
    }

    @Test
    void ranksOnLoopbackShareNoPortsAndListenOnTheirOwnAddress() {
        RankTarget simulated = rank(3, "studio-04", "127.0.0.14", 256);
        assertThat(simulated.httpPort()).isEqualTo(8086);
        assertThat(simulated.clusterPort()).isEqualTo(8087);
        RankTarget real = rank(3, "studio-04", "10.0.0.14", 256);
        assertThat(real.httpPort()).isEqualTo(8080);
        assertThat(real.clusterPort()).isEqualTo(52600);
    }

    @Test
    void dfKilobytesIsReadByItsHeaderOnMacOsAndGnuLayouts() throws IOException {
        assertThat(DiskFree.availableBytes(fixture("df-k-macos.txt"))).hasValue(453_923_192L * 1024);
        assertThat(DiskFree.availableBytes(fixture("df-k-gnu-wrapped.txt"))).hasValue(4_194_304L * 1024);
        // 512-byte blocks (df without -k) and garbage are not guessed at.
        assertThat(DiskFree.availableBytes(fixture("df-k-macos.txt").replace("1024-blocks", "512-blocks"))).isEmpty();
        assertThat(DiskFree.availableBytes("df: /usr/local/macfleet/models: No such file or directory\n")).isEmpty();
        assertThat(DiskFree.human(102_400)).isEqualTo("102400 bytes");
        assertThat(DiskFree.human(3L << 30)).isEqualTo("3.0 GiB");
    }

    @Test
    void followingALogPrintsOnlyWhatIsNew() {
        assertThat(NodeCommand.newLines("a\nb\nc\n", "b\nc\nd\ne\n")).isEqualTo("d\ne\n");
        assertThat(NodeCommand.newLines("a\nb\n", "a\nb\n")).isEmpty();
        assertThat(NodeCommand.newLines("", "x\n")).isEqualTo("x\n");
        // Rotated or rewritten: everything is new.
        assertThat(NodeCommand.newLines("a\nb\n", "y\nz\n")).isEqualTo("y\nz\n");
    }

    private static String fixture(String name) throws IOException {
        try (InputStream in = NodeConfigurationTest.class.getResourceAsStream("/deployment/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
