package io.macfleet.osupdate;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.command.CommandFailure;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.MachineFacts;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.lease.LeaseOwners;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.ssh.HostKeyStore;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.MachineResult;
import io.macfleet.ssh.SshException;
import io.macfleet.ssh.SshSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * OS-update campaigns: a cluster is updated as one. Per cluster: preflight every machine (read-only; any problem stops
 * the cluster before anything changes) → drain (the inference daemon stopped and disabled, the cluster recorded down
 * for maintenance) → start the update on every node together and watch each phase against its deadline → verify
 * (exact version and build over SSH, RDMA still on, cabling check) → undrain. Clusters go one after another, the
 * first (the canary) alone, then {@code clustersAtOnce} at a time. Every transition is stored before it is acted on,
 * so a campaign killed anywhere is resumed by {@link #resume} or by {@link #apply} with the same arguments, and sends
 * nothing twice (the update method's start is idempotent, and the campaign records what it sent).
 */
@ApplicationScoped
public class OsUpdateCampaigns {

    /** The inference daemon's launchd label unless the campaign names another. */
    public static final String DEFAULT_SERVICE_LABEL = "io.macfleet.inference-node";

    /**
     * What to update.
     *
     * @param clusters cluster names in order (the first is the canary); empty with {@code all}
     * @param all every cluster of the applied inventory, by name
     * @param via the update method's name (mdm, ssh)
     * @param installBy the Macs' forced-install time (Apple's TargetLocalDateTime); empty: now
     * @param serviceLabel the inference daemon's launchd label; empty: {@link #DEFAULT_SERVICE_LABEL}
     */
    public record Request(List<String> clusters, boolean all, String version, Optional<String> build, String via, int clustersAtOnce,
                          boolean continueOnFailure, Optional<LocalDateTime> installBy, Optional<String> serviceLabel) {
        public Request {
            clusters = clusters == null ? List.of() : List.copyOf(clusters);
            build = build == null ? Optional.empty() : build;
            via = via == null || via.isBlank() ? "mdm" : via;
            installBy = installBy == null ? Optional.empty() : installBy;
            serviceLabel = serviceLabel == null ? Optional.empty() : serviceLabel;
        }

        public static Request of(List<String> clusters, String version, Optional<String> build) {
            return new Request(clusters, false, version, build, "mdm", 1, false, Optional.empty(), Optional.empty());
        }
    }

    /** How the engine works: SSH settings, polling, deadlines, how old a lease must be to take a campaign over. */
    public record Options(SshSettings ssh, Duration pollInterval, PhaseDeadlines deadlines, Duration leaseTimeout) {
        public static Options defaults(String actor) {
            return new Options(SshSettings.defaults(actor), Duration.ofSeconds(5), PhaseDeadlines.DEFAULTS, Duration.ofSeconds(60));
        }
    }

    /** A preflight without a campaign: what {@code os-update plan} shows. Nothing is changed or stored. */
    public record Plan(String target, String method, List<PlannedCluster> clusters) {
        public boolean passed() {
            return clusters.stream().allMatch(PlannedCluster::passed);
        }
    }

    /** @param cabling the cabling check's errors before the update, empty when it passes */
    public record PlannedCluster(String cluster, List<PreflightResult> machines, List<String> cabling) {
        public boolean passed() {
            return cabling.isEmpty() && machines.stream().allMatch(PreflightResult::passed);
        }
    }

    /** Bad input: unknown cluster, method or campaign, a bad version (400 in the API, exit 2). */
    public static final class InvalidCampaignException extends RuntimeException implements CommandFailure {
        public InvalidCampaignException(String message) {
            super(message);
        }

        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }
    }

    /** No campaign with that id (404 in the API, exit 2). */
    public static final class UnknownCampaignException extends RuntimeException implements CommandFailure {
        public UnknownCampaignException(long id) {
            super("no OS-update campaign " + id + " (macfleet os-update status lists them)");
        }

        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }
    }

    /** The campaign cannot change now: another live process works on it, or its state does not allow it (409, exit 1). */
    public static final class CampaignConflictException extends RuntimeException implements CommandFailure {
        public CampaignConflictException(String message) {
            super(message);
        }

        @Override
        public Kind failureKind() {
            return Kind.CHECK_FAILED;
        }
    }

    private enum Outcome { DONE, FAILED, PAUSED }


    private final CampaignStore store;
    private final AuditLog audit;
    private final HostKeyStore hostKeys;
    private final DesiredStateStore desiredState;
    private final FactsService facts;
    private final ClusterCabling cabling;
    private final Map<String, UpdateMethod> methods;
    private final Options options;
    private final Clock clock;
    private final StepBoundary boundary;
    private final ExecutorService background = Executors.newVirtualThreadPerTaskExecutor();

    @Inject
    public OsUpdateCampaigns(DataSource dataSource, JdbcAuditLog audit, JdbcHostKeyStore hostKeys, DesiredStateStore desiredState, FactsService facts,
                             ClusterCabling cabling, @Any Instance<UpdateMethod> methods) {
        this(new CampaignStore(dataSource), audit, hostKeys, desiredState, facts, cabling, methods.stream().toList(), Options.defaults("os-update"),
                Clock.systemUTC(), StepBoundary.NONE);
    }

    /** Wired by hand (tests and tools): every store on the one database. */
    public OsUpdateCampaigns(DataSource dataSource, DesiredStateStore desiredState, FactsService facts, ClusterCabling cabling, List<UpdateMethod> methods,
                             Options options) {
        this(dataSource, desiredState, facts, cabling, methods, options, StepBoundary.NONE);
    }

    OsUpdateCampaigns(DataSource dataSource, DesiredStateStore desiredState, FactsService facts, ClusterCabling cabling, List<UpdateMethod> methods,
                      Options options, StepBoundary boundary) {
        this(new CampaignStore(dataSource), new JdbcAuditLog(dataSource), new JdbcHostKeyStore(dataSource), desiredState, facts, cabling, methods,
                options, Clock.systemUTC(), boundary);
    }

    private OsUpdateCampaigns(CampaignStore store, AuditLog audit, HostKeyStore hostKeys, DesiredStateStore desiredState, FactsService facts,
                              ClusterCabling cabling, List<UpdateMethod> methods, Options options, Clock clock, StepBoundary boundary) {
        this.store = store;
        this.audit = audit;
        this.hostKeys = hostKeys;
        this.desiredState = desiredState;
        this.facts = facts;
        this.cabling = cabling;
        Map<String, UpdateMethod> byName = new TreeMap<>();
        for (UpdateMethod method : methods) {
            byName.put(method.name(), method);
        }
        this.methods = Map.copyOf(byName);
        this.options = options;
        this.clock = clock;
        this.boundary = boundary;
    }

    /** The update methods available, by name. */
    public List<String> methodNames() {
        return List.copyOf(new TreeMap<>(methods).keySet());
    }

    // ---- reading

    public Optional<CampaignView> campaign(long id) {
        return store.view(id);
    }

    /** The newest campaigns first. */
    public List<CampaignView> campaigns(int limit) {
        return store.ids(limit).stream().map(store::view).flatMap(Optional::stream).toList();
    }

    /** Clusters down for maintenance now, with the campaign and reason. */
    public Map<String, String> maintenance() {
        return store.maintenance();
    }

    // ---- plan (read-only)

    /** Preflight of every machine of the clusters; changes nothing on machines or the MDM server and stores no campaign. */
    public Plan plan(Request request) {
        Resolved resolved = resolve(request);
        List<PlannedCluster> clusters = new ArrayList<>();
        for (Map.Entry<String, List<Machine>> cluster : resolved.machines().entrySet()) {
            Map<String, PreflightResult> results = preflightAll(resolved.method(), cluster.getValue(), resolved.target());
            clusters.add(new PlannedCluster(cluster.getKey(), cluster.getValue().stream().map(machine -> results.get(machine.name())).toList(),
                    results.values().stream().allMatch(PreflightResult::passed) ? cablingErrors(cluster.getKey(), true) : List.of()));
        }
        return new Plan(describe(resolved.target()), resolved.method().name(), clusters);
    }

    // ---- apply, resume, pause

    /**
     * Runs a campaign to its end (or until paused): continues the unfinished campaign of exactly these clusters and
     * target when there is one (after a crash), else creates one.
     */
    public CampaignView apply(Request request, String actor) {
        return run(create(request, actor), actor);
    }

    /**
     * Stores a new campaign (or returns the unfinished one of exactly these clusters and target) without running it.
     *
     * @throws InvalidCampaignException for unknown names, a bad version or method, or a cluster in another unfinished campaign
     */
    public long create(Request request, String actor) {
        Resolved resolved = resolve(request);
        List<String> clusterNames = List.copyOf(resolved.machines().keySet());
        // A rerun of a campaign that failed takes it up again (as os-update resume does) rather than starting a new
        // one that fails the same way and leaves a trail of failed campaigns.
        Optional<CampaignView> failed = campaigns(200).stream()
                .filter(view -> view.clusters().stream().map(CampaignView.ClusterView::cluster).toList().equals(clusterNames))
                .findFirst()
                .filter(view -> view.status().equals(CampaignStatus.FAILED.wire()) && view.targetVersion().equals(resolved.target().osVersion())
                        && view.targetBuild().equals(resolved.target().buildVersion()) && view.method().equals(resolved.method().name()));
        if (failed.isPresent()) {
            prepareResume(failed.get().id(), actor);
            return failed.get().id();
        }
        for (CampaignView unfinished : campaigns(200).stream().filter(view -> !view.finished()).toList()) {
            List<String> theirs = unfinished.clusters().stream().map(CampaignView.ClusterView::cluster).toList();
            boolean same = theirs.equals(clusterNames) && unfinished.targetVersion().equals(resolved.target().osVersion())
                    && unfinished.targetBuild().equals(resolved.target().buildVersion()) && unfinished.method().equals(resolved.method().name());
            if (same) {
                return unfinished.id();
            }
            List<String> overlap = theirs.stream().filter(clusterNames::contains).toList();
            if (!overlap.isEmpty()) {
                throw new InvalidCampaignException("cluster(s) " + String.join(", ", overlap) + " are in unfinished campaign " + unfinished.id() + " ("
                        + unfinished.status() + ", to " + unfinished.target() + "): resume it (macfleet os-update resume " + unfinished.id() + ") first");
            }
        }
        Map<String, List<String>> names = new LinkedHashMap<>();
        resolved.machines().forEach((cluster, machines) -> names.put(cluster, machines.stream().map(Machine::name).toList()));
        long id = store.create(resolved.target(), resolved.method().name(), request.serviceLabel().orElse(DEFAULT_SERVICE_LABEL),
                Math.max(1, request.clustersAtOnce()), request.continueOnFailure(), names, actor, clock.instant());
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.campaign", "campaign " + id + " created: " + String.join(", ", clusterNames)
                + " to " + describe(resolved.target()) + " via " + resolved.method().name() + ", install by " + resolved.target().targetLocalDateTime(),
                AuditEvent.Outcome.SUCCESS));
        boundary.reached(id, "created");
        return id;
    }

    /** Runs a stored campaign from where it stands until it succeeds, fails or is paused; blocks. */
    public CampaignView run(long id, String actor) {
        CampaignStore.Campaign campaign = store.campaign(id).orElseThrow(() -> new UnknownCampaignException(id));
        if (campaign.status() != CampaignStatus.RUNNING) {
            return store.view(id).orElseThrow();
        }
        String owner = LeaseOwners.next();
        acquire(id, owner);
        try {
            return execute(campaign, actor, owner);
        } finally {
            store.releaseLease(id, owner);
        }
    }

    /** Starts (or resumes) a campaign on a background thread, for the API and console. */
    public long startInBackground(Request request, String actor) {
        long id = create(request, actor);
        background.submit(() -> runQuietly(id, actor));
        return id;
    }

    /**
     * Resumes a paused or failed campaign (after a fix) or one whose process died, and runs it; blocks. A failed
     * cluster goes back to the step it failed at; machines that failed while updating get the exact target again, with
     * a new install time (a new revision of the enforcement, so the Macs try again).
     */
    public CampaignView resume(long id, String actor) {
        prepareResume(id, actor);
        return run(id, actor);
    }

    /** {@link #resume} on a background thread. */
    public void resumeInBackground(long id, String actor) {
        prepareResume(id, actor);
        background.submit(() -> runQuietly(id, actor));
    }

    /** Asks the process working on the campaign to stop at its next check (Macs already installing carry on: macOS cannot be stopped). */
    public CampaignView pause(long id, String actor) {
        CampaignStore.Campaign campaign = store.campaign(id).orElseThrow(() -> new UnknownCampaignException(id));
        if (!store.changeStatus(id, CampaignStatus.RUNNING, CampaignStatus.PAUSED, clock.instant())) {
            throw new CampaignConflictException("campaign " + id + " is " + campaign.status().wire() + ": only a running campaign can be paused");
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.pause", "campaign " + id + " paused", AuditEvent.Outcome.SUCCESS));
        return store.view(id).orElseThrow();
    }

    private void prepareResume(long id, String actor) {
        CampaignStore.Campaign campaign = store.campaign(id).orElseThrow(() -> new UnknownCampaignException(id));
        switch (campaign.status()) {
            case SUCCEEDED -> throw new CampaignConflictException("campaign " + id + " already succeeded: nothing to resume");
            case PAUSED -> store.changeStatus(id, CampaignStatus.PAUSED, CampaignStatus.RUNNING, clock.instant());
            case FAILED -> {
                boolean resend = false;
                for (Map.Entry<String, ClusterStep> cluster : store.clusterSteps(id).entrySet()) {
                    if (cluster.getValue() != ClusterStep.FAILED) {
                        continue;
                    }
                    ClusterStep at = store.failedStep(id, cluster.getKey()).orElse(ClusterStep.PREFLIGHT);
                    ClusterStep back = switch (at) {
                        case PREFLIGHT, PENDING -> ClusterStep.PENDING;
                        case UPDATING, VERIFYING -> ClusterStep.UPDATING;
                        default -> at;
                    };
                    for (CampaignStore.MachineRow machine : store.machines(id, cluster.getKey())) {
                        if (back == ClusterStep.PENDING) {
                            store.setMachine(id, machine.machine(), "pending", Optional.empty(), Optional.empty(), null, null, clock.instant());
                        } else if (back == ClusterStep.UPDATING && machine.phase().equals("failed")) {
                            store.setMachine(id, machine.machine(), "waiting", Optional.empty(), Optional.empty(), "sent again on resume", null, clock.instant());
                            store.setStartState(id, machine.machine(), "not-sent", clock.instant());
                            resend = true;
                        }
                    }
                    store.setClusterStep(id, cluster.getKey(), back, clock.instant());
                }
                if (resend) {
                    // A Mac that failed keeps its failure for the same revision; a new install time is a new revision.
                    OsUpdateTarget again = new OsUpdateTarget(campaign.target().osVersion(), campaign.target().buildVersion(), LocalDateTime.now(clock.withZone(java.time.ZoneId.systemDefault())));
                    store.setInstallBy(id, again, clock.instant());
                }
                store.changeStatus(id, CampaignStatus.FAILED, CampaignStatus.RUNNING, clock.instant());
            }
            case RUNNING -> {
                // A campaign whose process died: run takes it over once the lease is free or stale.
            }
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.resume", "campaign " + id + " resumed (was " + campaign.status().wire() + ")",
                AuditEvent.Outcome.SUCCESS));
    }

    private void runQuietly(long id, String actor) {
        try {
            run(id, actor);
        } catch (RuntimeException e) {
            audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.campaign", "campaign " + id + " stopped: " + e.getMessage(),
                    AuditEvent.Outcome.FAILURE));
        }
    }

    // ---- the engine

    private CampaignView execute(CampaignStore.Campaign campaign, String actor, String owner) {
        UpdateMethod method = methods.get(campaign.method());
        if (method == null) {
            throw new InvalidCampaignException("campaign " + campaign.id() + " uses update method '" + campaign.method() + "', which this macfleet does not have "
                    + methodNames());
        }
        List<String> order = new ArrayList<>(store.clusterSteps(campaign.id()).keySet());
        boolean anyFailed = false;
        int index = 0;
        while (index < order.size()) {
            int size = index == 0 ? 1 : campaign.clustersAtOnce();
            List<String> wave = order.subList(index, Math.min(order.size(), index + size));
            List<Outcome> outcomes = wave.size() == 1 ? List.of(runCluster(campaign, wave.getFirst(), method, actor, owner))
                    : inParallel(wave, cluster -> runCluster(campaign, cluster, method, actor, owner));
            if (outcomes.contains(Outcome.PAUSED)) {
                return store.view(campaign.id()).orElseThrow();
            }
            if (outcomes.contains(Outcome.FAILED)) {
                anyFailed = true;
                if (!campaign.continueOnFailure()) {
                    break;
                }
            }
            index += wave.size();
        }
        CampaignStatus end = anyFailed ? CampaignStatus.FAILED : CampaignStatus.SUCCEEDED;
        if (store.changeStatus(campaign.id(), CampaignStatus.RUNNING, end, clock.instant())) {
            audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.campaign", "campaign " + campaign.id() + " " + end.wire(),
                    anyFailed ? AuditEvent.Outcome.FAILURE : AuditEvent.Outcome.SUCCESS));
        }
        return store.view(campaign.id()).orElseThrow();
    }

    private <T> List<Outcome> inParallel(List<T> items, java.util.function.Function<T, Outcome> work) {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Outcome>> futures = items.stream().map(item -> threads.submit(() -> work.apply(item))).toList();
            List<Outcome> outcomes = new ArrayList<>();
            for (Future<Outcome> future : futures) {
                try {
                    outcomes.add(future.get());
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw (RuntimeException) e.getCause();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while updating clusters", e);
                }
            }
            return outcomes;
        }
    }

    private Outcome runCluster(CampaignStore.Campaign campaign, String cluster, UpdateMethod method, String actor, String owner) {
        long id = campaign.id();
        while (true) {
            if (paused(id)) {
                return Outcome.PAUSED;
            }
            ClusterStep step = store.clusterSteps(id).get(cluster);
            // The install time may have changed on an operator's resume: always the stored one.
            OsUpdateTarget target = store.campaign(id).orElseThrow().target();
            Map<String, Machine> machines = machinesOf(id, cluster);
            if (machines == null && step != ClusterStep.DONE && step != ClusterStep.FAILED) {
                store.failCluster(id, cluster, step, "a machine of the campaign is no longer in the applied inventory (or its cluster changed)", clock.instant());
                return Outcome.FAILED;
            }
            switch (step) {
                case DONE -> {
                    return Outcome.DONE;
                }
                case FAILED -> {
                    return Outcome.FAILED;
                }
                case PENDING -> {
                    store.setClusterStep(id, cluster, ClusterStep.PREFLIGHT, clock.instant());
                    boundary.reached(id, "preflight " + cluster);
                }
                case PREFLIGHT -> preflight(id, cluster, machines, target, method, actor);
                case DRAINING -> drain(campaign, cluster, machines, actor);
                case UPDATING -> {
                    Outcome outcome = update(id, cluster, machines, target, method, actor, owner);
                    if (outcome == Outcome.PAUSED) {
                        return outcome;
                    }
                }
                case VERIFYING -> verify(id, cluster, machines, target, actor);
                case UNDRAINING -> undrain(campaign, cluster, machines, actor);
            }
        }
    }

    private void preflight(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, UpdateMethod method, String actor) {
        Map<String, PreflightResult> results = preflightAll(method, List.copyOf(machines.values()), target);
        List<String> blocked = new ArrayList<>();
        for (PreflightResult result : results.values()) {
            if (result.passed()) {
                store.setMachine(id, result.machine(), result.alreadyOnTarget(target) ? "done" : "checked", result.osVersion(), result.buildVersion(),
                        result.alreadyOnTarget(target) ? "already on " + describe(target) : "preflight passed", null, clock.instant());
            } else {
                blocked.add(result.machine());
                String problems = result.findings().stream().map(finding -> finding.check().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')
                        + ": " + finding.problem()).collect(Collectors.joining("; "));
                String fixes = result.findings().stream().map(PreflightFinding::fix).collect(Collectors.joining("; "));
                store.setMachine(id, result.machine(), "blocked", result.osVersion(), result.buildVersion(), problems, fixes, clock.instant());
                audit.record(new AuditEvent(clock.instant(), actor, result.machine(), "os-update.preflight", "campaign " + id + ": " + problems,
                        AuditEvent.Outcome.FAILURE));
            }
        }
        if (!blocked.isEmpty()) {
            store.failCluster(id, cluster, ClusterStep.PREFLIGHT, "preflight failed on " + String.join(", ", blocked)
                    + "; nothing was changed on the cluster. Fix each machine as shown, then `macfleet os-update resume " + id + "`", clock.instant());
            boundary.reached(id, "preflight-failed " + cluster);
            return;
        }
        List<String> cablingErrors = cablingErrors(cluster, true);
        if (!cablingErrors.isEmpty()) {
            store.failCluster(id, cluster, ClusterStep.PREFLIGHT, "the cabling check fails before the update (" + String.join("; ", cablingErrors)
                    + "); nothing was changed. Fix it (macfleet cabling check " + cluster + "), then `macfleet os-update resume " + id + "`", clock.instant());
            return;
        }
        for (Machine machine : machines.values()) {
            facts.latest(machine.name()).ifPresent(observation -> store.setRdmaBefore(id, machine.name(), observation.facts().rdmaEnabled()));
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.preflight", "campaign " + id + ": " + cluster + " passed on "
                + String.join(", ", machines.keySet()), AuditEvent.Outcome.SUCCESS));
        store.setClusterStep(id, cluster, ClusterStep.DRAINING, clock.instant());
        boundary.reached(id, "draining " + cluster);
    }

    private void drain(CampaignStore.Campaign campaign, String cluster, Map<String, Machine> machines, String actor) {
        long id = campaign.id();
        store.enterMaintenance(cluster, id, "OS update to " + describe(campaign.target()), clock.instant());
        boundary.reached(id, "maintenance " + cluster);
        List<String> labels = serviceLabels(campaign, cluster);
        try (NodeShell shell = shell(actor)) {
            for (Machine machine : machines.values()) {
                try {
                    boolean anyLoaded = false;
                    for (String label : labels.reversed()) {
                        boolean loaded = shell.loaded(machine, label);
                        anyLoaded |= loaded;
                        if (loaded) {
                            store.recordServiceWasLoaded(id, machine.name(), true);
                        }
                        boundary.reached(id, "stopping " + machine.name());
                        shell.stop(machine, label, loaded);
                        audit.record(new AuditEvent(clock.instant(), actor, machine.name(), "os-update.drain", "campaign " + id + ": launchctl disable"
                                + (loaded ? " and bootout" : "") + " system/" + label + (loaded ? "" : " (was not loaded)"), AuditEvent.Outcome.SUCCESS));
                    }
                    if (!anyLoaded) {
                        store.recordServiceWasLoaded(id, machine.name(), false);
                    }
                } catch (SshException | IOException e) {
                    store.setMachine(id, machine.name(), "failed", Optional.empty(), Optional.empty(), "could not stop the inference service: " + e.getMessage(),
                            "make " + machine.name() + " reachable over SSH, then `macfleet os-update resume " + id + "`", clock.instant());
                    store.failCluster(id, cluster, ClusterStep.DRAINING, "draining failed on " + machine.name() + "; the cluster is down for maintenance",
                            clock.instant());
                    audit.record(new AuditEvent(clock.instant(), actor, machine.name(), "os-update.drain", "campaign " + id + ": " + e.getMessage(),
                            AuditEvent.Outcome.FAILURE));
                    return;
                }
            }
        }
        store.setClusterStep(id, cluster, ClusterStep.UPDATING, clock.instant());
        boundary.reached(id, "updating " + cluster);
    }

    private Outcome update(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, UpdateMethod method, String actor, String owner) {
        store.restartPhaseClocks(id, cluster, clock.instant());
        for (CampaignStore.MachineRow row : store.machines(id, cluster)) {
            if (row.phase().equals("done") || row.phase().equals("failed") || row.startState().equals("sent")) {
                continue;
            }
            Machine machine = machines.get(row.machine());
            store.setStartState(id, row.machine(), "sending", clock.instant());
            boundary.reached(id, "sending " + row.machine());
            StartResult started = method.start(machine, target);
            for (StartResult.Action action : started.actions()) {
                audit.record(new AuditEvent(clock.instant(), actor, row.machine(), "os-update.send", "campaign " + id + ": " + action.kind() + " "
                        + action.subject() + (action.changed() ? " (changed)" : " (unchanged: already there)"), AuditEvent.Outcome.SUCCESS));
            }
            store.recordSent(id, row.machine(), started.actions(), clock.instant());
            if (started.failure().isPresent()) {
                failMachine(id, cluster, row.machine(), "could not start the update: " + started.failure().get(), actor);
            } else {
                store.setMachine(id, row.machine(), "waiting", Optional.empty(), Optional.empty(), "update sent via " + method.name(), null, clock.instant());
            }
            boundary.reached(id, "sent " + row.machine());
        }
        while (true) {
            if (paused(id)) {
                return Outcome.PAUSED;
            }
            store.heartbeat(id, owner, clock.instant());
            List<CampaignStore.MachineRow> active = store.machines(id, cluster).stream()
                    .filter(row -> !row.phase().equals("done") && !row.phase().equals("failed")).toList();
            if (active.isEmpty()) {
                break;
            }
            for (CampaignStore.MachineRow row : active) {
                watch(id, cluster, machines.get(row.machine()), row, target, method, actor);
            }
            sleep(options.pollInterval());
        }
        List<String> failed = store.machines(id, cluster).stream().filter(row -> row.phase().equals("failed")).map(CampaignStore.MachineRow::machine).toList();
        if (!failed.isEmpty()) {
            store.failCluster(id, cluster, ClusterStep.UPDATING, "the update failed on " + String.join(", ", failed) + "; the other machines were not rolled"
                    + " back (macOS cannot be) and the cluster stays down for maintenance. Fix each failed machine as shown, then `macfleet os-update resume "
                    + id + "`", clock.instant());
            boundary.reached(id, "update-failed " + cluster);
            return Outcome.FAILED;
        }
        store.setClusterStep(id, cluster, ClusterStep.VERIFYING, clock.instant());
        boundary.reached(id, "verifying " + cluster);
        return Outcome.DONE;
    }

    private void watch(long id, String cluster, Machine machine, CampaignStore.MachineRow row, OsUpdateTarget target, UpdateMethod method, String actor) {
        UpdateProgress progress;
        try {
            progress = method.progress(machine, target);
        } catch (RuntimeException e) {
            progress = UpdateProgress.unknown("progress could not be read: " + e.getMessage());
        }
        switch (progress.phase()) {
            case FAILED -> {
                failMachine(id, cluster, row.machine(), progress.failure().orElse(progress.detail()), actor);
                return;
            }
            case DONE -> {
                store.setMachine(id, row.machine(), "done", progress.osVersion(), progress.buildVersion(), progress.detail(), null, clock.instant());
                return;
            }
            case UNKNOWN -> store.setMachine(id, row.machine(), row.phase(), Optional.empty(), Optional.empty(), progress.detail(), null, clock.instant());
            default -> store.setMachine(id, row.machine(), progress.phase().wire(), progress.osVersion(), progress.buildVersion(), progress.detail(), null,
                    clock.instant());
        }
        String phase = progress.phase() == UpdateProgress.Phase.UNKNOWN ? row.phase() : progress.phase().wire();
        if (phase.equals(row.phase()) || (phase.equals("waiting") && row.phase().equals("checked"))) {
            Duration slot = options.deadlines().of(phase);
            if (row.phaseSince() != null && clock.instant().isAfter(row.phaseSince().plus(slot))) {
                boolean reachable;
                try (NodeShell shell = shell(actor)) {
                    reachable = shell.reachable(machine);
                }
                String what = phase.equals("waiting")
                        ? "did not start the update within " + human(slot) + " of it being sent (last seen: " + progress.detail() + ")"
                        : "stayed '" + phase + "' longer than " + human(slot) + " (last seen: " + progress.detail() + ")";
                String why = reachable ? "" : "; it does not answer over SSH: it is probably off or asleep";
                failMachine(id, cluster, row.machine(), what + why, actor, reachable ? null
                        : "power " + row.machine() + " on (a Mac that missed its install time installs about an hour after it starts again), then"
                        + " `macfleet os-update resume " + id + "`");
            }
        }
    }

    private void failMachine(long id, String cluster, String machine, String reason, String actor) {
        failMachine(id, cluster, machine, reason, actor, null);
    }

    private void failMachine(long id, String cluster, String machine, String reason, String actor, String fix) {
        String what = fix != null ? fix : fixFor(id, cluster, machine, reason);
        store.setMachine(id, machine, "failed", Optional.empty(), Optional.empty(), reason, what, clock.instant());
        audit.record(new AuditEvent(clock.instant(), actor, machine, "os-update.machine", "campaign " + id + ": failed: " + reason, AuditEvent.Outcome.FAILURE));
    }

    static String fixFor(long id, String cluster, String machine, String reason) {
        String resume = "then `macfleet os-update resume " + id + "`";
        String lower = reason.toLowerCase(java.util.Locale.ROOT);
        if (lower.contains("bootstrap token")) {
            return "escrow the bootstrap token on " + machine + " (macfleet provision " + cluster + " --machine " + machine + " --playbook bootstrap-token), " + resume;
        }
        if (lower.contains("disk")) {
            return "free disk space on " + machine + " (df -h /), " + resume;
        }
        if (lower.contains("download")) {
            return "check that " + machine + " reaches Apple's update servers (network, proxy, content caching), " + resume;
        }
        if (lower.contains("build")) {
            return machine + " runs another build than the target: resume sends the exact target again (" + resume.substring(5)
                    + "); if Apple no longer offers that build, plan a new campaign with --build set to the build Software Update offers";
        }
        return "look at " + machine + " (Software Update's log: log show --last 1h --predicate 'process == \"softwareupdated\"'), " + resume;
    }

    private void verify(long id, String cluster, Map<String, Machine> machines, OsUpdateTarget target, String actor) {
        FactsService.Gathering gathering = facts.gather(List.copyOf(machines.values()), options.ssh());
        List<String> failed = new ArrayList<>();
        Map<String, MachineFacts> observed = new LinkedHashMap<>();
        Map<String, Boolean> rdmaBefore = new java.util.HashMap<>();
        store.machines(id, cluster).forEach(row -> rdmaBefore.put(row.machine(), Boolean.TRUE.equals(row.rdmaBefore())));
        for (MachineResult<MachineFacts> result : gathering.results()) {
            if (!result.succeeded()) {
                failed.add(result.machine());
                failMachine(id, cluster, result.machine(), "not readable over SSH after the update: " + result.describe(), actor,
                        "make " + result.machine() + " reachable, then `macfleet os-update resume " + id + "`");
                continue;
            }
            MachineFacts fact = result.value();
            observed.put(result.machine(), fact);
            String on = fact.macosVersion() + " (" + fact.macosBuild() + ")";
            if (!fact.macosVersion().equals(target.osVersion()) || (target.buildVersion().isPresent() && !target.buildVersion().get().equals(fact.macosBuild()))) {
                failed.add(result.machine());
                failMachine(id, cluster, result.machine(), "sw_vers says " + on + ", not the target " + describe(target), actor);
            } else if (rdmaBefore.getOrDefault(result.machine(), false) && !fact.rdmaEnabled()) {
                failed.add(result.machine());
                failMachine(id, cluster, result.machine(), "RDMA is no longer enabled after the update (rdma_ctl status)", actor,
                        "enable RDMA in Recovery (macfleet provision " + cluster + " --machine " + result.machine() + " --playbook rdma-enable), then"
                                + " `macfleet os-update resume " + id + "`");
            }
        }
        if (target.buildVersion().isEmpty() && observed.values().stream().map(MachineFacts::macosBuild).distinct().count() > 1) {
            String builds = observed.entrySet().stream().map(entry -> entry.getKey() + " " + entry.getValue().macosBuild()).collect(Collectors.joining(", "));
            for (String machine : observed.keySet()) {
                if (!failed.contains(machine)) {
                    failed.add(machine);
                    failMachine(id, cluster, machine, "the cluster's nodes run different builds (" + builds + "); RDMA needs one build", actor,
                            "plan a campaign with --build set to one build for all nodes");
                }
            }
        }
        List<String> cablingErrors = failed.isEmpty() ? cablingErrors(cluster, false) : List.of();
        if (!failed.isEmpty() || !cablingErrors.isEmpty()) {
            store.failCluster(id, cluster, ClusterStep.VERIFYING, (failed.isEmpty() ? "" : "verification failed on " + String.join(", ", failed) + ". ")
                    + (cablingErrors.isEmpty() ? "" : "The cabling check fails after the update: " + String.join("; ", cablingErrors) + ". ")
                    + "The cluster stays down for maintenance; fix it, then `macfleet os-update resume " + id + "`", clock.instant());
            audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.verify", "campaign " + id + ": " + cluster + " failed verification",
                    AuditEvent.Outcome.FAILURE));
            boundary.reached(id, "verify-failed " + cluster);
            return;
        }
        for (Map.Entry<String, MachineFacts> entry : observed.entrySet()) {
            store.setMachine(id, entry.getKey(), "done", Optional.of(entry.getValue().macosVersion()), Optional.of(entry.getValue().macosBuild()),
                    "verified: sw_vers " + entry.getValue().macosVersion() + " (" + entry.getValue().macosBuild() + ")"
                            + (entry.getValue().rdmaEnabled() ? ", RDMA enabled" : ""), null, clock.instant());
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.verify", "campaign " + id + ": " + cluster + " on " + describe(target)
                + ", cabling check passed", AuditEvent.Outcome.SUCCESS));
        store.setClusterStep(id, cluster, ClusterStep.UNDRAINING, clock.instant());
        boundary.reached(id, "undraining " + cluster);
    }

    private void undrain(CampaignStore.Campaign campaign, String cluster, Map<String, Machine> machines, String actor) {
        long id = campaign.id();
        Map<String, Boolean> wasLoaded = new java.util.HashMap<>();
        store.machines(id, cluster).forEach(row -> wasLoaded.put(row.machine(), Boolean.TRUE.equals(row.serviceWasLoaded())));
        List<String> labels = serviceLabels(campaign, cluster);
        try (NodeShell shell = shell(actor)) {
            // Label by label in the runtime's start order (llama.cpp: every rpc-server before the head that connects to them).
            for (String label : labels) {
            for (Machine machine : machines.values()) {
                try {
                    // A runtime with several daemons has only some of them on each Mac: load those whose plist is there.
                    boolean load = wasLoaded.get(machine.name()) && (labels.size() == 1 || shell.execute(machine,
                            io.macfleet.ssh.Command.reading("test", "-f", io.macfleet.deployment.LaunchDaemon.DAEMON_DIRECTORY + label + ".plist")).succeeded());
                    shell.start(machine, label, load);
                    audit.record(new AuditEvent(clock.instant(), actor, machine.name(), "os-update.undrain", "campaign " + id + ": launchctl enable"
                            + (load ? " and bootstrap" : "") + " system/" + label, AuditEvent.Outcome.SUCCESS));
                } catch (SshException | IOException e) {
                    store.failCluster(id, cluster, ClusterStep.UNDRAINING, "could not start the inference service again on " + machine.name() + ": "
                            + e.getMessage() + "; fix it, then `macfleet os-update resume " + id + "`", clock.instant());
                    return;
                }
            }
            }
        }
        store.leaveMaintenance(cluster, id);
        store.setClusterStep(id, cluster, ClusterStep.DONE, clock.instant());
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.cluster", "campaign " + id + ": " + cluster + " updated to "
                + describe(campaign.target()) + " and back in service", AuditEvent.Outcome.SUCCESS));
        boundary.reached(id, "done " + cluster);
    }

    // ---- helpers

    /**
     * The daemons a drain stops and an undrain starts, in start order: the campaign's label when one was given, else
     * those of the cluster's inference runtime (the bundled node: its one daemon).
     */
    private List<String> serviceLabels(CampaignStore.Campaign campaign, String cluster) {
        if (!campaign.serviceLabel().equals(DEFAULT_SERVICE_LABEL)) {
            return List.of(campaign.serviceLabel());
        }
        return desiredState.cluster(cluster).map(io.macfleet.inventory.Cluster::inference)
                .flatMap(inference -> io.macfleet.runtime.InferenceRuntimes.standard().find(inference.runtime()))
                .map(io.macfleet.runtime.InferenceRuntime::startOrder).orElse(List.of(campaign.serviceLabel()));
    }

    private Map<String, PreflightResult> preflightAll(UpdateMethod method, List<Machine> machines, OsUpdateTarget target) {
        java.time.Instant started = clock.instant();
        Map<String, PreflightResult> results = new ConcurrentHashMap<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Machine machine : machines) {
                threads.submit(() -> {
                    PreflightResult result;
                    try {
                        result = method.preflight(machine, target);
                    } catch (RuntimeException e) {
                        result = new PreflightResult(machine.name(), Optional.empty(), Optional.empty(), List.of(new PreflightFinding(machine.name(),
                                PreflightFinding.Check.OTHER, "preflight could not run: " + e.getMessage(), "fix the cause, then plan again")));
                    }
                    results.put(machine.name(), result);
                });
            }
        }
        // The cabling check and "RDMA before" that follow read stored facts. The mdm method's preflight has just
        // gathered them; the ssh method's has not, and a campaign must not judge the cabling by facts from last week
        // (or by none): the machines without facts from this preflight are gathered now.
        List<Machine> unread = machines.stream().filter(machine -> facts.latest(machine.name())
                .map(observation -> observation.facts().observedAt().isBefore(started)).orElse(true)).toList();
        if (!unread.isEmpty()) {
            facts.gather(unread, options.ssh());
        }
        Map<String, PreflightResult> ordered = new LinkedHashMap<>();
        machines.forEach(machine -> ordered.put(machine.name(), results.get(machine.name())));
        return ordered;
    }

    /**
     * The cabling check's errors. Before the update a macOS version that is not the cluster's target is what the
     * campaign is about to fix, so it does not block it; after the update it does.
     */
    private List<String> cablingErrors(String cluster, boolean beforeUpdate) {
        try {
            CablingReport report = cabling.cluster(cluster, Map.of()).check();
            return report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR)
                    .filter(finding -> !(beforeUpdate && finding.fixedByOsUpdate()))
                    .map(finding -> finding.code() + ": " + finding.message()).toList();
        } catch (RuntimeException e) {
            return List.of("cabling check could not run: " + e.getMessage());
        }
    }

    /** The campaign's machines of a cluster from the applied inventory, or null when one is gone or moved. */
    private Map<String, Machine> machinesOf(long id, String cluster) {
        Map<String, Machine> machines = new LinkedHashMap<>();
        for (CampaignStore.MachineRow row : store.machines(id, cluster)) {
            Optional<Machine> machine = desiredState.machine(row.machine());
            if (machine.isEmpty() || !cluster.equals(machine.get().cluster())) {
                return null;
            }
            machines.put(row.machine(), machine.get());
        }
        return machines;
    }

    private record Resolved(UpdateMethod method, OsUpdateTarget target, Map<String, List<Machine>> machines) {
    }

    private Resolved resolve(Request request) {
        UpdateMethod method = methods.get(request.via());
        if (method == null) {
            throw new InvalidCampaignException("no update method '" + request.via() + "' (available: " + String.join(", ", methodNames()) + ")");
        }
        if (request.version() == null || request.version().isBlank()) {
            throw new InvalidCampaignException("--to VERSION is required (e.g. --to 26.2)");
        }
        if (request.clustersAtOnce() < 1) {
            throw new InvalidCampaignException("--clusters-at-once must be at least 1, was " + request.clustersAtOnce());
        }
        OsUpdateTarget target;
        try {
            target = new OsUpdateTarget(request.version(), request.build(), request.installBy().orElseGet(() -> LocalDateTime.now(clock.withZone(java.time.ZoneId.systemDefault()))));
        } catch (IllegalArgumentException e) {
            throw new InvalidCampaignException(e.getMessage());
        }
        List<String> names;
        if (request.all()) {
            if (!request.clusters().isEmpty()) {
                throw new InvalidCampaignException("give cluster names or --all, not both");
            }
            names = desiredState.clusters().stream().map(Cluster::name).sorted().toList();
            if (names.isEmpty()) {
                throw new InvalidCampaignException("the applied inventory has no clusters (macfleet inventory apply DIR first)");
            }
        } else {
            if (request.clusters().isEmpty()) {
                throw new InvalidCampaignException("name the clusters to update (CLUSTER...) or --all");
            }
            names = request.clusters().stream().distinct().toList();
        }
        Map<String, List<Machine>> machines = new LinkedHashMap<>();
        for (String name : names) {
            if (desiredState.cluster(name).isEmpty()) {
                throw new InvalidCampaignException("no cluster named '" + name + "' in the applied inventory (known: "
                        + desiredState.clusters().stream().map(Cluster::name).sorted().collect(Collectors.joining(", ")) + ")");
            }
            List<Machine> members = desiredState.machines(name);
            if (members.isEmpty()) {
                throw new InvalidCampaignException("cluster '" + name + "' has no machines in the applied inventory");
            }
            String wanted = desiredState.cluster(name).get().macosVersion();
            if (wanted != null && Versions.compare(wanted, target.osVersion()) != 0) {
                // Updating to another version than the inventory's would end in a verify (and drift) that expects the
                // inventory's: the cluster drained, the node stopped. The inventory, in its files, says what to run.
                throw new InvalidCampaignException("cluster '" + name + "' should run macOS " + wanted + " by the applied inventory, not "
                        + target.osVersion() + ": set its macosVersion to \"" + target.osVersion()
                        + "\" in the inventory and apply it (macfleet inventory apply DIR), then run the campaign");
            }
            machines.put(name, members);
        }
        return new Resolved(method, target, machines);
    }

    private void acquire(long id, String owner) {
        Optional<String> current = store.leaseOwner(id);
        String dead = current.filter(LeaseOwners::isDeadProcessOfThisHost).orElse(null);
        Instant now = clock.instant();
        if (!store.acquireLease(id, owner, now, now.minus(options.leaseTimeout()), dead)) {
            throw new CampaignConflictException("campaign " + id + " is being worked on by " + current.orElse("another process")
                    + "; wait for it, pause it, or let its lease go stale (" + human(options.leaseTimeout()) + ") if that process is gone");
        }
    }

    private boolean paused(long id) {
        return store.campaign(id).map(campaign -> campaign.status() == CampaignStatus.PAUSED).orElse(false);
    }

    private NodeShell shell(String actor) {
        SshSettings base = options.ssh();
        SshSettings settings = new SshSettings(base.acceptNewHostKeys(), base.limits(), base.parallelism(), actor, base.sudoAllowList(), base.environment());
        return new NodeShell(settings, hostKeys, audit, clock);
    }

    static String describe(OsUpdateTarget target) {
        return target.osVersion() + target.buildVersion().map(build -> " (" + build + ")").orElse("");
    }

    private static String human(Duration duration) {
        if (duration.toMillis() < 10_000) {
            return duration.toMillis() + " ms";
        }
        return duration.toMinutes() >= 1 ? duration.toMinutes() + " min" : duration.toSeconds() + " s";
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while watching the update", e);
        }
    }
}
