package io.macfleet.node.model;

/**
 * Keys and values of every layer for {@code capacity} positions (float32 or, as an option, float16, on the heap). Sized from the context
 * length asked for; allocation refuses with a clear message when the heap cannot hold it. Laid out for
 * {@link Attention}: per layer, each KV head's keys are one contiguous run of blocks of 64 positions, transposed
 * within a block ({@link Attention#keyOffset}); each KV head's values are one contiguous run of positions.
 */
public final class KvCache {
    /** F32 entries; null in a half-precision cache. */
    final float[][] keys;
    final float[][] values;
    /**
     * F16 entries, same layout; null in an F32 cache. Half the memory (and half the bytes a decode step reads); attention
     * converts one KV head's entries to F32 at a time ({@link #expand}).
     */
    final short[][] halfKeys;
    final short[][] halfValues;
    /** The system property that selects an F16 cache: {@code -Dinference.kvCache=f16}. */
    public static final String TYPE_PROPERTY = "inference.kvCache";
    /** Positions per KV head in {@link #keys} (the capacity rounded up to whole blocks). */
    final int paddedPositions;
    private final int capacity;
    private final int kvHeads, headDim;

    private KvCache(LlamaConfig config, int capacity, boolean half) {
        this.capacity = capacity;
        this.paddedPositions = Attention.paddedPositions(capacity);
        this.kvHeads = config.kvHeads();
        this.headDim = config.headDimension();
        keys = half ? null : new float[config.layers()][];
        values = half ? null : new float[config.layers()][];
        halfKeys = half ? new short[config.layers()][] : null;
        halfValues = half ? new short[config.layers()][] : null;
        for (int layer = 0; layer < config.layers(); layer++) {
            if (half) {
                halfKeys[layer] = new short[paddedPositions * config.kvDimension()];
                halfValues[layer] = new short[capacity * config.kvDimension()];
            } else {
                keys[layer] = new float[paddedPositions * config.kvDimension()];
                values[layer] = new float[capacity * config.kvDimension()];
            }
        }
    }

    /**
     * A latent cache (multi-head latent attention): per layer one row of {@code width} F32 values per position
     * ({@code keys[layer][position * width ..]}; the compressed KV and the rotated key part), no per-head entries and
     * no values. Refuses with the numbers when the heap cannot hold it.
     */
    public static KvCache latent(int layers, int width, int contextLength) {
        return latent(layers, width, contextLength, false);
    }

    /**
     * A latent cache of F16 entries ({@code half}: {@code halfKeys[layer][position * width ..]}, 2 bytes a value, as
     * llama.cpp's default {@code --cache-type-k f16}) or F32 ones.
     */
    public static KvCache latent(int layers, int width, int contextLength, boolean half) {
        if (contextLength <= 0) {
            throw new IllegalArgumentException("context length must be positive, got " + contextLength);
        }
        long needed = (long) layers * width * contextLength * (half ? 2 : Float.BYTES);
        Runtime runtime = Runtime.getRuntime();
        long available = runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
        if (needed > available - 64L * 1024 * 1024 || (long) width * contextLength > Integer.MAX_VALUE - 16) {
            throw new InsufficientMemoryException("the latent KV cache for a context of " + contextLength + " tokens needs "
                    + mb(needed) + " MB but only " + mb(available) + " MB of heap is available; ask for a smaller "
                    + "context (--context / contextLength) or give the JVM more memory (-Xmx)");
        }
        return new KvCache(layers, width, contextLength, half);
    }

    private KvCache(int layers, int width, int capacity, boolean half) {
        this.capacity = capacity;
        this.paddedPositions = capacity;
        this.kvHeads = 1;
        this.headDim = width;
        keys = half ? null : new float[layers][];
        values = half ? null : new float[layers][];
        halfKeys = half ? new short[layers][] : null;
        halfValues = half ? new short[layers][] : null;
        for (int layer = 0; layer < layers; layer++) {
            if (half) {
                halfKeys[layer] = new short[capacity * width];
                halfValues[layer] = new short[0];
            } else {
                keys[layer] = new float[capacity * width];
                values[layer] = new float[0];
            }
        }
    }

