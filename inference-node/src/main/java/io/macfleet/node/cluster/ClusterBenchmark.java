package io.macfleet.node.cluster;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * All-reduce latency over loopback TCP: the ranks are threads of this JVM, each with its own listener,
 * heartbeat and {@link TcpTransport} (real sockets, the same code path as separate processes).
 */
public final class ClusterBenchmark {
    private ClusterBenchmark() {
    }

    /**
     * The ranks of an in-JVM mesh are (virtual) threads of one process that may outnumber its cores, so they park
     * after a short spin: a spinning virtual thread would hold the carrier its peer needs.
     */
    private static final WaitPolicy IN_JVM_WAITS = new WaitPolicy(WaitPolicy.PARK_AFTER_NANOS, "park (ranks are threads of one JVM)");

    /** Forms a loopback mesh of {@code size} ranks in this JVM (tests and the benchmark). */
    public static List<Transport> loopbackMesh(int size) throws IOException {
        int[] ports = LaunchLocal.freePorts(size);
        ClusterFile cluster = ClusterFile.parse(ClusterFile.loopback(size, ClusterFile.Parallelism.TENSOR, ports,
                LaunchLocal.freePorts(size)), "loopback");
        Handshake handshake = Handshake.of("bench", "none", "tensor", size, 0, "none");
        List<CompletableFuture<Transport>> futures = new ArrayList<>();
        for (int rank = 0; rank < size; rank++) {
            int r = rank;
            ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress(cluster.rank(r).address(), ports[r]));
            Heartbeat heartbeat = new Heartbeat(cluster, r);
            MeshHandshake mesh = new MeshHandshake(cluster, ClusterAddresses.resolve(cluster), ClusterKey.none(), r, handshake);
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    TcpTransport transport = TcpTransport.form(cluster, r, List.of(listener), mesh, heartbeat, IN_JVM_WAITS,
                            () -> false, s -> { }, Integer.MAX_VALUE - 64);
                    return new ClosingTransport(transport, listener, heartbeat);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, Thread::startVirtualThread));
        }
        List<Transport> transports = new ArrayList<>();
        try {
            for (CompletableFuture<Transport> future : futures) {
                transports.add(future.get());
            }
        } catch (InterruptedException | ExecutionException e) {
            throw new IOException("forming a loopback mesh failed: " + e.getMessage(), e);
        }
        return transports;
    }

    /** Prints p50/p99 per rank count and size; returns the last p50 in seconds. */
    public static double allReduce(int[] rankCounts, int[] sizesKb, int iterations, PrintStream out) throws IOException {
        double lastMedian = 0;
        out.printf("all-reduce over loopback TCP (ranks as threads, full mesh; %d iterations after 200 warm-up)%n", iterations);
        out.printf("%-6s %-8s %10s %10s %12s%n", "ranks", "size", "p50 us", "p99 us", "algorithm");
        for (int ranks : rankCounts) {
            List<Transport> mesh = loopbackMesh(ranks);
            try {
                for (int kb : sizesKb) {
                    int length = kb * 1024 / Float.BYTES;
                    long[][] times = new long[ranks][iterations];
                    List<Thread> threads = new ArrayList<>();
                    for (int r = 0; r < ranks; r++) {
                        int rank = r;
                        threads.add(Thread.ofPlatform().start(() -> {
                            Collectives collectives = new Collectives(mesh.get(rank), 10_000_000_000L);
                            float[] values = new float[length];
                            for (int i = -200; i < iterations; i++) {
                                Arrays.fill(values, rank + 1);
                                long start = System.nanoTime();
                                collectives.allReduce(values, length);
                                if (i >= 0) {
                                    times[rank][i] = System.nanoTime() - start;
                                }
                            }
                        }));
                    }
                    for (Thread thread : threads) {
                        thread.join();
                    }
                    long[] rank0 = times[0].clone();
                    Arrays.sort(rank0);
                    lastMedian = rank0[iterations / 2] / 1e9;
                    out.printf("%-6d %-8s %10.1f %10.1f %12s%n", ranks, kb + " KB", rank0[iterations / 2] / 1e3,
                            rank0[(int) (iterations * 0.99)] / 1e3,
                            ranks > 2 && kb * 1024 >= Collectives.RING_BYTES ? "ring" : "mesh");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return lastMedian;
            } finally {
                mesh.forEach(Transport::close);
            }
        }
        return lastMedian;
    }

    /** A transport that also closes the listener and heartbeat it was formed with. */
    private record ClosingTransport(TcpTransport transport, ServerSocketChannel listener, Heartbeat heartbeat) implements Transport {
        public int rank() {
            return transport.rank();
        }

        public int size() {
            return transport.size();
        }

        public void send(int peer, int tag, float[] values, int offset, int length) {
            transport.send(peer, tag, values, offset, length);
        }

        public void send(int peer, int tag, int[] values, int offset, int length) {
            transport.send(peer, tag, values, offset, length);
        }

        public int receive(int peer, int tag, float[] into, int offset, long timeoutNanos) {
            return transport.receive(peer, tag, into, offset, timeoutNanos);
        }

        public int receive(int peer, int tag, int[] into, int offset, long timeoutNanos) {
            return transport.receive(peer, tag, into, offset, timeoutNanos);
        }

        public long bytesSent() {
            return transport.bytesSent();
        }

        public void close() {
            transport.close();
            heartbeat.close();
            try {
                listener.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
