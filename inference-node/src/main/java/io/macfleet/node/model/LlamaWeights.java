package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.gguf.TensorInfo;
import io.macfleet.node.kernel.Kernels;
import io.macfleet.node.kernel.WeightMatrix;

/**
 * The weights of a Llama-family model, or of a pipeline stage of one ({@link LayerRange}): views into the mapped
 * GGUF file (llama.cpp tensor names), with shapes checked against the metadata. Norm vectors are small and copied
 * to float arrays.
 */
public record LlamaWeights(LlamaConfig config, LayerRange layers, WeightMatrix tokenEmbedding, LayerWeights[] blocks,
                           float[] outputNorm, WeightMatrix output, float[] ropeFrequencyFactors) {

    public static LlamaWeights load(GgufFile file, LlamaConfig config) {
        return load(file, config, new LayerRange(0, config.layers()));
    }

    public static LlamaWeights load(GgufFile file, LlamaConfig config, LayerRange range) {
        if (range.end() > config.layers()) {
            throw new IllegalArgumentException("layer range " + range + " exceeds the model's " + config.layers() + " layers");
        }
        int dim = config.dimension();
        WeightMatrix embedding = matrix(file, "token_embd.weight", dim, config.vocabulary());
        LayerWeights[] blocks = new LayerWeights[range.count()];
        for (int layer = range.first(); layer < range.end(); layer++) {
            String p = "blk." + layer + ".";
            blocks[layer - range.first()] = new LayerWeights(layer,
                    vector(file, p + "attn_norm.weight", dim),
                    matrix(file, p + "attn_q.weight", dim, config.queryDimension()),
                    matrix(file, p + "attn_k.weight", dim, config.kvDimension()),
                    matrix(file, p + "attn_v.weight", dim, config.kvDimension()),
                    matrix(file, p + "attn_output.weight", config.queryDimension(), dim),
                    optionalVector(file, p + "attn_q.bias", config.queryDimension()),
                    optionalVector(file, p + "attn_k.bias", config.kvDimension()),
                    optionalVector(file, p + "attn_v.bias", config.kvDimension()),
                    optionalVector(file, p + "attn_q_norm.weight", config.headDimension()),
                    optionalVector(file, p + "attn_k_norm.weight", config.headDimension()),
                    vector(file, p + "ffn_norm.weight", dim),
                    config.mixtureOfExperts() ? null : matrix(file, p + "ffn_gate.weight", dim, config.feedForward()),
                    config.mixtureOfExperts() ? null : matrix(file, p + "ffn_up.weight", dim, config.feedForward()),
                    config.mixtureOfExperts() ? null : matrix(file, p + "ffn_down.weight", config.feedForward(), dim),
                    config.mixtureOfExperts() ? experts(file, config, p) : null);
        }
        WeightMatrix output = file.optionalTensor("output.weight") == null
                ? embedding // tied embeddings
                : matrix(file, "output.weight", dim, config.vocabulary());
        return new LlamaWeights(config, range, embedding, blocks, vector(file, "output_norm.weight", dim), output,
                optionalVector(file, "rope_freqs.weight", config.ropeDimensions() / 2));
    }

    public LayerWeights block(int layer) {
        return blocks[layer - layers.first()];
    }

    /** Bytes of weights read to decode one token: every block matrix, the output matrix and one embedding row. */
    public long bytesPerToken() {
        long bytes = output.byteSize() + tokenEmbedding.byteSize() / tokenEmbedding.rows();
        for (LayerWeights block : blocks) {
            bytes += block.matrixBytes();
        }
        return bytes;
    }

    private static ExpertWeights experts(GgufFile file, LlamaConfig config, String prefix) {
        int dim = config.dimension(), width = config.expertFeedForward(), experts = config.experts();
        return ExpertWeights.of(matrix(file, prefix + "ffn_gate_inp.weight", dim, experts),
                matrix(file, prefix + "ffn_gate_exps.weight", dim, width, experts),
                matrix(file, prefix + "ffn_up_exps.weight", dim, width, experts),
                matrix(file, prefix + "ffn_down_exps.weight", width, dim, experts), experts, config.expertsUsed());
    }

    /** A 3-dimensional tensor [columns, rows, count] as one matrix of count x rows rows. */
    static WeightMatrix matrix(GgufFile file, String name, int columns, int rows, int count) {
        TensorInfo tensor = file.tensor(name);
        long[] d = tensor.dimensions();
        if (d.length != 3 || d[0] != columns || d[1] != rows || d[2] != count) {
            throw file.error("tensor '" + name + "' has shape " + tensor.shape() + " but the metadata implies ["
                    + columns + ", " + rows + ", " + count + "]");
        }
        try {
            return WeightMatrix.of(tensor);
        } catch (RuntimeException e) {
            throw file.error(e.getMessage() + " at data offset " + tensor.offset());
        }
    }

    static WeightMatrix matrix(GgufFile file, String name, int columns, int rows) {
        TensorInfo tensor = file.tensor(name);
        long[] d = tensor.dimensions();
        if (d.length != 2 || d[0] != columns || d[1] != rows) {
            throw file.error("tensor '" + name + "' has shape " + tensor.shape() + " but the metadata implies ["
                    + columns + ", " + rows + "]");
        }
        try {
            return WeightMatrix.of(tensor);
        } catch (RuntimeException e) {
            throw file.error(e.getMessage() + " at data offset " + tensor.offset());
        }
    }

    static float[] vector(GgufFile file, String name, int length) {
        float[] values = optionalVector(file, name, length);
        if (values == null) {
            throw file.error("missing tensor '" + name + "'");
        }
        return values;
    }

    static float[] optionalVector(GgufFile file, String name, int length) {
        TensorInfo tensor = file.optionalTensor(name);
        if (tensor == null) {
            return null;
        }
        if (tensor.elementCount() != length) {
            throw file.error("tensor '" + name + "' has shape " + tensor.shape() + " but the metadata implies " + length
                    + " elements");
        }
        WeightMatrix matrix;
        try {
            matrix = WeightMatrix.of(tensor);
        } catch (RuntimeException e) {
            throw file.error(e.getMessage());
        }
        float[] values = new float[length];
        Kernels.dequantizeRow(new WeightMatrix(name, matrix.type(), matrix.data(), 1, length, 0), 0, values, 0);
        return values;
    }
}
