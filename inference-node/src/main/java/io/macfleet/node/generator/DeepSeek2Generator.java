package io.macfleet.node.generator;

import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufValueType;
import io.macfleet.node.gguf.GgufWriter;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes {@code deepseek2} GGUF files with the metadata keys and tensor names llama.cpp's converter writes
 * (conversion/deepseek.py, {@code DeepseekV2Model}: MLA stored as MQA with one KV head of
 * {@code kv_lora_rank + qk_rope_head_dim}, the split and transposed {@code attn_k_b} and {@code attn_v_b}), random
 * seeded weights, and either DeepSeek V3's routing (sigmoid gating, {@code exp_probs_b} selection bias, expert groups,
 * normalized top-k weights, routed scaling factor 2.5) or V2's (softmax top-k). RoPE scaling is YaRN in both, as in
 * the real models (factor 4 over an original context of a quarter of the preset's, {@code mscale_all_dim} 1).
 */
final class DeepSeek2Generator {
    /** MLA sizes of a preset: the low ranks, the head parts, shared experts, dense leading blocks, expert groups. */
    record Latent(int heads, int queryRank, int kvRank, int keyNope, int keyRope, int valueHead, int experts,
                  int expertsUsed, int expertWidth, int shared, int leadingDense, int groups, int groupsUsed) {
    }

    private DeepSeek2Generator() {
    }

    static Latent latent(ModelGenerator.Shape shape) {
        return switch (shape.name()) {
            case "macfleet-tiny" -> new Latent(4, 32, 32, 32, 16, 32, 4, 2, 64, 1, 1, 2, 1);
            // widths of whole K-quant super-blocks except attn_k_b's 128 columns (Q8_0 in K-quant files)
            case "macfleet-small" -> new Latent(4, 256, 256, 128, 64, 128, 8, 2, 256, 1, 1, 4, 2);
            // about 1 B parameters read per token: DeepSeek V3's head sizes, 16 heads, 2 + 2 shared experts of 8
            case "macfleet-1b-shaped" -> new Latent(16, 768, 512, 128, 64, 128, 8, 2, 1536, 2, 1, 4, 2);
            default -> throw new IllegalArgumentException("no deepseek2 sizes for preset " + shape.name());
        };
    }

    static void write(ModelGenerator.Shape shape, boolean sigmoidRouting, QuantizationMix mix, long seed, Path out)
            throws IOException {
        write(shape, sigmoidRouting, mix, seed, out, writer -> { });
    }

    static void write(ModelGenerator.Shape shape, boolean sigmoidRouting, QuantizationMix mix, long seed, Path out,
                      java.util.function.Consumer<GgufWriter> metadata) throws IOException {
        Latent l = latent(shape);
        VocabularyBuilder.Vocabulary vocabulary = VocabularyBuilder.build(shape.vocabulary(), seed);
        List<String> tokens = vocabulary.tokens();
        String a = "deepseek2.";
        int dim = shape.dimension(), layers = shape.layers();
        int keyLength = l.keyNope() + l.keyRope();
        GgufWriter writer = new GgufWriter()
                .putString("general.architecture", "deepseek2")
                .putString("general.name", shape.name() + "-deepseek2" + (sigmoidRouting ? "" : "-softmax"))
                .putUInt32("general.file_type", mix.fileType())
                .putUInt32("general.quantization_version", 2)
                .putUInt32("general.alignment", 32)
                .putUInt32(a + "context_length", shape.contextLength())
                .putUInt32(a + "embedding_length", dim)
                .putUInt32(a + "block_count", layers)
                .putUInt32(a + "feed_forward_length", shape.feedForward())
                .putUInt32(a + "attention.head_count", l.heads())
                .putUInt32(a + "attention.head_count_kv", 1)
                .putFloat32(a + "rope.freq_base", 10000f)
                .putFloat32(a + "attention.layer_norm_rms_epsilon", 1e-6f)
                .putUInt32(a + "expert_used_count", l.expertsUsed())
                .putUInt32(a + "leading_dense_block_count", l.leadingDense())
                .putUInt32(a + "vocab_size", shape.vocabulary())
                .putUInt32(a + "attention.q_lora_rank", l.queryRank())
                .putUInt32(a + "attention.kv_lora_rank", l.kvRank())
                .putUInt32(a + "attention.key_length", l.kvRank() + l.keyRope())
                .putUInt32(a + "attention.value_length", l.kvRank())
                .putUInt32(a + "attention.key_length_mla", keyLength)
                .putUInt32(a + "attention.value_length_mla", l.valueHead())
                .putUInt32(a + "expert_feed_forward_length", l.expertWidth())
                .putUInt32(a + "expert_count", l.experts())
                .putUInt32(a + "expert_shared_count", l.shared())
                .putUInt32(a + "rope.dimension_count", l.keyRope())
                .putString(a + "rope.scaling.type", "yarn")
                .putFloat32(a + "rope.scaling.factor", 4f)
                .putUInt32(a + "rope.scaling.original_context_length", shape.contextLength() / 4)
                .putFloat32(a + "rope.scaling.yarn_log_multiplier", 0.1f)
                .putString("tokenizer.ggml.model", "gpt2")
                .putString("tokenizer.ggml.pre", "llama-bpe")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, vocabulary.types())
                .putArray("tokenizer.ggml.merges", GgufValueType.STRING, vocabulary.merges())
                .putUInt32("tokenizer.ggml.bos_token_id", tokens.indexOf("<|begin_of_text|>"))
                .putUInt32("tokenizer.ggml.eos_token_id", tokens.indexOf("<|end_of_text|>"))
                .putUInt32("tokenizer.ggml.eot_token_id", tokens.indexOf("<|eot_id|>"))
                .putBool("tokenizer.ggml.add_bos_token", true)
                .putString("tokenizer.chat_template", ModelGenerator.LLAMA3_TEMPLATE);
        if (sigmoidRouting) {
            writer.putFloat32(a + "expert_weights_scale", 2.5f)
                    .putBool(a + "expert_weights_norm", true)
                    .putUInt32(a + "expert_gating_func", 2)
                    .putUInt32(a + "expert_group_count", l.groups())
                    .putUInt32(a + "expert_group_used_count", l.groupsUsed());
        } else {
            writer.putFloat32(a + "expert_weights_scale", 1f).putUInt32(a + "expert_gating_func", 1);
        }
        metadata.accept(writer);
        long s = seed * 1_000_003L;
        int experts = l.experts();
        GgmlType embeddingType = type(mix, QuantizationMix.Role.TOKEN_EMBEDDING, 0, layers, experts, dim);
        writer.addTensor("token_embd.weight", embeddingType, new long[]{dim, shape.vocabulary()},
                ModelGenerator.random(embeddingType, dim, shape.vocabulary(), s++, 1.0f));
        int queryWidth = l.heads() * keyLength, outputWidth = l.heads() * l.valueHead(), latentWidth = l.kvRank() + l.keyRope();
        for (int layer = 0; layer < layers; layer++) {
            String p = "blk." + layer + ".";
            writer.addTensor(p + "attn_norm.weight", GgmlType.F32, new long[]{dim}, ModelGenerator.norm(dim, s++));
            matrix(writer, mix, p + "attn_q_a.weight", QuantizationMix.Role.ATTENTION_Q, layer, layers, experts, dim, l.queryRank(), s++);
            writer.addTensor(p + "attn_q_a_norm.weight", GgmlType.F32, new long[]{l.queryRank()}, ModelGenerator.norm(l.queryRank(), s++));
            matrix(writer, mix, p + "attn_q_b.weight", QuantizationMix.Role.ATTENTION_Q, layer, layers, experts, l.queryRank(), queryWidth, s++);
            matrix(writer, mix, p + "attn_kv_a_mqa.weight", QuantizationMix.Role.ATTENTION_K, layer, layers, experts, dim, latentWidth, s++);
            writer.addTensor(p + "attn_kv_a_norm.weight", GgmlType.F32, new long[]{l.kvRank()}, ModelGenerator.norm(l.kvRank(), s++));
            // [qk_nope, kv_lora_rank, heads] and [kv_lora_rank, v_head, heads]: one matrix per head
            GgmlType keyB = type(mix, QuantizationMix.Role.ATTENTION_K, layer, layers, experts, l.keyNope());
            writer.addTensor(p + "attn_k_b.weight", keyB, new long[]{l.keyNope(), l.kvRank(), l.heads()},
                    ModelGenerator.random(keyB, l.keyNope(), l.kvRank() * l.heads(), s++, ModelGenerator.scale(l.keyNope())));
            GgmlType valueB = type(mix, QuantizationMix.Role.ATTENTION_V, layer, layers, experts, l.kvRank());
            writer.addTensor(p + "attn_v_b.weight", valueB, new long[]{l.kvRank(), l.valueHead(), l.heads()},
                    ModelGenerator.random(valueB, l.kvRank(), l.valueHead() * l.heads(), s++, ModelGenerator.scale(l.kvRank())));
            matrix(writer, mix, p + "attn_output.weight", QuantizationMix.Role.ATTENTION_OUTPUT, layer, layers, experts, outputWidth, dim, s++);
            writer.addTensor(p + "ffn_norm.weight", GgmlType.F32, new long[]{dim}, ModelGenerator.norm(dim, s++));
            if (layer < l.leadingDense()) {
                int ffn = shape.feedForward();
                matrix(writer, mix, p + "ffn_gate.weight", QuantizationMix.Role.FFN_GATE, layer, layers, experts, dim, ffn, s++);
                matrix(writer, mix, p + "ffn_up.weight", QuantizationMix.Role.FFN_UP, layer, layers, experts, dim, ffn, s++);
                matrix(writer, mix, p + "ffn_down.weight", QuantizationMix.Role.FFN_DOWN, layer, layers, experts, ffn, dim, s++);
                continue;
            }
            int width = l.expertWidth();
            writer.addTensor(p + "ffn_gate_inp.weight", GgmlType.F32, new long[]{dim, experts},
                    ModelGenerator.random(GgmlType.F32, dim, experts, s++, ModelGenerator.scale(dim) * 4));
            if (sigmoidRouting) {
                writer.addTensor(p + "exp_probs_b.bias", GgmlType.F32, new long[]{experts}, ModelGenerator.bias(experts, s++));
            }
            GgmlType gate = type(mix, QuantizationMix.Role.FFN_GATE, layer, layers, experts, dim);
            GgmlType up = type(mix, QuantizationMix.Role.FFN_UP, layer, layers, experts, dim);
            GgmlType down = type(mix, QuantizationMix.Role.FFN_DOWN, layer, layers, experts, width);
            writer.addTensor(p + "ffn_gate_exps.weight", gate, new long[]{dim, width, experts},
                    ModelGenerator.random(gate, dim, width * experts, s++, ModelGenerator.scale(dim)));
            writer.addTensor(p + "ffn_up_exps.weight", up, new long[]{dim, width, experts},
                    ModelGenerator.random(up, dim, width * experts, s++, ModelGenerator.scale(dim)));
            writer.addTensor(p + "ffn_down_exps.weight", down, new long[]{width, dim, experts},
                    ModelGenerator.random(down, width, dim * experts, s++, ModelGenerator.scale(width)));
            int sharedWidth = width * l.shared();
            matrix(writer, mix, p + "ffn_gate_shexp.weight", QuantizationMix.Role.FFN_GATE, layer, layers, experts, dim, sharedWidth, s++);
            matrix(writer, mix, p + "ffn_up_shexp.weight", QuantizationMix.Role.FFN_UP, layer, layers, experts, dim, sharedWidth, s++);
            matrix(writer, mix, p + "ffn_down_shexp.weight", QuantizationMix.Role.FFN_DOWN, layer, layers, experts, sharedWidth, dim, s++);
        }
        writer.addTensor("output_norm.weight", GgmlType.F32, new long[]{dim}, ModelGenerator.norm(dim, s++));
        GgmlType outputType = type(mix, QuantizationMix.Role.OUTPUT, 0, layers, experts, dim);
        writer.addTensor("output.weight", outputType, new long[]{dim, shape.vocabulary()},
                ModelGenerator.random(outputType, dim, shape.vocabulary(), s, ModelGenerator.scale(dim) * 4));
        writer.write(out);
    }

    private static void matrix(GgufWriter writer, QuantizationMix mix, String name, QuantizationMix.Role role, int layer,
                               int layers, int experts, int columns, int rows, long seed) {
        GgmlType type = type(mix, role, layer, layers, experts, columns);
        writer.addTensor(name, type, new long[]{columns, rows}, ModelGenerator.random(type, columns, rows, seed,
                ModelGenerator.scale(columns)));
    }

    /** The mix's type, or Q8_0 for rows that are not whole blocks of it (attn_k_b's 128 columns in a K-quant file). */
    private static GgmlType type(QuantizationMix mix, QuantizationMix.Role role, int layer, int layers, int experts,
                                 long columns) {
        if (columns % mix.base().blockSize() != 0 && columns % GgmlType.Q8_0.blockSize() == 0) {
            return GgmlType.Q8_0;
        }
        return mix.typeOf(role, layer, layers, experts, columns);
    }
}
