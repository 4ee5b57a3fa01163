package io.macfleet.inventory;

import java.util.Map;

/**
 * The inference engine a cluster runs.
 *
 * @param model path of the model file on the machines, or null when not chosen yet
 * @param port the HTTP port of the coordinator's API
 * @param runtime the name of the runtime that serves the cluster ({@value #BUNDLED} by default; see
 *                {@code io.macfleet.runtime.InferenceRuntimes})
 * @param settings the runtime's own settings ({@code inference.settings}), checked against that runtime's schema;
 *                 plain JSON values (maps, lists, strings, numbers, booleans)
 */
public record InferenceSettings(String model, Parallelism parallelism, int port, String runtime, Map<String, Object> settings) {

    public static final int DEFAULT_PORT = 8080;
    public static final String BUNDLED = "bundled";

    public InferenceSettings {
        runtime = runtime == null || runtime.isBlank() ? BUNDLED : runtime;
        settings = settings == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(settings));
    }

    public InferenceSettings(String model, Parallelism parallelism, int port) {
        this(model, parallelism, port, BUNDLED, Map.of());
    }

    public enum Parallelism {
        TENSOR, PIPELINE;

        public String yamlName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
