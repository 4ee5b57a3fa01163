package io.macfleet.node.tools;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.GenerationOptions;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.grammar.GrammarConstraint;
import io.macfleet.node.grammar.SchemaCompiler;
import io.macfleet.node.grammar.SchemaValidator;
import io.macfleet.node.json.Json;
import io.macfleet.node.tokenizer.ChatTemplate;
import io.macfleet.node.tokenizer.Tokenizer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Each family's tool-call format: detection, parsing real-shaped outputs, and forced calls on the random model. */
class ToolFormatTest {
    static final String PARAMETERS = """
            {"type":"object","additionalProperties":false,"required":["city"],"properties":{"city":{"type":"string"}}}""";
    static final List<Tool> TOOLS = List.of(new Tool("get_weather", Map.of("type", "function"),
            SchemaCompiler.compile(Json.parse(PARAMETERS))), new Tool("get_time", Map.of("type", "function"),
            SchemaCompiler.compile(Json.parse("{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"))));

    @Test
    void detectsTheFormatFromTheTemplateText() {
        // fragments of the published templates: Qwen2.5-Instruct's, Llama-3.1-Instruct's and Mistral-7B-Instruct-v0.3's
        assertThat(ToolFormat.detect("{%- if tools %}<|im_start|>system ... <tool_call>", ChatTemplate.CHATML))
                .isEqualTo(ToolFormat.QWEN);
        assertThat(ToolFormat.detect("<|start_header_id|>ipython<|end_header_id|>", ChatTemplate.LLAMA3))
                .isEqualTo(ToolFormat.LLAMA31);
        assertThat(ToolFormat.detect("[INST] ... [TOOL_CALLS] ...", ChatTemplate.MISTRAL)).isEqualTo(ToolFormat.MISTRAL);
        assertThat(ToolFormat.detect("<|start_header_id|> no tools", ChatTemplate.LLAMA3)).isEqualTo(ToolFormat.NONE);
        assertThat(ToolFormat.NONE.supportsAuto()).isFalse();
    }

    @Test
    void parsesEachFamilysCalls() {
        // shapes as the families' documentation shows them (spaces after colons, as the models write them)
        ToolFormat.Parsed qwen = ToolFormat.QWEN.parse("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", "
                + "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
                + "\"arguments\": {}}\n</tool_call>", TOOLS);
        assertThat(qwen.content()).isEqualTo("Let me check.");
        assertThat(qwen.calls()).extracting(ToolCall::name).containsExactly("get_weather", "get_time");
        assertThat(qwen.calls().getFirst().arguments()).isEqualTo("{\"city\":\"Paris\"}");
        ToolFormat.Parsed llama = ToolFormat.LLAMA31.parse("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", TOOLS);
        assertThat(llama.calls()).extracting(ToolCall::arguments).containsExactly("{\"city\":\"Paris\"}");
        ToolFormat.Parsed mistral = ToolFormat.MISTRAL.parse("[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": "
                + "{\"city\": \"Paris\"}}]", TOOLS);
        assertThat(mistral.calls()).hasSize(1);
        assertThat(ToolFormat.QWEN.parse("<tool_call>\n{\"name\": \"launch\", \"arguments\": {}}\n</tool_call>", TOOLS)
                .calls()).as("an unknown function is text, not a call").isEmpty();
        assertThat(ToolFormat.QWEN.parse("Sunny.", TOOLS).content()).isEqualTo("Sunny.");
    }

    @Test
    void renderedCallsParseBack() {
        List<ToolCall> calls = List.of(new ToolCall("call_1", "get_weather", "{\"city\":\"Oslo\"}"));
        for (ToolFormat format : ToolFormat.values()) {
            assertThat(format.parse(format.renderCalls(calls), TOOLS).calls()).as(format.name())
                    .extracting(ToolCall::arguments).containsExactly("{\"city\":\"Oslo\"}");
        }
    }

