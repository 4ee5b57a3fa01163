package io.macfleet.node.cluster;

/**
 * Messages between the ranks of a formed cluster. Each message carries a tag that the receiver names, so a
 * protocol slip is an error instead of a silently misread vector. Sends never wait for the peer to read (they are
 * buffered), so ranks that send to each other at the same moment cannot deadlock; every receive has a bounded
 * wait and fails with {@link PeerFailedException} when the peer is gone or silent. Not thread-safe: one thread
 * (the forward pass) uses it at a time.
 * <p>
 * TCP is {@link TcpTransport}. An RDMA transport (ibverbs over Thunderbolt, macOS 26.2) would implement the same
 * five operations over registered memory; see docs/inference-node-cluster.md.
 */
public interface Transport extends AutoCloseable {
    int rank();

    int size();

    void send(int peer, int tag, float[] values, int offset, int length);

    void send(int peer, int tag, int[] values, int offset, int length);

    /**
     * Receives the next message from {@code peer}, which must carry {@code tag}, into {@code into[offset..]};
     * returns its element count. {@code timeoutNanos} 0 waits as long as every peer is alive.
     */
    int receive(int peer, int tag, float[] into, int offset, long timeoutNanos);

    int receive(int peer, int tag, int[] into, int offset, long timeoutNanos);

    /** Bytes handed to the network since the transport formed (headers included). */
    long bytesSent();

    @Override
    void close();

    /** A peer closed its connection, stopped answering, or sent something this rank did not expect. */
    final class PeerFailedException extends RuntimeException {
        private final int peer;

        public PeerFailedException(int peer, String message) {
            super(message);
            this.peer = peer;
        }

        public int peer() {
            return peer;
        }
    }
}
