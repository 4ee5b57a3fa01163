package io.macfleet.health;

import io.macfleet.config.MacfleetConfig;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.lease.Leases;
import io.macfleet.reach.MachineReach;
import io.macfleet.audit.AuditLog;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Every {@code macfleet.metrics.health-interval}, reads every Mac's health over SSH ({@link MacHealthGatherer}) and
 * exports it on /q/metrics as {@code macfleet_mac_*} gauges, one series per machine. Read-only polling: its
 * {@code ssh.exec} entries stay out of the audit log. With several instances on one database each Mac is read by the
 * instance holding its {@code health:MACHINE} lease (as the observation loop's {@code observe:MACHINE}). The latest look of each Mac is
 * kept in memory for the energy per token and the console.
 */
@ApplicationScoped
public class MacHealthService {

    private static final Logger LOG = Logger.getLogger(MacHealthService.class);
    static final String ACTOR = "service:health";

    private final MacfleetConfig.Metrics settings;
    private final DesiredStateStore desiredState;
    private final FactsService facts;
    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<String, MacHealth> latest = new ConcurrentHashMap<>();
    /** The health lease of each Mac this instance reads: with several instances on one database, each Mac is read by one. */
    private final Leases leases;
    private final Map<String, Leases.Lease> held = new ConcurrentHashMap<>();
    /** Each Mac's panic reports at the previous look: a name not in it is a new panic. */
    private final Map<String, Set<String>> panicsSeen = new ConcurrentHashMap<>();
    private final Map<String, Counter> panicCounters = new ConcurrentHashMap<>();
    private final MultiGauge cpuTemperature;
    private final MultiGauge gpuTemperature;
    private final MultiGauge packagePower;
    private final MultiGauge thermalPressure;
    private final MultiGauge memoryPressure;
    private final MultiGauge wiredMemory;
    private final MultiGauge wiredLimit;
    private final MultiGauge panicReports;
    private final MultiGauge rdmaPortUp;
    private final MultiGauge uptime;
    private final MultiGauge age;

    @Inject
    public MacHealthService(MacfleetConfig config, DesiredStateStore desiredState, FactsService facts, MeterRegistry registry, Leases leases) {
        this.leases = leases;
        this.settings = config.metrics();
        this.desiredState = desiredState;
        this.facts = facts;
        this.registry = registry;
        this.clock = Clock.systemUTC();
        cpuTemperature = gauge("macfleet_mac_cpu_temperature_celsius", "CPU die temperature (powermetrics smc sampler; not reported by Apple silicon)");
        gpuTemperature = gauge("macfleet_mac_gpu_temperature_celsius", "GPU die temperature (powermetrics smc sampler; not reported by Apple silicon)");
        packagePower = gauge("macfleet_mac_package_power_watts", "CPU + GPU + ANE power over a one-second powermetrics sample");
        thermalPressure = gauge("macfleet_mac_thermal_pressure_level", "powermetrics thermal pressure: 0 Nominal, 1 Moderate, 2 Heavy, 3 Trapping, 4 Sleeping");
        memoryPressure = gauge("macfleet_mac_memory_pressure_ratio", "1 - memory_pressure's system-wide free percentage / 100 (0..1)");
        wiredMemory = gauge("macfleet_mac_wired_memory_bytes", "Memory wired down (memory_pressure's wired pages times the page size)");
        wiredLimit = gauge("macfleet_mac_wired_limit_bytes", "GPU wired-memory limit: sysctl iogpu.wired_limit_mb, or macOS' estimated default when 0");
        panicReports = gauge("macfleet_mac_panic_reports", "Kernel panic reports in /Library/Logs/DiagnosticReports");
        rdmaPortUp = gauge("macfleet_mac_rdma_port_up", "1 when ibv_devinfo says the RDMA port is PORT_ACTIVE, else 0");
        uptime = gauge("macfleet_mac_uptime_seconds", "Time since the Mac booted (sysctl kern.boottime)");
        age = gauge("macfleet_mac_health_age_seconds", "Time since this Mac's health was last read");
    }

    private MultiGauge gauge(String name, String help) {
        return MultiGauge.builder(name).description(help).register(registry);
    }

    @Scheduled(every = "{macfleet.metrics.health-interval}", delayed = "15s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        if (!settings.enabled()) {
            return;
        }
        try {
            round();
        } catch (RuntimeException e) {
            LOG.warnf("Mac health not read: %s", e.toString());
        }
    }

    /** Reads every Mac of the applied inventory now and updates the gauges; returns the Macs that answered. */
    public synchronized List<MacHealth> round() {
        List<Machine> machines = desiredState.machines(null);
        Set<String> names = new HashSet<>(machines.stream().map(Machine::name).toList());
        for (String machine : List.copyOf(held.keySet())) {
            if (!names.contains(machine)) {
                Leases.Lease lease = held.remove(machine);
                if (lease != null) {
                    lease.close();
                }
            }
        }
        List<SshTarget> targets = new ArrayList<>();
        for (Machine machine : machines) {
            if (!holdsLease(machine.name())) {
                // another instance reads it (and exports it); this one takes over when that one goes
                latest.remove(machine.name());
                continue;
            }
            try {
                targets.add(MachineReach.of(machine).ssh());
            } catch (IllegalArgumentException e) {
                LOG.debugf("no SSH target for %s: %s", machine.name(), e.getMessage());
            }
        }
        SshSettings ssh = SshSettings.defaults(ACTOR).withLimits(ExecutionLimits.DEFAULTS.withCommandTimeout(settings.healthCommandTimeout()));
        List<MacHealth> answered = new ArrayList<>();
        try (SshRun run = facts.openRun(ssh, readsUnaudited(facts.auditLog()))) {
            MacHealthGatherer gatherer = new MacHealthGatherer(clock);
            for (MachineResult<MacHealth> result : run.onFleet(targets, gatherer::gather)) {
                if (result.value() != null) {
                    answered.add(result.value());
                    record(result.value());
                } else {
                    LOG.debugf("health of %s not read: %s", result.machine(), result.error());
                }
            }
        }
        latest.keySet().retainAll(names);
        publish();
        return answered;
    }

    private boolean holdsLease(String machine) {
        Leases.Lease lease = held.get(machine);
        if (lease != null && lease.held()) {
            return true;
        }
        held.remove(machine);
        return leases.tryAcquire("health:" + machine).map(acquired -> {
            held.put(machine, acquired);
            return true;
        }).orElse(false);
    }

    @jakarta.annotation.PreDestroy
    void releaseLeases() {
        held.values().forEach(Leases.Lease::close);
        held.clear();
    }

    /** The latest health of a Mac, when this instance reads it and it has answered since this instance started. */
    public Optional<MacHealth> latest(String machine) {
        return Optional.ofNullable(latest.get(machine));
    }

    /** Keeps a look (also for tests that gather otherwise) and counts new panic reports. */
    void record(MacHealth health) {
        latest.put(health.machine(), health);
        health.panicReports().ifPresent(reports -> {
            Counter counter = panicCounters.computeIfAbsent(health.machine(), machine -> Counter.builder("macfleet_mac_kernel_panics")
                    .description("Kernel panic reports that appeared since macfleet first looked (new *.panic files in /Library/Logs/DiagnosticReports)")
                    .tags("machine", machine).register(registry));
            Set<String> before = panicsSeen.put(health.machine(), Set.copyOf(reports));
            if (before != null) {
                long fresh = reports.stream().filter(name -> !before.contains(name)).count();
                if (fresh > 0) {
                    counter.increment(fresh);
                    LOG.warnf("%s: %d new kernel panic report(s): %s", health.machine(), fresh,
                            reports.stream().filter(name -> !before.contains(name)).toList());
                }
            }
        });
    }

    private void publish() {
        List<MacHealth> all = List.copyOf(latest.values());
        cpuTemperature.register(rows(all, MacHealth::cpuTemperatureCelsius), true);
        gpuTemperature.register(rows(all, MacHealth::gpuTemperatureCelsius), true);
        packagePower.register(rows(all, MacHealth::packagePowerWatts), true);
        thermalPressure.register(rows(all, MacHealth::thermalPressureLevel), true);
        memoryPressure.register(rows(all, MacHealth::memoryPressureRatio), true);
        wiredMemory.register(rows(all, health -> health.wiredMemoryBytes().isPresent()
                ? OptionalDouble.of(health.wiredMemoryBytes().getAsLong()) : OptionalDouble.empty()), true);
        wiredLimit.register(rows(all, health -> health.wiredLimitBytes().isPresent()
                ? OptionalDouble.of(health.wiredLimitBytes().getAsLong()) : OptionalDouble.empty()), true);
        panicReports.register(rows(all, health -> health.panicReports().map(list -> OptionalDouble.of(list.size())).orElse(OptionalDouble.empty())), true);
        List<MultiGauge.Row<?>> ports = new ArrayList<>();
        for (MacHealth health : all) {
            health.rdmaPorts().ifPresent(list -> list.forEach(port -> ports.add(MultiGauge.Row.of(
                    Tags.of("machine", health.machine(), "device", port.device(), "port", Integer.toString(port.port())), port.up() ? 1 : 0))));
        }
        rdmaPortUp.register(ports, true);
        List<MultiGauge.Row<?>> uptimes = new ArrayList<>();
        List<MultiGauge.Row<?>> ages = new ArrayList<>();
        for (MacHealth health : all) {
            Tags tags = Tags.of("machine", health.machine());
            health.bootTime().ifPresent(boot -> uptimes.add(MultiGauge.Row.of(tags, boot, at -> seconds(at))));
            ages.add(MultiGauge.Row.of(tags, health.observedAt(), at -> seconds(at)));
        }
        uptime.register(uptimes, true);
        age.register(ages, true);
    }

    private double seconds(Instant since) {
        return Duration.between(since, clock.instant()).toMillis() / 1000.0;
    }

    private static List<MultiGauge.Row<?>> rows(List<MacHealth> all, Function<MacHealth, OptionalDouble> value) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        for (MacHealth health : all) {
            OptionalDouble figure = value.apply(health);
            if (figure.isPresent()) {
                rows.add(MultiGauge.Row.of(Tags.of("machine", health.machine()), figure.getAsDouble()));
            }
        }
        return rows;
    }

    /**
     * Health is read every minute from every Mac: its commands are read-only polling, not operator actions, so none is
     * an audit row (a Mac without the sudo rule for powermetrics would otherwise add a failure row a minute, forever).
     * What could not be read shows in the metrics (absent series, a growing health age) and in the debug log; host
     * key decisions and anything but {@code ssh.exec} are recorded as usual.
     */
    static AuditLog readsUnaudited(AuditLog log) {
        return event -> {
            if (!"ssh.exec".equals(event.action())) {
                log.record(event);
            }
        };
    }
}
