package io.macfleet.runtime;

import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * What one scrape of a runtime's metrics says about the inference it served, in macfleet's terms: cumulative counts
 * since the runtime's process started (the control plane turns them into its own counters, across restarts) and
 * the queue now. A runtime fills what it knows; what it does not measure stays empty and is not exported.
 *
 * @param requestsByOutcome generation requests by outcome ({@code ok}, {@code rejected}, {@code error}), cumulative
 * @param promptTokens      prompt tokens processed, cumulative
 * @param generatedTokens   tokens generated, cumulative
 * @param firstToken        time to first token as cumulative histogram buckets, or null when not measured
 * @param queueDepth        requests waiting now
 * @param errorsByKind      failed requests by kind, cumulative
 */
public record InferenceCounters(Map<String, Double> requestsByOutcome, OptionalDouble promptTokens, OptionalDouble generatedTokens,
                                FirstTokenHistogram firstToken, OptionalDouble queueDepth, Map<String, Double> errorsByKind) {

    public InferenceCounters {
        requestsByOutcome = Map.copyOf(requestsByOutcome);
        errorsByKind = Map.copyOf(errorsByKind);
    }

    /** A runtime that exports nothing macfleet can read. */
    public static final InferenceCounters NONE = new InferenceCounters(Map.of(), OptionalDouble.empty(), OptionalDouble.empty(), null,
            OptionalDouble.empty(), Map.of());

    /**
     * A cumulative histogram: {@code bounds[i]} is a bucket's upper bound in seconds and {@code cumulative[i]} the count
     * of observations at or below it (Prometheus' {@code le} buckets without {@code +Inf}); {@code count} includes the
     * ones above the last bound.
     */
    public record FirstTokenHistogram(List<Double> bounds, List<Double> cumulative, double sum, double count) {
        public FirstTokenHistogram {
            bounds = List.copyOf(bounds);
            cumulative = List.copyOf(cumulative);
        }
    }
}
