package io.macfleet.node.cluster;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * {@link Transport} over one TCP connection per pair of ranks (TCP_NODELAY), non-blocking channels with one
 * direct send and one direct receive buffer per peer (grown when a larger message comes, otherwise reused: no
 * allocation per message). A message is a frame: tag (int), payload length in bytes (int), payload (native order).
 * <p>
 * Forming: rank r connects to every lower rank and accepts every higher one through {@link MeshHandshake} (both
 * prove the cluster key, then exchange their identities: node version, model identity, parallelism, plan, context);
 * the accepting side compares and answers with its own identity or a refusal naming the first difference.
 */
public final class TcpTransport implements Transport {
    private static final int HEADER = 8;
    private static final int INITIAL_BUFFER = 256 * 1024;
    /** While spinning, the heartbeat and deadline are checked this often (as often as a parked wait wakes at most). */
    private static final long SPIN_CHECK_NANOS = 1_000_000L;
    /**
     * A spin iteration (one non-blocking read) takes microseconds; a gap this long means the spinning thread lost its
     * core to another runnable thread, so the machine is oversubscribed after all (other work, a loaded host): the
     * wait parks, and so do the waits of the next {@link #PARK_AFTER_PREEMPTION_NANOS} (then spinning is tried again).
     */
    private static final long PREEMPTED_NANOS = 1_000_000L;
    private static final long PARK_AFTER_PREEMPTION_NANOS = 1_000_000_000L;

    private final int rank;
    private final int size;
    private final SocketChannel[] channels;
    private final SelectionKey[] keys;
    private final Selector selector;
    private final ByteBuffer[] out;
    private final ByteBuffer[] in;
    /** The buffers as memory segments from byte 0 (a segment of a buffer starts at its position when made). */
    private final MemorySegment[] outMemory, inMemory;
    private final Heartbeat heartbeat;
    /** How long a receive spins on a non-blocking read before parking in select ({@link WaitPolicy}). */
    private final long spinNanos;
    /** The largest message the shard plan sends; a header announcing more is a fault, not an allocation. */
    private final int maximumMessageBytes;
    /** Until when waits park after the short spin, because a spin was preempted ({@link #PREEMPTED_NANOS}). */
    private long parkUntil;
    private volatile long spinsPreempted;
    private long bytesSent;
    private volatile long waitNanos;
    private volatile boolean closed;

    private TcpTransport(int rank, SocketChannel[] channels, Heartbeat heartbeat, WaitPolicy waits, int maximumMessageBytes)
            throws IOException {
        this.rank = rank;
        this.maximumMessageBytes = maximumMessageBytes;
        this.spinNanos = waits.spinNanos();
        this.size = channels.length;
        this.channels = channels;
        this.heartbeat = heartbeat;
        this.selector = Selector.open();
        keys = new SelectionKey[size];
        out = new ByteBuffer[size];
        in = new ByteBuffer[size];
        outMemory = new MemorySegment[size];
        inMemory = new MemorySegment[size];
        for (int peer = 0; peer < size; peer++) {
            if (peer != rank) {
                channels[peer].configureBlocking(false);
                keys[peer] = channels[peer].register(selector, 0);
                out[peer] = ByteBuffer.allocateDirect(INITIAL_BUFFER).order(ByteOrder.nativeOrder());
                in[peer] = ByteBuffer.allocateDirect(INITIAL_BUFFER).order(ByteOrder.nativeOrder());
                outMemory[peer] = MemorySegment.ofBuffer(out[peer]);
                inMemory[peer] = MemorySegment.ofBuffer(in[peer]);
                if (heartbeat != null) {
                    heartbeat.heard(peer);
                }
            }
        }
    }

    /** A refused handshake: the ranks are not running the same thing; restarting will not help. */
    public static final class HandshakeRefusedException extends RuntimeException {
        public HandshakeRefusedException(String message) {
            super(message);
        }
    }

