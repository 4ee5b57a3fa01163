package io.macfleet.observe;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.lease.Leases;
import io.macfleet.ssh.ExecutionLimits;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import org.jboss.logging.Logger;

/**
 * `macfleet serve` watching the fleet (issue 13): every machine's facts gathered again every interval (jittered, at
 * most {@code parallelism} machines at once), stored as `macfleet facts` stores them, with its reachability. The
 * machines of one cluster due together are gathered together, so their cables name their peers. Several instances on
 * one PostgreSQL share the work through {@link Leases}: a machine is observed by the instance holding
 * {@code observe:NAME}. The SSH connections stay open from one round to the next (a round costs the commands only).
 * Only the scheduler of `macfleet serve` ticks it (other commands run with the scheduler off).
 */
@ApplicationScoped
public class ObservationLoop {

    private static final Logger LOG = Logger.getLogger(ObservationLoop.class);
    static final String ACTOR = "service:observe";

    private final MacfleetConfig.Observation settings;
    private final FactsService facts;
    private final DesiredStateStore desiredState;
    private final Leases leases;
    private final Clock clock = Clock.systemUTC();
    private final Map<String, Instant> nextDue = new ConcurrentHashMap<>();
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Map<String, Leases.Lease> held = new ConcurrentHashMap<>();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private SshRun run;
    private volatile boolean stopped;

    @Inject
    public ObservationLoop(MacfleetConfig config, FactsService facts, DesiredStateStore desiredState, Leases leases) {
        this(config.observation(), facts, desiredState, leases);
    }

    /** A loop of its own, outside the service (two of them on one PostgreSQL stand for two instances in a test). */
    ObservationLoop(MacfleetConfig.Observation settings, FactsService facts, DesiredStateStore desiredState, Leases leases) {
        this.settings = settings;
        this.facts = facts;
        this.desiredState = desiredState;
        this.leases = leases;
        if (settings.interval().isNegative() || settings.interval().isZero()) {
            throw new IllegalArgumentException("macfleet.observation.interval must be positive, was " + settings.interval());
        }
        if (settings.jitter() < 0 || settings.jitter() >= 1) {
            throw new IllegalArgumentException("macfleet.observation.jitter must be at least 0 and below 1, was " + settings.jitter());
        }
        if (settings.parallelism() < 1) {
            throw new IllegalArgumentException("macfleet.observation.parallelism must be at least 1, was " + settings.parallelism());
        }
    }

    /** Starts the gatherings that are due; never waits for one. */
    @Scheduled(every = "1s", delayed = "1s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void tick() {
        if (!settings.enabled() || stopped || !shutdownGate.enter()) {
            return;
        }
        try {
            dispatchDue();
        } catch (RuntimeException e) {
            // A database hiccup costs one tick, never the loop.
            LOG.warnf("observation round not started: %s", e.getMessage());
        } finally {
            shutdownGate.leave();
        }
    }

    private final io.macfleet.lifecycle.ShutdownGate shutdownGate = new io.macfleet.lifecycle.ShutdownGate();

    /** Stopping: no round is dispatched any more (a round started now would meet a closed database or container). */
    void stopping(@jakarta.enterprise.event.Observes(notifyObserver = jakarta.enterprise.event.Reception.IF_EXISTS) io.quarkus.runtime.ShutdownEvent event) {
        shutdownGate.stop(java.time.Duration.ofSeconds(5));
    }

    synchronized void dispatchDue() {
        Instant now = clock.instant();
        List<Machine> machines = desiredState.machines(null);
        Set<String> names = ConcurrentHashMap.newKeySet();
        machines.forEach(machine -> names.add(machine.name()));
        forgetRemoved(names);
        Map<String, List<Machine>> batches = new LinkedHashMap<>();
        int free = settings.parallelism() - inFlight.size();
        for (Machine machine : machines) {
            if (free <= 0) {
                break;
            }
            String name = machine.name();
            if (inFlight.contains(name) || nextDue.getOrDefault(name, now).isAfter(now)) {
                continue;
            }
            if (!holdsLease(name)) {
                // Another instance observes it; look again in an interval (it takes over when that instance goes).
                nextDue.put(name, now.plus(jittered()));
                continue;
            }
            batches.computeIfAbsent(machine.cluster() == null ? "machine:" + name : "cluster:" + machine.cluster(), key -> new ArrayList<>())
                    .add(machine);
            inFlight.add(name);
            free--;
        }
        batches.values().forEach(batch -> workers.submit(() -> observe(batch)));
    }

