package io.macfleet.charts;

/**
 * One metric the console charts, by its Prometheus name (what {@code /q/metrics} shows and alert rules use).
 *
 * @param prometheusName the exported name, e.g. {@code macfleet_inference_tokens_per_second}
 * @param label          the tag naming what the series is about: {@code cluster} or {@code machine}
 * @param reading        how a sample is read from the meter
 */
public record ChartedMetric(String prometheusName, String label, Reading reading) {

    public static final String CLUSTER = "cluster";
    public static final String MACHINE = "machine";

    public enum Reading {
        /** A gauge's current value. */
        VALUE,
        /**
         * The mean of what a histogram (timer or distribution summary) observed since the previous sample, from the
         * deltas of its count and sum: the chart shows each interval, not the average since the service started.
         */
        MEAN_SINCE_LAST_SAMPLE
    }
}
