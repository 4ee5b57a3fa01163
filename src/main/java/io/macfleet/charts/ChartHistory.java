package io.macfleet.charts;

import io.macfleet.config.MacfleetConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The service's chart history: samples the registry every {@code macfleet.console.chart-interval} (10 s, below the hour
 * range's 15 s slots so that no slot is left empty while the meters exist) and answers the console's chart sets.
 */
@ApplicationScoped
public class ChartHistory {

    private static final Logger LOG = Logger.getLogger(ChartHistory.class);

    private final MetricHistory history;
    private final MetricSampler sampler;
    private final Clock clock;

    @Inject
    public ChartHistory(MeterRegistry registry, MacfleetConfig config) {
        this.clock = Clock.systemUTC();
        this.history = new MetricHistory(config.console().chartSeries());
        this.sampler = new MetricSampler(registry, history, clock, ChartedMetrics.ALL);
    }

    @Scheduled(every = "{macfleet.console.chart-interval}", delayed = "2s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        try {
            sampler.sample();
        } catch (RuntimeException e) {
            LOG.warnf("chart history not sampled: %s", e.getMessage());
        }
    }

    /** Samples now (tests, and a page that wants the newest value). */
    public void sampleNow() {
        sampler.sample();
    }

    public List<LineChart.Chart> cluster(String cluster, ChartRange range) {
        return ChartSets.cluster(history, cluster, range, clock.instant());
    }

    public List<LineChart.Chart> machine(String machine, ChartRange range) {
        return ChartSets.machine(history, machine, range, clock.instant());
    }
}