    /** Whether entries are stored in half precision. */
    public boolean half() {
        return halfKeys != null;
    }

    /**
     * Converts KV head {@code kvHead}'s keys (positions [0, length) rounded up to whole blocks) and values (positions
     * [0, length)) of a half-precision cache to F32, into {@code keyScratch[0 ..]} and {@code valueScratch[0 ..]} in the
     * same layout (keys at {@code keyOffset}, values headDim apart).
     */
    void expand(int layer, int kvHead, int length, float[] keyScratch, float[] valueScratch) {
        short[] k = halfKeys[layer], v = halfValues[layer];
        int keyCount = Attention.paddedPositions(length) * headDim, keyBase = keyBase(kvHead);
        for (int i = 0; i < keyCount; i++) {
            keyScratch[i] = Float.float16ToFloat(k[keyBase + i]);
        }
        int valueCount = length * headDim, valueBase = valueBase(kvHead);
        for (int i = 0; i < valueCount; i++) {
            valueScratch[i] = Float.float16ToFloat(v[valueBase + i]);
        }
    }

    /** Floats of scratch {@link #expand} needs for a KV head's keys and values. */
    int headEntries() {
        return paddedPositions * headDim;
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
        if (half()) {
            storeHalf(layer, k, v, position, count);
            return;
        }
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

    private void storeHalf(int layer, float[] k, float[] v, int position, int count) {
        short[] layerKeys = halfKeys[layer], layerValues = halfValues[layer];
        int kvDim = kvHeads * headDim;
        for (int t = 0; t < count; t++) {
            int p = position + t;
            for (int h = 0; h < kvHeads; h++) {
                int source = t * kvDim + h * headDim;
                int keyRow = keyBase(h) + Attention.keyOffset(p, 0, headDim);
                int valueRow = valueBase(h) + p * headDim;
                for (int d = 0; d < headDim; d++) {
                    layerKeys[keyRow + d * Attention.BLOCK] = Float.floatToFloat16(k[source + d]);
                    layerValues[valueRow + d] = Float.floatToFloat16(v[source + d]);
                }
            }
        }
    }

    /** An F32 cache, or F16 when the system property {@value #TYPE_PROPERTY} is {@code f16}. */
    public static KvCache allocate(LlamaConfig config, int contextLength) {
        String type = System.getProperty(TYPE_PROPERTY, "f32");
        if (!type.equals("f32") && !type.equals("f16")) {
            throw new IllegalArgumentException("-D" + TYPE_PROPERTY + "=" + type + ": the KV cache type must be f32 or f16");
        }
        return allocate(config, contextLength, type.equals("f16"));
    }

    public static KvCache allocate(LlamaConfig config, int contextLength, boolean half) {
        if (contextLength <= 0) {
            throw new IllegalArgumentException("context length must be positive, got " + contextLength);
        }
        long needed = (config.kvCacheBytes(contextLength)
                + (long) config.layers() * config.kvDimension() * (Attention.paddedPositions(contextLength) - contextLength) * Float.BYTES)
                / (half ? 2 : 1);
        Runtime runtime = Runtime.getRuntime();
        long available = runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
        long perLayer = needed / config.layers() / 2;
        if (needed > available - 64L * 1024 * 1024 || perLayer / Float.BYTES > Integer.MAX_VALUE - 16 - Attention.BLOCK * (long) config.kvDimension()) {
            throw new InsufficientMemoryException("the KV cache for a context of " + contextLength + " tokens needs "
                    + mb(needed) + " MB but only " + mb(available) + " MB of heap is available; ask for a smaller "
                    + "context (--context / contextLength) or give the JVM more memory (-Xmx)");
        }
        try {
            return new KvCache(config, contextLength, half);
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
        for (int layer = 0; layer < (half() ? halfKeys.length : keys.length); layer++) {
            bytes += half() ? 2L * (halfKeys[layer].length + halfValues[layer].length) : 4L * (keys[layer].length + values[layer].length);
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
