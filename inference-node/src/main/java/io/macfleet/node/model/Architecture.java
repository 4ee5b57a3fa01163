package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;

import java.util.Set;

/**
 * One model architecture as GGUF names it ({@code general.architecture}): its hyperparameters from the metadata, its
 * weights and forward pass, and how its layers shard. Register a new one in {@link Architectures}.
 */
public interface Architecture {
    /** The {@code general.architecture} values this class runs. */
    Set<String> names();

    /** Hyperparameters from the metadata; a missing or unsupported key is refused naming it. */
    LlamaConfig config(GgufFile file);

    /** Layers {@code layers} of the model (all of them on one node, a stage in pipeline parallelism). */
    DecoderModel load(GgufFile file, LlamaConfig config, LayerRange layers, WorkerPool pool);

    /**
     * Whether ranks can split each layer by heads and FFN units ({@code ClusterNode}'s tensor parallelism). Every
     * architecture shards by layers (pipeline parallelism) through {@link #load}.
     */
    default boolean tensorParallel() {
        return false;
    }
}
