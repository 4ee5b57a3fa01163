package io.macfleet.supervision;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.macfleet.audit.AuditEvent;
import io.macfleet.audit.JdbcAuditLog;
import io.macfleet.config.MacfleetConfig;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeLayout;
import io.macfleet.deployment.NodeService;
import io.macfleet.deployment.RankTarget;
import io.macfleet.lease.LeaseOwners;
import io.macfleet.lease.Leases;
import io.macfleet.ssh.Command;
import io.macfleet.ssh.JdbcHostKeyStore;
import io.macfleet.ssh.SshSettings;
import io.macfleet.ssh.SshTarget;
import io.macfleet.ssh.SshTransport;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * The supervision loop inside {@code macfleet serve}: every {@code macfleet.supervision.interval}, each cluster of
 * the applied inventory that has a model is looked at (only those whose lease this instance holds), and the
 * supervisor acts. Events go to the audit log, alerts also to the webhook; the latest status of each cluster goes to
 * the database, so that every instance's console and API show the same (see {@link SharedStatuses}), and to
 * {@code /q/metrics} of the supervising instance.
 */
@ApplicationScoped
public class SupervisionService {

    private static final Logger LOG = Logger.getLogger(SupervisionService.class);
    static final String ACTOR = "service:supervise";

    private final MacfleetConfig.Supervision settings;
    private final DesiredStateStore desiredState;
    private final NodeService nodes;
    private final JdbcAuditLog audit;
    private final JdbcHostKeyStore hostKeys;
    private final MeterRegistry registry;
    private final Leases leases;
    private final ClusterSupervisor supervisor;
    private final SharedStatuses shared;
    /** When this service first saw each cluster/rank/pid: the uptime it can vouch for (launchctl print has no start time). */
    private final Map<String, java.time.Instant> pidSeen = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<ClusterStatus>> gauges = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<RankObservation>> rankGauges = new ConcurrentHashMap<>();
    private final HttpClient webhookClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    /** The SSH shell of the round in progress, which the probes use. */
    private volatile MachineShell roundShell;
    /** Each cluster's machines as the latest round found them: an action opens its own shell on them. */
    private final Map<String, Map<String, SshTarget>> clusterTargets = new ConcurrentHashMap<>();
    /** Restarts and reboots run here, a virtual thread each, so that one cluster's reboot does not hold up the others' looks. */
    private final java.util.concurrent.ExecutorService actions = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
    private final SupervisionLoop loop;
    private final Instance<MaintenanceWindows> maintenance;
    /** Each rank's API key for its /metrics (the node serves /metrics behind the key it serves the API with). */
    private final Map<URI, String> metricsKeys = new ConcurrentHashMap<>();

    @Inject
    public SupervisionService(MacfleetConfig config, DesiredStateStore desiredState, NodeService nodes, JdbcAuditLog audit,
                              JdbcHostKeyStore hostKeys, MeterRegistry registry, Instance<Leases> leases,
                              Instance<MaintenanceWindows> maintenance, SupervisionStatusStore statusStore) {
        this.settings = config.supervision();
        // One holder id per instance, in the lease code's form (PID@HOST/RANDOM): two instances on one host differ.
        this.shared = new SharedStatuses(statusStore, LeaseOwners.next(), settings.interval(), Clock.systemUTC());
        this.maintenance = maintenance;
        this.nodes = nodes;
        this.desiredState = desiredState;
        this.audit = audit;
        this.hostKeys = hostKeys;
        this.registry = registry;
        // The embedded H2 database serves one instance, which holds every lease (Leases' contract); PostgreSQL
        // deployments get the database-backed implementation when it is present.
        this.leases = leases.isResolvable() ? leases.get() : new SingleInstanceLeases();
        this.supervisor = new ClusterSupervisor(new ClusterSupervisor.Settings(settings.restartAfter(), settings.backoff(),
                settings.maximumBackoff(), settings.attempts()), new ControlOnOwnShell(), this::record, Clock.systemUTC(), actions);
        // Probes run on the SSH shell of the round in progress; the loop keeps its leases across rounds.
        MachineShell probeShell = (machine, command, timeout) -> {
            MachineShell shell = roundShell;
            if (shell == null) {
                throw new IOException("no supervision round in progress");
            }
            return shell.run(machine, command, timeout);
        };
        this.loop = new SupervisionLoop(this.leases, new NodeProbe(probeShell, Duration.ofSeconds(3), settings.rdmaTimeout(),
                Clock.systemUTC(), rank -> Optional.ofNullable(metricsKeys.get(rank))), supervisor);
    }