    /**
     * Forms the mesh for {@code rank}: connects to lower ranks (retrying until they listen) and accepts higher
     * ones on {@code listeners} (one per address of this rank), each through {@link MeshHandshake}. Returns null when
     * {@code stopped} turns true first. Refusals this rank gives to a mismatched (authenticated) peer are reported
     * to {@code status} and the peer is waited for again; a refusal this rank gets throws
     * {@link HandshakeRefusedException}. A message of more than {@code maximumMessageBytes} from a peer fails it.
     */
    static TcpTransport form(ClusterFile cluster, int rank, List<ServerSocketChannel> listeners, MeshHandshake handshake,
                             Heartbeat heartbeat, WaitPolicy waits, BooleanSupplier stopped, Consumer<String> status,
                             int maximumMessageBytes) throws IOException {
        int size = cluster.size();
        SocketChannel[] channels = new SocketChannel[size];
        try {
            for (int peer = 0; peer < rank; peer++) {
                while (channels[peer] == null) {
                    if (stopped.getAsBoolean()) {
                        closeAll(channels);
                        return null;
                    }
                    status.accept("connecting to rank " + peer + " at " + cluster.addressOf(rank, peer) + ":" + cluster.rank(peer).clusterPort());
                    MeshHandshake.Connection connection = handshake.connect(peer, status);
                    if (connection == null) {
                        sleep(200);
                    } else {
                        channels[peer] = connection.channel();
                        startHeartbeats(heartbeat, connection);
                    }
                }
            }
            try (Selector accepting = Selector.open()) {
                for (ServerSocketChannel listener : listeners) {
                    listener.configureBlocking(false);
                    listener.register(accepting, SelectionKey.OP_ACCEPT);
                }
                String refusal = null;
                while (missingAbove(channels, rank) != null) {
                    if (stopped.getAsBoolean()) {
                        closeAll(channels);
                        return null;
                    }
                    status.accept("waiting for rank" + missingAbove(channels, rank) + (refusal == null ? "" : "; " + refusal));
                    accepting.select(200);
                    accepting.selectedKeys().clear();
                    for (ServerSocketChannel listener : listeners) {
                        SocketChannel channel = listener.accept();
                        if (channel == null) {
                            continue;
                        }
                        MeshHandshake.Accepted accepted = handshake.accept(channel);
                        refusal = accepted.refusal() != null ? accepted.refusal() : refusal;
                        MeshHandshake.Connection connection = accepted.connection();
                        if (connection != null) {
                            if (channels[connection.peer()] != null) {
                                channels[connection.peer()].close(); // the peer restarted while this rank was forming
                            }
                            channels[connection.peer()] = connection.channel();
                            startHeartbeats(heartbeat, connection);
                        }
                    }
                }
            }
            return new TcpTransport(rank, channels, heartbeat, waits, maximumMessageBytes);
        } catch (IOException | RuntimeException e) {
            closeAll(channels);
            throw e;
        }
    }

    /**
     * Heartbeats to and from a peer start as soon as its connection is made, not when the whole mesh is: the peer may
     * finish forming first and start counting this rank's silence.
     */
    private static void startHeartbeats(Heartbeat heartbeat, MeshHandshake.Connection connection) {
        if (heartbeat != null) {
            heartbeat.session(connection.peer(), connection.heartbeatKey());
        }
    }

    private static String missingAbove(SocketChannel[] channels, int rank) {
        StringBuilder missing = new StringBuilder();
        for (int peer = rank + 1; peer < channels.length; peer++) {
            if (channels[peer] == null) {
                missing.append(missing.isEmpty() ? "" : ",").append(' ').append(peer);
            }
        }
        return missing.isEmpty() ? null : (missing.indexOf(",") >= 0 ? "s" : "") + missing;
    }

