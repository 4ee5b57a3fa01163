package io.macfleet.inventory;

/**
 * The inference node a cluster runs.
 *
 * @param model path of the model file on the machines, or null when not chosen yet
 * @param port the HTTP port of the coordinator's API
 */
public record InferenceSettings(String model, Parallelism parallelism, int port) {

    public static final int DEFAULT_PORT = 8080;

    public enum Parallelism {
        TENSOR, PIPELINE;

        public String yamlName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
