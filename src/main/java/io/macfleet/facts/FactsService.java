package io.macfleet.facts;

import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.reach.MachineReach;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshRun;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Facts of the machines of the applied inventory: gather over SSH and store, read back, compare with the
 * inventory (drift). Used by the CLI, the REST API and the live cabling check.
 */
@ApplicationScoped
public class FactsService {

    /** A name given on the command line or in a URL that the applied inventory does not know. */
    public static final class UnknownNameException extends RuntimeException implements io.macfleet.command.CommandFailure {
        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }

        public UnknownNameException(String message) {
            super(message);
        }
    }

    /** How a gathering went: one result per machine (facts or the error), in the order asked. */
    public record Gathering(List<MachineResult<MachineFacts>> results, Duration elapsed) {
        public long failed() {
            return results.stream().filter(result -> !result.succeeded()).count();
        }
    }

    private final DesiredStateStore desiredState;
    private final FactsStore store;
    private final HostKeyStore hostKeys;
    private final AuditLog audit;
    private final Clock clock;
    private final ObservationStore reachability;

    @Inject
    public FactsService(DesiredStateStore desiredState, FactsStore store, JdbcHostKeyStore hostKeys, JdbcAuditLog audit,
                        ObservationStore reachability) {
        this(desiredState, store, hostKeys, audit, Clock.systemUTC(), reachability);
    }

    /** Without CDI (tests and tools): every store on the one database. */
    public FactsService(DataSource dataSource, DesiredStateStore desiredState) {
        this(dataSource, desiredState, Clock.systemUTC());
    }

    public FactsService(DataSource dataSource, DesiredStateStore desiredState, Clock clock) {
        this(desiredState, new FactsStore(dataSource), new JdbcHostKeyStore(dataSource), new JdbcAuditLog(dataSource), clock,
                new ObservationStore(dataSource));
    }

    /** @param reachability where each gathering's outcome per machine is recorded (last seen, unreachable since, last error) */
    public FactsService(DesiredStateStore desiredState, FactsStore store, HostKeyStore hostKeys, AuditLog audit, Clock clock,
                        ObservationStore reachability) {
        this.reachability = reachability;
        this.desiredState = desiredState;
        this.store = store;
        this.hostKeys = hostKeys;
        this.audit = audit;
        this.clock = clock;
    }

    /**
     * The stored inventory entries of the named machines, or of a cluster's machines, or of every machine.
     *
     * @throws UnknownNameException for a machine or cluster the applied inventory does not have
     */
    public List<Machine> select(String cluster, List<String> machines) {
        if (cluster != null && machines != null && !machines.isEmpty()) {
            throw new IllegalArgumentException("give either --cluster or machine names, not both");
        }
        if (cluster != null) {
            if (desiredState.cluster(cluster).isEmpty()) {
                // Suggest applying an inventory only when none has clusters; otherwise the name is what is wrong.
                List<String> known = desiredState.clusters().stream().map(Cluster::name).toList();
                throw new UnknownNameException("no cluster named '" + cluster + "' in the applied inventory"
                        + (known.isEmpty() ? " (macfleet inventory apply DIR first)" : " (known: " + String.join(", ", known) + ")"));
            }
            return desiredState.machines(cluster);
        }
        if (machines == null || machines.isEmpty()) {
            return desiredState.machines(null);
        }
        List<Machine> selected = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        for (String name : new LinkedHashSet<>(machines)) {
            desiredState.machine(name).ifPresentOrElse(selected::add, () -> unknown.add(name));
        }
        if (!unknown.isEmpty()) {
            throw new UnknownNameException("unknown machine(s) " + String.join(", ", unknown) + ": not in the applied inventory");
        }
        return selected;
    }

    public Optional<Machine> machine(String name) {
        return desiredState.machine(name);
    }

    public Optional<Cluster> cluster(String name) {
        return desiredState.cluster(name);
    }

    /** Gathers the machines' facts over SSH and stores those that were gathered completely. */
    public Gathering gather(List<Machine> machines, SshSettings settings) {
        SshTransport transport = new SshTransport(settings, hostKeys, audit, clock);
        try (SshRun run = transport.openRun()) {
            return gather(machines, run, settings.actor());
        }
    }

    /**
     * A run of this service's transport with the given audit log: the observation loop keeps one open from round to
     * round and audits only what failed (a routine read of every machine every minute is not an event).
     */
    public SshRun openRun(SshSettings settings, AuditLog auditLog) {
        return new SshTransport(settings, hostKeys, auditLog, clock).openRun();
    }

    /** The audit log gatherings write to. */
    public AuditLog auditLog() {
        return audit;
    }

    /**
     * Gathers on an open run (the observation loop keeps its connections from one round to the next), stores the facts
     * gathered completely, and records every machine's reachability.
     */
    public Gathering gather(List<Machine> machines, SshRun run, String actor) {
        long start = System.nanoTime();
        Instant startedAt = clock.instant();
        List<MachineResult<MachineFacts>> results = new ArrayList<>();
        List<SshTarget> targets = new ArrayList<>();
        for (Machine machine : machines) {
            try {
                targets.add(MachineReach.of(machine).ssh());
            } catch (IllegalArgumentException e) {
                results.add(new MachineResult<>(machine.name(), null, e, Duration.ZERO));
            }
        }
        // Cables to Macs not gathered now are named from those Macs' latest stored facts.
        java.util.Set<String> gatheredNow = new java.util.HashSet<>(machines.stream().map(Machine::name).toList());
        List<String> others = desiredState.machines(null).stream().map(Machine::name).filter(name -> !gatheredNow.contains(name)).toList();
        List<MachineFacts> otherFacts = others.isEmpty() ? List.of()
                : store.latest(others).values().stream().map(FactsObservation::facts).toList();
        List<MachineResult<FactsObservation>> gathered = new FactsGatherer(clock).gather(run, targets, otherFacts);
        List<FactsObservation> complete = gathered.stream().filter(MachineResult::succeeded).map(MachineResult::value).toList();
        store.save(complete);
        Instant now = clock.instant();
        for (MachineResult<FactsObservation> result : gathered) {
            if (result.succeeded()) {
                reachability.answered(result.machine(), result.value().facts().observedAt(), unreadable(result.value().facts()), actor);
            } else if (unreachable(result.error())) {
                reachability.unreachable(result.machine(), startedAt, now, result.describe(), actor);
            } else {
                // It answered; its output could not be used.
                reachability.answered(result.machine(), now, result.describe(), actor);
            }
        }
        for (MachineResult<FactsObservation> result : gathered) {
            results.add(new MachineResult<>(result.machine(), result.succeeded() ? result.value().facts() : null, result.error(), result.duration()));
        }
        return new Gathering(results, Duration.ofNanos(System.nanoTime() - start));
    }

    /** The machine's last error when some optional facts could not be read (its other facts were stored), else null. */
    static String unreadable(MachineFacts facts) {
        if (facts.unreadableFacts().isEmpty()) {
            return null;
        }
        List<String> reasons = new ArrayList<>();
        facts.unreadableFacts().forEach((fact, reason) -> reasons.add(fact + " unreadable: " + reason));
        String error = String.join("; ", reasons);
        // The column holds 4000 characters; the whole reasons stay in the stored facts.
        return error.length() > 4000 ? error.substring(0, 3999) + "…" : error;
    }

    /** Whether a gathering failed because the machine was not reached (rather than answering with unusable output). */
    static boolean unreachable(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof SshException failure) {
                return !(failure instanceof SshException.CommandFailed || failure instanceof SshException.OutputCapExceeded
                        || failure instanceof SshException.SudoNotAllowed);
            }
        }
        // The deadline passed without an answer: no SSH exception, but nothing came back.
        return error instanceof FactsGatheringException gathering && gathering.getCause() == null;
    }

    public Optional<FactsObservation> latest(String machine) {
        return store.latest(machine);
    }

    public Map<String, FactsObservation> latest(List<String> machines) {
        return store.latest(machines);
    }

    public List<MachineFacts> history(String machine) {
        return store.history(machine);
    }

    /** Drift of each machine (a machine without facts is reported as such). */
    public List<Drift.Report> drift(List<Machine> machines) {
        List<Drift.Report> reports = new ArrayList<>();
        Map<String, String> targets = new java.util.HashMap<>();
        desiredState.clusters().forEach(cluster -> targets.put(cluster.name(), cluster.macosVersion()));
        for (Machine machine : machines) {
            String target = machine.cluster() == null ? null : targets.get(machine.cluster());
            reports.add(Drift.compare(machine, target, store.latest(machine.name()).map(FactsObservation::facts).orElse(null)));
        }
        return reports;
    }
}
