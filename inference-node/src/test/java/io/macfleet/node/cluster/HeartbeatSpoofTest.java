package io.macfleet.node.cluster;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29's spoofing heartbeat sender (4-byte heartbeats of the old format and forged ones of the new) against a
 * keyed cluster whose rank 1 is stopped: rank 0 still notices within 2 s. Replays, reflections and heartbeats from
 * an unlisted address are dropped. And a peer that does pass the handshake (an insider) cannot make a rank allocate
 * what a hostile frame header announces.
 */
class HeartbeatSpoofTest {
    @TempDir
    Path directory;

    private static ByteBuffer received(ByteBuffer message) {
        ByteBuffer copy = ByteBuffer.allocate(64);
        copy.put(message.duplicate());
        return copy;
    }

    @Test
    void onlyAuthenticNewHeartbeatsFromThePeersAddressCount() throws Exception {
        ClusterFile cluster = ClusterFile.read(MeshSecurityTest.clusterFile(directory, new String[] {"127.0.30.1", "127.0.30.2"}, "tensor"));
        InetAddress peerAddress = InetAddress.getByName("127.0.30.2");
        byte[] key = new byte[32];
        key[0] = 7;
        try (Heartbeat heartbeat = new Heartbeat(cluster, 0)) {
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 1)), peerAddress))
                    .as("before the connection formed there is no key to check against").isFalse();
            heartbeat.session(1, key);
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 1)), peerAddress)).isTrue();
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 1)), peerAddress)).as("replayed").isFalse();
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 2)), InetAddress.getByName("127.0.30.9")))
                    .as("from an address the cluster file does not give rank 1").isFalse();
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 0, 0, 3)), peerAddress)).as("reflected").isFalse();
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 1, 3)), peerAddress)).as("meant for rank 1").isFalse();
            byte[] guessed = key.clone();
            guessed[1] = 1;
            assertThat(heartbeat.accept(received(Heartbeat.message(guessed, 1, 0, 4)), peerAddress)).as("another key").isFalse();
            assertThat(heartbeat.accept(received(ByteBuffer.allocate(4).putInt(0, 1)), peerAddress)).as("the old format").isFalse();
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 5)), peerAddress)).isTrue();
            heartbeat.session(1, guessed);
            assertThat(heartbeat.accept(received(Heartbeat.message(key, 1, 0, 6)), peerAddress))
                    .as("a heartbeat of the previous connection").isFalse();
        }
    }

    @Test
    void aStoppedRankIsNoticedWithin2SecondsDespiteSpoofedHeartbeats() throws Exception {
        Path clusterFile = MeshSecurityTest.clusterFile(directory, new String[] {"127.0.30.11", "127.0.30.12"}, "tensor");
        Path key = MeshSecurityTest.keyFile(directory, "cluster.key", "9".repeat(64));
        try (RankProcesses cluster = new RankProcesses(ClusterFailureTest.slowModel(), clusterFile, 2,
                ClusterFile.Parallelism.TENSOR, 4096, List.of(), List.of("--cluster-key", key.toString()))) {
            cluster.awaitHealthy(Duration.ofSeconds(120));
            AtomicBoolean spoofing = new AtomicBoolean(true);
            AtomicLong sent = new AtomicLong();
            InetSocketAddress target = new InetSocketAddress("127.0.30.11", cluster.cluster.rank(0).clusterPort());
            Thread spoofer = Thread.ofPlatform().start(() -> {
                // from rank 1's own address, every 5 ms: the old 4-byte heartbeat and forged new ones
                try (DatagramChannel channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.30.12", 0))) {
                    byte[] guessed = new byte[32];
                    long sequence = 1L << 40;
                    while (spoofing.get()) {
                        channel.send(ByteBuffer.allocate(4).putInt(0, 1), target);
                        channel.send(Heartbeat.message(guessed, 1, 0, sequence++), target);
                        sent.addAndGet(2);
                        Thread.sleep(5);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                double stopped = ClusterFailureTest.secondsToErrorEvent(cluster,
                        () -> ClusterFailureTest.signal(cluster.processes[1], "STOP"));
                System.out.printf("hung-rank detection with %d spoofed heartbeats sent: %.2f s%n", sent.get(), stopped);
                assertThat(stopped).as("seconds from SIGSTOP to the error event").isLessThan(2.0);
            } finally {
                spoofing.set(false);
                spoofer.join();
                ClusterFailureTest.signal(cluster.processes[1], "CONT");
            }
        }
    }

    /** Resident memory of this process in bytes (Linux). */
    static long residentBytes() throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        return -1;
    }

    @Test
    void aHostileFrameHeaderFailsThePeerWithoutAllocating() throws Exception {
        ClusterFile cluster = ClusterFile.read(MeshSecurityTest.clusterFile(directory, new String[] {"127.0.30.21", "127.0.30.22"}, "tensor"));
        ClusterKey key = ClusterKey.read(MeshSecurityTest.keyFile(directory, "cluster.key", "8".repeat(64)));
        Handshake identity = Handshake.of("test", "none", "tensor", 2, 0, "none");
        try (java.nio.channels.ServerSocketChannel listener = java.nio.channels.ServerSocketChannel.open()
                .bind(new InetSocketAddress("127.0.30.21", cluster.rank(0).clusterPort()))) {
            MeshHandshake mesh = new MeshHandshake(cluster, ClusterAddresses.resolve(cluster), key, 0, identity);
            java.util.concurrent.CompletableFuture<TcpTransport> forming = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return TcpTransport.form(cluster, 0, List.of(listener), mesh, null,
                            new WaitPolicy(WaitPolicy.PARK_AFTER_NANOS, "park"), () -> false, s -> { }, 1 << 20);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try (Socket insider = HostileMeshClient.join("127.0.30.22", "127.0.30.21", cluster.rank(0).clusterPort(), 1, 0, key,
                    identity.text()); TcpTransport transport = forming.get(20, java.util.concurrent.TimeUnit.SECONDS)) {
                System.gc();
                long before = residentBytes();
                insider.getOutputStream().write(ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder())
                        .putInt(1).putInt(0x7FFFFFF0).array());
                insider.getOutputStream().flush();
                float[] into = new float[16];
                Throwable failure = null;
                try {
                    transport.receive(1, 1, into, 0, 5_000_000_000L);
                } catch (Transport.PeerFailedException e) {
                    failure = e;
                }
                long after = residentBytes();
                System.out.printf("resident memory around a hostile frame header (0x7FFFFFF0 bytes announced): %d MB before, %d MB after%n",
                        before >> 20, after >> 20);
                assertThat(failure).isNotNull().hasMessageContaining("2147483632 bytes");
                assertThat(after - before).as("bytes of resident memory the header cost").isLessThan(50L << 20);
            }
        }
    }
}
