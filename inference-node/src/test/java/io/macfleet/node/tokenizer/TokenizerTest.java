package io.macfleet.node.tokenizer;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.gguf.GgufValueType;
import io.macfleet.node.gguf.GgufWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TokenizerTest {
    @TempDir
    Path directory;

    @Test
    void bytePairEncodingRoundTripsAnyTextAndMergesCommonWords() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            Tokenizer tokenizer = Tokenizer.from(file);
            assertThat(tokenizer).isInstanceOf(BytePairTokenizer.class);
            String text = "The robot paints the sea. Ünïcödé ✓ 2026 tabs\tand\nnewlines  ";
            List<Integer> ids = tokenizer.encode(text, false);
            assertThat(tokenizer.decode(ids)).isEqualTo(text);
            assertThat(ids.size()).isLessThan(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
            assertThat(tokenizer.encode(" the", false)).hasSize(1);
        }
    }

    @Test
    void specialTokensAreParsedOnlyWhenAsked() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            Tokenizer tokenizer = Tokenizer.from(file);
            int eot = tokenizer.id("<|eot_id|>").orElseThrow();
            assertThat(tokenizer.encode("hi<|eot_id|>", true)).endsWith(eot);
            assertThat(tokenizer.encode("hi<|eot_id|>", false)).doesNotContain(eot);
            assertThat(tokenizer.decode(List.of(eot))).isEmpty();
        }
    }

    @Test
    void chatTemplateIsChosenFromMetadata() throws IOException {
        try (GgufFile file = GgufFile.open(TestModels.tiny(GgmlType.Q8_0))) {
            ChatTemplate template = ChatTemplate.detect(file);
            assertThat(template).isEqualTo(ChatTemplate.LLAMA3);
            assertThat(template.render(List.of(new ChatTemplate.Message("system", "Be brief."),
                    new ChatTemplate.Message("user", " Hi ")), "<|begin_of_text|>"))
                    .isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                            + "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                            + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        }
        assertThat(ChatTemplate.fromTemplate("{% for m in messages %}<|im_start|>{{ m.role }}")).contains(ChatTemplate.CHATML);
        assertThat(ChatTemplate.fromTemplate("{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]"))
                .contains(ChatTemplate.MISTRAL);
        assertThat(ChatTemplate.CHATML.render(List.of(new ChatTemplate.Message("user", "Hi")), null))
                .isEqualTo("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        assertThat(ChatTemplate.MISTRAL.render(List.of(new ChatTemplate.Message("user", "Hi"),
                new ChatTemplate.Message("assistant", "Hello"), new ChatTemplate.Message("user", "Bye")), "<s>"))
                .isEqualTo("<s>[INST] Hi [/INST] Hello</s>[INST] Bye [/INST]");
    }

    @Test
    void unknownChatTemplateIsAClearError() throws IOException {
        Path file = directory.resolve("odd.gguf");
        new GgufWriter().putString("general.architecture", "llama")
                .putString("tokenizer.chat_template", "{% for m in messages %}<<{{ m.content }}>>{% endfor %}").write(file);
        try (GgufFile gguf = GgufFile.open(file)) {
            assertThatThrownBy(() -> ChatTemplate.detect(gguf)).hasMessageContaining("odd.gguf")
                    .hasMessageContaining("unknown chat template");
        }
    }

    @Test
    void sentencePieceMergesByScoreAndFallsBackToBytes() throws IOException {
        List<String> tokens = new java.util.ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        List<Integer> types = new java.util.ArrayList<>(List.of(2, 3, 3));
        List<Float> scores = new java.util.ArrayList<>(List.of(0f, 0f, 0f));
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
            types.add(6);
            scores.add(0f);
        }
        for (String piece : List.of("▁", "h", "e", "l", "o", "w", "r", "d", "▁h", "ll", "▁he", "llo", "▁hello", "▁w", "or", "▁wor", "ld", "▁world")) {
            tokens.add(piece);
            types.add(1);
            scores.add((float) -tokens.size());
        }
        Path file = directory.resolve("spm.gguf");
        new GgufWriter().putString("tokenizer.ggml.model", "llama")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, types)
                .putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, scores)
                .putUInt32("tokenizer.ggml.bos_token_id", 1).putUInt32("tokenizer.ggml.eos_token_id", 2)
                .write(file);
        try (GgufFile gguf = GgufFile.open(file)) {
            Tokenizer tokenizer = Tokenizer.from(gguf);
            assertThat(tokenizer).isInstanceOf(SentencePieceTokenizer.class);
            List<Integer> ids = tokenizer.encode("hello world!", false);
            assertThat(ids.subList(0, 2)).containsExactly(tokens.indexOf("▁hello"), tokens.indexOf("▁world"));
            assertThat(ids.get(2)).isEqualTo(tokens.indexOf("<0x21>"));
            assertThat(tokenizer.decode(ids)).isEqualTo(" hello world!");
            assertThat(tokenizer.addBos()).isTrue();
        }
    }
}
