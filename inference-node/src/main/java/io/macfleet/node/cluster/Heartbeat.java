package io.macfleet.node.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * UDP heartbeats on the cluster port: every rank sends a heartbeat to every connected peer every
 * {@link #INTERVAL_MILLIS} ms and records when it last heard each peer. A rank stopped with its TCP connections
 * still open (SIGSTOP, a hung machine) stops sending, so it is noticed within {@link #SILENCE_MILLIS} ms even when
 * nobody is waiting for a message from it.
 * <p>
 * A heartbeat counts only when it is authentic and new: it carries (sender, receiver, sequence) and an HMAC under
 * the key of the sender's current mesh connection ({@link #session}, derived from the cluster key and both sides'
 * handshake nonces), comes from one of the sender's addresses, and its sequence is above the last one counted. So
 * spoofed datagrams, heartbeats replayed from this or an earlier connection, and reflected ones are dropped, and a
 * hung rank is still noticed. The channels listen on the rank's own addresses from the cluster file only.
 */
final class Heartbeat implements AutoCloseable {
    static final long INTERVAL_MILLIS = 100;
    static final long SILENCE_MILLIS = 1500;
    static final int MAGIC = 0x4D464831; // "MFH1"
    static final int MAC_BYTES = 16;
    static final int BYTES = 4 + 4 + 4 + 8 + MAC_BYTES;

    /** One connection's heartbeat key and counters. */
    private record Session(byte[] key, AtomicLong sent, AtomicLong lastReceived) {
    }

    private final ClusterAddresses addresses;
    private final Map<InetAddress, DatagramChannel> channels = new LinkedHashMap<>();
    private final Selector selector;
    private final InetSocketAddress[] peers;
    private final DatagramChannel[] sendFrom;
    private final int rank;
    private final AtomicLongArray lastHeard;
    private final AtomicReferenceArray<Session> sessions;
    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean closed;

    Heartbeat(ClusterFile cluster, int rank) throws IOException {
        this(cluster, ClusterAddresses.resolve(cluster), rank);
    }

    Heartbeat(ClusterFile cluster, ClusterAddresses addresses, int rank) throws IOException {
        this.rank = rank;
        this.addresses = addresses;
        int port = cluster.rank(rank).clusterPort();
        selector = Selector.open();
        try {
            for (InetAddress own : addresses.of(rank)) {
                DatagramChannel channel = DatagramChannel.open(own instanceof java.net.Inet6Address
                        ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
                channels.put(own, channel);
                channel.bind(new InetSocketAddress(own, port));
                channel.configureBlocking(false);
                channel.register(selector, SelectionKey.OP_READ);
            }
        } catch (IOException e) {
            close();
            throw new IOException("heartbeats (UDP) on " + addresses.of(rank).stream().map(InetAddress::getHostAddress).toList()
                    + " port " + port + ": " + e.getMessage(), e);
        }
        peers = new InetSocketAddress[cluster.size()];
        sendFrom = new DatagramChannel[cluster.size()];
        for (int peer = 0; peer < cluster.size(); peer++) {
            if (peer != rank) {
                peers[peer] = new InetSocketAddress(cluster.addressOf(rank, peer), cluster.rank(peer).clusterPort());
                DatagramChannel source = channels.get(ClusterAddresses.resolve(cluster.sourceAddress(rank, peer), rank));
                sendFrom[peer] = source != null ? source : channels.values().iterator().next();
            }
        }
        lastHeard = new AtomicLongArray(cluster.size());
        sessions = new AtomicReferenceArray<>(cluster.size());
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

    /** A new connection to {@code peer}: its heartbeats are checked under this key, with sequences from 1 again. */
    void session(int peer, byte[] key) {
        sessions.set(peer, new Session(key.clone(), new AtomicLong(), new AtomicLong()));
        heard(peer);
    }

    /** Datagrams dropped as not authentic, not new, or not from the sender's addresses (for tests and the log). */
    long dropped() {
        return dropped.get();
    }

    /** The datagram rank {@code from} sends to {@code to}. */
    static ByteBuffer message(byte[] key, int from, int to, long sequence) {
        ByteBuffer message = ByteBuffer.allocate(BYTES);
        message.putInt(MAGIC).putInt(from).putInt(to).putLong(sequence);
        message.put(mac(key, message.array(), BYTES - MAC_BYTES));
        return message.flip();
    }

    private static byte[] mac(byte[] key, byte[] bytes, int length) {
        return Arrays.copyOf(ClusterKey.hmac(key, Arrays.copyOf(bytes, length)), MAC_BYTES);
    }

    private void sendLoop() {
        while (!closed) {
            for (int peer = 0; peer < peers.length; peer++) {
                Session session = sessions.get(peer);
                if (peers[peer] != null && session != null) {
                    try {
                        sendFrom[peer].send(message(session.key(), rank, peer, session.sent().incrementAndGet()), peers[peer]);
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
        ByteBuffer message = ByteBuffer.allocate(64);
        while (!closed) {
            try {
                selector.select(INTERVAL_MILLIS);
                selector.selectedKeys().clear();
                for (DatagramChannel channel : channels.values()) {
                    while (true) {
                        message.clear();
                        if (!(channel.receive(message) instanceof InetSocketAddress sender)) {
                            break;
                        }
                        if (!accept(message, sender.getAddress())) {
                            dropped.incrementAndGet();
                        }
                    }
                }
            } catch (IOException | java.nio.channels.ClosedSelectorException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    /** Counts a heartbeat when it is authentic and new (see the class comment). */
    boolean accept(ByteBuffer message, InetAddress sender) {
        if (message.position() != BYTES || message.getInt(0) != MAGIC || message.getInt(8) != rank) {
            return false;
        }
        int peer = message.getInt(4);
        if (peer == rank || !addresses.allowed(peer, sender)) {
            return false;
        }
        Session session = sessions.get(peer);
        if (session == null) {
            return false;
        }
        byte[] bytes = Arrays.copyOf(message.array(), BYTES);
        byte[] given = Arrays.copyOfRange(bytes, BYTES - MAC_BYTES, BYTES);
        if (!ClusterKey.same(mac(session.key(), bytes, BYTES - MAC_BYTES), given)) {
            return false;
        }
        long sequence = message.getLong(12);
        long last = session.lastReceived().get();
        if (sequence <= last || !session.lastReceived().compareAndSet(last, sequence)) {
            return false; // a replay (or an old datagram overtaken by a newer one)
        }
        lastHeard.set(peer, System.nanoTime());
        return true;
    }

    @Override
    public void close() {
        closed = true;
        List<DatagramChannel> open = new ArrayList<>(channels.values());
        for (DatagramChannel channel : open) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
