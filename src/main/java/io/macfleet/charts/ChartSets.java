package io.macfleet.charts;

import io.macfleet.charts.LineChart.Chart;
import io.macfleet.charts.LineChart.Line;
import io.macfleet.charts.LineChart.Scale;
import java.time.Instant;
import java.util.List;

/** Which charts a cluster and a Mac get, from the history: titles, units, and which metrics share a chart. */
public final class ChartSets {

    private static final double GIBIBYTE = 1024.0 * 1024 * 1024;

    private ChartSets() {
    }

    /** Tokens per second, time to first token, energy per token. */
    public static List<Chart> cluster(MetricHistory history, String cluster, ChartRange range, Instant now) {
        String about = "cluster " + cluster;
        return List.of(
                new Chart("chart-tokens-per-second", "Tokens per second", about, range, now, new Scale("tokens/s", 1),
                        List.of(line(history, ChartedMetrics.TOKENS_PER_SECOND, cluster, "tokens/s", 0, range, now))),
                new Chart("chart-time-to-first-token", "Time to first token (mean per interval)", about, range, now, new Scale("s", 1),
                        List.of(line(history, ChartedMetrics.TIME_TO_FIRST_TOKEN, cluster, "time to first token", 0, range, now))),
                new Chart("chart-joules-per-token", "Energy per generated token", about, range, now, new Scale("J/token", 1),
                        List.of(line(history, ChartedMetrics.JOULES_PER_TOKEN, cluster, "J/token", 0, range, now))));
    }

    /** Temperature (CPU and GPU), package power, wired memory against its limit, memory pressure. */
    public static List<Chart> machine(MetricHistory history, String machine, ChartRange range, Instant now) {
        return List.of(
                new Chart("chart-temperature", "Temperature", machine, range, now, new Scale("°C", 1), List.of(
                        line(history, ChartedMetrics.CPU_TEMPERATURE, machine, "CPU", 0, range, now),
                        line(history, ChartedMetrics.GPU_TEMPERATURE, machine, "GPU", 1, range, now))),
                new Chart("chart-power", "Package power", machine, range, now, new Scale("W", 1),
                        List.of(line(history, ChartedMetrics.PACKAGE_POWER, machine, "power", 0, range, now))),
                new Chart("chart-wired-memory", "Wired memory and its limit", machine, range, now, new Scale("GiB", 1 / GIBIBYTE), List.of(
                        line(history, ChartedMetrics.WIRED_MEMORY, machine, "wired", 0, range, now),
                        line(history, ChartedMetrics.WIRED_LIMIT, machine, "limit", 2, range, now))),
                new Chart("chart-memory-pressure", "Memory pressure", machine, range, now, new Scale("%", 100),
                        List.of(line(history, ChartedMetrics.MEMORY_PRESSURE, machine, "pressure", 0, range, now))));
    }

    private static Line line(MetricHistory history, ChartedMetric metric, String subject, String label, int index, ChartRange range,
                             Instant now) {
        return new Line(label, index, history.points(new MetricHistory.Key(metric.prometheusName(), subject), range, now));
    }
}
