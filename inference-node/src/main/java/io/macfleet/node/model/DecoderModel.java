package io.macfleet.node.model;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A loaded decoder-only model (or a pipeline stage of one) as the engine, the cluster and the bench drive it,
 * whatever its {@link Architecture}: prompt batches and decode steps over a {@link KvCache}, pipeline stages over
 * hidden states, tensor-parallel partial sums through a {@link LlamaModel.Collective}, phase timing.
 */
public interface DecoderModel {
    LlamaConfig config();

    /** Runs {@code count} tokens from cache position {@code position}; the last one's logits, or null without them. */
    float[] forward(int[] tokens, int from, int count, int position, KvCache cache, boolean logits);

    default float[] forward(int[] tokens, int from, int count, int position, KvCache cache) {
        return forward(tokens, from, count, position, cache, true);
    }

    /** One pipeline stage: this model's layers on {@code hidden} (or on the embeddings when null); scratch returned. */
    float[] forwardStage(int[] tokens, int from, float[] hidden, int count, int position, KvCache cache);

    /** Output RMSNorm and output matrix of the hidden state at {@code hidden[offset ..]}. */
    float[] logits(float[] hidden, int offset);

    void collective(LlamaModel.Collective collective);

    /** Wall and CPU nanoseconds per {@link LlamaModel.Phase} (2 x phases entries); null stops. */
    void profile(long[] nanos);

    /** Wall nanoseconds per {@link LlamaModel.Phase}; null stops. */
    void profileWall(long[] nanos);

    /** Bytes of weights one decode step reads (the selected experts only, by their size). */
    long bytesPerToken();

    /** The weight matrices one decode step reads, in order (the bench streams them to bound decode). */
    List<MemorySegment> decodeWeights();

    /**
     * Values the KV cache holds per position over this model's layers: 2 x KV heads x head width for grouped-query
     * attention, {@code kv_lora_rank + qk_rope_head_dim} for multi-head latent attention.
     */
    long kvValuesPerPosition();

    /** The same for plain multi-head attention with every head's keys and values cached (what MLA saves against). */
    long multiHeadKvValuesPerPosition();

    /** A KV cache for this model's layers. */
    KvCache allocateCache(int contextLength);
}