    private static void closeAll(SocketChannel[] channels) {
        for (SocketChannel channel : channels) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public long bytesSent() {
        return bytesSent;
    }

    /** Long spins this transport cut short because the spinning thread was preempted (the cores are shared). */
    public long spinsPreempted() {
        return spinsPreempted;
    }

    /** Nanoseconds spent waiting in receives since the transport formed (communication plus imbalance). */
    public long waitNanos() {
        return waitNanos;
    }

    @Override
    public void send(int peer, int tag, float[] values, int offset, int length) {
        ByteBuffer buffer = frame(peer, tag, length * Float.BYTES);
        MemorySegment.copy(values, offset, outMemory[peer], ValueLayout.JAVA_FLOAT_UNALIGNED,
                buffer.position(), length);
        finishFrame(peer, buffer, length * Float.BYTES);
    }

    @Override
    public void send(int peer, int tag, int[] values, int offset, int length) {
        ByteBuffer buffer = frame(peer, tag, length * Integer.BYTES);
        MemorySegment.copy(values, offset, outMemory[peer], ValueLayout.JAVA_INT_UNALIGNED,
                buffer.position(), length);
        finishFrame(peer, buffer, length * Integer.BYTES);
    }

    private ByteBuffer frame(int peer, int tag, int bytes) {
        check(peer);
        ByteBuffer buffer = out[peer];
        if (buffer.remaining() < HEADER + bytes) {
            flush(peer);
            if (buffer.remaining() < HEADER + bytes) {
                ByteBuffer larger = ByteBuffer.allocateDirect(Math.max(buffer.capacity() * 2, buffer.position() + HEADER + bytes))
                        .order(ByteOrder.nativeOrder());
                buffer.flip();
                larger.put(buffer);
                out[peer] = buffer = larger;
                outMemory[peer] = MemorySegment.ofBuffer(larger.duplicate().clear());
            }
        }
        buffer.putInt(tag).putInt(bytes);
        return buffer;
    }

    private void finishFrame(int peer, ByteBuffer buffer, int bytes) {
        buffer.position(buffer.position() + bytes);
        bytesSent += HEADER + bytes;
        flush(peer);
    }

    /** Writes what the socket takes now; the rest goes out while this rank waits in a receive. */
    private void flush(int peer) {
        ByteBuffer buffer = out[peer];
        if (buffer.position() == 0) {
            return;
        }
        buffer.flip();
        try {
            channels[peer].write(buffer);
        } catch (IOException e) {
            buffer.compact();
            throw failed(peer, "rank " + peer + " connection failed while sending: " + e.getMessage());
        }
        buffer.compact();
    }

    @Override
    public int receive(int peer, int tag, float[] into, int offset, long timeoutNanos) {
        int bytes = await(peer, tag, timeoutNanos);
        ByteBuffer buffer = in[peer];
        MemorySegment.copy(inMemory[peer], ValueLayout.JAVA_FLOAT_UNALIGNED, HEADER, into, offset,
                bytes / Float.BYTES);
        consume(buffer, bytes);
        return bytes / Float.BYTES;
    }

    @Override
    public int receive(int peer, int tag, int[] into, int offset, long timeoutNanos) {
        int bytes = await(peer, tag, timeoutNanos);
        ByteBuffer buffer = in[peer];
        MemorySegment.copy(inMemory[peer], ValueLayout.JAVA_INT_UNALIGNED, HEADER, into, offset,
                bytes / Integer.BYTES);
        consume(buffer, bytes);
        return bytes / Integer.BYTES;
    }

    private static void consume(ByteBuffer buffer, int bytes) {
        int filled = buffer.position();
        int used = HEADER + bytes;
        buffer.position(used).limit(filled);
        buffer.compact();
    }

    /** Waits until a whole frame from peer is in its receive buffer; returns its payload length. */
    private int await(int peer, int tag, long timeoutNanos) {
        check(peer);
        long start = System.nanoTime();
        long spinUntil = start + (start < parkUntil ? Math.min(spinNanos, WaitPolicy.PARK_AFTER_NANOS) : spinNanos);
        long nextCheck = start + SPIN_CHECK_NANOS;
        long previous = start;
        while (true) {
            ByteBuffer buffer = in[peer];
            if (buffer.position() >= HEADER) {
                int gotTag = buffer.getInt(0);
                int bytes = buffer.getInt(4);
                if (bytes < 0 || bytes > maximumMessageBytes) {
                    throw failed(peer, "rank " + peer + " sent a message of " + Integer.toUnsignedString(bytes)
                            + " bytes; the largest this cluster's plan sends is " + maximumMessageBytes);
                }
                if (gotTag != tag) {
                    throw failed(peer, "rank " + peer + " sent message tag " + gotTag + " where this rank expected "
                            + tag + " (protocol mismatch)");
                }
                if (buffer.position() >= HEADER + bytes) {
                    waitNanos += System.nanoTime() - start;
                    return bytes;
                }
                if (buffer.capacity() < HEADER + bytes) {
                    ByteBuffer larger = ByteBuffer.allocateDirect(HEADER + bytes).order(ByteOrder.nativeOrder());
                    buffer.flip();
                    larger.put(buffer);
                    in[peer] = buffer = larger;
                    inMemory[peer] = MemorySegment.ofBuffer(larger.duplicate().clear());
                }
            }
            boolean pending = false;
            for (int other = 0; other < size; other++) {
                if (other != rank && out[other].position() > 0) {
                    flush(other);
                    pending |= out[other].position() > 0;
                }
            }
            int read;
            try {
                read = channels[peer].read(buffer);
            } catch (IOException e) {
                throw failed(peer, "rank " + peer + " connection failed: " + e.getMessage());
            }
            if (read < 0) {
                throw failed(peer, "rank " + peer + " closed its connection (process ended?)");
            }
            long now = System.nanoTime();
            if (now - previous > PREEMPTED_NANOS && now < spinUntil && spinUntil - start > WaitPolicy.PARK_AFTER_NANOS) {
                spinUntil = now; // this core is wanted by someone else: park now, and for a while
                parkUntil = now + PARK_AFTER_PREEMPTION_NANOS;
                spinsPreempted++;
            }
            previous = now;
            if (read > 0) {
                continue;
            }
            boolean spinning = now < spinUntil;
            if (!spinning || now >= nextCheck) {
                nextCheck = now + SPIN_CHECK_NANOS;
                checkAlive();
                if (timeoutNanos > 0 && now - start > timeoutNanos) {
                    throw failed(peer, "no message from rank " + peer + " for " + timeoutNanos / 1_000_000 + " ms");
                }
            }
            if (spinning) {
                Thread.onSpinWait();
                continue;
            }
            try {
                for (int other = 0; other < size; other++) {
                    if (other != rank) {
                        int interest = (other == peer ? SelectionKey.OP_READ : 0)
                                | (pending && out[other].position() > 0 ? SelectionKey.OP_WRITE : 0);
                        keys[other].interestOps(interest);
                    }
                }
                selector.select(Heartbeat.INTERVAL_MILLIS);
                selector.selectedKeys().clear();
            } catch (IOException | java.nio.channels.ClosedSelectorException | java.nio.channels.CancelledKeyException e) {
                throw failed(peer, "waiting for rank " + peer + " failed: " + e.getMessage());
            }
        }
    }

    /** Fails when a peer has been silent too long (stopped or hung with its connection open). */
    void checkAlive() {
        if (heartbeat == null) {
            return;
        }
        for (int other = 0; other < size; other++) {
            if (other != rank) {
                long silent = heartbeat.silentMillis(other);
                if (silent > Heartbeat.SILENCE_MILLIS) {
                    throw failed(other, "rank " + other + " has not answered for " + silent + " ms (stopped or hung)");
                }
            }
        }
    }

    /** For an idle rank: fails when a peer closed its connection or went silent. */
    void probe() {
        checkAlive();
        for (int peer = 0; peer < size; peer++) {
            if (peer != rank) {
                try {
                    if (channels[peer].read(in[peer]) < 0) {
                        throw failed(peer, "rank " + peer + " closed its connection (process ended?)");
                    }
                } catch (IOException e) {
                    throw failed(peer, "rank " + peer + " connection failed: " + e.getMessage());
                }
            }
        }
    }

    private void check(int peer) {
        if (closed) {
            throw new PeerFailedException(peer, "the cluster connections are closed");
        }
        if (peer == rank || peer < 0 || peer >= size) {
            throw new IllegalArgumentException("rank " + rank + " cannot exchange messages with rank " + peer);
        }
    }

    private PeerFailedException failed(int peer, String message) {
        return new PeerFailedException(peer, message);
    }

    @Override
    public void close() {
        closed = true;
        closeAll(channels);
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
