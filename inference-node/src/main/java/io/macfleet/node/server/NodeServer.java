package io.macfleet.node.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.macfleet.node.cluster.ClusterMetrics;
import io.macfleet.node.cluster.ClusterNode;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.GenerationOptions;
import io.macfleet.node.engine.Placement;
import io.macfleet.node.grammar.GrammarConstraint;
import io.macfleet.node.grammar.TokenTrie;
import io.macfleet.node.engine.TokenConstraint;
import io.macfleet.node.tools.AutoCallConstraint;
import io.macfleet.node.tools.StreamedText;
import io.macfleet.node.tools.ToolCall;
import io.macfleet.node.tools.ToolFormat;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.json.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The OpenAI-compatible HTTP API of the node on the JDK's built-in server: /v1/chat/completions, /v1/completions
 * (server-sent events when stream is true), /v1/models, /health (503 until the model is loaded) and /metrics.
 */
public final class NodeServer implements AutoCloseable {
    private final NodeConfig config;
    private final HttpServer http;
    private final FairQueue queue;
    private final Metrics metrics = new Metrics();
    private volatile InferenceEngine engine;
    private volatile String loadError;
    /** Set when this node is rank 0 of a cluster: the engine runs on it and health includes its completeness. */
    private final ClusterNode cluster;
    private final NodeSecurity security;

    public NodeServer(NodeConfig config) throws IOException {
        this(config, null);
    }

    public NodeServer(NodeConfig config, ClusterNode cluster) throws IOException {
        this(config, cluster, NodeSecurity.open());
    }

    public NodeServer(NodeConfig config, ClusterNode cluster, NodeSecurity security) throws IOException {
        this.config = config;
        this.cluster = cluster;
        this.security = security;
        this.queue = new FairQueue(config.maxQueuedRequests());
        NodeSecurity.configureHttpServer();
        http = HttpServer.create(new InetSocketAddress(config.host(), config.port()), 64);
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        http.createContext("/", this::handle);
    }

    /** Starts answering (health says 503) and loads the model in the background. */
    public void start() {
        http.start();
        Thread.ofPlatform().name("model-loader").daemon().start(() -> {
            try {
                security.checkModel(config.model());
                InferenceEngine loaded = InferenceEngine.load(config.model(), config.contextLength(), config.threads(),
                        cluster == null ? Placement.LOCAL : cluster);
                TokenTrie.of(loaded.tokenizer()); // the vocabulary's trie for constrained decoding, built once
                metrics.modelMemoryBytes.set((cluster == null ? Files.size(config.model()) : cluster.shardBytes())
                        + loaded.kvCacheBytes());
                engine = loaded;
                System.err.println("inference-node: model " + loaded.modelId() + " loaded, context "
                        + loaded.contextLength() + " tokens, listening on " + address());
            } catch (NodeSecurity.ModelMismatchException e) {
                System.err.println("inference-node: " + e.getMessage() + "; not starting");
                System.exit(2);
            } catch (Exception | OutOfMemoryError e) {
                loadError = NodeSecurity.loadFailure(config.model(), e);
                System.err.println("inference-node: cannot load the model: " + loadError);
            }
        });
    }

    public InetSocketAddress address() {
        return http.getAddress();
    }

    public boolean loaded() {
        return engine != null;
    }

    public String loadError() {
        return loadError;
    }

