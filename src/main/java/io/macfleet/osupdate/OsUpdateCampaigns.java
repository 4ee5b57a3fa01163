package io.macfleet.osupdate;

import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.AuditLog;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.command.CommandFailure;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Machine;
import io.macfleet.lease.LeaseOwners;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.SshSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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

    private final CampaignContext context;
    private final CampaignStore store;
    private final CampaignStateMachine states;
    private final AuditLog audit;
    private final Clock clock;
    private final StepBoundary boundary;
    private final CampaignPlanner planner;
    private final WaveExecutor waves;
    private final ExecutorService background = Executors.newVirtualThreadPerTaskExecutor();

    @Inject
    public OsUpdateCampaigns(DataSource dataSource, JdbcAuditLog audit, JdbcHostKeyStore hostKeys, DesiredStateStore desiredState, FactsService facts,
                             ClusterCabling cabling, @Any Instance<UpdateMethod> methods) {
        this(CampaignContext.of(new CampaignStore(dataSource), audit, hostKeys, desiredState, facts, cabling, Options.defaults("os-update"),
                Clock.systemUTC(), StepBoundary.NONE, PollPause.SLEEP), methods.stream().toList());
    }

    /** Wired by hand (tests and tools): every store on the one database. */
    public OsUpdateCampaigns(DataSource dataSource, DesiredStateStore desiredState, FactsService facts, ClusterCabling cabling, List<UpdateMethod> methods,
                             Options options) {
        this(dataSource, desiredState, facts, cabling, methods, options, StepBoundary.NONE);
    }

    OsUpdateCampaigns(DataSource dataSource, DesiredStateStore desiredState, FactsService facts, ClusterCabling cabling, List<UpdateMethod> methods,
                      Options options, StepBoundary boundary) {
        this(CampaignContext.of(new CampaignStore(dataSource), new JdbcAuditLog(dataSource), new JdbcHostKeyStore(dataSource), desiredState, facts,
                cabling, options, Clock.systemUTC(), boundary, PollPause.SLEEP), methods);
    }

    /** Everything given: a test's clock and pause. */
    OsUpdateCampaigns(CampaignContext context, List<UpdateMethod> methods) {
        this.context = context;
        this.store = context.store();
        this.states = context.states();
        this.audit = context.audit();
        this.clock = context.clock();
        this.boundary = context.boundary();
        Map<String, UpdateMethod> byName = new TreeMap<>();
        for (UpdateMethod method : methods) {
            byName.put(method.name(), method);
        }
        this.planner = new CampaignPlanner(context, byName);
        this.waves = new WaveExecutor(context, planner);
    }

    /** The update methods available, by name. */
    public List<String> methodNames() {
        return planner.methodNames();
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
        CampaignPlanner.Resolved resolved = planner.resolve(request);
        List<PlannedCluster> clusters = new ArrayList<>();
        for (Map.Entry<String, List<Machine>> cluster : resolved.machines().entrySet()) {
            Map<String, PreflightResult> results = planner.preflightAll(resolved.method(), cluster.getValue(), resolved.target());
            clusters.add(new PlannedCluster(cluster.getKey(), cluster.getValue().stream().map(machine -> results.get(machine.name())).toList(),
                    results.values().stream().allMatch(PreflightResult::passed) ? planner.cablingErrors(cluster.getKey(), true) : List.of()));
        }
        return new Plan(CampaignContext.describe(resolved.target()), resolved.method().name(), clusters);
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
        CampaignPlanner.Resolved resolved = planner.resolve(request);
        List<String> clusterNames = List.copyOf(resolved.machines().keySet());
        // A rerun of a campaign that failed takes it up again (as os-update resume does) rather than starting a new
        // one that fails the same way and leaves a trail of failed campaigns.
        Optional<CampaignView> failed = campaigns(200).stream()
                .filter(view -> view.clusters().stream().map(CampaignView.ClusterView::cluster).toList().equals(clusterNames))
                .findFirst()
                .filter(view -> view.state() == CampaignStatus.FAILED && view.targetVersion().equals(resolved.target().osVersion())
                        && view.targetBuild().equals(resolved.target().buildVersion()) && view.method().equals(resolved.method().name()));
        if (failed.isPresent()) {
            states.prepareResume(failed.get().id(), actor);
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
                + " to " + CampaignContext.describe(resolved.target()) + " via " + resolved.method().name() + ", install by " + resolved.target().targetLocalDateTime(),
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
            return waves.execute(campaign, actor, owner);
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
        states.prepareResume(id, actor);
        return run(id, actor);
    }

    /** {@link #resume} on a background thread. */
    public void resumeInBackground(long id, String actor) {
        states.prepareResume(id, actor);
        background.submit(() -> runQuietly(id, actor));
    }

    /** Asks the process working on the campaign to stop at its next check (Macs already installing carry on: macOS cannot be stopped). */
    public CampaignView pause(long id, String actor) {
        CampaignStore.Campaign campaign = store.campaign(id).orElseThrow(() -> new UnknownCampaignException(id));
        if (!states.campaign(id, CampaignStatus.RUNNING, CampaignStatus.PAUSED)) {
            throw new CampaignConflictException("campaign " + id + " is " + campaign.status().wire() + ": only a running campaign can be paused");
        }
        audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.pause", "campaign " + id + " paused", AuditEvent.Outcome.SUCCESS));
        return store.view(id).orElseThrow();
    }

    private void runQuietly(long id, String actor) {
        try {
            run(id, actor);
        } catch (RuntimeException e) {
            audit.record(new AuditEvent(clock.instant(), actor, null, "os-update.campaign", "campaign " + id + " stopped: " + e.getMessage(),
                    AuditEvent.Outcome.FAILURE));
        }
    }

    private void acquire(long id, String owner) {
        Optional<String> current = store.leaseOwner(id);
        String dead = current.filter(LeaseOwners::isDeadProcessOfThisHost).orElse(null);
        Instant now = clock.instant();
        if (!store.acquireLease(id, owner, now, now.minus(context.options().leaseTimeout()), dead)) {
            throw new CampaignConflictException("campaign " + id + " is being worked on by " + current.orElse("another process")
                    + "; wait for it, pause it, or let its lease go stale (" + CampaignContext.human(context.options().leaseTimeout()) + ") if that process is gone");
        }
    }

}
