package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.json.Json;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.LlamaConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 29's hostile mesh client against a rank of a keyed cluster whose other rank is down (the moment the probe
 * joined as rank 1): the old handshake with the right values, the new one with a wrong key, connections from an
 * address the cluster file does not name. None joins, and none hears the rank's version, model size or hash. The
 * real rank 1 with the key then joins (so the test can tell joining from not joining).
 */
class MeshSecurityTest {
    /** This class's own loopback addresses (other test classes use others). */
    static final String RANK_0 = "127.0.29.1", RANK_1 = "127.0.29.2", OUTSIDER = "127.0.29.9";

    @TempDir
    Path directory;

    static Path clusterFile(Path directory, String[] addresses, String parallelism) throws IOException {
        int[] ports = LaunchLocal.freePorts(addresses.length);
        int[] http = LaunchLocal.freePorts(addresses.length);
        List<Object> ranks = new ArrayList<>();
        for (int r = 0; r < addresses.length; r++) {
            ranks.add(Map.of("rank", r, "machine", "m" + r, "address", addresses[r], "clusterPort", ports[r], "httpPort", http[r]));
        }
        Path file = directory.resolve("cluster.json");
        Files.writeString(file, Json.write(Map.of("cluster", "hostile", "parallelism", parallelism, "ranks", ranks)));
        return file;
    }

