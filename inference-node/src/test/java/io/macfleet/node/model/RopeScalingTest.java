package io.macfleet.node.model;

import io.macfleet.node.generator.ModelGenerator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class RopeScalingTest {
    private static LlamaConfig config(String scaling) {
        return new LlamaConfig("llama", "test", 2048, 16, 32, 8, 64, 8192, 32000, 131072, 1e-5f, 500000f, 64, false,
                scaling, 32f, 8192, 1f, 4f);
    }

    @Test
    void llama3MetadataMatchesTheRopeFreqsTensorConvention() {
        float[] factors = ModelGenerator.llama3FrequencyFactors(64, 500000, 32, 1, 4, 8192);
        float[] fromTensor = LlamaModel.ropeFrequencies(config("none"), factors);
        float[] fromMetadata = LlamaModel.ropeFrequencies(config("llama3"), null);
        for (int i = 0; i < fromTensor.length; i++) {
            assertThat(fromMetadata[i]).isCloseTo(fromTensor[i], within(Math.abs(fromTensor[i]) * 1e-5f));
        }
        float[] plain = LlamaModel.ropeFrequencies(config("none"), null);
        assertThat(fromMetadata[0]).isEqualTo(plain[0]); // high frequencies are kept
        assertThat(fromMetadata[31]).isCloseTo(plain[31] / 32, within(plain[31] * 1e-5f)); // low ones divided by the factor
    }

    @Test
    void linearScalingDividesEveryFrequency() {
        float[] plain = LlamaModel.ropeFrequencies(config("none"), null);
        float[] linear = LlamaModel.ropeFrequencies(config("linear"), null);
        for (int i = 0; i < plain.length; i++) {
            assertThat(linear[i]).isCloseTo(plain[i] / 32, within(plain[i] * 1e-5f));
        }
    }
}
