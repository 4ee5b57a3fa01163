package io.macfleet.node.server;

import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.grammar.SchemaValidator;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/** The OpenAI API fields agents use, over HTTP against the random tiny model (its template has no tool format). */
class AgentApiTest {
    private static NodeServer server;
    private static HttpClient client;
    private static String base;

    static final String WEATHER_TOOL = """
            {"type":"function","function":{"name":"get_weather","description":"Weather of a city",
             "parameters":{"type":"object","additionalProperties":false,"required":["city","unit"],
               "properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}}}}}""";

    /** Without free strings: a random model closes enums and integers quickly, so forced calls finish. */
    static final String FORECAST_TOOL = """
            {"type":"function","function":{"name":"get_forecast","description":"Forecast",
             "parameters":{"type":"object","additionalProperties":false,"required":["days","unit"],
               "properties":{"days":{"type":"integer"},"unit":{"enum":["celsius","fahrenheit"]}}}}}""";

    @BeforeAll
    static void start() throws Exception {
        server = new NodeServer(new NodeConfig(TestModels.tiny(GgmlType.Q8_0), "127.0.0.1", 0, 512, 1, 0, "tiny", 64));
        server.start();
        base = "http://127.0.0.1:" + server.address().getPort();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!server.loaded()) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            assertThat(server.loadError()).isNull();
            Thread.sleep(50);
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static HttpResponse<String> post(String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> json(String text) {
        return (Map<String, Object>) Json.parse(text);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> firstChoice(Map<String, Object> answer) {
        return (Map<String, Object>) ((List<Object>) answer.get("choices")).getFirst();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> error(HttpResponse<String> response) {
        return (Map<String, Object>) json(response.body()).get("error");
    }

    @Test
    @SuppressWarnings("unchecked")
    void jsonSchemaResponsesParseAndValidate() throws Exception {
        String schema = """
                {"type":"object","additionalProperties":false,"required":["title","year","good"],
                 "properties":{"title":{"type":"string"},"year":{"type":"integer"},"good":{"type":"boolean"}}}""";
        int complete = 0;
        for (int seed = 1; seed <= 5; seed++) {
            HttpResponse<String> response = post("/v1/chat/completions", """
                    {"model":"tiny","max_tokens":200,"seed":%d,"messages":[{"role":"user","content":"A film?"}],
                     "response_format":{"type":"json_schema","json_schema":{"name":"film","strict":true,"schema":%s}}}"""
                    .formatted(seed, schema));
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            Map<String, Object> choice = firstChoice(json(response.body()));
            String content = (String) ((Map<String, Object>) choice.get("message")).get("content");
            if (choice.get("finish_reason").equals("stop")) {
                complete++;
                assertThat(SchemaValidator.problem(Json.parse(content), Json.parse(schema))).as(content).isNull();
            }
        }
        assertThat(complete).as("random strings can run past max_tokens; some finish").isPositive();
    }

    @Test
    void schemasAndToolsOutsideTheSubsetAreRefusedByName() throws Exception {
        HttpResponse<String> response = post("/v1/chat/completions", """
                {"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",
                 "json_schema":{"name":"x","schema":{"type":"string","format":"date-time"}}}}""");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response).get("message")).asString().contains("'format'");
        response = post("/v1/chat/completions", """
                {"messages":[{"role":"user","content":"x"}],"tool_choice":"required","tools":[{"type":"function",
                 "function":{"name":"broken","parameters":{"type":"object","properties":{"a":{"type":"strin"}}}}}]}""");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response).get("message")).asString().contains("tool 'broken'").contains("'strin'");
        assertThat(error(response).get("param")).isEqualTo("tools[0].function.parameters");
    }

    @Test
    @SuppressWarnings("unchecked")
    void requiredAndNamedToolCallsAreValidCalls() throws Exception {
        int called = 0;
        for (String choice : List.of("\"required\"", "{\"type\":\"function\",\"function\":{\"name\":\"get_forecast\"}}")) {
            for (int seed = 1; seed <= 4; seed++) {
                HttpResponse<String> response = post("/v1/chat/completions", """
                        {"model":"tiny","max_tokens":120,"seed":%d,"tool_choice":%s,"tools":[%s],"parallel_tool_calls":false,
                         "messages":[{"role":"user","content":"Weather in Paris?"}]}""".formatted(seed, choice, FORECAST_TOOL));
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                Map<String, Object> first = firstChoice(json(response.body()));
                if (!first.get("finish_reason").equals("tool_calls")) {
                    assertThat(first.get("finish_reason")).isEqualTo("length");
                    continue;
                }
                Map<String, Object> message = (Map<String, Object>) first.get("message");
                List<Object> calls = (List<Object>) message.get("tool_calls");
                assertThat(calls).isNotEmpty();
                called++;
                for (Object each : calls) {
                    Map<String, Object> call = (Map<String, Object>) each;
                    assertThat(call.get("type")).isEqualTo("function");
                    assertThat((String) call.get("id")).startsWith("call_");
                    Map<String, Object> function = (Map<String, Object>) call.get("function");
                    assertThat(function.get("name")).isEqualTo("get_forecast");
                    Object arguments = Json.parse((String) function.get("arguments"));
                    Object parameters = ((Map<String, Object>) ((Map<String, Object>) Json.parse(FORECAST_TOOL))
                            .get("function")).get("parameters");
                    assertThat(SchemaValidator.problem(arguments, parameters)).isNull();
                }
            }
        }
        assertThat(called).as("one call without free strings always finishes in 120 tokens").isEqualTo(8);
    }

    @Test
    void autoNeedsATemplateWithAToolFormat() throws Exception {
        HttpResponse<String> response = post("/v1/chat/completions", """
                {"messages":[{"role":"user","content":"x"}],"tools":[%s]}""".formatted(WEATHER_TOOL));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response).get("param")).isEqualTo("tool_choice");
        assertThat(error(response).get("message")).asString().contains("no tool-call format");
    }

    @Test
    void toolResultsGoBackThroughTheTemplate() throws Exception {
        HttpResponse<String> response = post("/v1/chat/completions", """
                {"model":"tiny","max_tokens":8,"tool_choice":"none","tools":[%s],"messages":[
                 {"role":"user","content":"Weather in Paris?"},
                 {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
                   "function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\",\\"unit\\":\\"celsius\\"}"}}]},
                 {"role":"tool","tool_call_id":"call_1","content":"18 degrees"}]}""".formatted(WEATHER_TOOL));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        response = post("/v1/chat/completions", """
                {"messages":[{"role":"tool","content":"18"}]}""");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response).get("param")).isEqualTo("messages[0].tool_call_id");
    }

    @Test
    @SuppressWarnings("unchecked")
    void conformance() throws Exception {
        HttpResponse<String> response = post("/v1/chat/completions", """
                {"model":"tiny","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}""");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response).get("message")).isEqualTo("'max_tokens' must be a whole number of at least 1, got 1.5");
        response = post("/v1/chat/completions", """
                {"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}""");
        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(error(response).get("code")).isEqualTo("model_not_found");
        HttpResponse<String> model = client.send(HttpRequest.newBuilder(URI.create(base + "/v1/models/tiny")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(json(model.body())).containsEntry("id", "tiny").containsEntry("object", "model");
        assertThat(client.send(HttpRequest.newBuilder(URI.create(base + "/v1/models/gpt-4o")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);

        response = post("/v1/chat/completions", """
                {"model":"tiny","n":2,"seed":7,"max_tokens":6,"logprobs":true,"top_logprobs":3,
                 "presence_penalty":0.5,"frequency_penalty":0.5,"messages":[{"role":"user","content":"x"}]}""");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        Map<String, Object> answer = json(response.body());
        assertThat((String) answer.get("system_fingerprint")).startsWith("fp_");
        List<Object> choices = (List<Object>) answer.get("choices");
        assertThat(choices).hasSize(2);
        Map<String, Object> logprobs = (Map<String, Object>) ((Map<String, Object>) choices.getFirst()).get("logprobs");
        List<Object> content = (List<Object>) logprobs.get("content");
        assertThat(content).isNotEmpty();
        Map<String, Object> token = (Map<String, Object>) content.getFirst();
        assertThat(((Number) token.get("logprob")).doubleValue()).isLessThanOrEqualTo(0);
        assertThat((List<Object>) token.get("top_logprobs")).hasSize(3);
        assertThat(((Map<String, Object>) answer.get("usage")).get("completion_tokens"))
                .isEqualTo(((Number) ((Map<String, Object>) answer.get("usage")).get("total_tokens")).longValue() - 
                        ((Number) ((Map<String, Object>) answer.get("usage")).get("prompt_tokens")).longValue());

        response = post("/v1/completions", """
                {"model":"tiny","prompt":"Once","max_tokens":4,"logprobs":2}""");
        Map<String, Object> completionLogprobs = (Map<String, Object>) firstChoice(json(response.body())).get("logprobs");
        assertThat((List<Object>) completionLogprobs.get("tokens")).hasSize(4);
        assertThat((List<Object>) completionLogprobs.get("top_logprobs")).hasSize(4);
    }

    @Test
    void sameSeedSameAnswers() throws Exception {
        String body = """
                {"model":"tiny","n":2,"seed":11,"max_tokens":8,"temperature":1,"messages":[{"role":"user","content":"x"}]}""";
        assertThat(choicesText(post("/v1/chat/completions", body))).isEqualTo(choicesText(post("/v1/chat/completions", body)));
    }

    @SuppressWarnings("unchecked")
    private static List<Object> choicesText(HttpResponse<String> response) {
        List<Object> texts = new ArrayList<>();
        for (Object choice : (List<Object>) json(response.body()).get("choices")) {
            texts.add(((Map<String, Object>) ((Map<String, Object>) choice).get("message")).get("content"));
        }
        return texts;
    }

    @Test
    @SuppressWarnings("unchecked")
    void streamingUsageOnlyWhenAskedAndToolCallDeltas() throws Exception {
        List<Map<String, Object>> plain = events("""
                {"model":"tiny","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"x"}]}""");
        assertThat(plain).allSatisfy(chunk -> assertThat(chunk).doesNotContainKey("usage"));
        List<Map<String, Object>> withUsage = events("""
                {"model":"tiny","stream":true,"stream_options":{"include_usage":true},"max_tokens":5,
                 "messages":[{"role":"user","content":"x"}]}""");
        List<Map<String, Object>> withLogprobs = events("""
                {"model":"tiny","stream":true,"stream_options":{"include_usage":true},"max_tokens":6,"seed":5,
                 "logprobs":true,"top_logprobs":2,"messages":[{"role":"user","content":"x"}]}""");
        long entries = withLogprobs.stream().filter(chunk -> !((List<Object>) chunk.get("choices")).isEmpty())
                .map(chunk -> firstChoice(chunk).get("logprobs")).filter(java.util.Objects::nonNull)
                .mapToLong(logprobs -> ((List<Object>) ((Map<String, Object>) logprobs).get("content")).size()).sum();
        assertThat(entries).as("one entry per generated token").isEqualTo(
                ((Map<String, Object>) withLogprobs.getLast().get("usage")).get("completion_tokens"));
        List<Map<String, Object>> two = events("""
                {"model":"tiny","stream":true,"n":2,"seed":4,"max_tokens":5,"messages":[{"role":"user","content":"x"}]}""");
        assertThat(two.stream().filter(chunk -> firstChoice(chunk).get("finish_reason") != null)
                .map(chunk -> firstChoice(chunk).get("index")).toList()).containsExactly(0L, 1L);
        Map<String, Object> last = withUsage.getLast();
        assertThat((List<Object>) last.get("choices")).isEmpty();
        assertThat(last.get("usage")).isNotNull();
        assertThat(withUsage.subList(0, withUsage.size() - 1)).allSatisfy(chunk -> assertThat(chunk.get("usage")).isNull());

        List<Map<String, Object>> tools = events("""
                {"model":"tiny","stream":true,"max_tokens":120,"seed":2,"tool_choice":"required","tools":[%s],"parallel_tool_calls":false,
                 "messages":[{"role":"user","content":"Weather?"}]}""".formatted(FORECAST_TOOL));
        Map<String, Object> finish = firstChoice(tools.getLast());
        if (finish.get("finish_reason").equals("tool_calls")) {
            StringBuilder arguments = new StringBuilder();
            String name = null;
            for (Map<String, Object> chunk : tools) {
                Map<String, Object> delta = (Map<String, Object>) firstChoice(chunk).get("delta");
                if (delta.get("tool_calls") instanceof List<?> calls) {
                    Map<String, Object> call = (Map<String, Object>) calls.getFirst();
                    if (call.get("index").equals(0L)) {
                        Map<String, Object> function = (Map<String, Object>) call.get("function");
                        name = function.containsKey("name") ? (String) function.get("name") : name;
                        arguments.append((String) function.get("arguments"));
                    }
                }
            }
            assertThat(name).isEqualTo("get_forecast");
            assertThat(Json.parse(arguments.toString())).isInstanceOf(Map.class);
        } else {
            fail("a forced call without free strings finishes: " + tools);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> events(String body) throws Exception {
        HttpResponse<String> response = post("/v1/chat/completions", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<Map<String, Object>> chunks = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
                chunks.add((Map<String, Object>) Json.parse(line.substring(6)));
            }
        }
        assertThat(response.body()).endsWith("data: [DONE]\n\n");
        return chunks;
    }
}
