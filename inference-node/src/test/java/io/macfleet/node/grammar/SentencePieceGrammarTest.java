package io.macfleet.node.grammar;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.gguf.GgufValueType;
import io.macfleet.node.gguf.GgufWriter;
import io.macfleet.node.json.Json;
import io.macfleet.node.tokenizer.Tokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The mask on a SentencePiece vocabulary: "▁" pieces are spaces, byte tokens are their byte, controls are out. */
class SentencePieceGrammarTest {
    @Test
    void masksSentencePiecesByTheirDecodedBytes(@TempDir Path directory) throws Exception {
        List<String> tokens = new ArrayList<>(List.of("<unk>", "<s>", "</s>"));
        List<Integer> types = new ArrayList<>(List.of(2, 3, 3));
        List<Float> scores = new ArrayList<>(List.of(0f, 0f, 0f));
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
            types.add(6);
            scores.add(0f);
        }
        for (String piece : List.of("▁hello", "{\"", "\":", "hello", "▁", "\"}")) {
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
            Node grammar = SchemaCompiler.compile(Json.parse("""
                    {"type":"object","required":["hello"],"additionalProperties":false,
                     "properties":{"hello":{"type":"string"}}}"""));
            GrammarConstraint constraint = new GrammarConstraint(grammar, tokenizer);
            BitSet start = constraint.allowed();
            assertThat(start.get(tokens.indexOf("<0x7B>"))).as("the byte token of {").isTrue();
            assertThat(start.get(tokens.indexOf("{\""))).isTrue();
            assertThat(start.get(tokens.indexOf("▁hello"))).as("a piece starting with a space").isFalse();
            assertThat(start.get(tokens.indexOf("</s>"))).as("control tokens decode to nothing").isFalse();
            assertThat(constraint.acceptBytes("{\"hello\":\"".getBytes(StandardCharsets.UTF_8))).isTrue();
            BitSet inString = constraint.allowed();
            assertThat(inString.get(tokens.indexOf("▁hello"))).isTrue();
            assertThat(inString.get(tokens.indexOf("\"}"))).isTrue();
            assertThat(inString.get(tokens.indexOf("\":"))).as("a quote closes the value, then only } fits").isFalse();
            constraint.accept(tokens.indexOf("\"}"));
            assertThat(constraint.mustEnd()).isTrue();
        }
    }
}
