package io.macfleet.node.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.macfleet.node.cluster.ClusterMetrics;
import io.macfleet.node.cluster.ClusterNode;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.Placement;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.json.Json;
import io.macfleet.node.tokenizer.ChatTemplate;

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
                if (exchange.getRequestURI().getPath().startsWith("/v1/")) {
                    security.authorize(exchange);
                }
                route(exchange);
            } catch (ApiException e) {
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
                send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.render(queue.inFlight(), engine != null)
                        + (cluster == null ? "" : ClusterMetrics.render(cluster)));
            }
            case "/v1/models" -> {
                requireMethod(method, "GET");
                InferenceEngine current = requireEngine();
                Map<String, Object> model = new LinkedHashMap<>();
                model.put("id", modelId(current));
                model.put("object", "model");
                model.put("created", 0);
                model.put("owned_by", "macfleet");
                model.put("context_length", current.contextLength());
                sendJson(exchange, 200, Map.of("object", "list", "data", List.of(model)));
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
        List<Integer> prompt;
        if (chat) {
            List<ChatTemplate.Message> messages = messages(body.get("messages"));
            try {
                prompt = current.encodeChat(messages);
            } catch (RuntimeException e) {
                throw ApiException.badRequest("this model cannot take chat requests: " + e.getMessage(), "messages");
            }
        } else {
            prompt = current.encodeCompletion(promptText(body.get("prompt")));
        }
        if (prompt.size() >= current.contextLength()) {
            throw new ApiException(400, "invalid_request_error", "the prompt has " + prompt.size()
                    + " tokens but the context holds " + current.contextLength(), chat ? "messages" : "prompt",
                    "context_length_exceeded");
        }
        int room = current.contextLength() - prompt.size();
        int defaultMax = chat ? config.defaultMaxTokens() : 16;
        int maxTokens = Math.min(room, (int) number(body, chat && body.containsKey("max_completion_tokens")
                ? "max_completion_tokens" : "max_tokens", defaultMax, 1, Integer.MAX_VALUE));
        if (body.containsKey("n") && number(body, "n", 1, 1, 1) != 1) {
            throw ApiException.badRequest("only n = 1 is supported", "n");
        }
        SamplingParameters parameters;
        try {
            parameters = new SamplingParameters((float) number(body, "temperature", 1.0, 0, 2),
                    (int) number(body, "top_k", 0, 0, Integer.MAX_VALUE), (float) number(body, "top_p", 1.0, 0, 1),
                    (float) number(body, "min_p", 0, 0, 1),
                    body.get("seed") == null ? null : (long) number(body, "seed", 0, Long.MIN_VALUE, Long.MAX_VALUE),
                    maxTokens, stops(body.get("stop")));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage(), null);
        }
        boolean stream = Boolean.TRUE.equals(bool(body, "stream"));
        boolean includeUsage = body.get("stream_options") instanceof Map<?, ?> options
                && Boolean.TRUE.equals(options.get("include_usage"));
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
            String id = (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID();
            long created = System.currentTimeMillis() / 1000;
            String model = modelId(current);
            InferenceEngine.Generation result;
            if (stream) {
                exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
                exchange.getResponseHeaders().set("Cache-Control", "no-cache");
                exchange.sendResponseHeaders(200, 0);
                OutputStream out = exchange.getResponseBody();
                if (chat) {
                    event(out, chunk(id, created, model, true, Map.of("role", "assistant", "content", ""), null, null));
                }
                Consumer<String> onText = text -> event(out, chunk(id, created, model, chat,
                        chat ? Map.of("content", text) : text, null, null));
                try {
                    result = current.generate(prompt, parameters, onText);
                } catch (Placement.UnavailableException e) {
                    event(out, Map.of("error", Map.of("message", e.getMessage(), "type", "server_error",
                            "code", "cluster_incomplete")));
                    return;
                }
                record(result);
                event(out, chunk(id, created, model, chat, chat ? Map.of() : "", result.finishReason(), usage(result)));
                if (includeUsage) {
                    Map<String, Object> usageChunk = new LinkedHashMap<>();
                    usageChunk.put("id", id);
                    usageChunk.put("object", chat ? "chat.completion.chunk" : "text_completion");
                    usageChunk.put("created", created);
                    usageChunk.put("model", model);
                    usageChunk.put("choices", List.of());
                    usageChunk.put("usage", usage(result));
                    event(out, usageChunk);
                }
                out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
            } else {
                try {
                    result = current.generate(prompt, parameters, text -> {
                    });
                } catch (Placement.UnavailableException e) {
                    throw new ApiException(503, "server_error", e.getMessage(), null, "cluster_incomplete");
                }
                record(result);
                Map<String, Object> choice = new LinkedHashMap<>();
                choice.put("index", 0);
                if (chat) {
                    choice.put("message", Map.of("role", "assistant", "content", result.text()));
                } else {
                    choice.put("text", result.text());
                    choice.put("logprobs", null);
                }
                choice.put("finish_reason", result.finishReason());
                Map<String, Object> response = new LinkedHashMap<>();
                response.put("id", id);
                response.put("object", chat ? "chat.completion" : "text_completion");
                response.put("created", created);
                response.put("model", model);
                response.put("choices", List.of(choice));
                response.put("usage", usage(result));
                sendJson(exchange, 200, response);
            }
        } finally {
            queue.leave();
        }
    }

    private void record(InferenceEngine.Generation result) {
        metrics.promptTokens.add(result.promptTokens());
        metrics.generatedTokens.add(result.completionTokens());
        metrics.firstTokenSeconds.add(result.timeToFirstTokenNanos() / 1e9);
        metrics.firstTokenCount.increment();
        metrics.lastTokensPerSecondMilli.set((long) (result.decodeTokensPerSecond() * 1000));
    }

    private static Map<String, Object> usage(InferenceEngine.Generation result) {
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", result.promptTokens());
        usage.put("completion_tokens", result.completionTokens());
        usage.put("total_tokens", result.promptTokens() + result.completionTokens());
        return usage;
    }

    private static Map<String, Object> chunk(String id, long created, String model, boolean chat, Object content,
                                             String finishReason, Map<String, Object> usage) {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        choice.put(chat ? "delta" : "text", content);
        if (!chat) {
            choice.put("logprobs", null);
        }
        choice.put("finish_reason", finishReason);
        Map<String, Object> chunk = new LinkedHashMap<>();
        chunk.put("id", id);
        chunk.put("object", chat ? "chat.completion.chunk" : "text_completion");
        chunk.put("created", created);
        chunk.put("model", model);
        chunk.put("choices", List.of(choice));
        if (usage != null) {
            chunk.put("usage", usage);
        }
        return chunk;
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

    private static List<ChatTemplate.Message> messages(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw ApiException.badRequest("'messages' must be a non-empty array", "messages");
        }
        List<ChatTemplate.Message> messages = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String param = "messages[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> message)) {
                throw ApiException.badRequest(param + " must be an object", param);
            }
            Object role = message.get("role");
            if (!(role instanceof String r) || !List.of("system", "developer", "user", "assistant").contains(r)) {
                throw ApiException.badRequest(param + ".role must be one of system, developer, user, assistant; got "
                        + role, param + ".role");
            }
            messages.add(new ChatTemplate.Message(r.equals("developer") ? "system" : r,
                    content(message.get("content"), param + ".content")));
        }
        return messages;
    }

    private static String content(Object value, String param) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> parts) {
            StringBuilder text = new StringBuilder();
            for (Object part : parts) {
                if (!(part instanceof Map<?, ?> map) || !"text".equals(map.get("type")) || !(map.get("text") instanceof String s)) {
                    throw ApiException.badRequest(param + " parts must be {\"type\":\"text\",\"text\":...}", param);
                }
                text.append(s);
            }
            return text.toString();
        }
        throw ApiException.badRequest(param + " must be a string or an array of text parts", param);
    }

    private static String promptText(Object value) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> list && list.size() == 1 && list.getFirst() instanceof String s) {
            return s;
        }
        throw ApiException.badRequest("'prompt' must be a string (or an array of one string)", "prompt");
    }

    private static List<String> stops(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof String s) {
            return s.isEmpty() ? List.of() : List.of(s);
        }
        if (value instanceof List<?> list && list.size() <= 16) {
            List<String> stops = new ArrayList<>();
            for (Object element : list) {
                if (!(element instanceof String s)) {
                    throw ApiException.badRequest("'stop' must be a string or an array of strings", "stop");
                }
                if (!s.isEmpty()) {
                    stops.add(s);
                }
            }
            return stops;
        }
        throw ApiException.badRequest("'stop' must be a string or an array of at most 16 strings", "stop");
    }

    private static double number(Map<String, Object> body, String key, double fallback, double min, double max) {
        Object value = body.get(key);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Number n) || n.doubleValue() < min || n.doubleValue() > max) {
            throw ApiException.badRequest("'" + key + "' must be a number from " + min + " to " + max + ", got "
                    + Json.write(value), key);
        }
        return n.doubleValue();
    }

    private static Boolean bool(Map<String, Object> body, String key) {
        Object value = body.get(key);
        if (value != null && !(value instanceof Boolean)) {
            throw ApiException.badRequest("'" + key + "' must be a boolean", key);
        }
        return (Boolean) value;
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
