package io.macfleet.node.model;

/**
 * Keys and values of every layer for {@code capacity} positions (float32, on the heap). Sized from the context
 * length asked for; allocation refuses with a clear message when the heap cannot hold it. Laid out for
 * {@link Attention}: per layer, each KV head's keys are one contiguous run of blocks of 64 positions, transposed
 * within a block ({@link Attention#keyOffset}); each KV head's values are one contiguous run of positions.
 */
public final class KvCache {
    final float[][] keys;
    final float[][] values;
    /** Positions per KV head in {@link #keys} (the capacity rounded up to whole blocks). */
    final int paddedPositions;
    private final int capacity;
    private final int kvHeads, headDim;

    private KvCache(LlamaConfig config, int capacity) {
        this.capacity = capacity;
        this.paddedPositions = Attention.paddedPositions(capacity);
        this.kvHeads = config.kvHeads();
        this.headDim = config.headDimension();
        keys = new float[config.layers()][];
        values = new float[config.layers()][];
        for (int layer = 0; layer < config.layers(); layer++) {
            keys[layer] = new float[paddedPositions * config.kvDimension()];
            values[layer] = new float[capacity * config.kvDimension()];
        }
    }

    /** Offset of KV head {@code kvHead}'s first key in a layer's keys. */
    int keyBase(int kvHead) {
        return kvHead * paddedPositions * headDim;
    }

    /** Offset of KV head {@code kvHead}'s first value in a layer's values; its positions are headDim apart. */
    int valueBase(int kvHead) {
        return kvHead * capacity * headDim;
    }

    /**
     * Stores the keys and values of {@code count} positions from {@code position}: position t's at
     * {@code k[t * kvDim ..]} and {@code v[t * kvDim ..]}, KV head h's dimensions at {@code h * headDim ..}.
     */
    void store(int layer, float[] k, float[] v, int position, int count) {
        float[] layerKeys = keys[layer], layerValues = values[layer];
        int kvDim = kvHeads * headDim;
        for (int t = 0; t < count; t++) {
            int p = position + t;
            for (int h = 0; h < kvHeads; h++) {
                int source = t * kvDim + h * headDim;
                int keyRow = keyBase(h) + Attention.keyOffset(p, 0, headDim);
                for (int d = 0; d < headDim; d++) {
                    layerKeys[keyRow + d * Attention.BLOCK] = k[source + d];
                }
                System.arraycopy(v, source, layerValues, valueBase(h) + p * headDim, headDim);
            }
        }
    }

    public static KvCache allocate(LlamaConfig config, int contextLength) {
        if (contextLength <= 0) {
            throw new IllegalArgumentException("context length must be positive, got " + contextLength);
        }
        long needed = config.kvCacheBytes(contextLength)
                + (long) config.layers() * config.kvDimension() * (Attention.paddedPositions(contextLength) - contextLength) * Float.BYTES;
        Runtime runtime = Runtime.getRuntime();
        long available = runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
        long perLayer = needed / config.layers() / 2;
        if (needed > available - 64L * 1024 * 1024 || perLayer / Float.BYTES > Integer.MAX_VALUE - 16 - Attention.BLOCK * (long) config.kvDimension()) {
            throw new InsufficientMemoryException("the KV cache for a context of " + contextLength + " tokens needs "
                    + mb(needed) + " MB but only " + mb(available) + " MB of heap is available; ask for a smaller "
                    + "context (--context / contextLength) or give the JVM more memory (-Xmx)");
        }
        try {
            return new KvCache(config, contextLength);
        } catch (OutOfMemoryError e) {
            throw new InsufficientMemoryException("out of memory allocating the KV cache for a context of "
                    + contextLength + " tokens (" + mb(needed) + " MB); ask for a smaller context or raise -Xmx");
        }
    }

    private static long mb(long bytes) {
        return bytes / (1024 * 1024);
    }

    public int capacity() {
        return capacity;
    }

    public long byteSize() {
        long bytes = 0;
        for (int layer = 0; layer < keys.length; layer++) {
            bytes += 4L * (keys[layer].length + values[layer].length);
        }
        return bytes;
    }

    /** Thrown when the KV cache (or another buffer) does not fit in memory. */
    public static final class InsufficientMemoryException extends RuntimeException {
        public InsufficientMemoryException(String message) {
            super(message);
        }
    }
}