    @Override
    public void close() {
        http.stop(0);
        InferenceEngine current = engine;
        if (current != null) {
            current.close();
        }
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            try {
                String path = exchange.getRequestURI().getPath();
                // /metrics tells request counts and the model's name: as private as the API (a scraper sends the key)
                if (path.startsWith("/v1/") || path.equals("/metrics")) {
                    security.authorize(exchange);
                }
                route(exchange);
            } catch (ApiException e) {
                if (exchange.getRequestURI().getPath().startsWith("/v1/")) {
                    metrics.error(e.code != null ? e.code : e.type);
                }
                sendError(exchange, e);
            } catch (UncheckedIOException e) {
                // the client went away mid-stream: nothing left to tell it
            } catch (RuntimeException e) {
                sendError(exchange, NodeSecurity.unexpected(e));
            }
        } catch (IOException ignored) {
            // the client closed the connection
        }
    }

    private void route(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        switch (path) {
            case "/health" -> {
                requireMethod(method, "GET");
                String missing = cluster == null ? null : cluster.problem();
                if (engine != null && missing != null) {
                    sendJson(exchange, 503, Map.of("status", "degraded", "error", missing));
                } else if (engine != null) {
                    sendJson(exchange, 200, Map.of("status", "ok"));
                } else {
                    Map<String, Object> body = new LinkedHashMap<>();
                    body.put("status", loadError == null ? "loading" : "failed");
                    if (loadError != null) {
                        body.put("error", loadError);
                    }
                    sendJson(exchange, 503, body);
                }
            }
            case "/metrics" -> {
                requireMethod(method, "GET");
                send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.render(queue.inFlight(), queue.waiting(), engine != null)
                        + (cluster == null ? "" : ClusterMetrics.render(cluster)));
            }
            case "/v1/models" -> {
                requireMethod(method, "GET");
                InferenceEngine current = requireEngine();
                sendJson(exchange, 200, Map.of("object", "list", "data", List.of(model(current))));
            }
            case String models when models.startsWith("/v1/models/") -> {
                requireMethod(method, "GET");
                InferenceEngine current = requireEngine();
                String requested = java.net.URLDecoder.decode(models.substring("/v1/models/".length()), StandardCharsets.UTF_8);
                if (!knownModel(requested, current)) {
                    throw new ApiException(404, "invalid_request_error", "the model " + Json.write(requested)
                            + " does not exist on this node; it serves " + Json.write(modelId(current)), "model",
                            "model_not_found");
                }
                sendJson(exchange, 200, model(current));
            }
            case "/v1/chat/completions" -> {
                requireMethod(method, "POST");
                complete(exchange, true);
            }
            case "/v1/completions" -> {
                requireMethod(method, "POST");
                complete(exchange, false);
            }
            default -> throw new ApiException(404, "invalid_request_error", "unknown path " + path, null, "not_found");
        }
    }

    private Map<String, Object> model(InferenceEngine current) {
        Map<String, Object> model = new LinkedHashMap<>();
        model.put("id", modelId(current));
        model.put("object", "model");
        model.put("created", 0);
        model.put("owned_by", "macfleet");
        model.put("context_length", current.contextLength());
        return model;
    }

    private static void requireMethod(String method, String expected) {
        if (!method.equals(expected)) {
            throw new ApiException(405, "invalid_request_error", "method " + method + " not allowed, use " + expected,
                    null, "method_not_allowed");
        }
    }

    private InferenceEngine requireEngine() {
        InferenceEngine current = engine;
        if (current == null) {
            throw new ApiException(503, "server_error", loadError == null ? "the model is still loading"
                    : "the model failed to load: " + loadError, null, "model_not_ready");
        }
        String missing = cluster == null ? null : cluster.problem();
        if (missing != null) {
            throw new ApiException(503, "server_error", "the cluster is not complete: " + missing, null, "cluster_incomplete");
        }
        return current;
    }

    private String modelId(InferenceEngine current) {
        return config.modelId() != null ? config.modelId() : current.modelId();
    }

    private void complete(HttpExchange exchange, boolean chat) throws IOException {
        Map<String, Object> body = readBody(exchange);
        InferenceEngine current = requireEngine();
        NodeSecurity.checkPromptBytes(body, current.contextLength());
        String model = modelId(current);
        if (body.get("model") != null && !knownModel(body.get("model"), current)) {
            throw new ApiException(404, "invalid_request_error", "the model " + Json.write(body.get("model"))
                    + " does not exist on this node; it serves " + Json.write(model), "model", "model_not_found");
        }
        ToolFormat format = chat ? ToolFormat.detect(current.file().string("tokenizer.chat_template", null),
                current.template()) : ToolFormat.NONE;
        CompletionRequest request = CompletionRequest.parse(body, chat, format);
        List<Integer> prompt;
        if (chat) {
            try {
                prompt = current.encodeChat(request.messages());
            } catch (RuntimeException e) {
                throw ApiException.badRequest("this model cannot take chat requests: " + e.getMessage(), "messages");
            }
        } else {
            prompt = current.encodeCompletion(request.prompt());
        }
        if (prompt.size() >= current.contextLength()) {
            throw new ApiException(400, "invalid_request_error", "the prompt has " + prompt.size()
                    + " tokens but the context holds " + current.contextLength(), chat ? "messages" : "prompt",
                    "context_length_exceeded");
        }
        int room = current.contextLength() - prompt.size();
        int maxTokens = Math.min(room, request.maxTokens() != null ? request.maxTokens()
                : chat ? config.defaultMaxTokens() : 16);
        List<SamplingParameters> choices = new ArrayList<>();
        GenerationOptions options;
        try {
            for (int i = 0; i < request.n(); i++) {
                // n choices from one seed: each its own seed, so the answer as a whole is reproducible
                Long seed = request.seed() == null ? null : request.seed() + i;
                choices.add(new SamplingParameters((float) request.temperature(), request.topK(), (float) request.topP(),
                        (float) request.minP(), seed, maxTokens, request.stop()));
            }
            options = new GenerationOptions(null, request.topLogprobs(), (float) request.presencePenalty(),
                    (float) request.frequencyPenalty());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage(), null);
        }
        metrics.requests.increment();
        boolean entered;
        try {
            entered = queue.enter();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiException(503, "server_error", "interrupted while queued", null, null);
        }
        if (!entered) {
            metrics.rejected.increment();
            throw new ApiException(429, "rate_limit_error", "too many requests queued (limit "
                    + config.maxQueuedRequests() + "); retry later", null, "rate_limit_exceeded");
        }
        try {
            Response response = new Response((chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID(),
                    System.currentTimeMillis() / 1000, model, fingerprint(current), chat);
            // tool calls are only known once the text is complete: a call's text is never streamed as content
            boolean holdText = request.toolChoice() != CompletionRequest.ToolChoice.NONE;
            boolean autoTools = request.toolChoice() == CompletionRequest.ToolChoice.AUTO;
            if (request.stream()) {
                exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
                exchange.getResponseHeaders().set("Cache-Control", "no-cache");
                exchange.sendResponseHeaders(200, 0);
                OutputStream out = exchange.getResponseBody();
                int promptTokens = 0;
                int completionTokens = 0;
                for (int index = 0; index < choices.size(); index++) {
                    int choiceIndex = index;
                    if (chat) {
                        event(out, response.chunk(index, Map.of("role", "assistant", "content", ""), null,
                                request.includeUsage()));
                    }
                    // log probabilities go out with the chunk that carries their tokens' text (or the last one)
                    List<GenerationOptions.TokenLogprob> pending = new ArrayList<>();
                    java.util.function.Supplier<Object> takeLogprobs = () -> {
                        if (!options.logprobs()) {
                            return null;
                        }
                        Object shaped = chat ? Logprobs.chat(pending) : Logprobs.completion(pending);
                        pending.clear();
                        return shaped;
                    };
                    Consumer<String> send = text -> event(out, response.chunk(choiceIndex,
                            chat ? Map.of("content", text) : text, null, request.includeUsage(), takeLogprobs.get()));
                    // under auto, text that cannot begin a call streams as it comes; a forced answer is all call
                    StreamedText streamed = autoTools ? new StreamedText(format) : null;
                    Consumer<String> onText = !holdText ? send : streamed == null ? text -> { } : text -> {
                        String safe = streamed.offer(text);
                        if (!safe.isEmpty()) {
                            send.accept(safe);
                        }
                    };
                    InferenceEngine.Generation result;
                    try {
                        result = current.generate(prompt, choices.get(index),
                                constrained(options, request, current, format).withLogprobListener(pending::add), onText);
                    } catch (Placement.UnavailableException e) {
                        event(out, Map.of("error", Map.of("message", e.getMessage(), "type", "server_error",
                                "code", "cluster_incomplete")));
                        return;
                    }
                    record(result);
                    promptTokens = result.promptTokens();
                    completionTokens += result.completionTokens();
                    String finish = result.finishReason();
                    if (holdText) {
                        ToolFormat.Parsed parsed = parsed(format, request, result);
                        if (!parsed.calls().isEmpty()) {
                            finish = "tool_calls";
                            for (int c = 0; c < parsed.calls().size(); c++) {
                                ToolCall call = parsed.calls().get(c);
                                Map<String, Object> function = new LinkedHashMap<>();
                                function.put("name", call.name());
                                function.put("arguments", "");
                                Map<String, Object> opening = new LinkedHashMap<>();
                                opening.put("index", c);
                                opening.put("id", call.id());
                                opening.put("type", "function");
                                opening.put("function", function);
                                event(out, response.chunk(index, Map.of("tool_calls", List.of(opening)), null,
                                        request.includeUsage()));
                                event(out, response.chunk(index, Map.of("tool_calls", List.of(Map.of("index", c,
                                        "function", Map.of("arguments", call.arguments())))), null, request.includeUsage()));
                            }
                        } else {
                            String rest = streamed != null ? streamed.rest() : parsed.content();
                            if (!rest.isEmpty()) {
                                send.accept(rest);
                            }
                        }
                    }
                    event(out, response.chunk(index, chat ? Map.of() : "", finish, request.includeUsage(),
                            pending.isEmpty() ? null : takeLogprobs.get()));
                }
                if (request.includeUsage()) {
                    event(out, response.usageChunk(usage(promptTokens, completionTokens)));
                }
                out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
            } else {
                List<Object> answers = new ArrayList<>();
                int promptTokens = 0;
                int completionTokens = 0;
                for (int index = 0; index < choices.size(); index++) {
                    InferenceEngine.Generation result;
                    try {
                        result = current.generate(prompt, choices.get(index), constrained(options, request, current, format),
                                text -> { });
                    } catch (Placement.UnavailableException e) {
                        throw new ApiException(503, "server_error", e.getMessage(), null, "cluster_incomplete");
                    }
                    record(result);
                    promptTokens = result.promptTokens();
                    completionTokens += result.completionTokens();
                    Map<String, Object> choice = new LinkedHashMap<>();
                    choice.put("index", index);
                    String finish = result.finishReason();
                    if (chat) {
                        Map<String, Object> message = new LinkedHashMap<>();
                        message.put("role", "assistant");
                        message.put("content", result.text());
                        if (holdText) {
                            ToolFormat.Parsed parsed = parsed(format, request, result);
                            if (!parsed.calls().isEmpty()) {
                                finish = "tool_calls";
                                message.put("content", parsed.content().isEmpty() ? null : parsed.content());
                                message.put("tool_calls", parsed.calls().stream().map(call -> Map.of("id", call.id(),
                                        "type", "function", "function", Map.of("name", call.name(),
                                                "arguments", call.arguments()))).toList());
                            }
                        }
                        message.put("refusal", null);
                        choice.put("message", message);
                        choice.put("logprobs", options.logprobs() ? Logprobs.chat(result.logprobs()) : null);
                    } else {
                        choice.put("text", result.text());
                        choice.put("logprobs", options.logprobs() ? Logprobs.completion(result.logprobs()) : null);
                    }
                    choice.put("finish_reason", finish);
                    answers.add(choice);
                }
                Map<String, Object> answer = response.head(chat ? "chat.completion" : "text_completion");
                answer.put("choices", answers);
                answer.put("usage", usage(promptTokens, completionTokens));
                sendJson(exchange, 200, answer);
            }
        } finally {
            queue.leave();
        }
    }

    /** Calls in a forced or auto answer; a forced answer cut by the token limit is left as text. */
    private static ToolFormat.Parsed parsed(ToolFormat format, CompletionRequest request, InferenceEngine.Generation result) {
        if (request.toolChoice() == CompletionRequest.ToolChoice.FORCED && !result.finishReason().equals("stop")) {
            return new ToolFormat.Parsed(result.text(), List.of());
        }
        return format.parse(result.text(), request.tools());
    }

    /** A fresh constraint per choice: the request's grammar, or under tool_choice auto the calls once begun. */
    private static GenerationOptions constrained(GenerationOptions options, CompletionRequest request,
                                                 InferenceEngine engine, ToolFormat format) {
        TokenConstraint constraint = request.grammar() != null
                ? new GrammarConstraint(request.grammar(), engine.tokenizer())
                : request.toolChoice() == CompletionRequest.ToolChoice.AUTO
                ? new AutoCallConstraint(format, request.tools(), engine.tokenizer()) : null;
        return constraint == null ? options : options.withConstraint(constraint);
    }

    private boolean knownModel(Object requested, InferenceEngine current) {
        return requested.equals(modelId(current)) || requested.equals(current.modelId());
    }

    /** Identifies the configuration that produced an answer: the model file, its size and the context. */
    private String fingerprint(InferenceEngine current) {
        long size;
        try {
            size = Files.size(config.model());
        } catch (IOException e) {
            size = 0;
        }
        return String.format("fp_%010x", (current.modelId() + "/" + size + "/" + current.contextLength()).hashCode()
                & 0xffffffffffL);
    }

    /** The fields every answer and chunk of one request share. */
    private record Response(String id, long created, String model, String fingerprint, boolean chat) {
        Map<String, Object> head(String object) {
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("id", id);
            head.put("object", object);
            head.put("created", created);
            head.put("model", model);
            head.put("system_fingerprint", fingerprint);
            return head;
        }

        /** A chunk of one choice; with include_usage every chunk but the last carries "usage": null, as OpenAI's. */
        Map<String, Object> chunk(int index, Object content, String finishReason, boolean includeUsage) {
            return chunk(index, content, finishReason, includeUsage, null);
        }

        Map<String, Object> chunk(int index, Object content, String finishReason, boolean includeUsage, Object logprobs) {
            Map<String, Object> choice = new LinkedHashMap<>();
            choice.put("index", index);
            choice.put(chat ? "delta" : "text", content);
            choice.put("logprobs", logprobs);
            choice.put("finish_reason", finishReason);
            Map<String, Object> chunk = head(chat ? "chat.completion.chunk" : "text_completion");
            chunk.put("choices", List.of(choice));
            if (includeUsage) {
                chunk.put("usage", null);
            }
            return chunk;
        }

        Map<String, Object> usageChunk(Map<String, Object> usage) {
            Map<String, Object> chunk = head(chat ? "chat.completion.chunk" : "text_completion");
            chunk.put("choices", List.of());
            chunk.put("usage", usage);
            return chunk;
        }
    }

    private void record(InferenceEngine.Generation result) {
        metrics.promptTokens.add(result.promptTokens());
        metrics.generatedTokens.add(result.completionTokens());
        metrics.firstToken(result.timeToFirstTokenNanos() / 1e9);
        metrics.lastTokensPerSecondMilli.set((long) (result.decodeTokensPerSecond() * 1000));
    }

    private static Map<String, Object> usage(int promptTokens, int completionTokens) {
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", promptTokens);
        usage.put("completion_tokens", completionTokens);
        usage.put("total_tokens", promptTokens + completionTokens);
        return usage;
    }

    private static void event(OutputStream out, Map<String, Object> data) {
        try {
            out.write(("data: " + Json.write(data) + "\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> readBody(HttpExchange exchange) throws IOException {
        byte[] bytes = NodeSecurity.readBody(exchange);
        Object parsed;
        try {
            parsed = Json.parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (Json.JsonException e) {
            throw ApiException.badRequest("the body is not valid JSON: " + e.getMessage(), null);
        }
        if (!(parsed instanceof Map<?, ?>)) {
            throw ApiException.badRequest("the body must be a JSON object", null);
        }
        return (Map<String, Object>) parsed;
    }

    private static void sendError(HttpExchange exchange, ApiException e) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("message", e.getMessage());
        error.put("type", e.type);
        error.put("param", e.param);
        error.put("code", e.code);
        try {
            sendJson(exchange, e.status, Map.of("error", error));
        } catch (IOException | RuntimeException ignored) {
            // headers already sent (mid-stream) or the client is gone
        }
    }

    private static void sendJson(HttpExchange exchange, int status, Object body) throws IOException {
        send(exchange, status, "application/json", Json.write(body));
    }

    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }
}
