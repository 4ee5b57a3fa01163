package io.macfleet.node.cluster;

import io.macfleet.node.model.LlamaModel;

/**
 * All-reduce (sum) over a {@link Transport}. Small vectors (decode: one hidden state): every rank sends its
 * partial vector to every peer and sums all partials in rank order, so every rank computes the same floating
 * point sum whatever the arrival order (bit-identical results). Large vectors (prefill batches) on more than two
 * ranks: ring (reduce-scatter then all-gather, 2 (n-1)/n of the vector sent per rank instead of n-1 times it);
 * each chunk is summed by one fixed ring order and then copied, so ranks still agree bit for bit.
 */
public final class Collectives implements LlamaModel.Collective {
    static final int TAG_MESH = 10, TAG_RING = 11, TAG_GATHER = 12;
    /** Vectors from this many bytes use the ring on three or more ranks. */
    static final int RING_BYTES = 128 * 1024;

    private final Transport transport;
    private final long timeoutNanos;
    private float[][] partials = new float[0][];
    private float[] chunk = new float[0];

    public Collectives(Transport transport, long timeoutNanos) {
        this.transport = transport;
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    public void allReduce(float[] values, int length) {
        int size = transport.size();
        if (size == 1) {
            return;
        }
        if (size > 2 && length * Float.BYTES >= RING_BYTES) {
            ring(values, length);
        } else {
            mesh(values, length);
        }
    }

    void mesh(float[] values, int length) {
        int size = transport.size();
        int rank = transport.rank();
        if (partials.length != size || partials[0].length < length) {
            partials = new float[size][length];
        }
        for (int step = 1; step < size; step++) {
            transport.send((rank + step) % size, TAG_MESH, values, 0, length);
        }
        System.arraycopy(values, 0, partials[rank], 0, length);
        for (int step = 1; step < size; step++) {
            int peer = (rank - step + size) % size;
            int got = transport.receive(peer, TAG_MESH, partials[peer], 0, timeoutNanos);
            if (got != length) {
                throw new Transport.PeerFailedException(peer, "rank " + peer + " sent " + got
                        + " values to an all-reduce of " + length);
            }
        }
        float[] first = partials[0];
        System.arraycopy(first, 0, values, 0, length);
        for (int r = 1; r < size; r++) {
            float[] partial = partials[r];
            for (int i = 0; i < length; i++) {
                values[i] += partial[i];
            }
        }
    }

    /**
     * Gathers on rank 0: rank r holds {@code values[starts[r], starts[r + 1])}; rank 0 receives every other rank's
     * part into place, the others send theirs (vocabulary-parallel logits). The other ranks do not wait.
     */
    public void gather(float[] values, int[] starts) {
        int size = transport.size();
        int rank = transport.rank();
        if (rank != 0) {
            transport.send(0, TAG_GATHER, values, starts[rank], starts[rank + 1] - starts[rank]);
            return;
        }
        for (int peer = 1; peer < size; peer++) {
            int expected = starts[peer + 1] - starts[peer];
            int got = transport.receive(peer, TAG_GATHER, values, starts[peer], timeoutNanos);
            if (got != expected) {
                throw new Transport.PeerFailedException(peer, "rank " + peer + " sent " + got
                        + " values to a gather of " + expected);
            }
        }
    }

    void ring(float[] values, int length) {
        int size = transport.size();
        int rank = transport.rank();
        int next = (rank + 1) % size, previous = (rank - 1 + size) % size;
        int largest = (length + size - 1) / size;
        if (chunk.length < largest) {
            chunk = new float[largest];
        }
        for (int step = 0; step < size - 1; step++) {
            int sending = Math.floorMod(rank - step, size), receiving = Math.floorMod(rank - step - 1, size);
            transport.send(next, TAG_RING, values, start(sending, length, size), count(sending, length, size));
            int from = start(receiving, length, size);
            int got = transport.receive(previous, TAG_RING, chunk, 0, timeoutNanos);
            for (int i = 0; i < got; i++) {
                values[from + i] += chunk[i];
            }
        }
        for (int step = 0; step < size - 1; step++) {
            int sending = Math.floorMod(rank + 1 - step, size), receiving = Math.floorMod(rank - step, size);
            transport.send(next, TAG_RING, values, start(sending, length, size), count(sending, length, size));
            transport.receive(previous, TAG_RING, values, start(receiving, length, size), timeoutNanos);
        }
    }

    private static int start(int chunkIndex, int length, int size) {
        return (int) ((long) length * chunkIndex / size);
    }

    private static int count(int chunkIndex, int length, int size) {
        return start(chunkIndex + 1, length, size) - start(chunkIndex, length, size);
    }
}
