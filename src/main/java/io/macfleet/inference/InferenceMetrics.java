package io.macfleet.inference;

import io.macfleet.runtime.InferenceCounters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * Turns successive scrapes of each cluster's runtime into macfleet's own meters on /q/metrics: counters that only
 * grow (a runtime's restart resets its counters; the difference is then its new value), tokens per second over the
 * interval between two scrapes, the queue now, time to first token as a histogram with the node's bucket bounds
 * (scraped bucket counts land in the same buckets; the sum is approximated by each bucket's upper bound), and joules
 * per generated token from the cluster's package power. Plain class: {@link InferenceScraper} feeds it, tests drive
 * it with their own figures.
 */
public final class InferenceMetrics {

    /** The node's histogram bounds (inference-node server/Metrics.FIRST_TOKEN_BOUNDS): keep them equal. */
    static final double[] FIRST_TOKEN_BOUNDS = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    /** Observations recorded per bucket and scrape at most (a histogram is for shapes, not for a flood). */
    private static final long MAXIMUM_RECORDED = 10_000;

    private final MeterRegistry registry;
    /** The cluster's summed package power in watts, or NaN when some Mac's is unknown. */
    private final ToDoubleFunction<String> clusterPowerWatts;
    private final Map<String, ClusterState> clusters = new ConcurrentHashMap<>();

    public InferenceMetrics(MeterRegistry registry, ToDoubleFunction<String> clusterPowerWatts) {
        this.registry = registry;
        this.clusterPowerWatts = clusterPowerWatts;
    }

    /** One scrape of a cluster's runtime at {@code at}. */
    public void record(String cluster, String runtime, InferenceCounters counters, Instant at) {
        state(cluster, runtime).record(counters, at);
    }

    /** The cluster's runtime did not answer (or has no metrics): marks it unavailable, keeps the counters. */
    public void unavailable(String cluster, String runtime) {
        state(cluster, runtime).available = 0;
    }

    /** Forgets clusters no longer in the inventory (their counters stay registered until the service restarts). */
    public void retain(java.util.Set<String> names) {
        clusters.keySet().retainAll(names);
    }

    /** Generated tokens per second over the last interval, when two scrapes have been made. */
    public OptionalDouble tokensPerSecond(String cluster) {
        ClusterState state = clusters.get(cluster);
        return state == null || Double.isNaN(state.tokensPerSecond) ? OptionalDouble.empty() : OptionalDouble.of(state.tokensPerSecond);
    }

    /** Joules per generated token: the cluster's package power over its tokens per second (when it generates). */
    public OptionalDouble joulesPerToken(String cluster) {
        double value = joules(cluster);
        return Double.isNaN(value) ? OptionalDouble.empty() : OptionalDouble.of(value);
    }

    private double joules(String cluster) {
        OptionalDouble rate = tokensPerSecond(cluster);
        if (rate.isEmpty() || rate.getAsDouble() <= 0) {
            return Double.NaN;
        }
        return clusterPowerWatts.applyAsDouble(cluster) / rate.getAsDouble();
    }

    private static Duration duration(double seconds) {
        return Duration.ofNanos(Math.round(seconds * 1e9));
    }

    private ClusterState state(String cluster, String runtime) {
        return clusters.computeIfAbsent(cluster, name -> new ClusterState(name, runtime));
    }

    private final class ClusterState {
        final String cluster;
        final Tags tags;
        volatile double tokensPerSecond = Double.NaN;
        volatile double queueDepth = Double.NaN;
        volatile double available;
        InferenceCounters previous;
        Instant previousAt;
        Timer firstToken;
        boolean ratesRegistered;

        ClusterState(String cluster, String runtime) {
            this.cluster = cluster;
            this.tags = Tags.of("cluster", cluster);
            Gauge.builder("macfleet.inference.metrics.available", this, state -> state.available).tags(Tags.of("cluster", cluster, "runtime", runtime))
                    .description("1 when the cluster's runtime answered its last metrics scrape; 0 when it did not or has no metrics (mlx)").register(registry);
        }

        /** The rate gauges, once the runtime has answered (a runtime without metrics gets none, rather than NaN series). */
        private void registerRates() {
            if (ratesRegistered) {
                return;
            }
            ratesRegistered = true;
            Gauge.builder("macfleet.inference.tokens.per.second", this, state -> state.tokensPerSecond).tags(tags)
                    .description("Tokens generated per second over the last scrape interval").register(registry);
            Gauge.builder("macfleet.inference.queue.depth", this, state -> state.queueDepth).tags(tags)
                    .description("Requests waiting for their turn at the last scrape").register(registry);
            Gauge.builder("macfleet.inference.joules.per.token", this, state -> joules(state.cluster)).tags(tags)
                    .description("Energy per generated token: the cluster's Macs' package power over its tokens per second").register(registry);
        }

        synchronized void record(InferenceCounters counters, Instant at) {
            available = 1;
            registerRates();
            counters.requestsByOutcome().forEach((outcome, total) -> add(Counter.builder("macfleet.inference.requests")
                    .description("Generation requests by outcome (ok, rejected when the queue was full), summed over the runtime's restarts")
                    .tags(tags).tag("outcome", outcome), total, previous == null ? null : previous.requestsByOutcome().get(outcome)));
            counters.errorsByKind().forEach((kind, total) -> add(Counter.builder("macfleet.inference.errors")
                    .description("Failed API requests by the runtime's error code").tags(tags).tag("kind", kind), total,
                    previous == null ? null : previous.errorsByKind().get(kind)));
            if (counters.promptTokens().isPresent()) {
                add(Counter.builder("macfleet.inference.prompt.tokens").description("Prompt tokens processed").tags(tags),
                        counters.promptTokens().getAsDouble(), previous == null || previous.promptTokens().isEmpty() ? null : previous.promptTokens().getAsDouble());
            }
            if (counters.generatedTokens().isPresent()) {
                double generated = counters.generatedTokens().getAsDouble();
                Double before = previous == null || previous.generatedTokens().isEmpty() ? null : previous.generatedTokens().getAsDouble();
                double delta = add(Counter.builder("macfleet.inference.generated.tokens").description("Tokens generated").tags(tags), generated, before);
                if (before != null && previousAt != null && at.isAfter(previousAt)) {
                    tokensPerSecond = delta / (Duration.between(previousAt, at).toNanos() / 1e9);
                }
            }
            queueDepth = counters.queueDepth().orElse(Double.NaN);
            if (counters.firstToken() != null) {
                recordFirstTokens(counters.firstToken(), previous == null ? null : previous.firstToken());
            }
            previous = counters;
            previousAt = at;
        }

        /**
         * Adds what a cumulative runtime counter grew by since the previous scrape; on the first scrape the whole value
         * counts only when there was no earlier scrape of the series (a fresh macfleet sees the runtime's history once).
         */
        private double add(Counter.Builder builder, double total, Double before) {
            double delta = before == null || total < before ? total : total - before;
            if (before == null && previous != null) {
                delta = total; // a series that appeared since the previous scrape
            }
            builder.register(registry).increment(Math.max(0, delta));
            return Math.max(0, delta);
        }

        private void recordFirstTokens(InferenceCounters.FirstTokenHistogram now, InferenceCounters.FirstTokenHistogram before) {
            if (firstToken == null) {
                // A timer, not a distribution summary: a summary's fixed-boundary histogram rounds values up to whole
                // numbers (0.1 s would land in le="1.0"); a timer counts nanoseconds and prints seconds.
                firstToken = Timer.builder("macfleet.inference.time.to.first.token")
                        .description("Time from the start of a generation to its first token (bucket counts from the runtime)")
                        .serviceLevelObjectives(java.util.Arrays.stream(FIRST_TOKEN_BOUNDS).mapToObj(InferenceMetrics::duration).toArray(Duration[]::new))
                        .minimumExpectedValue(Duration.ofMillis(1)).tags(tags).register(registry);
            }
            boolean restarted = before == null || now.count() < before.count();
            double previousCumulative = 0;
            double previousBefore = 0;
            List<Double> bounds = now.bounds();
            for (int i = 0; i < bounds.size(); i++) {
                double inBucket = now.cumulative().get(i) - previousCumulative;
                double inBucketBefore = restarted || i >= before.cumulative().size() ? 0 : before.cumulative().get(i) - previousBefore;
                observe(bounds.get(i), inBucket - inBucketBefore);
                previousCumulative = now.cumulative().get(i);
                previousBefore = restarted || i >= before.cumulative().size() ? 0 : before.cumulative().get(i);
            }
            double above = now.count() - previousCumulative;
            double aboveBefore = restarted ? 0 : before.count() - previousBefore;
            observe(bounds.isEmpty() ? now.sum() / Math.max(1, now.count()) : bounds.getLast() * 2, above - aboveBefore);
        }

        private void observe(double value, double times) {
            for (long i = 0; i < Math.min((long) times, MAXIMUM_RECORDED); i++) {
                firstToken.record(duration(value));
            }
        }
    }
}
