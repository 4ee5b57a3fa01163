package io.macfleet.node.generator;

import io.macfleet.node.gguf.GgmlType;

import java.util.Locale;

/**
 * Which ggml type each weight matrix of a file gets, as llama.cpp's llama-quantize chooses for a file type
 * ({@code llama_tensor_get_type} in src/llama-quant.cpp): a single-type file stores every matrix in its type; the
 * K-quant "mostly" types keep a base type and give more bits where quantization hurts most:
 * <ul>
 * <li>output.weight: Q6_K (Q8_0 when its rows are not whole super-blocks);</li>
 * <li>attn_v: Q6_K in Q4_K_M and Q5_K_M on the layers {@link #useMoreBits} picks; Q8_0 in any file of a model
 * with exactly 8 experts (as attn_k);</li>
 * <li>ffn_down (and ffn_down_exps): Q6_K in Q4_K_M and Q5_K_M on the layers {@link #useMoreBits} picks;</li>
 * <li>attn_output: Q5_K in Q4_K_M for a model with exactly 8 experts.</li>
 * </ul>
 * Norms, biases and the expert router (ffn_gate_inp) are never quantized (F32). llama-quantize falls back to Q5_0,
 * Q5_1 or Q8_0 for rows that are not whole super-blocks; the node does not compute with Q5_0/Q5_1, so such shapes
 * are refused here rather than written with types the engine would then refuse.
 */
public record QuantizationMix(String name, GgmlType base, int fileType) {
    public static final QuantizationMix F32 = new QuantizationMix("f32", GgmlType.F32, 0);
    public static final QuantizationMix F16 = new QuantizationMix("f16", GgmlType.F16, 1);
    public static final QuantizationMix Q4_0 = new QuantizationMix("q4_0", GgmlType.Q4_0, 2);
    public static final QuantizationMix Q8_0 = new QuantizationMix("q8_0", GgmlType.Q8_0, 7);
    public static final QuantizationMix Q4_K_M = new QuantizationMix("q4_k_m", GgmlType.Q4_K, 15);
    public static final QuantizationMix Q5_K_M = new QuantizationMix("q5_k_m", GgmlType.Q5_K, 17);
    public static final QuantizationMix Q6_K = new QuantizationMix("q6_k", GgmlType.Q6_K, 18);
    public static final QuantizationMix BF16 = new QuantizationMix("bf16", GgmlType.BF16, 32);
    private static final QuantizationMix[] ALL = {F32, F16, BF16, Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K};

    /** The weight matrices whose type the mix can change. */
    public enum Role { TOKEN_EMBEDDING, OUTPUT, ATTENTION_Q, ATTENTION_K, ATTENTION_V, ATTENTION_OUTPUT, FFN_GATE, FFN_UP, FFN_DOWN }

    public static QuantizationMix parse(String name) {
        for (QuantizationMix mix : ALL) {
            if (mix.name.equals(name.toLowerCase(Locale.ROOT))) {
                return mix;
            }
        }
        throw new IllegalArgumentException("unknown type '" + name + "' (known: f32, f16, bf16, q8_0, q4_0, q4_k_m, q5_k_m, q6_k)");
    }

    /** A file of one type throughout (the mix of a single-type file type). */
    public static QuantizationMix of(GgmlType type) {
        for (QuantizationMix mix : ALL) {
            if (mix.base == type && !mix.isKQuant()) {
                return mix;
            }
        }
        throw new IllegalArgumentException("no single-type file type for " + type);
    }

    private boolean isKQuant() {
        return base == GgmlType.Q4_K || base == GgmlType.Q5_K || base == GgmlType.Q6_K;
    }

    /** llama.cpp's choice of layers for more bits: the first and last eighth, and every third layer between. */
    static boolean useMoreBits(int layer, int layers) {
        return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
    }

    /**
     * The type of a matrix of the given role in {@code layer} (of {@code layers}; any for the embedding and output)
     * with rows of {@code columns} values, in a model of {@code experts} experts (0 for a dense model).
     */
    public GgmlType typeOf(Role role, int layer, int layers, int experts, long columns) {
        if (!isKQuant()) {
            return base;
        }
        GgmlType type = base;
        boolean mostly = base != GgmlType.Q6_K; // Q4_K_M and Q5_K_M
        switch (role) {
            case OUTPUT -> type = columns % 256 == 0 ? GgmlType.Q6_K : GgmlType.Q8_0;
            case ATTENTION_V -> {
                if (mostly && useMoreBits(layer, layers)) {
                    type = GgmlType.Q6_K;
                }
                if (experts == 8) {
                    type = GgmlType.Q8_0;
                }
            }
            case ATTENTION_K -> {
                if (experts == 8) {
                    type = GgmlType.Q8_0;
                }
            }
            case FFN_DOWN -> {
                if (mostly && useMoreBits(layer, layers)) {
                    type = GgmlType.Q6_K;
                }
            }
            case ATTENTION_OUTPUT -> {
                if (base == GgmlType.Q4_K && experts == 8) {
                    type = GgmlType.Q5_K;
                }
            }
            default -> {
            }
        }
        if (columns % type.blockSize() != 0) {
            throw new IllegalArgumentException(role.name().toLowerCase(Locale.ROOT) + " rows of " + columns
                    + " values are not whole " + type + " super-blocks of " + type.blockSize() + " (llama.cpp would fall back"
                    + " to a type the node does not compute with); use a preset whose widths are multiples of 256 (small, 1b-shaped)");
        }
        return type;
    }
}
