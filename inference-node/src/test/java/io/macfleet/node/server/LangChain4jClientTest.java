package io.macfleet.node.server;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.ReturnBehavior;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiChatRequestParameters;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.Result;
import dev.langchain4j.service.TokenStream;
import io.macfleet.node.TestModels;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * LangChain4j's OpenAI module (dev.langchain4j:langchain4j-open-ai, test scope) as an agent framework against the
 * node with the random tiny model: an AiServices agent whose tool the model is forced to call, structured output
 * into a Java record (json_schema, strict), and a streamed answer. LangChain4j's own parsers read every answer.
 */
class LangChain4jClientTest {
    private static NodeServer server;
    private static String baseUrl;

    @BeforeAll
    static void start() throws Exception {
        server = new NodeServer(new NodeConfig(TestModels.tiny(GgmlType.Q8_0), "127.0.0.1", 0, 512, 1, 0, "tiny", 64));
        server.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!server.loaded()) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            assertThat(server.loadError()).isNull();
            Thread.sleep(50);
        }
        baseUrl = "http://127.0.0.1:" + server.address().getPort() + "/v1";
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    enum Unit { CELSIUS, FAHRENHEIT }

    static final class WeatherTools {
        final List<String> calls = new ArrayList<>();

        // no free string among the parameters: a random model's strings run long, its integers and enums end soon
        @Tool(value = "The weather forecast", returnBehavior = ReturnBehavior.IMMEDIATE)
        String forecast(@P("days ahead") int days, @P("the unit") Unit unit) {
            calls.add(days + "/" + unit);
            return "18 degrees";
        }
    }

    interface WeatherAgent {
        Result<String> ask(String question);
    }

    record Film(String title, int year, boolean good) {
    }

    interface FilmCritic {
        Film recommend(String request);
    }

    interface Chatter {
        TokenStream chat(String message);
    }

    private static OpenAiChatModel.OpenAiChatModelBuilder model(int seed) {
        return OpenAiChatModel.builder().baseUrl(baseUrl).apiKey("not-needed").modelName("tiny").seed(seed)
                .maxTokens(200).timeout(Duration.ofSeconds(60)).maxRetries(0);
    }

    @Test
    void anAgentIsForcedToCallItsTool() {
        int called = 0;
        for (int seed = 1; seed <= 4; seed++) {
            WeatherTools tools = new WeatherTools();
            OpenAiChatModel model = model(seed).strictTools(true)
                    .defaultRequestParameters(OpenAiChatRequestParameters.builder().toolChoice(ToolChoice.REQUIRED)
                            .parallelToolCalls(false).build())
                    .build();
            WeatherAgent agent = AiServices.builder(WeatherAgent.class).chatModel(model).tools(tools).build();
            Result<String> result = agent.ask("What is the weather in Paris?");
            if (result.toolExecutions().isEmpty()) {
                // a random model can run out of tokens inside the call: the node then answers "length" with text
                assertThat(result.finishReason()).isEqualTo(FinishReason.LENGTH);
                assertThat(tools.calls).isEmpty();
            } else {
                assertThat(tools.calls).hasSize(result.toolExecutions().size());
                assertThat(tools.calls.getFirst()).matches("-?[0-9]+/(CELSIUS|FAHRENHEIT)");
                called++;
            }
        }
        assertThat(called).as("one forced call without free strings always finishes in 200 tokens").isEqualTo(4);
    }

    @Test
    void structuredOutputIntoARecord() {
        int parsed = 0;
        for (int seed = 1; seed <= 4; seed++) {
            OpenAiChatModel model = model(seed).supportedCapabilities(Capability.RESPONSE_FORMAT_JSON_SCHEMA)
                    .strictJsonSchema(true).build();
            FilmCritic critic = AiServices.create(FilmCritic.class, model);
            try {
                Film film = critic.recommend("Recommend a film");
                assertThat(film).isNotNull(); // LangChain4j's strict schema makes every field nullable
                parsed++;
            } catch (RuntimeException e) {
                assertThat(e).hasStackTraceContaining("length"); // cut by max_tokens, never a wrong record
            }
        }
        assertThat(parsed).isPositive();
    }

    @Test
    void streaming() throws Exception {
        OpenAiStreamingChatModel model = OpenAiStreamingChatModel.builder().baseUrl(baseUrl).apiKey("not-needed")
                .modelName("tiny").seed(3).maxTokens(12).timeout(Duration.ofSeconds(60)).build();
        Chatter chatter = AiServices.create(Chatter.class, model);
        StringBuilder partial = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        chatter.chat("Hello").onPartialResponse(partial::append).onCompleteResponse(done::complete)
                .onError(done::completeExceptionally).start();
        ChatResponse response = done.get(60, TimeUnit.SECONDS);
        assertThat(response.aiMessage().text()).isEqualTo(partial.toString());
        assertThat(response.tokenUsage().outputTokenCount()).isPositive();
    }
}
