package io.macfleet.charts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The in-memory history and the sampler on a controllable clock and a registry of the test's own (the meters the
 * metrics feature registers are stood in for by gauges and a timer with the same names).
 */
class MetricHistoryTest {

    private static final Instant START = Instant.parse("2026-11-28T10:00:00Z");

    /** A clock the test moves. */
    static final class MovableClock extends Clock {
        private Instant now;

        MovableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private static final MetricHistory.Key TOKENS = new MetricHistory.Key("macfleet_inference_tokens_per_second", "llm-a");

    @Test
    void samplesWithinASlotAreAveragedAndTheHourForgetsWhatTheDayKeeps() {
        MetricHistory history = new MetricHistory(10);
        history.record(TOKENS, START, 10);
        history.record(TOKENS, START.plusSeconds(10), 20);   // same 15 s slot
        history.record(TOKENS, START.plusSeconds(15), 40);   // next slot
        history.record(TOKENS, START.plusSeconds(20), Double.NaN); // not data

        assertThat(history.points(TOKENS, ChartRange.HOUR, START.plusSeconds(20))).containsExactly(
                new MetricHistory.Point(START, 15), new MetricHistory.Point(START.plusSeconds(15), 40));
        // The day's 5 min slot holds all three samples.
        assertThat(history.points(TOKENS, ChartRange.DAY, START.plusSeconds(20))).containsExactly(
                new MetricHistory.Point(START, 70.0 / 3));

        Instant twoHoursLater = START.plus(Duration.ofHours(2));
        history.record(TOKENS, twoHoursLater, 5);
        assertThat(history.points(TOKENS, ChartRange.HOUR, twoHoursLater)).containsExactly(new MetricHistory.Point(twoHoursLater, 5));
        assertThat(history.points(TOKENS, ChartRange.DAY, twoHoursLater)).hasSize(2);
        // A day later the old slot has left the day too (its ring slot is reused or out of range).
        assertThat(history.points(TOKENS, ChartRange.DAY, START.plus(Duration.ofHours(25)))).hasSize(1);
        assertThat(history.points(TOKENS, ChartRange.HOUR, START.plus(Duration.ofHours(25)))).isEmpty();
    }

    @Test
    void memoryIsBoundedBySeriesAndASilentSeriesIsForgottenAfterADay() {
        MetricHistory history = new MetricHistory(2);
        history.record(new MetricHistory.Key("m", "a"), START, 1);
        history.record(new MetricHistory.Key("m", "b"), START, 1);
        history.record(new MetricHistory.Key("m", "c"), START, 1);
        assertThat(history.seriesCount()).isEqualTo(2);
        assertThat(history.refusedSome()).isTrue();
        assertThat(history.points(new MetricHistory.Key("m", "c"), ChartRange.HOUR, START)).isEmpty();

        Instant dayLater = START.plus(Duration.ofHours(24)).plusSeconds(1);
        history.record(new MetricHistory.Key("m", "c"), dayLater, 1);
        assertThat(history.seriesCount()).isEqualTo(1);
        assertThat(history.points(new MetricHistory.Key("m", "c"), ChartRange.HOUR, dayLater)).hasSize(1);
    }

    @Test
    void theSamplerReadsMetersByTheirPrometheusNameAndChartsTheMeanTimeToFirstTokenPerInterval() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicReference<Double> tokens = new AtomicReference<>(42.0);
        // Registered the ways the metrics feature may: dotted name, or dotted name with a base unit the export appends.
        Gauge.builder("macfleet.inference.tokens.per.second", tokens, AtomicReference::get).tag("cluster", "llm-a").register(registry);
        Gauge.builder("macfleet.mac.cpu.temperature", () -> 61.5).baseUnit("celsius").tag("machine", "studio-01").register(registry);
        Gauge.builder("macfleet.mac.wired.limit", () -> 180e9).baseUnit("bytes").tag("machine", "studio-01").register(registry);
        Gauge.builder("macfleet.something.else", () -> 1).tag("cluster", "llm-a").register(registry);
        Gauge.builder("macfleet.inference.tokens.per.second", () -> 7).register(registry); // no cluster tag: not charted
        Timer firstToken = Timer.builder("macfleet.inference.time.to.first.token").tag("cluster", "llm-a").register(registry);

        MovableClock clock = new MovableClock(START);
        MetricHistory history = new MetricHistory(100);
        MetricSampler sampler = new MetricSampler(registry, history, clock, ChartedMetrics.ALL);

        firstToken.record(Duration.ofMillis(800));
        sampler.sample(); // the first look at the timer only remembers its totals
        clock.advance(Duration.ofSeconds(15));
        firstToken.record(Duration.ofMillis(200));
        firstToken.record(Duration.ofMillis(400));
        tokens.set(50.0);
        sampler.sample();
        clock.advance(Duration.ofSeconds(15));
        sampler.sample(); // no request in this interval: no point (a gap), not a zero

        Instant now = clock.instant();
        assertThat(history.points(key(ChartedMetrics.TOKENS_PER_SECOND, "llm-a"), ChartRange.HOUR, now)).extracting(MetricHistory.Point::value)
                .containsExactly(42.0, 50.0, 50.0);
        List<MetricHistory.Point> firstTokens = history.points(key(ChartedMetrics.TIME_TO_FIRST_TOKEN, "llm-a"), ChartRange.HOUR, now);
        assertThat(firstTokens).extracting(MetricHistory.Point::at).containsExactly(START.plusSeconds(15));
        assertThat(firstTokens.getFirst().value()).isCloseTo(0.3, within(1e-9)); // (200 + 400) / 2 ms, not the 800 ms before
        assertThat(history.points(key(ChartedMetrics.CPU_TEMPERATURE, "studio-01"), ChartRange.HOUR, now)).hasSize(3)
                .allSatisfy(point -> assertThat(point.value()).isEqualTo(61.5));
        assertThat(history.points(key(ChartedMetrics.WIRED_LIMIT, "studio-01"), ChartRange.HOUR, now)).hasSize(3);
        assertThat(history.seriesCount()).isEqualTo(4);
    }

    @Test
    void prometheusNamesOfMicrometerIds() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        assertThat(MetricSampler.prometheusName(Gauge.builder("macfleet.mac.package.power", () -> 1).baseUnit("watts").register(registry).getId()))
                .isEqualTo("macfleet_mac_package_power_watts");
        assertThat(MetricSampler.prometheusName(Gauge.builder("macfleet.mac.package.power.watts", () -> 1).baseUnit("watts").register(registry).getId()))
                .isEqualTo("macfleet_mac_package_power_watts");
        assertThat(MetricSampler.prometheusName(Timer.builder("macfleet.inference.time.to.first.token.seconds").register(registry).getId()))
                .isEqualTo("macfleet_inference_time_to_first_token_seconds");
        assertThat(ChartedMetrics.ALL).extracting(ChartedMetric::prometheusName).doesNotHaveDuplicates().hasSize(9);
    }

    private static MetricHistory.Key key(ChartedMetric metric, String subject) {
        return new MetricHistory.Key(metric.prometheusName(), subject);
    }

}
