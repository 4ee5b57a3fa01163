package io.macfleet.charts;

import io.macfleet.charts.ChartedMetric.Reading;
import java.util.List;

/**
 * The one table of metrics the console keeps a history of. The meters themselves are registered by the metrics
 * feature (inference and Mac health); a name listed here that no meter has yet just has no data.
 */
public final class ChartedMetrics {

    public static final ChartedMetric TOKENS_PER_SECOND =
            new ChartedMetric("macfleet_inference_tokens_per_second", ChartedMetric.CLUSTER, Reading.VALUE);
    public static final ChartedMetric TIME_TO_FIRST_TOKEN =
            new ChartedMetric("macfleet_inference_time_to_first_token_seconds", ChartedMetric.CLUSTER, Reading.MEAN_SINCE_LAST_SAMPLE);
    public static final ChartedMetric JOULES_PER_TOKEN =
            new ChartedMetric("macfleet_inference_joules_per_token", ChartedMetric.CLUSTER, Reading.VALUE);
    public static final ChartedMetric CPU_TEMPERATURE =
            new ChartedMetric("macfleet_mac_cpu_temperature_celsius", ChartedMetric.MACHINE, Reading.VALUE);
    public static final ChartedMetric GPU_TEMPERATURE =
            new ChartedMetric("macfleet_mac_gpu_temperature_celsius", ChartedMetric.MACHINE, Reading.VALUE);
    public static final ChartedMetric PACKAGE_POWER =
            new ChartedMetric("macfleet_mac_package_power_watts", ChartedMetric.MACHINE, Reading.VALUE);
    public static final ChartedMetric MEMORY_PRESSURE =
            new ChartedMetric("macfleet_mac_memory_pressure_ratio", ChartedMetric.MACHINE, Reading.VALUE);
    public static final ChartedMetric WIRED_MEMORY =
            new ChartedMetric("macfleet_mac_wired_memory_bytes", ChartedMetric.MACHINE, Reading.VALUE);
    public static final ChartedMetric WIRED_LIMIT =
            new ChartedMetric("macfleet_mac_wired_limit_bytes", ChartedMetric.MACHINE, Reading.VALUE);

    public static final List<ChartedMetric> ALL = List.of(TOKENS_PER_SECOND, TIME_TO_FIRST_TOKEN, JOULES_PER_TOKEN,
            CPU_TEMPERATURE, GPU_TEMPERATURE, PACKAGE_POWER, MEMORY_PRESSURE, WIRED_MEMORY, WIRED_LIMIT);

    private ChartedMetrics() {
    }
}
