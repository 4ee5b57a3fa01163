package io.macfleet.node.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * UDP heartbeats on the cluster port: every rank sends its rank number to every peer every
 * {@link #INTERVAL_MILLIS} ms and records when it last heard each peer. A rank stopped with its TCP connections
 * still open (SIGSTOP, a hung machine) stops sending, so it is noticed within {@link #SILENCE_MILLIS} ms even when
 * nobody is waiting for a message from it.
 */
final class Heartbeat implements AutoCloseable {
    static final long INTERVAL_MILLIS = 100;
    static final long SILENCE_MILLIS = 1500;

    private final DatagramChannel channel;
    private final InetSocketAddress[] peers;
    private final int rank;
    private final AtomicLongArray lastHeard;
    private volatile boolean closed;

    Heartbeat(ClusterFile cluster, int rank) throws IOException {
        this.rank = rank;
        this.channel = DatagramChannel.open(StandardProtocolFamily.INET);
        channel.bind(new InetSocketAddress(cluster.rank(rank).clusterPort()));
        peers = new InetSocketAddress[cluster.size()];
        for (int peer = 0; peer < cluster.size(); peer++) {
            if (peer != rank) {
                peers[peer] = new InetSocketAddress(cluster.addressOf(rank, peer), cluster.rank(peer).clusterPort());
            }
        }
        lastHeard = new AtomicLongArray(cluster.size());
        long now = System.nanoTime();
        for (int peer = 0; peer < cluster.size(); peer++) {
            lastHeard.set(peer, now);
        }
        Thread.ofPlatform().daemon().name("heartbeat-send").start(this::sendLoop);
        Thread.ofPlatform().daemon().name("heartbeat-receive").start(this::receiveLoop);
    }

    /** Milliseconds since the peer was last heard. */
    long silentMillis(int peer) {
        return (System.nanoTime() - lastHeard.get(peer)) / 1_000_000;
    }

    /** Starts the silence clock of a peer afresh (a connection to it just formed). */
    void heard(int peer) {
        lastHeard.set(peer, System.nanoTime());
    }

    private void sendLoop() {
        ByteBuffer message = ByteBuffer.allocateDirect(4);
        while (!closed) {
            for (InetSocketAddress peer : peers) {
                if (peer != null) {
                    message.clear();
                    message.putInt(0, rank);
                    try {
                        channel.send(message, peer);
                    } catch (IOException ignored) {
                        // an unreachable peer is what the silence clock is for
                    }
                }
            }
            try {
                Thread.sleep(INTERVAL_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void receiveLoop() {
        ByteBuffer message = ByteBuffer.allocateDirect(16);
        while (!closed) {
            try {
                message.clear();
                channel.receive(message);
                if (message.position() == 4) {
                    int peer = message.getInt(0);
                    if (peer >= 0 && peer < lastHeard.length() && peer != rank) {
                        lastHeard.set(peer, System.nanoTime());
                    }
                }
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
