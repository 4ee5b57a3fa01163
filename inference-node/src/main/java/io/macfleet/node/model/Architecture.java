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

    /**
     * The configuration a tensor-parallel plan checks column slices of the attention output against: its
     * {@code headDimension} must be the output columns per head (the value head width where it differs).
     */
    default LlamaConfig attentionOutputView(GgufFile file, LlamaConfig config) {
        return config;
    }

    /**
     * A tensor-parallel rank's part when the architecture shards itself; null for the Llama family, whose
     * {@link LlamaWeights} the cluster code slices ({@code ClusterNode.place}).
     */
    default DecoderModel loadTensorShard(GgufFile file, LlamaConfig config, TensorSlice slice, WorkerPool pool) {
        return null;
    }

    /**
     * A tensor-parallel rank's share: query heads [firstHead, firstHead + headCount), FFN units (experts)
     * [firstUnit, firstUnit + unitCount) of {@code units}, vocabulary rows of the output matrix.
     */
    record TensorSlice(int firstHead, int headCount, int firstUnit, int unitCount, int units, int firstVocabularyRow,
                       int vocabularyRows) {
    }
}