    private boolean holdsLease(String machine) {
        Leases.Lease lease = held.get(machine);
        if (lease != null && lease.held()) {
            return true;
        }
        held.remove(machine);
        return leases.tryAcquire("observe:" + machine).map(acquired -> {
            held.put(machine, acquired);
            return true;
        }).orElse(false);
    }

    /** The machines this loop holds the observation lease of: the ones it observes, no other instance. */
    Set<String> observing() {
        return held.entrySet().stream().filter(entry -> entry.getValue().held()).map(Map.Entry::getKey)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    private void forgetRemoved(Set<String> names) {
        for (String machine : List.copyOf(held.keySet())) {
            if (!names.contains(machine)) {
                Leases.Lease lease = held.remove(machine);
                if (lease != null) {
                    lease.close();
                }
                nextDue.remove(machine);
            }
        }
    }

    private void observe(List<Machine> batch) {
        try {
            facts.gather(batch, run(), ACTOR);
        } catch (RuntimeException e) {
            LOG.warnf("observing %s failed: %s", batch.stream().map(Machine::name).toList(), e.getMessage());
        } finally {
            Instant next = clock.instant();
            for (Machine machine : batch) {
                nextDue.put(machine.name(), next.plus(jittered()));
                inFlight.remove(machine.name());
            }
        }
    }

    /**
     * Gathers these machines now, whoever observes them (an operator's "Refresh now"), and returns how it went; at most
     * one connect timeout plus one command timeout. The next scheduled round of each is an interval from now.
     */
    public FactsService.Gathering refreshNow(List<Machine> machines) {
        FactsService.Gathering gathering = facts.gather(machines, run(), ACTOR);
        Instant next = clock.instant();
        machines.forEach(machine -> nextDue.put(machine.name(), next.plus(jittered())));
        return gathering;
    }

    /** The interval of one round: the configured one, varied by up to the jitter fraction either way. */
    Duration jittered() {
        double factor = 1 + (settings.jitter() == 0 ? 0 : ThreadLocalRandom.current().nextDouble(-settings.jitter(), settings.jitter()));
        return Duration.ofMillis(Math.max(1, Math.round(settings.interval().toMillis() * factor)));
    }

    /** The connect timeout plus the command timeout: the longest one machine's gathering takes. */
    public Duration timeout() {
        return settings.connectTimeout().plus(settings.commandTimeout());
    }

    public Duration interval() {
        return settings.interval();
    }

    private synchronized SshRun run() {
        if (stopped) {
            throw new IllegalStateException("the observation loop has stopped");
        }
        if (run == null) {
            SshSettings ssh = SshSettings.defaults(ACTOR).withParallelism(settings.parallelism())
                    .withLimits(ExecutionLimits.DEFAULTS.withConnectTimeout(settings.connectTimeout()).withCommandTimeout(settings.commandTimeout()));
            run = facts.openRun(ssh, failuresOnly(facts.auditLog()));
        }
        return run;
    }

    /**
     * The loop reads every machine every minute: its successful reads are not events worth an audit row each (200
     * machines would write millions a day). Failures, host key decisions and anything else are recorded as usual.
     */
    static AuditLog failuresOnly(AuditLog log) {
        return io.macfleet.audit.PollingAudit.failuresOnly(log);
    }

    @PreDestroy
    synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        workers.shutdownNow();
        if (run != null) {
            run.close();
        }
        held.values().forEach(Leases.Lease::close);
        held.clear();
    }
}