    static Path keyFile(Path directory, String name, String value) throws IOException {
        Path file = directory.resolve(name);
        Files.writeString(file, value + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    @Test
    void anOutsiderJoinsNoneOfItsAttemptsAndLearnsNothing() throws Exception {
        ClusterFile cluster = ClusterFile.read(clusterFile(directory, new String[] {RANK_0, RANK_1}, "tensor"));
        ClusterKey key = ClusterKey.read(keyFile(directory, "cluster.key", "a".repeat(16) + "0123456789abcdef0123456789abcdef"));
        ClusterKey wrong = ClusterKey.read(keyFile(directory, "guess.key", "b".repeat(64)));
        Path model = TestModels.tiny(GgmlType.Q8_0);
        int port = cluster.rank(0).clusterPort();
        try (GgufFile file = GgufFile.open(model); WorkerPool pool = new WorkerPool(1);
             ClusterNode rank0 = new ClusterNode(cluster, 0, key)) {
            rank0.place(file, LlamaConfig.from(file), 64, pool);
            String identity = "node version=" + ClusterNode.nodeVersion() + "\nmodel=" + ClusterNode.modelIdentity(file)
                    + "\nparallelism=tensor\nranks=2\ncontext=64\nplan=" + rank0.plan().describe() + "\n";
            String size = Long.toString(file.fileSize());
            String hash = ClusterNode.modelIdentity(file).replaceAll(".*sha256 ", "");

            int attempts = 0, joins = 0;
            List<HostileMeshClient.Outcome> outcomes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                // the pre-29 attack: right values, from rank 1's own address
                outcomes.add(HostileMeshClient.legacy(RANK_1, RANK_0, port, 1, identity));
                // the current protocol with a guessed key, from rank 1's address and from elsewhere
                outcomes.add(HostileMeshClient.keyed(RANK_1, RANK_0, port, 1, 0, wrong, identity));
                outcomes.add(HostileMeshClient.keyed(OUTSIDER, RANK_0, port, 1, 0, key, identity));
                // a hostile frame header as the first bytes
                outcomes.add(HostileMeshClient.raw(RANK_1, RANK_0, port,
                        java.nio.ByteBuffer.allocate(8).putInt(1).putInt(0x7FFFFFF0).array()));
            }
            for (HostileMeshClient.Outcome outcome : outcomes) {
                attempts++;
                joins += outcome.accepted() ? 1 : 0;
                assertThat(outcome.asText()).doesNotContain(size).doesNotContain(hash).doesNotContain("version")
                        .doesNotContain("plan").doesNotContain("model");
                // at most the magic, a nonce and a proof over nonces (68 bytes): nothing about the rank
                assertThat(outcome.received().length).isLessThanOrEqualTo(68);
            }
            // from an address the cluster file does not name: closed before a single byte
            assertThat(outcomes.get(2).received()).isEmpty();
            assertThat(joins).as("joins of %d hostile attempts", attempts).isZero();
            assertThat(rank0.problem()).contains("waiting for rank 1");
            System.out.printf("mesh joins by an outsider: %d of %d attempts (old handshake with the right values, wrong key, "
                    + "unlisted address, hostile header)%n", joins, attempts);

            // the real rank 1 (same key) joins: the check above can tell a join
            HostileMeshClient.Outcome real = HostileMeshClient.keyed(RANK_1, RANK_0, port, 1, 0, key, identity);
            assertThat(real.accepted()).isTrue();
            assertThat(real.text()).contains("model=");
        }
    }

    @Test
    void aRankWithAnotherKeyIsNotTalkedTo() throws Exception {
        ClusterFile cluster = ClusterFile.read(clusterFile(directory, new String[] {"127.0.29.11", "127.0.29.12"}, "pipeline"));
        ClusterKey key = ClusterKey.read(keyFile(directory, "cluster.key", "c".repeat(40)));
        ClusterKey other = ClusterKey.read(keyFile(directory, "other.key", "d".repeat(40)));
        Path model = TestModels.tiny(GgmlType.Q8_0);
        try (GgufFile file0 = GgufFile.open(model); GgufFile file1 = GgufFile.open(model);
             WorkerPool pool0 = new WorkerPool(1); WorkerPool pool1 = new WorkerPool(1);
             ClusterNode rank0 = new ClusterNode(cluster, 0, key); ClusterNode rank1 = new ClusterNode(cluster, 1, other)) {
            rank0.place(file0, LlamaConfig.from(file0), 64, pool0);
            rank1.place(file1, LlamaConfig.from(file1), 64, pool1);
            Thread.sleep(1500);
            assertThat(rank0.problem()).contains("waiting for rank 1");
            assertThat(rank1.problem()).contains("did not prove the cluster key");
            assertThat(rank1.refusal()).isNotDone(); // an impostor on the port must not stop the cluster for good
        }
    }

    @Test
    void theSameKeyFormsTheClusterOnTheRanksOwnAddresses() throws Exception {
        ClusterFile cluster = ClusterFile.read(clusterFile(directory, new String[] {"127.0.29.21", "127.0.29.22"}, "tensor"));
        ClusterKey key = ClusterKey.read(keyFile(directory, "cluster.key", "e".repeat(40)));
        Path model = TestModels.tiny(GgmlType.Q8_0);
        try (GgufFile file0 = GgufFile.open(model); GgufFile file1 = GgufFile.open(model);
             WorkerPool pool0 = new WorkerPool(1); WorkerPool pool1 = new WorkerPool(1);
             ClusterNode rank0 = new ClusterNode(cluster, 0, key); ClusterNode rank1 = new ClusterNode(cluster, 1, key)) {
            rank0.place(file0, LlamaConfig.from(file0), 64, pool0);
            rank1.place(file1, LlamaConfig.from(file1), 64, pool1);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while ((rank0.problem() != null || rank1.problem() != null) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(rank0.problem()).isNull();
            assertThat(rank1.problem()).isNull();
            // bound to the rank's address only: the same port on another loopback address is free
            try (java.nio.channels.ServerSocketChannel probe = java.nio.channels.ServerSocketChannel.open()) {
                probe.bind(new java.net.InetSocketAddress("127.0.29.23", cluster.rank(0).clusterPort()));
            }
        }
    }

    @Test
    void aClusterAcrossMachinesNeedsAKeyAndKeysMustBePrivate() throws Exception {
        ClusterFile cluster = ClusterFile.read(clusterFile(directory, new String[] {"10.0.0.11", "10.0.0.12"}, "tensor"));
        assertThatThrownBy(() -> new ClusterNode(cluster, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--cluster-key").hasMessageContaining("10.0.0.11");
        ClusterFile wildcard = ClusterFile.read(clusterFile(directory, new String[] {"0.0.0.0", "127.0.0.1"}, "tensor"));
        assertThatThrownBy(() -> new ClusterNode(wildcard, 0)).hasMessageContaining("wildcard");

        Path open = keyFile(directory, "open.key", "f".repeat(40));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ClusterKey.read(open)).hasMessageContaining("chmod 600");
        assertThatThrownBy(() -> ClusterKey.read(keyFile(directory, "short.key", "secret")))
                .hasMessageContaining("at least 32");
        assertThatThrownBy(() -> ClusterKey.read(directory.resolve("missing.key"))).hasMessageContaining("does not exist");
    }
}
