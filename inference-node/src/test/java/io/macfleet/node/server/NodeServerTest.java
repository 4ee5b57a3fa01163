package io.macfleet.node.server;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class NodeServerTest {
    private static NodeServer server;
    private static HttpClient client;
    private static String base;

    @BeforeAll
    static void start() throws Exception {
        NodeConfig config = new NodeConfig(TestModels.tiny(GgmlType.Q8_0), "127.0.0.1", 0, 512, 2, 0, "tiny", 64);
        server = new NodeServer(config);
        server.start();
        base = "http://127.0.0.1:" + server.address().getPort();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (get("/health").statusCode() != 200) {
            assertThat(System.nanoTime()).as("model loads in time").isLessThan(deadline);
            assertThat(server.loadError()).isNull();
            Thread.sleep(50);
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String text) {
        return (Map<String, Object>) Json.parse(text);
    }

    @Test
    void streamsAChatCompletion() throws Exception {
        HttpResponse<java.io.InputStream> response = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("""
                        {"model":"tiny","stream":true,"max_tokens":12,"temperature":0.7,"seed":5,
                         "stream_options":{"include_usage":true},
                         "messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello!"}]}"""))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        List<String> events = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            for (String line; (line = reader.readLine()) != null; ) {
                if (!line.isEmpty()) {
                    assertThat(line).startsWith("data: ");
                    events.add(line.substring(6));
                }
            }
        }
        assertThat(events.getLast()).isEqualTo("[DONE]");
        Map<String, Object> first = json(events.getFirst());
        assertThat(first.get("object")).isEqualTo("chat.completion.chunk");
        StringBuilder content = new StringBuilder();
        String finish = null;
        Map<String, Object> usage = null;
        for (String event : events.subList(0, events.size() - 1)) {
            Map<String, Object> chunk = json(event);
            List<Object> choices = (List<Object>) chunk.get("choices");
            if (chunk.get("usage") != null) {
                usage = (Map<String, Object>) chunk.get("usage");
            }
            if (choices.isEmpty()) {
                continue;
            }
            Map<String, Object> choice = (Map<String, Object>) choices.getFirst();
            Map<String, Object> delta = (Map<String, Object>) choice.get("delta");
            if (delta.get("content") != null) {
                content.append(delta.get("content"));
            }
            if (choice.get("finish_reason") != null) {
                finish = (String) choice.get("finish_reason");
            }
        }
        assertThat(events.size()).isGreaterThan(3);
        assertThat(finish).isIn("stop", "length");
        assertThat(usage).isNotNull();
        assertThat(((Number) usage.get("prompt_tokens")).intValue()).isGreaterThan(10);
        assertThat(((Number) usage.get("completion_tokens")).intValue()).isBetween(0, 12);

        // The same request without streaming gives the same text (same seed).
        HttpResponse<String> plain = post("/v1/chat/completions", """
                {"model":"tiny","max_tokens":12,"temperature":0.7,"seed":5,
                 "messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello!"}]}""");
        assertThat(plain.statusCode()).isEqualTo(200);
        Map<String, Object> body = json(plain.body());
        Map<String, Object> message = (Map<String, Object>) ((Map<String, Object>) ((List<Object>) body.get("choices")).getFirst()).get("message");
        assertThat(message.get("content")).isEqualTo(content.toString());
        assertThat(body.get("usage")).isEqualTo(usage);
    }

    @Test
    void completesTextWithUsage() throws Exception {
        HttpResponse<String> response = post("/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":5,\"temperature\":0}");
        assertThat(response.statusCode()).isEqualTo(200);
        Map<String, Object> body = json(response.body());
        assertThat(body.get("object")).isEqualTo("text_completion");
        Map<String, Object> usage = (Map<String, Object>) body.get("usage");
        assertThat(((Number) usage.get("prompt_tokens")).longValue()).isGreaterThan(2);
        assertThat(((Number) usage.get("total_tokens")).longValue())
                .isEqualTo(((Number) usage.get("prompt_tokens")).longValue() + ((Number) usage.get("completion_tokens")).longValue());
    }

    @Test
    void badRequestsGetOpenAiErrors() throws Exception {
        HttpResponse<String> notJson = post("/v1/chat/completions", "{oops");
        assertThat(notJson.statusCode()).isEqualTo(400);
        Map<String, Object> error = (Map<String, Object>) json(notJson.body()).get("error");
        assertThat(error).containsKeys("message", "type", "param", "code");
        assertThat(error.get("type")).isEqualTo("invalid_request_error");

        HttpResponse<String> noMessages = post("/v1/chat/completions", "{\"model\":\"tiny\"}");
        assertThat(noMessages.statusCode()).isEqualTo(400);
        assertThat(((Map<String, Object>) json(noMessages.body()).get("error")).get("param")).isEqualTo("messages");

        HttpResponse<String> badTemperature = post("/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":\"hot\"}");
        assertThat(badTemperature.statusCode()).isEqualTo(400);
        assertThat(((Map<String, Object>) json(badTemperature.body()).get("error")).get("param")).isEqualTo("temperature");

        assertThat(get("/v1/nothing").statusCode()).isEqualTo(404);
        assertThat(get("/v1/chat/completions").statusCode()).isEqualTo(405);
    }

    @Test
    void listsTheModelAndExportsMetrics() throws Exception {
        Map<String, Object> models = json(get("/v1/models").body());
        assertThat(((Map<String, Object>) ((List<Object>) models.get("data")).getFirst()).get("id")).isEqualTo("tiny");
        // The queue limit is 0: a generation still running from another test (aFullQueueAnswers429 leaves one behind)
        // gets this request refused, and then no prompt tokens are counted; retry until it runs.
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (post("/v1/completions", "{\"prompt\":\"Hi\",\"max_tokens\":2}").statusCode() == 429
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        String metrics = get("/metrics").body();
        assertThat(metrics).contains("# TYPE inference_node_tokens_generated_total counter")
                .contains("inference_node_prompt_tokens_total").contains("inference_node_requests_in_flight 0")
                .contains("inference_node_time_to_first_token_seconds_count").contains("inference_node_model_memory_bytes")
                .contains("inference_node_decode_tokens_per_second").contains("inference_node_model_loaded 1");
        assertThat(metrics).doesNotContain("inference_node_prompt_tokens_total 0\n");
    }

    @Test
    void aFullQueueAnswers429() throws Exception {
        // The queue limit is 0: while one generation runs (held by a reader that does not read), others are refused.
        HttpResponse<java.io.InputStream> running = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"Hi\",\"stream\":true,\"max_tokens\":400}"))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        try (var body = running.body()) {
            assertThat(body.read()).isEqualTo('d');
            HttpResponse<String> refused = post("/v1/completions", "{\"prompt\":\"Hi\",\"max_tokens\":1}");
            if (refused.statusCode() == 429) {
                assertThat(((Map<String, Object>) json(refused.body()).get("error")).get("code")).isEqualTo("rate_limit_exceeded");
            } else {
                // The first generation finished before the second arrived (a very fast machine); it must then succeed.
                assertThat(refused.statusCode()).isEqualTo(200);
            }
        }
    }
}
