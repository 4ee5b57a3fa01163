package io.macfleet.node.engine;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.Architectures;
import io.macfleet.node.model.DecoderModel;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.LayerRange;
import io.macfleet.node.model.LlamaConfig;

/**
 * Where the model runs: on this node alone ({@link #LOCAL}), or on a cluster that this node drives (rank 0 of
 * tensor or pipeline parallelism), which gives its own shard, KV cache and forward pass.
 */
public interface Placement {
    /** This node's model part, its KV cache and the forward pass generations call. */
    record Placed(DecoderModel model, KvCache cache, ForwardPass forward) {
    }

    /** Runs positions through the whole model (wherever its parts are) and returns the last position's logits. */
    interface ForwardPass {
        float[] forward(int[] tokens, int from, int count, int position);

        /**
         * False when positions computed before may be gone (a cluster re-formed after a failure): the engine then
         * computes the whole prompt again instead of reusing its cached prefix.
         */
        default boolean prefixValid() {
            return true;
        }
    }

    Placed place(GgufFile file, LlamaConfig config, int contextLength, WorkerPool pool);

    Placement LOCAL = (file, config, contextLength, pool) -> {
        DecoderModel model = Architectures.of(file, config).load(file, config, new LayerRange(0, config.layers()), pool);
        KvCache cache = model.allocateCache(contextLength);
        return new Placed(model, cache, (tokens, from, count, position) -> model.forward(tokens, from, count, position, cache));
    };

    /** The cluster cannot run a forward pass now (a rank is missing); the request ends with HTTP 503. */
    final class UnavailableException extends RuntimeException {
        public UnavailableException(String message) {
            super(message);
        }
    }
}