    /**
     * The SSH transport of the rounds' looks (launchctl, the node's log, rdma_ctl, ibv_devinfo every few seconds): read-only
     * polling, so only its failures are audited ({@link io.macfleet.audit.PollingAudit}). Actions (restarts, reboots,
     * an operator's restart or log) run on transports that audit every command.
     */
    static SshTransport pollingTransport(io.macfleet.ssh.HostKeyStore hostKeys, io.macfleet.audit.AuditLog audit) {
        return new SshTransport(SshSettings.defaults(ACTOR), hostKeys, io.macfleet.audit.PollingAudit.failuresOnly(audit));
    }

    @Scheduled(every = "{macfleet.supervision.interval}", delayed = "10s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void tick() {
        if (!settings.enabled() || !shutdownGate.enter()) {
            return;
        }
        try {
            tickInGate();
        } finally {
            shutdownGate.leave();
        }
    }

    /** Stopping: no round starts any more, and the stop waits for the one under way (its database still open). */
    void stopping(@jakarta.enterprise.event.Observes(notifyObserver = jakarta.enterprise.event.Reception.IF_EXISTS) io.quarkus.runtime.ShutdownEvent event) {
        shutdownGate.stop(Duration.ofSeconds(10));
    }

    private final io.macfleet.lifecycle.ShutdownGate shutdownGate = new io.macfleet.lifecycle.ShutdownGate();

    private void tickInGate() {
        try {
            round();
        } catch (RuntimeException e) {
            LOG.warnf("supervision round failed: %s", e.toString());
        }
        try {
            superviseRuntimes();
        } catch (RuntimeException e) {
            LOG.warnf("supervision of the runtimes failed: %s", e.toString());
        }
    }

    private final Map<String, io.macfleet.runtime.RuntimeSupervisor> runtimeSupervisors = new ConcurrentHashMap<>();
    private final Map<String, io.macfleet.lease.Leases.Lease> runtimeLeases = new ConcurrentHashMap<>();

