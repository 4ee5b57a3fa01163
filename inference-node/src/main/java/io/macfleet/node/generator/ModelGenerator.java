package io.macfleet.node.generator;

import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufValueType;
import io.macfleet.node.gguf.GgufWriter;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Writes Llama-family GGUF v3 files with llama.cpp's metadata keys and tensor names, a byte-level BPE vocabulary
 * with Llama 3 special tokens and chat template, and seeded random weights. Every row is generated from its own
 * seed, so files are identical however many threads write them.
 */
public final class ModelGenerator {

    /**
     * What sets the architectures apart, as llama.cpp stores them: the metadata key prefix, Llama 3.1-style
     * rope_freqs (llama only), Q/K/V biases (qwen2), per-head Q/K RMSNorm and a head dimension of its own, so that
     * the query width differs from the model width (qwen3), and RoPE on interleaved pairs (llama) or halves (qwen,
     * implied by the architecture in the engine), and a mixture of experts in place of the dense FFN (qwen3moe: the
     * shape's expert numbers, a router and three expert tensors per block). Mistral models are stored by llama.cpp as {@code llama}; llama.cpp
     * does not load a file that says {@code mistral}, so none is written.
     */
    public enum Architecture {
        LLAMA("llama", 500000, true, false, false),
        QWEN2("qwen2", 1000000, false, true, false),
        QWEN3("qwen3", 1000000, false, false, true),
        QWEN3MOE("qwen3moe", 1000000, false, false, true),
        /** DeepSeek V3 routing (sigmoid, selection bias, expert groups); written by {@link DeepSeek2Generator}. */
        DEEPSEEK2("deepseek2", 10000, false, false, false),
        /** DeepSeek V2 routing (softmax top-k), the same layout; {@code make-model --arch deepseek2 --routing softmax}. */
        DEEPSEEK2_SOFTMAX("deepseek2", 10000, false, false, false);

        final String key;
        final double ropeTheta;
        final boolean ropeFrequencies;
        final boolean attentionBiases;
        final boolean headNorms;

        Architecture(String key, double ropeTheta, boolean ropeFrequencies, boolean attentionBiases, boolean headNorms) {
            this.key = key;
            this.ropeTheta = ropeTheta;
            this.ropeFrequencies = ropeFrequencies;
            this.attentionBiases = attentionBiases;
            this.headNorms = headNorms;
        }

        boolean mixtureOfExperts() {
            return this == QWEN3MOE;
        }

        public static Architecture parse(String name) {
            for (Architecture architecture : values()) {
                if (architecture.key.equals(name)) {
                    return architecture;
                }
            }
            throw new IllegalArgumentException("unknown architecture '" + name + "' (known: llama, qwen2, qwen3, qwen3moe, deepseek2)");
        }
    }
    /**
     * Model dimensions of a preset, with the experts a mixture-of-experts architecture gives it: {@code experts} FFNs of
     * width {@code expertFeedForward} per block, {@code expertsUsed} of them per token (dense architectures ignore these).
     */
    public record Shape(String name, int dimension, int layers, int heads, int kvHeads, int feedForward,
                        int vocabulary, int contextLength, int experts, int expertsUsed, int expertFeedForward) {
        /** A shape for dense architectures only (no expert sizes); {@code --arch qwen3moe} needs the full form. */
        public Shape(String name, int dimension, int layers, int heads, int kvHeads, int feedForward, int vocabulary, int contextLength) {
            this(name, dimension, layers, heads, kvHeads, feedForward, vocabulary, contextLength, 0, 0, 0);
        }

        public int headDimension() {
            return dimension / heads;
        }
    }

    public static final Shape TINY = new Shape("macfleet-tiny", 64, 2, 4, 2, 192, 512, 2048, 4, 2, 64);
    /** The smallest shape whose widths are whole K-quant super-blocks (256 values), for K-quant files. */
    public static final Shape SMALL = new Shape("macfleet-small", 256, 4, 4, 2, 768, 1024, 2048, 8, 2, 256);
    /** As a mixture of experts, its active FFN (8 of 16 experts of width 1024) is as wide as the dense one. */
    public static final Shape ONE_B = new Shape("macfleet-1b-shaped", 2048, 16, 32, 8, 8192, 32000, 8192, 16, 8, 1024);

    static final String LLAMA3_TEMPLATE = "{% set loop_messages = messages %}{% for message in loop_messages %}"
            + "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ "
            + "message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + "
            + "content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
            + "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

