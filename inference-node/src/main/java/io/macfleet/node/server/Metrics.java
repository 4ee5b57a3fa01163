package io.macfleet.node.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/** Counters of the node, rendered in the Prometheus text exposition format. */
final class Metrics {
    final LongAdder requests = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder promptTokens = new LongAdder();
    final LongAdder generatedTokens = new LongAdder();
    final DoubleAdder firstTokenSeconds = new DoubleAdder();
    final LongAdder firstTokenCount = new LongAdder();
    final AtomicLong lastTokensPerSecondMilli = new AtomicLong();
    final AtomicLong modelMemoryBytes = new AtomicLong();
    /**
     * Upper bounds of the time-to-first-token histogram, in seconds. The control plane records scraped bucket counts
     * into its own histogram with the same bounds (io.macfleet.inference.InferenceMetrics), so keep them equal.
     */
    static final double[] FIRST_TOKEN_BOUNDS = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    private final AtomicLongArray firstTokenBuckets = new AtomicLongArray(FIRST_TOKEN_BOUNDS.length);
    /** Failed API requests by their error code (rate_limit_exceeded, invalid_api_key, ...). */
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

    void firstToken(double seconds) {
        firstTokenSeconds.add(seconds);
        firstTokenCount.increment();
        for (int i = 0; i < FIRST_TOKEN_BOUNDS.length; i++) {
            if (seconds <= FIRST_TOKEN_BOUNDS[i]) {
                firstTokenBuckets.incrementAndGet(i);
                return;
            }
        }
    }

    void error(String kind) {
        errors.computeIfAbsent(kind == null ? "other" : kind, any -> new LongAdder()).increment();
    }

    String render(int inFlight, int waiting, boolean loaded) {
        StringBuilder out = new StringBuilder();
        metric(out, "inference_node_requests_total", "counter", "Generation requests received.", requests.sum());
        metric(out, "inference_node_requests_rejected_total", "counter", "Requests refused because the queue was full.", rejected.sum());
        metric(out, "inference_node_requests_in_flight", "gauge", "Requests running or queued.", inFlight);
        metric(out, "inference_node_prompt_tokens_total", "counter", "Prompt tokens processed.", promptTokens.sum());
        metric(out, "inference_node_tokens_generated_total", "counter", "Completion tokens generated.", generatedTokens.sum());
        metric(out, "inference_node_requests_waiting", "gauge", "Requests admitted and waiting for their turn to generate.", waiting);
        out.append("# HELP inference_node_errors_total Failed API requests by error code.\n")
                .append("# TYPE inference_node_errors_total counter\n");
        new TreeMap<>(errors).forEach((kind, count) -> out.append("inference_node_errors_total{kind=\"").append(kind)
                .append("\"} ").append(count.sum()).append('\n'));
        out.append("# HELP inference_node_time_to_first_token_seconds Time from the start of generation (after queueing) to the first token.\n")
                .append("# TYPE inference_node_time_to_first_token_seconds histogram\n");
        long cumulative = 0;
        for (int i = 0; i < FIRST_TOKEN_BOUNDS.length; i++) {
            cumulative += firstTokenBuckets.get(i);
            out.append("inference_node_time_to_first_token_seconds_bucket{le=\"").append(FIRST_TOKEN_BOUNDS[i]).append("\"} ")
                    .append(cumulative).append('\n');
        }
        out.append("inference_node_time_to_first_token_seconds_bucket{le=\"+Inf\"} ").append(firstTokenCount.sum()).append('\n')
                .append("inference_node_time_to_first_token_seconds_sum ").append(firstTokenSeconds.sum()).append('\n')
                .append("inference_node_time_to_first_token_seconds_count ").append(firstTokenCount.sum()).append('\n');
        out.append("# HELP inference_node_decode_tokens_per_second Decode speed of the last request.\n")
                .append("# TYPE inference_node_decode_tokens_per_second gauge\n")
                .append("inference_node_decode_tokens_per_second ").append(lastTokensPerSecondMilli.get() / 1000.0).append('\n');
        metric(out, "inference_node_model_memory_bytes", "gauge", "Model file plus KV cache bytes.", modelMemoryBytes.get());
        metric(out, "inference_node_model_loaded", "gauge", "1 when the model is loaded.", loaded ? 1 : 0);
        return out.toString();
    }

    private static void metric(StringBuilder out, String name, String type, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n')
                .append(name).append(' ').append(value).append('\n');
    }
}
