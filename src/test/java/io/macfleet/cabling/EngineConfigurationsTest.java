package io.macfleet.cabling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EngineConfigurationsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Cabled as the cluster in MLX's JACCL documentation: en5 between 1 and 2, en4 between 1 and 3, ... */
    private static ClusterFixture mlxDocumentationCluster() {
        return ClusterFixture.macStudios("m3-ultra-1", "m3-ultra-2", "m3-ultra-3", "m3-ultra-4")
                .cable("m3-ultra-1", 4, "m3-ultra-2", 4)
                .cable("m3-ultra-1", 3, "m3-ultra-3", 3)
                .cable("m3-ultra-1", 2, "m3-ultra-4", 2)
                .cable("m3-ultra-2", 2, "m3-ultra-3", 2)
                .cable("m3-ultra-2", 3, "m3-ultra-4", 3)
                .cable("m3-ultra-3", 4, "m3-ultra-4", 4);
    }

    private static JsonNode documented() throws IOException {
        try (InputStream input = EngineConfigurationsTest.class.getResourceAsStream("/cabling/real/mlx-docs-jaccl-hostfile.json")) {
            return JSON.readTree(input);
        }
    }

    @Test
    void jacclHostfileMatchesMlxDocumentation() throws IOException {
        ClusterFixture cluster = mlxDocumentationCluster();
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("mlx", cluster.names()), cluster.facts(), Optional.empty());
        assertThat(report.passed()).as(report.findings().toString()).isTrue();

        JsonNode hostfile = JSON.readTree(EngineConfigurations.render(EngineConfigurations.Format.MLX_JACCL, report, cluster.facts(),
                List.of("MLX_METAL_FAST_SYNCH=1"), false));
        JsonNode documented = documented();

        assertThat(hostfile.get("backend").asText()).isEqualTo("jaccl");
        assertThat(hostfile.get("envs").get(0).asText()).isEqualTo("MLX_METAL_FAST_SYNCH=1");
        JsonNode hosts = hostfile.get("hosts");
        assertThat(hosts).hasSize(documented.size());
        for (int rank = 0; rank < documented.size(); rank++) {
            JsonNode expected = documented.get(rank);
            JsonNode actual = hosts.get(rank);
            assertThat(fieldNames(actual)).containsExactlyElementsOf(fieldNames(expected));
            assertThat(actual.get("ssh").asText()).isEqualTo(expected.get("ssh").asText());
            assertThat(actual.get("rdma")).isEqualTo(expected.get("rdma"));
        }
        assertThat(hosts.get(0).get("ips").get(0).asText()).isEqualTo("192.168.50.11");
    }

    @Test
    void ringHostfileFollowsTheRing() throws IOException {
        ClusterFixture cluster = ClusterFixture.macStudios("a", "b", "c")
                .cable("a", 2, "b", 2).cable("b", 3, "c", 3).cable("c", 4, "a", 4);
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("ring", cluster.names()), cluster.facts(), Optional.empty());

        JsonNode hostfile = JSON.readTree(EngineConfigurations.render(EngineConfigurations.Format.MLX_RING, report, cluster.facts(), List.of(), false));

        assertThat(hostfile.get("backend").asText()).isEqualTo("ring");
        assertThat(hostfile.get("hosts")).extracting(host -> host.get("ssh").asText()).containsExactly("a", "b", "c");
        // a's link to its ring predecessor c is the first /30 handed out when c's ports are visited, and so on
        for (JsonNode host : hostfile.get("hosts")) {
            assertThat(host.get("ips")).hasSize(1);
            assertThat(host.get("ips").get(0).asText()).startsWith("192.168.0.");
        }
    }

    @Test
    void macfleetConfigurationNamesInterfaceDeviceAndAddressesPerPeer() throws IOException {
        ClusterFixture cluster = ClusterFixture.fullMesh("studio-01", "studio-02");
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("llm-a", cluster.names()), cluster.facts(), Optional.empty());

        JsonNode config = JSON.readTree(EngineConfigurations.render(EngineConfigurations.Format.MACFLEET, report, cluster.facts(), List.of(), false));

        assertThat(config.get("transport").asText()).isEqualTo("rdma");
        JsonNode peer = config.get("ranks").get(0).get("peers").get(0);
        assertThat(peer.get("machine").asText()).isEqualTo("studio-02");
        assertThat(peer.get("interface").asText()).isEqualTo("en3");
        assertThat(peer.get("rdmaDevice").asText()).isEqualTo("rdma_en3");
        assertThat(peer.get("localAddress").asText()).isEqualTo("192.168.0.1");
        assertThat(peer.get("peerAddress").asText()).isEqualTo("192.168.0.2");
        JsonSchema schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(Path.of("schemas/node-cluster.schema.json")));
        assertThat(schema.validate(config)).isEmpty();
        JsonNode back = config.get("ranks").get(1).get("peers").get(0);
        assertThat(back.get("localAddress").asText()).isEqualTo("192.168.0.2");
        assertThat(back.get("peerAddress").asText()).isEqualTo("192.168.0.1");
    }

    @Test
    void refusesAFailingClusterUnlessForced() {
        ClusterFixture cluster = ClusterFixture.fullMesh("studio-01", "studio-02").rdma("studio-02", false);
        CablingReport report = CablingCheck.check(PlannedTopology.fullMesh("llm-a", cluster.names()), cluster.facts(), Optional.empty());

        assertThatThrownBy(() -> EngineConfigurations.render(EngineConfigurations.Format.MLX_JACCL, report, cluster.facts(), List.of(), false))
                .isInstanceOf(EngineConfigurations.RefusedException.class)
                .hasMessageStartingWith("cluster llm-a fails the cabling check (1 errors: studio-02: RDMA over Thunderbolt is disabled")
                .hasMessageEndingWith("fix them (macfleet cabling check) or pass --force");
        assertThat(EngineConfigurations.render(EngineConfigurations.Format.MLX_JACCL, report, cluster.facts(), List.of(), true)).contains("rdma_en3");
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
