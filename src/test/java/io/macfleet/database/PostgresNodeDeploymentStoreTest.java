package io.macfleet.database;

import static org.assertj.core.api.Assertions.assertThat;

import io.agroal.api.AgroalDataSource;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeRelease;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Node deployments (migration V9_1) on a real PostgreSQL server, and on H2: the same statements on both. */
class PostgresNodeDeploymentStoreTest {

    @Test
    void latestDeploymentOfEveryClusterOnPostgresqlAndH2() throws Exception {
        try (PostgresServer server = PostgresServer.start()) {
            try (AgroalDataSource dataSource = server.database("deployments")) {
                contract(new NodeDeploymentStore(dataSource));
            }
        }
        try (AgroalDataSource dataSource = PostgresServer.h2("deployments")) {
            contract(new NodeDeploymentStore(dataSource));
        }
    }

    private static void contract(NodeDeploymentStore store) {
        Instant t0 = Instant.parse("2026-11-24T00:00:00Z");
        assertThat(store.latestPerCluster()).isEmpty();
        NodeRelease release = new NodeRelease(Path.of("/opt/node.jar"), "a".repeat(64), "0.1.0", Optional.empty(),
                Optional.of(URI.create("https://models.example/llama-70b-q8_0.gguf")), "llama-70b-q8_0.gguf", "b".repeat(64), 1024L);
        long first = store.create("llm-a", release, "cli:alice", t0);
        store.phase(first, "failed", "studio-03: disk full", t0.plusSeconds(10));
        long second = store.create("llm-a", release, "cli:alice", t0.plusSeconds(60));
        long other = store.create("llm-b", release, "service:bob", t0.plusSeconds(70));
        store.phase(other, "serving", null, t0.plusSeconds(90));

        var latest = store.latestPerCluster();

        assertThat(latest).containsOnlyKeys("llm-a", "llm-b");
        assertThat(latest.get("llm-a").id()).isEqualTo(second);
        assertThat(latest.get("llm-a").finished()).isFalse();
        assertThat(latest.get("llm-b").phase()).isEqualTo("serving");
        assertThat(latest.get("llm-b").finishedAt()).contains(t0.plusSeconds(90));
        assertThat(latest.get("llm-a")).isEqualTo(store.latest("llm-a").orElseThrow());
    }
}