    /**
     * The clusters served by a runtime other than the bundled node (llama.cpp): one {@link io.macfleet.runtime.RuntimeSupervisor}
     * each, under the cluster's supervision lease, skipped while down for maintenance. Restarts and alerts go to the audit
     * log ({@code node.supervise.restart}, {@code node.supervise.alert}); alerts also to the log.
     */
    synchronized void superviseRuntimes() {
        for (Cluster cluster : desiredState.clusters()) {
            if (cluster.inference() == null || io.macfleet.inventory.InferenceSettings.BUNDLED.equals(cluster.inference().runtime())
                    || maintenanceReason(cluster.name()).isPresent()) {
                continue;
            }
            Optional<io.macfleet.runtime.InferenceRuntime> runtime = io.macfleet.runtime.InferenceRuntimes.standard().find(cluster.inference().runtime());
            io.macfleet.lease.Leases.Lease lease = runtimeLeases.get(cluster.name());
            if (lease == null || !lease.held()) {
                lease = leases.tryAcquire(SupervisionLoop.leaseKey(cluster.name())).orElse(null);
                if (lease == null) {
                    runtimeLeases.remove(cluster.name());
                    continue;
                }
                runtimeLeases.put(cluster.name(), lease);
            }
            if (runtime.isEmpty()) {
                continue;
            }
            try {
                List<SshTarget> machines = nodes.ranks(cluster.name()).stream().map(RankTarget::ssh).toList();
                io.macfleet.runtime.RuntimeSupervisor supervisor = runtimeSupervisors.computeIfAbsent(cluster.name(),
                        name -> new io.macfleet.runtime.RuntimeSupervisor(name, runtime.get(), machines, Duration.ofSeconds(60), Clock.systemUTC(),
                                cluster.supervision().rebootOnRdmaFailure()));
                try (io.macfleet.ssh.SshRun run = pollingTransport(hostKeys, audit).openRun()) {
                    io.macfleet.runtime.RuntimeSupervisor.Decision decision = supervisor.round(run);
                    remember(cluster, supervisor, decision);
                    switch (decision) {
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.Restarted restarted -> audit.record(new io.macfleet.audit.AuditEvent(
                                java.time.Instant.now(), ACTOR, cluster.name(), "node.supervise.restart", "ordered restart (" + restarted.reason() + "): "
                                + String.join(", ", restarted.order()), io.macfleet.audit.AuditEvent.Outcome.SUCCESS));
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.Alert alert when !alert.raisedNow() -> {
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.Alert alert -> {
                            LOG.warn(alert.message());
                            audit.record(new io.macfleet.audit.AuditEvent(java.time.Instant.now(), ACTOR, cluster.name(), "node.supervise.alert",
                                    alert.message(), io.macfleet.audit.AuditEvent.Outcome.FAILURE));
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.RdmaFailure rdma when rdma.rebootNow() -> {
                            LOG.warn(rdma.message());
                            audit.record(new io.macfleet.audit.AuditEvent(java.time.Instant.now(), ACTOR, cluster.name(), "node.supervise.reboot",
                                    rdma.message(), io.macfleet.audit.AuditEvent.Outcome.SUCCESS));
                            rebootRuntimeCluster(cluster.name(), supervisor, machines);
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.RdmaFailure rdma -> {
                            LOG.warn(rdma.message());
                            audit.record(new io.macfleet.audit.AuditEvent(java.time.Instant.now(), ACTOR, cluster.name(), "node.supervise.alert",
                                    rdma.message(), io.macfleet.audit.AuditEvent.Outcome.FAILURE));
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.Recovering recovering -> {
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.Serving serving -> {
                        }
                        case io.macfleet.runtime.RuntimeSupervisor.Decision.NotDeployed notDeployed -> {
                        }
                    }
                }
            } catch (RuntimeException e) {
                LOG.debugf("cluster %s (%s) cannot be supervised: %s", cluster.name(), cluster.inference().runtime(), e.getMessage());
            }
        }
        runtimeSupervisors.keySet().removeIf(name -> desiredState.cluster(name).isEmpty());
        runtimeLooks.keySet().removeIf(name -> desiredState.cluster(name).isEmpty());
    }

    private final Map<String, RuntimeLook> runtimeLooks = new ConcurrentHashMap<>();

    /** The latest look at each cluster served by another runtime than the bundled node, by this instance's supervisor. */
    public List<RuntimeLook> runtimeLooks() {
        return runtimeLooks.values().stream().filter(look -> desiredState.cluster(look.cluster()).isPresent())
                .sorted(java.util.Comparator.comparing(RuntimeLook::cluster)).toList();
    }

    private void remember(Cluster cluster, io.macfleet.runtime.RuntimeSupervisor supervisor, io.macfleet.runtime.RuntimeSupervisor.Decision decision) {
        String state = switch (decision) {
            case io.macfleet.runtime.RuntimeSupervisor.Decision.Serving serving -> "serving";
            case io.macfleet.runtime.RuntimeSupervisor.Decision.Restarted restarted -> "ordered restart (" + restarted.reason() + "): "
                    + String.join(", ", restarted.order());
            case io.macfleet.runtime.RuntimeSupervisor.Decision.Alert alert -> "not serving; alert open";
            case io.macfleet.runtime.RuntimeSupervisor.Decision.NotDeployed notDeployed -> "not deployed";
            case io.macfleet.runtime.RuntimeSupervisor.Decision.RdmaFailure rdma -> "RDMA failure: " + String.join("; ", rdma.evidence());
            case io.macfleet.runtime.RuntimeSupervisor.Decision.Recovering recovering -> recovering.what();
        };
        Optional<String> acting = decision instanceof io.macfleet.runtime.RuntimeSupervisor.Decision.Recovering recovering
                ? Optional.of(recovering.what()) : decision instanceof io.macfleet.runtime.RuntimeSupervisor.Decision.RdmaFailure rdma && rdma.rebootNow()
                ? Optional.of("coordinated reboot") : Optional.empty();
        String endpoint = "-";
        try {
            RankTarget head = nodes.ranks(cluster.name()).getFirst();
            endpoint = "http://" + head.managementAddress() + ":" + cluster.inference().port() + "/v1";
        } catch (RuntimeException noRanks) {
            // Shown as "-".
        }
        runtimeLooks.put(cluster.name(), new RuntimeLook(cluster.name(), cluster.inference().runtime(), endpoint, java.time.Instant.now(),
                decision instanceof io.macfleet.runtime.RuntimeSupervisor.Decision.Serving, state, supervisor.alert(), acting, supervisor.lastLook()));
    }

    /**
     * The coordinated reboot an RDMA failure of a runtime cluster asked for, on an action thread (it takes minutes; the
     * supervisor answers "recovering" meanwhile), audited as {@code node.supervise.reboot}.
     */
    private void rebootRuntimeCluster(String cluster, io.macfleet.runtime.RuntimeSupervisor supervisor, List<SshTarget> machines) {
        List<io.macfleet.runtime.RuntimeSupervisor.Daemon> order = supervisor.rebootOrder();
        Map<String, SshTarget> targets = new LinkedHashMap<>();
        machines.forEach(machine -> targets.put(machine.machine(), machine));
        actions.submit(() -> {
            try (SshMachineShell shell = new SshMachineShell(new SshTransport(SshSettings.defaults(ACTOR), hostKeys, audit), targets)) {
                RuntimeRdmaReboot.run(cluster, order, shell, Duration.ofSeconds(30), settings.rebootTimeout());
                supervisor.rebooted(Optional.empty());
                audit.record(new AuditEvent(java.time.Instant.now(), ACTOR, cluster, "node.supervise.reboot",
                        "every Mac rebooted, RDMA verified, daemons started in order", AuditEvent.Outcome.SUCCESS));
            } catch (IOException | RuntimeException e) {
                supervisor.rebooted(Optional.of(e.getMessage()));
                audit.record(new AuditEvent(java.time.Instant.now(), ACTOR, cluster, "node.supervise.reboot",
                        "the coordinated reboot failed: " + e.getMessage(), AuditEvent.Outcome.FAILURE));
            }
        });
    }

    /** Why the cluster is down on purpose now, from every {@link MaintenanceWindows} bean, or empty. */
    Optional<String> maintenanceReason(String cluster) {
        for (MaintenanceWindows windows : maintenance) {
            Optional<String> reason = windows.reason(cluster);
            if (reason.isPresent()) {
                return reason;
            }
        }
        return Optional.empty();
    }

    /** One round over every deployed cluster (except those down for maintenance); returns what this instance saw. */
    public synchronized List<ClusterStatus> round() {
        Map<String, SshTarget> targets = new LinkedHashMap<>();
        List<SupervisedCluster> clusters = new ArrayList<>();
        // Clusters whose stored status stays (those down for maintenance or not supervisable now included).
        Set<String> deployedClusters = new HashSet<>();
        java.time.Instant deployedAsOf = java.time.Instant.now();
        for (Cluster cluster : desiredState.clusters()) {
            if (cluster.inference() != null && !io.macfleet.inventory.InferenceSettings.BUNDLED.equals(cluster.inference().runtime())) {
                // Served by another runtime: superviseRuntimes() looks at it.
                continue;
            }
            // Only what a deployment finished: while one runs (or was left half way), the deployer owns the daemons.
            boolean deployed = nodes.deployments().latest(cluster.name()).map(NodeDeploymentStore.Deployment::finished).orElse(false);
            if (!deployed) {
                continue;
            }
            deployedClusters.add(cluster.name());
            Optional<String> downOnPurpose = maintenanceReason(cluster.name());
            if (downOnPurpose.isPresent()) {
                // Drained on purpose (an OS update): its ranks stay down until the work that drained it starts them.
                LOG.debugf("cluster %s is down for maintenance (%s): not supervised", cluster.name(), downOnPurpose.get());
                continue;
            }
            try {
                List<RankTarget> ranks = nodes.ranks(cluster.name());
                Map<String, SshTarget> machines = new LinkedHashMap<>();
                ranks.forEach(rank -> machines.put(rank.machine(), rank.ssh()));
                targets.putAll(machines);
                clusterTargets.put(cluster.name(), machines);
                clusters.add(supervised(cluster, ranks));
            } catch (RuntimeException e) {
                LOG.debugf("cluster %s cannot be supervised: %s", cluster.name(), e.getMessage());
            }
        }
        try (SshMachineShell shell = new SshMachineShell(pollingTransport(hostKeys, audit), targets)) {
            roundShell = shell;
            List<ClusterStatus> seen = loop.round(clusters);
            Map<String, Map<Integer, java.time.Instant>> processSince = new HashMap<>();
            seen.forEach(status -> {
                for (RankObservation rank : status.observation().ranks()) {
                    String prefix = status.name() + "/" + rank.rank() + "/";
                    String current = prefix + rank.pid().map(String::valueOf).orElse("");
                    // Only the rank's current process is remembered: an earlier pid's start is no one's uptime.
                    pidSeen.keySet().removeIf(key -> key.startsWith(prefix) && !key.equals(current));
                    rank.pid().ifPresent(pid -> processSince.computeIfAbsent(status.name(), name -> new HashMap<>())
                            .put(rank.rank(), pidSeen.computeIfAbsent(current, key -> status.observation().at())));
                }
                gauges(status.name()).set(status);
                status.observation().ranks().forEach(rank -> rankGauges(status.name(), rank).set(rank));
            });
            shared.afterRound(seen, processSince, deployedClusters, deployedAsOf);
            clusterTargets.keySet().removeIf(name -> clusters.stream().noneMatch(cluster -> cluster.name().equals(name)));
            return seen;
        } finally {
            roundShell = null;
        }
    }

    /**
     * The latest status of every deployed cluster, by name, whichever instance supervises it: this instance's own look
     * where it holds the lease, the supervising instance's stored look otherwise (stale when that is too old).
     */
    public List<SharedStatus> statuses() {
        return shared.all();
    }

    /** The open alerts, one sentence per cluster, for the console banner (a stale one says when it was last seen). */
    public List<String> alerts() {
        List<String> alerts = statuses().stream().filter(SharedStatus.Observed.class::isInstance).map(SharedStatus.Observed.class::cast)
                .filter(observed -> observed.status().alert().isPresent())
                .map(observed -> observed.cluster() + ": " + observed.status().alert().get() + (observed.stale() ? " (" + observed.lastSeen() + ")" : ""))
                .collect(java.util.stream.Collectors.toCollection(ArrayList::new));
        runtimeLooks().stream().filter(look -> look.alert().isPresent()).forEach(look -> alerts.add(look.cluster() + ": "
                + look.alert().get().replaceFirst("^cluster " + java.util.regex.Pattern.quote(look.cluster()) + ": ", "")));
        return alerts;
    }

    /** An operator restarts a cluster: every rank in order; the supervisor's count starts afresh. */
    public void restart(String clusterName, String actor) throws IOException {
        Cluster cluster = desiredState.cluster(clusterName).orElseThrow(() -> new java.util.NoSuchElementException(
                "no cluster named '" + clusterName + "' in the applied inventory"));
        List<RankTarget> ranks = nodes.ranks(clusterName);
        SupervisedCluster supervised = supervised(cluster, ranks);
        Map<String, SshTarget> targets = new LinkedHashMap<>();
        ranks.forEach(rank -> targets.put(rank.machine(), rank.ssh()));
        try (SshMachineShell shell = new SshMachineShell(new SshTransport(SshSettings.defaults(actor), hostKeys, audit), targets)) {
            new ShellNodeControl(shell, Duration.ofSeconds(30), settings.rebootTimeout()).restartInOrder(supervised);
        }
        supervisor.operatorRestarted(clusterName);
        audit.record(new AuditEvent(java.time.Instant.now(), actor, null, SupervisionEvent.Kind.OPERATOR_RESTART.auditAction(),
                "cluster " + clusterName + ": every rank restarted in order", AuditEvent.Outcome.SUCCESS));
    }

    /** The last lines of a rank's node log (operators read it from the console). */
    public String log(String clusterName, int rank, int lines, String actor) throws IOException {
        Cluster cluster = desiredState.cluster(clusterName).orElseThrow(() -> new java.util.NoSuchElementException(
                "no cluster named '" + clusterName + "' in the applied inventory"));
        List<RankTarget> ranks = nodes.ranks(clusterName);
        SupervisedCluster supervised = supervised(cluster, ranks);
        if (rank < 0 || rank >= supervised.ranks().size()) {
            throw new java.util.NoSuchElementException("cluster " + clusterName + " has ranks 0.." + (supervised.ranks().size() - 1) + ", not " + rank);
        }
        SupervisedCluster.Rank target = supervised.ranks().get(rank);
        try (SshMachineShell shell = new SshMachineShell(new SshTransport(SshSettings.defaults(actor), hostKeys, audit),
                Map.of(target.machine(), ranks.get(rank).ssh()))) {
            return shell.run(target.machine(), Command.reading("tail", "-n", Integer.toString(Math.clamp(lines, 1, 2000)), target.logPath()),
                    Duration.ofSeconds(15)).stdout();
        }
    }

    /** The ranks of a cluster as the deployment lays them out (rank order, addresses, HTTP ports, daemon and log). */
    SupervisedCluster supervised(Cluster cluster, List<RankTarget> ranks) {
        List<SupervisedCluster.Rank> supervised = new ArrayList<>();
        for (RankTarget rank : ranks) {
            supervised.add(new SupervisedCluster.Rank(rank.rank(), rank.machine(),
                    URI.create("http://" + rank.managementAddress() + ":" + rank.httpPort() + "/"), NodeLayout.LABEL, NodeLayout.errorLog()));
        }
        try {
            String key = java.nio.file.Files.readString(nodes.keys(cluster.name()).apiKeyFile()).strip();
            supervised.forEach(rank -> metricsKeys.put(rank.node(), key));
        } catch (IOException | RuntimeException noKey) {
            // metrics are for display: the look goes on without them
        }
        RankTarget first = ranks.getFirst();
        return new SupervisedCluster(cluster.name(), URI.create("http://" + first.managementAddress() + ":" + first.httpPort() + "/v1"),
                new SupervisedCluster.Policy(cluster.supervision().rebootOnRdmaFailure()), supervised);
    }

    private void record(SupervisionEvent event) {
        audit.record(new AuditEvent(event.at(), ACTOR, null, event.kind().auditAction(), "cluster " + event.cluster() + ": " + event.detail(),
                event.kind().alert() ? AuditEvent.Outcome.FAILURE : AuditEvent.Outcome.SUCCESS));
        if (event.kind().alert()) {
            LOG.warnf("cluster %s: %s", event.cluster(), event.detail());
            registry.counter("macfleet_node_supervision_alerts_total", Tags.of("cluster", event.cluster(), "kind",
                    event.kind().name().toLowerCase(java.util.Locale.ROOT))).increment();
            settings.webhook().ifPresent(url -> post(url, event));
        }
    }

    private void post(String url, SupervisionEvent event) {
        try {
            Map<String, String> body = new LinkedHashMap<>();
            body.put("cluster", event.cluster());
            body.put("kind", event.kind().name().toLowerCase(java.util.Locale.ROOT));
            body.put("detail", event.detail());
            body.put("at", event.at().toString());
            HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build();
            webhookClient.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
                if (error != null || response.statusCode() >= 300) {
                    LOG.warnf("alert webhook for cluster %s failed: %s", event.cluster(),
                            error != null ? error.toString() : "HTTP " + response.statusCode());
                }
            });
        } catch (IOException | IllegalArgumentException e) {
            LOG.warnf("alert webhook for cluster %s not sent: %s", event.cluster(), e.getMessage());
        }
    }

    /** Gauges per cluster and rank on /q/metrics, read from the latest status. */
    private AtomicReference<ClusterStatus> gauges(String cluster) {
        return gauges.computeIfAbsent(cluster, name -> {
            AtomicReference<ClusterStatus> holder = new AtomicReference<>();
            Tags tags = Tags.of("cluster", name);
            registry.gauge("macfleet_node_cluster_serving", tags, holder, h -> h.get() != null && h.get().serving() ? 1 : 0);
            registry.gauge("macfleet_node_cluster_alert", tags, holder, h -> h.get() != null && h.get().alert().isPresent() ? 1 : 0);
            registry.gauge("macfleet_node_cluster_restarts", tags, holder, h -> h.get() == null ? 0 : h.get().restarts());
            registry.gauge("macfleet_node_cluster_tokens_per_second", tags, holder, h -> rank0(h).flatMap(r ->
                    r.tokensPerSecond().isPresent() ? Optional.of(r.tokensPerSecond().getAsDouble()) : Optional.empty()).orElse(Double.NaN));
            registry.gauge("macfleet_node_cluster_time_to_first_token_seconds", tags, holder, h -> rank0(h).flatMap(r ->
                    r.timeToFirstTokenSeconds().isPresent() ? Optional.of(r.timeToFirstTokenSeconds().getAsDouble()) : Optional.empty()).orElse(Double.NaN));
            registry.gauge("macfleet_node_cluster_ranks_serving", tags, holder, h -> h.get() == null ? 0
                    : h.get().observation().ranks().stream().filter(r -> r.health() == RankObservation.Health.SERVING).count());
            return holder;
        });
    }

    /** Gauges per rank: serving, launchd's run count, decode tokens/s and time to first token. */
    private AtomicReference<RankObservation> rankGauges(String cluster, RankObservation rank) {
        return rankGauges.computeIfAbsent(cluster + "/" + rank.rank(), key -> {
            AtomicReference<RankObservation> holder = new AtomicReference<>();
            Tags tags = Tags.of("cluster", cluster, "rank", Integer.toString(rank.rank()), "machine", rank.machine());
            registry.gauge("macfleet_node_rank_serving", tags, holder, h -> h.get() != null && h.get().health() == RankObservation.Health.SERVING ? 1 : 0);
            registry.gauge("macfleet_node_rank_runs", tags, holder, h -> h.get() == null ? Double.NaN : h.get().runs().map(Integer::doubleValue).orElse(Double.NaN));
            // 1 when the rank's RDMA is healthy, 0 when it is switched on but broken (the rank then runs over TCP or fails);
            // NaN when RDMA is not in use there.
            registry.gauge("macfleet_node_rank_rdma_healthy", tags, holder, h -> h.get() == null || h.get().rdma() == RankObservation.Rdma.NOT_IN_USE
                    || h.get().rdma() == RankObservation.Rdma.UNKNOWN ? Double.NaN : h.get().rdma() == RankObservation.Rdma.HEALTHY ? 1 : 0);
            registry.gauge("macfleet_node_rank_tokens_per_second", tags, holder, h -> h.get() == null || h.get().tokensPerSecond().isEmpty()
                    ? Double.NaN : h.get().tokensPerSecond().getAsDouble());
            registry.gauge("macfleet_node_rank_time_to_first_token_seconds", tags, holder, h -> h.get() == null
                    || h.get().timeToFirstTokenSeconds().isEmpty() ? Double.NaN : h.get().timeToFirstTokenSeconds().getAsDouble());
            return holder;
        });
    }

    private static Optional<RankObservation> rank0(AtomicReference<ClusterStatus> holder) {
        ClusterStatus status = holder.get();
        return status == null ? Optional.empty() : status.observation().ranks().stream().filter(r -> r.rank() == 0).findFirst();
    }

    @PreDestroy
    void close() {
        loop.close();
        // An action cut short here is not repeated by this instance; the next holder of the lease looks afresh.
        actions.shutdownNow();
    }

    /**
     * The supervisor's actions, each on an SSH shell of its own over the cluster's machines: an action outlives the
     * round that ordered it (a coordinated reboot takes minutes), and the round's shell closes with the round.
     */
    private final class ControlOnOwnShell implements ClusterSupervisor.Control {
        private SshMachineShell shell(SupervisedCluster cluster) throws IOException {
            Map<String, SshTarget> machines = clusterTargets.get(cluster.name());
            if (machines == null) {
                throw new IOException("cluster " + cluster.name() + " has no machines in the applied inventory");
            }
            return new SshMachineShell(new SshTransport(SshSettings.defaults(ACTOR), hostKeys, audit), machines);
        }

        @Override
        public void restartInOrder(SupervisedCluster cluster) throws IOException {
            try (SshMachineShell shell = shell(cluster)) {
                new ShellNodeControl(shell, Duration.ofSeconds(30), settings.rebootTimeout()).restartInOrder(cluster);
            }
        }

        @Override
        public void rebootVerifyAndStart(SupervisedCluster cluster) throws IOException {
            try (SshMachineShell shell = shell(cluster)) {
                new ShellNodeControl(shell, Duration.ofSeconds(30), settings.rebootTimeout()).rebootVerifyAndStart(cluster);
            }
        }
    }

    /** Every lease is this instance's: the embedded database serves one {@code macfleet serve}. */
    private static final class SingleInstanceLeases implements Leases {
        @Override
        public Optional<Lease> tryAcquire(String key) {
            return Optional.of(new Lease() {
                @Override
                public String key() {
                    return key;
                }

                @Override
                public boolean held() {
                    return true;
                }

                @Override
                public void close() {
                }
            });
        }
    }
}