    private ModelGenerator() {
    }

    public static Shape preset(String name) {
        return switch (name) {
            case "tiny" -> TINY;
            case "small" -> SMALL;
            case "1b-shaped" -> ONE_B;
            default -> throw new IllegalArgumentException("unknown preset '" + name + "' (known: tiny, small, 1b-shaped)");
        };
    }

    public static void write(Shape shape, GgmlType type, long seed, Path out) throws IOException {
        write(shape, Architecture.LLAMA, QuantizationMix.of(type), seed, out);
    }

    public static void write(Shape shape, Architecture architecture, GgmlType type, long seed, Path out) throws IOException {
        write(shape, architecture, QuantizationMix.of(type), seed, out);
    }

    /** Writes a file whose weight matrices have the types {@code mix} gives them (llama-quantize's choice for its file type). */
    public static void write(Shape shape, Architecture architecture, QuantizationMix mix, long seed, Path out) throws IOException {
        if (architecture == Architecture.DEEPSEEK2 || architecture == Architecture.DEEPSEEK2_SOFTMAX) {
            DeepSeek2Generator.write(shape, architecture == Architecture.DEEPSEEK2, mix, seed, out);
            return;
        }
        VocabularyBuilder.Vocabulary vocabulary = VocabularyBuilder.build(shape.vocabulary(), seed);
        List<String> tokens = vocabulary.tokens();
        String arch = architecture.key;
        // Qwen3 sets its head dimension apart from width / heads (e.g. 128 with a width of 1024 and 16 heads): twice here.
        int headDimension = architecture.headNorms ? 2 * shape.headDimension() : shape.headDimension();
        GgufWriter writer = new GgufWriter()
                .putString("general.architecture", arch)
                .putString("general.name", shape.name() + (architecture == Architecture.LLAMA ? "" : "-" + arch))
                .putUInt32("general.file_type", mix.fileType())
                .putUInt32("general.quantization_version", 2)
                .putUInt32("general.alignment", 32)
                .putUInt32(arch + ".context_length", shape.contextLength())
                .putUInt32(arch + ".embedding_length", shape.dimension())
                .putUInt32(arch + ".block_count", shape.layers())
                .putUInt32(arch + ".feed_forward_length", shape.feedForward())
                .putUInt32(arch + ".attention.head_count", shape.heads())
                .putUInt32(arch + ".attention.head_count_kv", shape.kvHeads())
                .putFloat32(arch + ".attention.layer_norm_rms_epsilon", 1e-5)
                .putFloat32(arch + ".rope.freq_base", (float) architecture.ropeTheta)
                .putUInt32(arch + ".rope.dimension_count", headDimension)
                .putUInt32(arch + ".vocab_size", shape.vocabulary())
                .putString("tokenizer.ggml.model", "gpt2")
                .putString("tokenizer.ggml.pre", "llama-bpe")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, vocabulary.types())
                .putArray("tokenizer.ggml.merges", GgufValueType.STRING, vocabulary.merges())
                .putUInt32("tokenizer.ggml.bos_token_id", tokens.indexOf("<|begin_of_text|>"))
                .putUInt32("tokenizer.ggml.eos_token_id", tokens.indexOf("<|end_of_text|>"))
                .putUInt32("tokenizer.ggml.eot_token_id", tokens.indexOf("<|eot_id|>"))
                .putBool("tokenizer.ggml.add_bos_token", true)
                .putString("tokenizer.chat_template", LLAMA3_TEMPLATE);
        if (architecture.mixtureOfExperts()) {
            writer.putUInt32(arch + ".expert_count", shape.experts())
                    .putUInt32(arch + ".expert_used_count", shape.expertsUsed())
                    .putUInt32(arch + ".expert_feed_forward_length", shape.expertFeedForward());
        }
        if (architecture.headNorms) {
            writer.putUInt32(arch + ".attention.key_length", headDimension).putUInt32(arch + ".attention.value_length", headDimension);
        }
        int dim = shape.dimension();
        int queryDim = shape.heads() * headDimension;
        int kvDim = shape.kvHeads() * headDimension;
        int layers = shape.layers();
        int experts = architecture.mixtureOfExperts() ? shape.experts() : 0;
        int ffn = experts > 0 ? shape.expertFeedForward() : shape.feedForward();
        long tensorSeed = seed * 1_000_003L;
        GgmlType type = mix.typeOf(QuantizationMix.Role.TOKEN_EMBEDDING, 0, layers, experts, dim);
        writer.addTensor("token_embd.weight", type, new long[]{dim, shape.vocabulary()},
                random(type, dim, shape.vocabulary(), tensorSeed++, 1.0f));
        if (architecture.ropeFrequencies) {
            writer.addTensor("rope_freqs.weight", GgmlType.F32, new long[]{headDimension / 2},
                    constant(llama3FrequencyFactors(headDimension, architecture.ropeTheta, 32, 1, 4, 8192)));
        }
        for (int layer = 0; layer < shape.layers(); layer++) {
            String p = "blk." + layer + ".";
            GgmlType queryType = mix.typeOf(QuantizationMix.Role.ATTENTION_Q, layer, layers, experts, dim);
            GgmlType keyType = mix.typeOf(QuantizationMix.Role.ATTENTION_K, layer, layers, experts, dim);
            GgmlType valueType = mix.typeOf(QuantizationMix.Role.ATTENTION_V, layer, layers, experts, dim);
            GgmlType outputType = mix.typeOf(QuantizationMix.Role.ATTENTION_OUTPUT, layer, layers, experts, queryDim);
            GgmlType gateType = mix.typeOf(QuantizationMix.Role.FFN_GATE, layer, layers, experts, dim);
            GgmlType upType = mix.typeOf(QuantizationMix.Role.FFN_UP, layer, layers, experts, dim);
            GgmlType downType = mix.typeOf(QuantizationMix.Role.FFN_DOWN, layer, layers, experts, ffn);
            writer.addTensor(p + "attn_norm.weight", GgmlType.F32, new long[]{dim}, norm(dim, tensorSeed++));
            writer.addTensor(p + "attn_q.weight", queryType, new long[]{dim, queryDim}, random(queryType, dim, queryDim, tensorSeed++, scale(dim)));
            writer.addTensor(p + "attn_k.weight", keyType, new long[]{dim, kvDim}, random(keyType, dim, kvDim, tensorSeed++, scale(dim)));
            writer.addTensor(p + "attn_v.weight", valueType, new long[]{dim, kvDim}, random(valueType, dim, kvDim, tensorSeed++, scale(dim)));
            if (architecture.attentionBiases) {
                // Biases stay F32 in llama.cpp's conversions whatever the weights' type.
                writer.addTensor(p + "attn_q.bias", GgmlType.F32, new long[]{queryDim}, bias(queryDim, tensorSeed++));
                writer.addTensor(p + "attn_k.bias", GgmlType.F32, new long[]{kvDim}, bias(kvDim, tensorSeed++));
                writer.addTensor(p + "attn_v.bias", GgmlType.F32, new long[]{kvDim}, bias(kvDim, tensorSeed++));
            }
            if (architecture.headNorms) {
                writer.addTensor(p + "attn_q_norm.weight", GgmlType.F32, new long[]{headDimension}, norm(headDimension, tensorSeed++));
                writer.addTensor(p + "attn_k_norm.weight", GgmlType.F32, new long[]{headDimension}, norm(headDimension, tensorSeed++));
            }
            writer.addTensor(p + "attn_output.weight", outputType, new long[]{queryDim, dim}, random(outputType, queryDim, dim, tensorSeed++, scale(queryDim)));
            writer.addTensor(p + "ffn_norm.weight", GgmlType.F32, new long[]{dim}, norm(dim, tensorSeed++));
            if (experts > 0) {
                // The router is never quantized (llama-quantize skips ffn_gate_inp); each expert is a slice of rows.
                writer.addTensor(p + "ffn_gate_inp.weight", GgmlType.F32, new long[]{dim, experts},
                        random(GgmlType.F32, dim, experts, tensorSeed++, scale(dim) * 4));
                writer.addTensor(p + "ffn_gate_exps.weight", gateType, new long[]{dim, ffn, experts},
                        random(gateType, dim, ffn * experts, tensorSeed++, scale(dim)));
                writer.addTensor(p + "ffn_up_exps.weight", upType, new long[]{dim, ffn, experts},
                        random(upType, dim, ffn * experts, tensorSeed++, scale(dim)));
                writer.addTensor(p + "ffn_down_exps.weight", downType, new long[]{ffn, dim, experts},
                        random(downType, ffn, dim * experts, tensorSeed++, scale(ffn)));
                continue;
            }
            writer.addTensor(p + "ffn_gate.weight", gateType, new long[]{dim, shape.feedForward()},
                    random(gateType, dim, shape.feedForward(), tensorSeed++, scale(dim)));
            writer.addTensor(p + "ffn_up.weight", upType, new long[]{dim, shape.feedForward()},
                    random(upType, dim, shape.feedForward(), tensorSeed++, scale(dim)));
            writer.addTensor(p + "ffn_down.weight", downType, new long[]{shape.feedForward(), dim},
                    random(downType, shape.feedForward(), dim, tensorSeed++, scale(shape.feedForward())));
        }
        writer.addTensor("output_norm.weight", GgmlType.F32, new long[]{dim}, norm(dim, tensorSeed++));
        GgmlType outputType = mix.typeOf(QuantizationMix.Role.OUTPUT, 0, layers, experts, dim);
        writer.addTensor("output.weight", outputType, new long[]{dim, shape.vocabulary()},
                random(outputType, dim, shape.vocabulary(), tensorSeed, scale(dim) * 4));
        writer.write(out);
    }

    /**
     * A deepseek2 file (V3 routing when {@code sigmoidRouting}) whose metadata {@code metadata} may change after it is
     * put (to test how files with other values are refused).
     */
    public static void writeDeepSeek2(Shape shape, boolean sigmoidRouting, QuantizationMix mix, long seed, Path out,
                                      java.util.function.Consumer<GgufWriter> metadata) throws IOException {
        DeepSeek2Generator.write(shape, sigmoidRouting, mix, seed, out, metadata);
    }

    /** Uniform weights with variance 1/fanIn (times gain), so activations stay in range through the layers. */
    static float scale(int fanIn) {
        return (float) Math.sqrt(3.0 / fanIn);
    }

    /** Llama 3.1 rope scaling as frequency factors (what convert_hf_to_gguf.py writes to rope_freqs). */
    public static float[] llama3FrequencyFactors(int headDimension, double theta, double factor, double lowFactor,
                                          double highFactor, int originalContext) {
        float[] factors = new float[headDimension / 2];
        double lowWavelength = originalContext / lowFactor;
        double highWavelength = originalContext / highFactor;
        for (int i = 0; i < factors.length; i++) {
            double frequency = 1.0 / Math.pow(theta, 2.0 * i / headDimension);
            double wavelength = 2 * Math.PI / frequency;
            if (wavelength < highWavelength) {
                factors[i] = 1;
            } else if (wavelength > lowWavelength) {
                factors[i] = (float) factor;
            } else {
                double smooth = (originalContext / wavelength - lowFactor) / (highFactor - lowFactor);
                factors[i] = (float) (1 / ((1 - smooth) / factor + smooth));
            }
        }
        return factors;
    }

    static java.util.function.Consumer<MemorySegment> constant(float[] values) {
        return segment -> MemorySegment.copy(values, 0, segment, ValueLayout.JAVA_FLOAT_UNALIGNED
                .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0, values.length);
    }

    static java.util.function.Consumer<MemorySegment> norm(int length, long seed) {
        float[] values = new float[length];
        long state = seed;
        for (int i = 0; i < length; i++) {
            state = splitMix(state);
            values[i] = 1f + 0.1f * uniform(state);
        }
        return constant(values);
    }

    static java.util.function.Consumer<MemorySegment> bias(int length, long seed) {
        float[] values = new float[length];
        long state = seed;
        for (int i = 0; i < length; i++) {
            state = splitMix(state);
            values[i] = 0.5f * uniform(state);
        }
        return constant(values);
    }

    static java.util.function.Consumer<MemorySegment> random(GgmlType type, int columns, int rows, long seed,
                                                                     float amplitude) {
        long rowBytes = type.bytesFor(columns);
        return segment -> IntStream.range(0, rows).parallel().forEach(row -> {
            float[] values = new float[columns];
            long state = splitMix(seed * 0x9E3779B97F4A7C15L + row);
            for (int i = 0; i < columns; i++) {
                state = splitMix(state);
                values[i] = amplitude * uniform(state);
            }
            byte[] encoded = new byte[(int) rowBytes];
            Quantizer.encode(type, values, 0, columns, encoded, 0);
            MemorySegment.copy(encoded, 0, segment, ValueLayout.JAVA_BYTE, row * rowBytes, encoded.length);
        });
    }

    private static long splitMix(long state) {
        long z = state + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [-1, 1) from the top 24 bits. */
    private static float uniform(long bits) {
        return ((bits >>> 40) / (float) (1 << 24)) * 2f - 1f;
    }
}
