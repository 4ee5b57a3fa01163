package io.macfleet.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.macfleet.runtime.BundledRuntime;
import io.macfleet.runtime.InferenceCounters;
import io.macfleet.runtime.LlamaCppRuntime;
import io.macfleet.runtime.MlxRuntime;
import io.macfleet.runtime.PrometheusText;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/**
 * The runtimes' metrics in macfleet's names: llama-server's real /metrics (captured, see
 * src/test/resources/runtime-metrics/SOURCES.md), the node's format, and what /q/metrics prints from them (the names
 * the console's charts and the alert rules read).
 */
class InferenceMetricsTest {

    private static String resource(String path) throws IOException {
        try (InputStream in = InferenceMetricsTest.class.getResourceAsStream(path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void llamaServersRealMetricsGiveTokensAndQueueButNoRequestsOrFirstToken() throws IOException {
        InferenceCounters counters = new LlamaCppRuntime().inferenceCounters(PrometheusText.parse(resource("/runtime-metrics/llama-server-de3ff81.txt")));
        assertThat(counters.promptTokens()).hasValue(3);
        assertThat(counters.generatedTokens()).hasValue(8);
        assertThat(counters.queueDepth()).hasValue(0);
        assertThat(counters.requestsByOutcome()).isEmpty();
        assertThat(counters.firstToken()).isNull();
        assertThat(new LlamaCppRuntime().metricsPath()).contains("/metrics");
        assertThat(new MlxRuntime().metricsPath()).isEmpty();
    }

    @Test
    void theNodesMetricsGiveEverything() {
        String node = """
                # TYPE inference_node_requests_total counter
                inference_node_requests_total 12
                inference_node_requests_rejected_total 2
                inference_node_requests_waiting 3
                inference_node_prompt_tokens_total 400
                inference_node_tokens_generated_total 900
                inference_node_errors_total{kind="rate_limit_exceeded"} 2
                inference_node_errors_total{kind="invalid_api_key"} 1
                inference_node_time_to_first_token_seconds_bucket{le="0.05"} 0
                inference_node_time_to_first_token_seconds_bucket{le="0.1"} 4
                inference_node_time_to_first_token_seconds_bucket{le="0.25"} 9
                inference_node_time_to_first_token_seconds_bucket{le="+Inf"} 10
                inference_node_time_to_first_token_seconds_sum 1.7
                inference_node_time_to_first_token_seconds_count 10
                inference_node_info{version="0.1",model="tiny \\"q\\""} 1
                """;
        InferenceCounters counters = new BundledRuntime().inferenceCounters(PrometheusText.parse(node));
        assertThat(counters.requestsByOutcome()).containsExactlyInAnyOrderEntriesOf(Map.of("ok", 10.0, "rejected", 2.0));
        assertThat(counters.errorsByKind()).containsEntry("invalid_api_key", 1.0).containsEntry("rate_limit_exceeded", 2.0);
        assertThat(counters.queueDepth()).hasValue(3);
        assertThat(counters.firstToken().bounds()).containsExactly(0.05, 0.1, 0.25);
        assertThat(counters.firstToken().cumulative()).containsExactly(0.0, 4.0, 9.0);
        assertThat(counters.firstToken().count()).isEqualTo(10);
        assertThat(PrometheusText.parse(node).all("inference_node_info", labels -> true).getFirst().labels()).containsEntry("model", "tiny \"q\"");
    }

    @Test
    void countersGrowAcrossRestartsAndQMetricsPrintsTheAgreedNames() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        InferenceMetrics metrics = new InferenceMetrics(registry, cluster -> 120.0);
        Instant start = Instant.parse("2026-11-28T18:00:00Z");
        metrics.record("llm-a", "bundled", counters(10, 100, 1000, List.of(1.0, 3.0), 4), start);
        assertThat(metrics.tokensPerSecond("llm-a")).isEmpty();
        assertThat(metrics.joulesPerToken("llm-a")).isEmpty();
        metrics.record("llm-a", "bundled", counters(14, 150, 1600, List.of(2.0, 6.0), 7), start.plusSeconds(15));
        assertThat(metrics.tokensPerSecond("llm-a")).hasValue(40.0);
        assertThat(metrics.joulesPerToken("llm-a")).hasValue(3.0);
        // the runtime restarted: its counters start again from small values, ours keep growing
        metrics.record("llm-a", "bundled", counters(1, 5, 30, List.of(0.0, 1.0), 1), start.plusSeconds(30));
        assertThat(metrics.tokensPerSecond("llm-a")).hasValue(2.0);
        metrics.unavailable("llm-m", "mlx");

        String scraped = registry.scrape();
        assertThat(scraped)
                .contains("# HELP macfleet_inference_requests_total ")
                .contains("macfleet_inference_requests_total{cluster=\"llm-a\",outcome=\"ok\",} 15.0")
                .contains("macfleet_inference_prompt_tokens_total{cluster=\"llm-a\",} 155.0")
                .contains("macfleet_inference_generated_tokens_total{cluster=\"llm-a\",} 1630.0")
                .contains("macfleet_inference_tokens_per_second{cluster=\"llm-a\",} 2.0")
                .contains("macfleet_inference_queue_depth{cluster=\"llm-a\",} 0.0")
                .contains("macfleet_inference_errors_total{cluster=\"llm-a\",kind=\"rate_limit_exceeded\",} 1.0")
                .contains("macfleet_inference_joules_per_token{cluster=\"llm-a\",} 60.0")
                .contains("macfleet_inference_time_to_first_token_seconds_bucket{cluster=\"llm-a\",le=\"0.1\",} 2.0")
                .contains("macfleet_inference_time_to_first_token_seconds_count{cluster=\"llm-a\",} 7.0")
                .contains("macfleet_inference_metrics_available{cluster=\"llm-m\",runtime=\"mlx\",} 0.0")
                .contains("# HELP macfleet_inference_time_to_first_token_seconds ");
    }

    /** A node's cumulative figures: requests ok, prompt and generated tokens, first-token buckets (le 0.1, 0.25), errors. */
    private static InferenceCounters counters(double requests, double prompt, double generated, List<Double> buckets, double errors) {
        return new InferenceCounters(Map.of("ok", requests), OptionalDouble.of(prompt), OptionalDouble.of(generated),
                new InferenceCounters.FirstTokenHistogram(List.of(0.1, 0.25), buckets, buckets.getLast() * 0.2, buckets.getLast()),
                OptionalDouble.of(0), Map.of("rate_limit_exceeded", errors >= 7 ? 1.0 : 0.0));
    }
}
