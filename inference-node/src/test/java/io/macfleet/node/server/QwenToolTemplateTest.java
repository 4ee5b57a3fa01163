package io.macfleet.node.server;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A model whose chat template has Qwen's tool format (the tiny model with its template text swapped for a ChatML
 * one with {@code <tool_call>}, of the same byte length so the file's offsets stay valid): auto is accepted, forced
 * calls come back through the {@code <tool_call>} format as OpenAI tool_calls.
 */
class QwenToolTemplateTest {
    @TempDir
    static Path directory;
    private static NodeServer server;
    private static String base;

    /** A shortened ChatML template as Qwen 2.5's starts (its tool block is longer); padded with spaces. */
    private static final String TEMPLATE = "{%- if tools %}{{- '<tool_call>' }}{%- endif %}{%- for message in messages %}"
            + "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}"
            + "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

    @BeforeAll
    static void start() throws Exception {
        Path tiny = TestModels.tiny(GgmlType.Q8_0);
        String original;
        try (GgufFile file = GgufFile.open(tiny)) {
            original = file.string("tokenizer.chat_template");
        }
        byte[] bytes = Files.readAllBytes(tiny);
        byte[] old = original.getBytes(StandardCharsets.UTF_8);
        byte[] replacement = (TEMPLATE + " ".repeat(old.length - TEMPLATE.length())).getBytes(StandardCharsets.UTF_8);
        int at = indexOf(bytes, old);
        assertThat(at).isPositive();
        System.arraycopy(replacement, 0, bytes, at, replacement.length);
        Path model = directory.resolve("tiny-qwen-tools.gguf");
        Files.write(model, bytes);
        server = new NodeServer(new NodeConfig(model, "127.0.0.1", 0, 1024, 1, 0, "tiny", 64));
        server.start();
        base = "http://127.0.0.1:" + server.address().getPort();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!server.loaded()) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            assertThat(server.loadError()).isNull();
            Thread.sleep(50);
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return i;
            }
        }
        return -1;
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    @SuppressWarnings("unchecked")
    void autoIsAcceptedAndForcedCallsUseTheQwenFormat() throws Exception {
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        java.util.function.Function<String, java.net.http.HttpResponse<String>> post = body -> {
            try {
                return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/v1/chat/completions"))
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        // a template without a tool format refuses auto (AgentApiTest): a 200 here means the Qwen format was found
        var auto = post.apply("""
                {"model":"tiny","max_tokens":16,"seed":1,"tools":[%s],"messages":[{"role":"user","content":"Forecast?"}]}"""
                .formatted(AgentApiTest.FORECAST_TOOL));
        assertThat(auto.statusCode()).as(auto.body()).isEqualTo(200);
        int called = 0;
        for (int seed = 1; seed <= 4; seed++) {
            var forced = post.apply("""
                    {"model":"tiny","max_tokens":120,"seed":%d,"tool_choice":"required","tools":[%s],"parallel_tool_calls":false,"messages":[
                     {"role":"user","content":"Forecast?"},
                     {"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function",
                       "function":{"name":"get_forecast","arguments":"{\\"days\\":1,\\"unit\\":\\"celsius\\"}"}}]},
                     {"role":"tool","tool_call_id":"call_9","content":"sunny"}]}"""
                    .formatted(seed, AgentApiTest.FORECAST_TOOL));
            assertThat(forced.statusCode()).as(forced.body()).isEqualTo(200);
            Map<String, Object> choice = AgentApiTest.firstChoice(AgentApiTest.json(forced.body()));
            if (choice.get("finish_reason").equals("tool_calls")) {
                List<Object> calls = (List<Object>) ((Map<String, Object>) choice.get("message")).get("tool_calls");
                Map<String, Object> function = (Map<String, Object>) ((Map<String, Object>) calls.getFirst()).get("function");
                assertThat(function.get("name")).isEqualTo("get_forecast");
                assertThat(((Map<String, Object>) Json.parse((String) function.get("arguments"))).get("unit"))
                        .isIn("celsius", "fahrenheit");
                called++;
            }
        }
        assertThat(called).as("one call without free strings always finishes").isEqualTo(4);
    }

    @Test
    @SuppressWarnings("unchecked")
    void autoStreamsTextThatIsNoCall() throws Exception {
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        String body = """
                {"model":"tiny","max_tokens":24,"seed":3,%s"tools":[%s],"messages":[{"role":"user","content":"Hi"}]}""";
        String whole = client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/v1/chat/completions"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body.formatted("", AgentApiTest.FORECAST_TOOL))).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Object> message = (Map<String, Object>) AgentApiTest.firstChoice(AgentApiTest.json(whole)).get("message");
        String events = client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/v1/chat/completions"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body.formatted("\"stream\":true,",
                        AgentApiTest.FORECAST_TOOL))).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        StringBuilder streamed = new StringBuilder();
        int pieces = 0;
        for (String line : events.split("\n")) {
            if (line.startsWith("data: {")) {
                Map<String, Object> delta = (Map<String, Object>) AgentApiTest.firstChoice(AgentApiTest.json(line.substring(6))).get("delta");
                if (delta.get("content") instanceof String text && !text.isEmpty()) {
                    streamed.append(text);
                    pieces++;
                }
            }
        }
        assertThat(message.get("tool_calls")).as("the random model writes no <tool_call>").isNull();
        assertThat(streamed.toString()).isEqualTo(message.get("content"));
        assertThat(pieces).as("streamed as it came, not in one piece at the end").isGreaterThan(1);
    }
}
