package io.macfleet.node.model;

/**
 * Keys and values of every layer for {@code capacity} positions (float32, on the heap). Sized from the context
 * length asked for; allocation refuses with a clear message when the heap cannot hold it. Keys are transposed: KV
 * dimension i of position j at {@code i * keyStride + j} ({@link Attention}); values are position-major: at
 * {@code j * kvDimension + i}.
 */
public final class KvCache {
    final float[][] keys;
    final float[][] values;
    final int keyStride;
    private final int capacity;

    private KvCache(LlamaConfig config, int capacity) {
        this.capacity = capacity;
        this.keyStride = Attention.keyStride(capacity);
        keys = new float[config.layers()][];
        values = new float[config.layers()][];
        for (int layer = 0; layer < config.layers(); layer++) {
            keys[layer] = new float[keyStride * config.kvDimension()];
            values[layer] = new float[capacity * config.kvDimension()];
        }
    }

    /** Stores the keys of {@code count} positions from {@code position}, position t's at {@code k[t * kvDim ..]}. */
    void storeKeys(int layer, float[] k, int position, int count, int kvDim) {
        float[] target = keys[layer];
        for (int t = 0; t < count; t++) {
            for (int i = 0; i < kvDim; i++) {
                target[i * keyStride + position + t] = k[t * kvDim + i];
            }
        }
    }

    public static KvCache allocate(LlamaConfig config, int contextLength) {
        if (contextLength <= 0) {
            throw new IllegalArgumentException("context length must be positive, got " + contextLength);
        }
        long needed = config.kvCacheBytes(contextLength)
                + (long) config.layers() * config.kvDimension() * (Attention.keyStride(contextLength) - contextLength) * Float.BYTES;
        Runtime runtime = Runtime.getRuntime();
        long available = runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
        long perLayer = needed / config.layers() / 2;
        if (needed > available - 64L * 1024 * 1024 || perLayer / Float.BYTES > Integer.MAX_VALUE - 16 - Attention.POSITION_PADDING * (long) config.kvDimension()) {
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
