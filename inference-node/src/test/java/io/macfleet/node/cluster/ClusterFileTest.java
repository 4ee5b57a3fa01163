package io.macfleet.node.cluster;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClusterFileTest {
    /** As `macfleet cabling config --format macfleet` writes it (no parallelism, weights or ports: the defaults). */
    static final String CABLING = """
            {"cluster": "rack", "transport": "rdma", "ranks": [
              {"rank": 0, "machine": "studio-1", "address": "10.0.0.11", "peers": [
                {"rank": 1, "machine": "studio-2", "port": 1, "interface": "en2", "rdmaDevice": "rdma_en2",
                 "localAddress": "169.254.10.1", "peerAddress": "169.254.10.2", "prefixLength": 30}]},
              {"rank": 1, "machine": "studio-2", "address": "10.0.0.12", "peers": [
                {"rank": 0, "machine": "studio-1", "port": 1, "interface": "en2", "rdmaDevice": "rdma_en2",
                 "localAddress": "169.254.10.2", "peerAddress": "169.254.10.1", "prefixLength": 30}]},
              {"rank": 2, "machine": "studio-3", "address": "10.0.0.13", "weight": 0.5, "peers": []}]}
            """;

    @Test
    void aCablingFileLoadsWithDefaultsAndPrefersLinkAddresses() {
        ClusterFile cluster = ClusterFile.parse(CABLING, "cluster.json");
        assertThat(cluster.parallelism()).isEqualTo(ClusterFile.Parallelism.TENSOR);
        assertThat(cluster.rank(1).clusterPort()).isEqualTo(ClusterFile.DEFAULT_CLUSTER_PORT);
        assertThat(cluster.addressOf(0, 1)).isEqualTo("169.254.10.2");
        assertThat(cluster.addressOf(1, 0)).isEqualTo("169.254.10.1");
        assertThat(cluster.addressOf(0, 2)).isEqualTo("10.0.0.13");
        assertThat(cluster.weights()).containsExactly(1, 1, 0.5);
    }

    @Test
    void mistakesAreNamed() {
        assertThatThrownBy(() -> ClusterFile.parse(CABLING.replace("\"rank\": 2,", "\"rank\": 1,"), "cluster.json"))
                .hasMessage("cluster.json: ranks[2]: rank 1 appears twice");
        assertThatThrownBy(() -> ClusterFile.parse(CABLING.replace("\"transport\": \"rdma\"",
                "\"transport\": \"rdma\", \"parallelism\": \"expert\""), "cluster.json"))
                .hasMessage("cluster.json: parallelism must be tensor or pipeline, got 'expert'");
        assertThatThrownBy(() -> ClusterFile.parse(CABLING.replace("0.5", "0"), "cluster.json"))
                .hasMessage("cluster.json: ranks[2].weight must be positive, got 0.0");
        assertThatThrownBy(() -> ClusterFile.parse(CABLING, "cluster.json").rank(5))
                .hasMessage("--rank 5 is not in the cluster file (ranks 0..2)");
    }
}
