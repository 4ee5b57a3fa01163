package io.macfleet.observe;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.Finding;
import io.macfleet.fleet.FleetStatus;
import io.macfleet.fleet.MachineRow;
import io.macfleet.facts.FactsObservation;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunView;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jboss.logging.Logger;

/**
 * The fleet in Prometheus format on /q/metrics (authenticated like the rest): machines by state, age of each machine's
 * facts, cabling findings by code, provisioning runs by state. Computed from the same {@link FleetStatus} the console
 * shows (one notion of ready), every 15 s and on {@link #refresh()}, not on every scrape.
 */
@ApplicationScoped
public class FleetMetrics {

    private static final Logger LOG = Logger.getLogger(FleetMetrics.class);
    /** Runs counted for runs by state: the newest ones (older runs finished long ago and change nothing). */
    private static final int RUNS_COUNTED = 1000;

    private final FleetStatus fleetStatus;
    private final ProvisioningService provisioning;
    private final MultiGauge machines;
    private final MultiGauge factsAge;
    private final MultiGauge findings;
    private final MultiGauge runs;

    @Inject
    public FleetMetrics(FleetStatus fleetStatus, ProvisioningService provisioning, MeterRegistry registry) {
        this.fleetStatus = fleetStatus;
        this.provisioning = provisioning;
        this.machines = MultiGauge.builder("macfleet.machines")
                .description("Machines of the applied inventory by state: ready, not-ready (reachable but held back), unreachable, never-reached")
                .register(registry);
        this.factsAge = MultiGauge.builder("macfleet.facts.age").baseUnit("seconds")
                .description("Age of each machine's latest facts").register(registry);
        this.findings = MultiGauge.builder("macfleet.cabling.findings")
                .description("Cabling findings of every cluster by code and severity").register(registry);
        this.runs = MultiGauge.builder("macfleet.provisioning.runs")
                .description("Provisioning runs by state (the newest " + RUNS_COUNTED + ")").register(registry);
    }

    @Scheduled(every = "15s", delayed = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.warnf("fleet metrics not updated: %s", e.getMessage());
        }
    }

    /** Recomputes every fleet gauge now. */
    public void refresh() {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        Map<String, Integer> byState = new TreeMap<>(Map.of("ready", 0, "not-ready", 0, "unreachable", 0, "never-reached", 0));
        for (MachineRow row : fleet.machines()) {
            byState.merge(state(row, fleet), 1, Integer::sum);
        }
        machines.register(byState.entrySet().stream()
                .map(entry -> MultiGauge.Row.of(Tags.of("state", entry.getKey()), entry.getValue())).toList(), true);

        List<MultiGauge.Row<?>> ages = new ArrayList<>();
        for (Map.Entry<String, FactsObservation> entry : fleet.observations().entrySet()) {
            double age = Duration.between(entry.getValue().facts().observedAt(), fleet.at()).toMillis() / 1000.0;
            ages.add(MultiGauge.Row.of(Tags.of("machine", entry.getKey()), age));
        }
        factsAge.register(ages, true);

        Map<List<String>, Integer> byCode = new TreeMap<>((a, b) -> String.join("/", a).compareTo(String.join("/", b)));
        for (Map.Entry<String, CablingReport> entry : fleet.cabling().entrySet()) {
            for (Finding finding : entry.getValue().findings()) {
                byCode.merge(List.of(entry.getKey(), finding.code().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), finding.severity().name().toLowerCase(java.util.Locale.ROOT)), 1, Integer::sum);
            }
        }
        findings.register(byCode.entrySet().stream().map(entry -> MultiGauge.Row.of(
                Tags.of("cluster", entry.getKey().get(0), "code", entry.getKey().get(1), "severity", entry.getKey().get(2)), entry.getValue())).toList(), true);

        Map<String, Integer> runsByState = new TreeMap<>();
        for (RunView.Run run : provisioning.runs(RUNS_COUNTED)) {
            runsByState.merge(run.status(), 1, Integer::sum);
        }
        runs.register(runsByState.entrySet().stream().map(entry -> MultiGauge.Row.of(Tags.of("state", entry.getKey()), entry.getValue())).toList(), true);
    }

    private static String state(MachineRow row, FleetStatus.Fleet fleet) {
        if (row.ready()) {
            return "ready";
        }
        String reachable = row.status("Reachable").map(status -> status.label()).orElse("");
        if (reachable.startsWith("unreachable")) {
            return "unreachable";
        }
        if (!fleet.observations().containsKey(row.name())) {
            return "never-reached";
        }
        return "not-ready";
    }
}
