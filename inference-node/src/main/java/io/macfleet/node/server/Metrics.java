package io.macfleet.node.server;

import java.util.concurrent.atomic.AtomicLong;
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

    String render(int inFlight, boolean loaded) {
        StringBuilder out = new StringBuilder();
        metric(out, "inference_node_requests_total", "counter", "Generation requests received.", requests.sum());
        metric(out, "inference_node_requests_rejected_total", "counter", "Requests refused because the queue was full.", rejected.sum());
        metric(out, "inference_node_requests_in_flight", "gauge", "Requests running or queued.", inFlight);
        metric(out, "inference_node_prompt_tokens_total", "counter", "Prompt tokens processed.", promptTokens.sum());
        metric(out, "inference_node_tokens_generated_total", "counter", "Completion tokens generated.", generatedTokens.sum());
        out.append("# HELP inference_node_time_to_first_token_seconds Time from request start to the first token.\n")
                .append("# TYPE inference_node_time_to_first_token_seconds summary\n")
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