    @Test
    void forcedCallsOfTheRandomModelParseInEveryFormat() throws Exception {
        try (InferenceEngine engine = InferenceEngine.load(TestModels.tiny(GgmlType.Q8_0), 256, 1)) {
            for (ToolFormat format : ToolFormat.values()) {
                int calls = 0;
                for (long seed = 1; seed <= 4; seed++) {
                    InferenceEngine.Generation result = engine.generate(engine.encodeCompletion("Call:"),
                            new SamplingParameters(1, 0, 1, 0, seed, 100, List.of()),
                            new GenerationOptions(new GrammarConstraint(format.callGrammar(TOOLS, true),
                                    engine.tokenizer()), -1, 0, 0), text -> { });
                    if (!result.finishReason().equals("stop")) {
                        continue;
                    }
                    ToolFormat.Parsed parsed = format.parse(result.text(), TOOLS);
                    assertThat(parsed.calls()).as(format + ": " + result.text()).isNotEmpty();
                    for (ToolCall call : parsed.calls()) {
                        if (call.name().equals("get_weather")) {
                            assertThat(SchemaValidator.problem(Json.parse(call.arguments()), Json.parse(PARAMETERS))).isNull();
                        }
                    }
                    calls++;
                }
                assertThat(calls).as(format.name()).isPositive();
            }
        }
    }

    @Test
    void autoConstrainsACallOnceTheModelStartsIt() throws Exception {
        try (InferenceEngine engine = InferenceEngine.load(TestModels.tiny(GgmlType.Q8_0), 256, 1)) {
            Tokenizer tokenizer = engine.tokenizer();
            AutoCallConstraint constraint = new AutoCallConstraint(ToolFormat.QWEN, TOOLS, tokenizer);
            float[] logits = new float[tokenizer.size()];
            for (int token : tokenizer.encode("Let me check.", false)) {
                assertThat(constraint.mask(logits)).isTrue();
                constraint.accept(token);
            }
            assertThat(logits).as("free text is not masked").containsOnly(0f);
            assertThat(constraint.canEnd()).isTrue();
            for (int token : tokenizer.encode("<tool_call>", false)) {
                constraint.accept(token);
            }
            assertThat(constraint.canEnd()).as("inside a call").isFalse();
            constraint.mask(logits);
            for (int id = 0; id < logits.length; id++) {
                if (logits[id] == 0f) {
                    assertThat(new String(tokenizer.decode(id), StandardCharsets.UTF_8)).startsWith("\n");
                }
            }
            for (int token : tokenizer.encode("\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>", false)) {
                constraint.accept(token);
            }
            assertThat(constraint.canEnd()).as("the call is complete").isTrue();
            float[] after = new float[tokenizer.size()];
            constraint.mask(after);
            assertThat(after).containsOnly(0f);

            AutoCallConstraint llama = new AutoCallConstraint(ToolFormat.LLAMA31, TOOLS, tokenizer);
            for (int token : tokenizer.encode("{\"name\":\"get_", false)) {
                llama.accept(token);
            }
            float[] masked = new float[tokenizer.size()];
            llama.mask(masked);
            assertThat(masked[tokenizer.encode("w", false).getFirst()]).isZero();
            assertThat(masked[tokenizer.encode("x", false).getFirst()]).isEqualTo(Float.NEGATIVE_INFINITY);
        }
    }

    @Test
    void autoStreamsTheTextBeforeACall() {
        StreamedText qwen = new StreamedText(ToolFormat.QWEN);
        assertThat(qwen.offer("Let me")).isEqualTo("Let me");
        assertThat(qwen.offer(" check <tool")).as("a possible marker is held back").isEqualTo(" check ");
        assertThat(qwen.offer("_call>\n{\"name\"")).isEmpty();
        assertThat(qwen.offer("...")).isEmpty();
        StreamedText plain = new StreamedText(ToolFormat.QWEN);
        assertThat(plain.offer("a <tool")).isEqualTo("a ");
        assertThat(plain.offer("s> b")).isEqualTo("<tools> b");
        assertThat(plain.rest()).isEmpty();
        StreamedText llama = new StreamedText(ToolFormat.LLAMA31);
        assertThat(llama.offer("  ")).isEmpty();
        assertThat(llama.offer("{\"name\"")).isEmpty();
        StreamedText llamaText = new StreamedText(ToolFormat.LLAMA31);
        assertThat(llamaText.offer(" ")).isEmpty();
        assertThat(llamaText.offer("Sunny")).isEqualTo(" Sunny");
        StreamedText mistral = new StreamedText(ToolFormat.MISTRAL);
        assertThat(mistral.offer("[{")).isEmpty();
        assertThat(mistral.rest()).isEqualTo("[{");
    }
}
