package io.macfleet.charts;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Statistic;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the charted metrics from the Micrometer registry into a {@link MetricHistory}. Meters are found by the
 * Prometheus name they export under (Micrometer's dotted name, snake-cased, with the base unit as suffix), so the
 * metrics feature may register {@code macfleet.inference.tokens.per.second} or {@code macfleet.mac.cpu.temperature}
 * with base unit {@code celsius}: both are what {@link ChartedMetrics} names.
 */
public final class MetricSampler {

    private record Totals(double count, double sum) {
    }

    private final MeterRegistry registry;
    private final MetricHistory history;
    private final Clock clock;
    private final List<ChartedMetric> metrics;
    private final Map<MetricHistory.Key, Totals> previousTotals = new HashMap<>();

    public MetricSampler(MeterRegistry registry, MetricHistory history, Clock clock, List<ChartedMetric> metrics) {
        this.registry = registry;
        this.history = history;
        this.clock = clock;
        this.metrics = List.copyOf(metrics);
    }

    /** Takes one sample of every charted meter now. */
    public synchronized void sample() {
        Instant now = clock.instant();
        Map<String, ChartedMetric> byName = new HashMap<>();
        metrics.forEach(metric -> byName.put(metric.prometheusName(), metric));
        for (Meter meter : registry.getMeters()) {
            ChartedMetric metric = byName.get(prometheusName(meter.getId()));
            if (metric == null) {
                continue;
            }
            String subject = meter.getId().getTag(metric.label());
            if (subject == null) {
                continue;
            }
            MetricHistory.Key key = new MetricHistory.Key(metric.prometheusName(), subject);
            switch (metric.reading()) {
                case VALUE -> history.record(key, now, statistic(meter, Statistic.VALUE));
                case MEAN_SINCE_LAST_SAMPLE -> meanSinceLastSample(key, meter, now);
            }
        }
    }

    private void meanSinceLastSample(MetricHistory.Key key, Meter meter, Instant now) {
        double sum = statistic(meter, Statistic.TOTAL_TIME);
        if (Double.isNaN(sum)) {
            sum = statistic(meter, Statistic.TOTAL);
        }
        Totals current = new Totals(statistic(meter, Statistic.COUNT), sum);
        Totals previous = previousTotals.put(key, current);
        // The first sample has nothing to compare with; a count that went down is a meter registered again.
        if (previous != null && current.count() > previous.count()) {
            history.record(key, now, (current.sum() - previous.sum()) / (current.count() - previous.count()));
        }
    }

    private static double statistic(Meter meter, Statistic wanted) {
        for (Measurement measurement : meter.measure()) {
            if (measurement.getStatistic() == wanted) {
                return measurement.getValue();
            }
        }
        return Double.NaN;
    }

    /**
     * The name Micrometer's Prometheus registry exports a meter under: the dotted name in snake case, then the base
     * unit unless the name already ends with it (a timer's is seconds); counters' {@code _total} is not charted.
     */
    static String prometheusName(Meter.Id id) {
        String name = id.getName().replace('.', '_').replace('-', '_');
        String unit = id.getType() == Meter.Type.TIMER || id.getType() == Meter.Type.LONG_TASK_TIMER ? "seconds" : id.getBaseUnit();
        if (unit != null && !unit.isBlank() && !name.endsWith("_" + unit)) {
            name = name + "_" + unit.replace('.', '_');
        }
        return name;
    }
}
