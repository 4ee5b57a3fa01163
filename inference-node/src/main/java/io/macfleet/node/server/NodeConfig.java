package io.macfleet.node.server;

import io.macfleet.node.json.Json;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * The node's configuration (schema: schemas/inference-node-config.schema.json). contextLength 0 means the model's
 * own (capped at 4096); threads 0 means one per core.
 */
public record NodeConfig(Path model, String host, int port, int contextLength, int threads, int maxQueuedRequests,
                         String modelId, int defaultMaxTokens) {
    private static final Set<String> KEYS = Set.of("$schema", "model", "host", "port", "contextLength", "threads",
            "maxQueuedRequests", "modelId", "defaultMaxTokens");

    public static NodeConfig defaults() {
        return new NodeConfig(null, "127.0.0.1", 8080, 0, 0, 16, null, 512);
    }

    /** Reads a config file; unknown keys and wrong types are errors naming the file and key. */
    public static NodeConfig read(Path file) throws IOException {
        Object parsed;
        try {
            parsed = Json.parse(Files.readString(file));
        } catch (Json.JsonException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage());
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException(file + ": the configuration must be a JSON object");
        }
        for (Object key : map.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(file + ": unknown key '" + key + "' (known: " + KEYS + ")");
            }
        }
        NodeConfig d = defaults();
        Path model = map.containsKey("model") ? file.toAbsolutePath().getParent().resolve(text(file, map, "model")) : null;
        return new NodeConfig(model,
                map.containsKey("host") ? text(file, map, "host") : d.host(),
                integer(file, map, "port", d.port(), 0, 65535),
                integer(file, map, "contextLength", d.contextLength(), 0, 1 << 24),
                integer(file, map, "threads", d.threads(), 0, 4096),
                integer(file, map, "maxQueuedRequests", d.maxQueuedRequests(), 0, 100000),
                map.containsKey("modelId") ? text(file, map, "modelId") : null,
                integer(file, map, "defaultMaxTokens", d.defaultMaxTokens(), 1, 1 << 24));
    }

    private static String text(Path file, Map<?, ?> map, String key) {
        if (!(map.get(key) instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(file + ": '" + key + "' must be a non-empty string");
        }
        return s;
    }

    private static int integer(Path file, Map<?, ?> map, String key, int fallback, int min, int max) {
        if (!map.containsKey(key)) {
            return fallback;
        }
        if (!(map.get(key) instanceof Long value) || value < min || value > max) {
            throw new IllegalArgumentException(file + ": '" + key + "' must be an integer from " + min + " to " + max
                    + ", got " + map.get(key));
        }
        return value.intValue();
    }

    public NodeConfig withModel(Path value) {
        return new NodeConfig(value, host, port, contextLength, threads, maxQueuedRequests, modelId, defaultMaxTokens);
    }

    public NodeConfig withPort(int value) {
        return new NodeConfig(model, host, value, contextLength, threads, maxQueuedRequests, modelId, defaultMaxTokens);
    }

    public NodeConfig withHost(String value) {
        return new NodeConfig(model, value, port, contextLength, threads, maxQueuedRequests, modelId, defaultMaxTokens);
    }

    public NodeConfig withContextLength(int value) {
        return new NodeConfig(model, host, port, value, threads, maxQueuedRequests, modelId, defaultMaxTokens);
    }

    public NodeConfig withThreads(int value) {
        return new NodeConfig(model, host, port, contextLength, value, maxQueuedRequests, modelId, defaultMaxTokens);
    }

    public NodeConfig withMaxQueuedRequests(int value) {
        return new NodeConfig(model, host, port, contextLength, threads, value, modelId, defaultMaxTokens);
    }
}
