package io.macfleet.models;

/**
 * What the memory fit needs to know of a model's attention, read from the GGUF header or MLX config.json: the number
 * of layers, of key-value heads and the size of one head. A value the model does not state is 0 (the fit then counts
 * no KV cache and says so).
 *
 * @param contextLength the context the model was trained for (0 when not stated)
 */
public record ModelShape(int layers, int keyValueHeads, int headDimension, int contextLength) {

    public static final ModelShape UNKNOWN = new ModelShape(0, 0, 0, 0);

    public boolean known() {
        return layers > 0 && keyValueHeads > 0 && headDimension > 0;
    }

    /** Bytes of KV cache per token of context: keys and values, each an f16 per head dimension, per layer. */
    public long keyValueBytesPerToken() {
        return known() ? 2L * layers * keyValueHeads * headDimension * 2L : 0;
    }
}
