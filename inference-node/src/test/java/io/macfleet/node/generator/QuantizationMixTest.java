package io.macfleet.node.generator;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** make-model's K-quant files carry llama-quantize's choice of type per tensor. */
class QuantizationMixTest {

    @Test
    void q4KMGivesSixBitsToOutputAndToValueAndDownOnTheChosenLayers() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.small(ModelGenerator.Architecture.LLAMA, QuantizationMix.Q4_K_M))) {
            assertThat(file.integer("general.file_type")).isEqualTo(15);
            assertThat(file.tensor("token_embd.weight").type()).isEqualTo(GgmlType.Q4_K);
            assertThat(file.tensor("output.weight").type()).isEqualTo(GgmlType.Q6_K);
            assertThat(file.tensor("output_norm.weight").type()).isEqualTo(GgmlType.F32);
            // 4 layers: the first eighth is empty (4 / 8 = 0), the last eighth is layer 3 (from 7 * 4 / 8), and layer 2
            // ((2 - 0) % 3 == 2).
            GgmlType[] expected = {GgmlType.Q4_K, GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q6_K};
            for (int layer = 0; layer < 4; layer++) {
                String p = "blk." + layer + ".";
                assertThat(file.tensor(p + "attn_v.weight").type()).as("layer %d attn_v", layer).isEqualTo(expected[layer]);
                assertThat(file.tensor(p + "ffn_down.weight").type()).as("layer %d ffn_down", layer).isEqualTo(expected[layer]);
                assertThat(file.tensor(p + "attn_q.weight").type()).isEqualTo(GgmlType.Q4_K);
                assertThat(file.tensor(p + "attn_k.weight").type()).isEqualTo(GgmlType.Q4_K);
                assertThat(file.tensor(p + "attn_output.weight").type()).isEqualTo(GgmlType.Q4_K);
                assertThat(file.tensor(p + "ffn_gate.weight").type()).isEqualTo(GgmlType.Q4_K);
                assertThat(file.tensor(p + "ffn_up.weight").type()).isEqualTo(GgmlType.Q4_K);
                assertThat(file.tensor(p + "attn_norm.weight").type()).isEqualTo(GgmlType.F32);
            }
        }
    }

    @Test
    void q6KIsSixBitsThroughoutAndQ5KMKeepsItsBase() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.small(ModelGenerator.Architecture.LLAMA, QuantizationMix.Q6_K))) {
            assertThat(file.integer("general.file_type")).isEqualTo(18);
            for (String name : new String[] {"token_embd.weight", "output.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight",
                    "blk.1.attn_q.weight", "blk.3.ffn_up.weight"}) {
                assertThat(file.tensor(name).type()).as(name).isEqualTo(GgmlType.Q6_K);
            }
        }
        try (GgufFile file = GgufFile.open(TestModels.small(ModelGenerator.Architecture.LLAMA, QuantizationMix.Q5_K_M))) {
            assertThat(file.integer("general.file_type")).isEqualTo(17);
            assertThat(file.tensor("blk.1.attn_v.weight").type()).isEqualTo(GgmlType.Q5_K);
            assertThat(file.tensor("blk.2.ffn_down.weight").type()).isEqualTo(GgmlType.Q6_K);
            assertThat(file.tensor("output.weight").type()).isEqualTo(GgmlType.Q6_K);
        }
    }

    /** The small qwen3moe preset has exactly 8 experts, for which llama-quantize gives attention more bits. */
    @Test
    void eightExpertsGetEightBitKeysAndValuesAndAnUnquantizedRouter() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.small(ModelGenerator.Architecture.QWEN3MOE, QuantizationMix.Q4_K_M))) {
            assertThat(file.integer("qwen3moe.expert_count")).isEqualTo(8);
            assertThat(file.tensor("blk.0.attn_v.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(file.tensor("blk.1.attn_k.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(file.tensor("blk.1.attn_output.weight").type()).isEqualTo(GgmlType.Q5_K);
            assertThat(file.tensor("blk.1.ffn_gate_inp.weight").type()).isEqualTo(GgmlType.F32);
            assertThat(file.tensor("blk.1.ffn_gate_exps.weight").type()).isEqualTo(GgmlType.Q4_K);
            assertThat(file.tensor("blk.1.ffn_down_exps.weight").type()).isEqualTo(GgmlType.Q4_K);
            assertThat(file.tensor("blk.2.ffn_down_exps.weight").type()).isEqualTo(GgmlType.Q6_K);
            assertThat(file.tensor("blk.2.ffn_down_exps.weight").dimensions()).containsExactly(256, 256, 8);
        }
    }

    @Test
    void llamaCppLayerChoiceForMoreBits() {
        // 16 layers (the 1b-shaped preset): the first and last eighth, and every third layer between.
        StringBuilder chosen = new StringBuilder();
        for (int layer = 0; layer < 16; layer++) {
            if (QuantizationMix.useMoreBits(layer, 16)) {
                chosen.append(layer).append(' ');
            }
        }
        assertThat(chosen.toString().trim()).isEqualTo("0 1 4 7 10 13 14 15");
    }

    @Test
    void kQuantsOnRowsThatAreNotWholeSuperBlocksAreRefused() {
        Path out = Path.of(System.getProperty("java.io.tmpdir"), "refused-" + System.nanoTime() + ".gguf");
        assertThatThrownBy(() -> ModelGenerator.write(ModelGenerator.TINY, ModelGenerator.Architecture.LLAMA,
                QuantizationMix.Q4_K_M, 1, out)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("64 values").hasMessageContaining("Q4_K").hasMessageContaining("small");
        assertThat(Files.exists(out)).isFalse();
        assertThatThrownBy(() -> QuantizationMix.parse("q3_k_m")).hasMessageContaining("q4_k_m");
    }
}
