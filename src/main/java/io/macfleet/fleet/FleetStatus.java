package io.macfleet.fleet;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeService;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsStore;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.inventory.Inventory;
import io.macfleet.inventory.Machine;
import io.macfleet.facts.ObservationStore;
import io.macfleet.facts.Reachability;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunView;
import io.macfleet.supervision.ClusterObservation;
import io.macfleet.supervision.RankObservation;
import io.macfleet.supervision.SharedStatus;
import io.macfleet.supervision.SupervisionService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The state of the whole fleet as the console shows it: the applied inventory, the latest facts of every machine,
 * each cluster's cabling check and every machine's status columns. A handful of queries whatever the size of the
 * fleet: all machines, all clusters, the latest fact rows, and the documents of the rows not read before.
 */
@ApplicationScoped
public class FleetStatus {

    /** Past this many cached entries a cache starts over; far above a fleet's size, so only a leak guard. */
    private static final int CACHE_LIMIT = 5_000;

    /**
     * Everything one rendering needs, taken at one moment.
     *
     * @param columns the headings of the status columns, in the order of each row's cells
     */
    public record Fleet(Instant at, boolean inventoryApplied, List<ClusterSummary> clusters, List<MachineRow> machines,
                        List<String> columns, Inventory inventory, Map<String, FactsObservation> observations,
                        Map<String, CablingReport> cabling, Map<String, RunView.MachineProgress> provisioning) {

        /** Machines that are ready (reachable, facts fresh, no problem in any column): the count every view shows. */
        public long ready() {
            return machines.stream().filter(MachineRow::ready).count();
        }

        public Optional<MachineRow> machine(String name) {
            return machines.stream().filter(row -> row.name().equals(name)).findFirst();
        }

        public Optional<ClusterSummary> cluster(String name) {
            return clusters.stream().filter(cluster -> cluster.name().equals(name)).findFirst();
        }

        public long problems() {
            return machines.stream().filter(MachineRow::problem).count();
        }
    }

    /**
     * A cluster at a glance.
     *
     * @param cabling the check's verdict in a word or two
     * @param readiness whether it can run tensor parallelism over RDMA as cabled, and if not, what it can do
     */
    public record ClusterSummary(String name, String targetMacos, String topology, List<String> machines,
                                 long problemMachines, Status cabling, Status readiness, CablingReport report) {
        public int machineCount() {
            return machines.size();
        }
    }

    private final DesiredStateStore desiredState;
    private final FactsStore facts;
    private final Clock clock;
    private final Supplier<Map<String, RunView.MachineProgress>> provisioning;
    private final List<StatusColumn> columns;
    private final Map<Long, FactsObservation> observationsById = new ConcurrentHashMap<>();
    private final Map<String, CablingReport> reports = new ConcurrentHashMap<>();

    /** @param columns every {@link StatusColumn} bean, the built-in ones and any added */
    private Supplier<Map<String, Reachability>> reachability = Map::of;
    private Supplier<Nodes> nodes = () -> Nodes.NONE;

    @Inject
    public FleetStatus(FactsStore facts, DesiredStateStore desiredState, ProvisioningService provisioning, Instance<StatusColumn> columns,
                       ObservationStore reachability, NodeService nodes, SupervisionService supervision) {
        this(facts, desiredState, provisioning::latestPerMachine, Clock.systemUTC(), columns.stream().toList());
        this.reachability = reachability::all;
        this.nodes = () -> Nodes.of(nodes.deployments().latestPerCluster(), supervision.statuses());
    }

    /**
     * The inference nodes as the fleet view reads them, by cluster: the latest deployment (one query for the whole
     * fleet) and the supervisor's latest look at the ranks, whichever instance supervises the cluster (shared through
     * the database).
     *
     * @param observations the latest look at each cluster's ranks
     * @param statuses who made that look, whether it is stale, or that the stored status is unreadable; a cluster
     *                 missing here has its look presented as current
     */
    public record Nodes(Map<String, NodeDeploymentStore.Deployment> deployments, Map<String, ClusterObservation> observations,
                        Map<String, SharedStatus> statuses) {
        public static final Nodes NONE = new Nodes(Map.of(), Map.of());

        /** Looks presented as current, without who made them. */
        public Nodes(Map<String, NodeDeploymentStore.Deployment> deployments, Map<String, ClusterObservation> observations) {
            this(deployments, observations, Map.of());
        }

        public static Nodes of(Map<String, NodeDeploymentStore.Deployment> deployments, List<SharedStatus> statuses) {
            Map<String, ClusterObservation> observations = new LinkedHashMap<>();
            Map<String, SharedStatus> byCluster = new LinkedHashMap<>();
            for (SharedStatus status : statuses) {
                byCluster.put(status.cluster(), status);
                if (status instanceof SharedStatus.Observed observed) {
                    observations.put(observed.cluster(), observed.status().observation());
                }
            }
            return new Nodes(deployments, observations, byCluster);
        }

        /** The node on one machine of a cluster: its cluster's deployment and the rank the supervisor saw there. */
        MachineState.Node on(String machine, Optional<Cluster> cluster) {
            Optional<NodeDeploymentStore.Deployment> deployment = cluster.map(known -> deployments.get(known.name()));
            if (deployment.isEmpty()) {
                return MachineState.Node.NEVER_DEPLOYED;
            }
            Optional<ClusterObservation> observation = Optional.ofNullable(observations.get(cluster.get().name()));
            Optional<RankObservation> rank = observation.flatMap(seen -> seen.ranks().stream().filter(one -> one.machine().equals(machine)).findFirst());
            return new MachineState.Node(deployment, rank, rank.isPresent() ? observation.map(ClusterObservation::at) : Optional.empty(),
                    Optional.ofNullable(statuses.get(cluster.get().name())));
        }
    }

    /**
     * @param provisioning where every machine stands in the newest provisioning run that included it
     */
    public FleetStatus(FactsStore facts, DesiredStateStore desiredState, Supplier<Map<String, RunView.MachineProgress>> provisioning,
                       Clock clock, List<StatusColumn> columns) {
        this.facts = facts;
        this.desiredState = desiredState;
        this.provisioning = provisioning;
        this.clock = clock;
        this.columns = sorted(columns);
    }

    /** The columns in the order shown: by {@link StatusColumn#order()}, then by name. */
    public static List<StatusColumn> sorted(List<StatusColumn> columns) {
        return columns.stream().sorted(Comparator.comparingInt(StatusColumn::order).thenComparing(StatusColumn::name)).toList();
    }

    /** The whole fleet now: reads the stored state (a handful of queries), then builds the view from it. */
    public Fleet fleet() {
        Instant now = clock.instant();
        Inventory inventory = desiredState.inventory();
        Map<String, FactsStore.LatestRow> latestRows = facts.latestRows();
        Map<String, FactsObservation> observations = observations(latestRows);
        Map<String, RunView.MachineProgress> progress = provisioning.get();
        Map<String, Reachability> reached = reachability.get();
        Nodes node = nodes.get();
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        for (Cluster cluster : inventory.clusters()) {
            List<Machine> members = inventory.machinesOf(cluster.name());
            if (!members.isEmpty()) {
                cabling.put(cluster.name(), cabling(cluster, members, latestRows, reachableOnly(observations, reached)));
            }
        }
        return fleet(now, inventory, observations, cabling, progress, columns, reached, node);
    }

    /**
     * The view of the fleet as a pure function of its state: every machine's row with its status columns (problems
     * first) and every cluster's summary.
     *
     * @param cabling each cluster's cabling report (clusters without machines have none)
     * @param columns the status columns in the order shown
     */
    public static Fleet fleet(Instant now, Inventory inventory, Map<String, FactsObservation> observations, Map<String, CablingReport> cabling,
                              Map<String, RunView.MachineProgress> progress, List<StatusColumn> columns) {
        return fleet(now, inventory, observations, cabling, progress, columns, Map.of());
    }

    /** @param reachability each machine's record of being reached (machines never tried have none) */
    public static Fleet fleet(Instant now, Inventory inventory, Map<String, FactsObservation> observations, Map<String, CablingReport> cabling,
                              Map<String, RunView.MachineProgress> progress, List<StatusColumn> columns, Map<String, Reachability> reachability) {
        return fleet(now, inventory, observations, cabling, progress, columns, reachability, Nodes.NONE);
    }

    /** @param nodes the clusters' inference nodes (deployments and the supervisor's latest look) */
    public static Fleet fleet(Instant now, Inventory inventory, Map<String, FactsObservation> observations, Map<String, CablingReport> cabling,
                              Map<String, RunView.MachineProgress> progress, List<StatusColumn> columns, Map<String, Reachability> reachability,
                              Nodes nodes) {
        List<MachineRow> rows = new ArrayList<>();
        for (Machine machine : inventory.machines()) {
            Optional<Cluster> cluster = machine.cluster() == null ? Optional.empty() : inventory.cluster(machine.cluster());
            Optional<FactsObservation> observation = Optional.ofNullable(observations.get(machine.name()));
            Drift.Report drift = Drift.compare(machine, cluster.map(Cluster::macosVersion).orElse(null),
                    observation.map(FactsObservation::facts).orElse(null));
            MachineState state = new MachineState(machine, cluster, observation, drift,
                    cluster.map(Cluster::name).map(cabling::get), Optional.ofNullable(progress.get(machine.name())), now,
                    Optional.ofNullable(reachability.get(machine.name())),
                    nodes.on(machine.name(), cluster));
            rows.add(new MachineRow(machine.name(), machine.cluster(), machine.address(), machine.role().yamlName(),
                    columns.stream().map(column -> {
                        Status cell = column.cell(state);
                        return new MachineRow.Cell(column.name(), column.title(), cell, column.blocksReadiness(cell));
                    }).toList()));
        }
        rows.sort(MachineRow.PROBLEMS_FIRST);

        Map<String, List<MachineRow>> rowsByCluster = rows.stream().filter(row -> row.cluster() != null)
                .collect(Collectors.groupingBy(MachineRow::cluster));
        List<ClusterSummary> clusters = new ArrayList<>();
        for (Cluster cluster : inventory.clusters()) {
            String name = cluster.name();
            List<MachineRow> members = rowsByCluster.getOrDefault(name, List.of());
            CablingReport report = cabling.get(name);
            clusters.add(new ClusterSummary(name, cluster.macosVersion(), cluster.topology().kind().yamlName(),
                    report == null ? List.of() : report.machines(), members.stream().filter(MachineRow::problem).count(),
                    verdict(report), serving(Optional.ofNullable(nodes.statuses().get(name))).orElseGet(() -> readiness(report, members)), report));
        }
        clusters.sort(Comparator.comparing((ClusterSummary cluster) -> cluster.problemMachines() == 0 && !cluster.cabling().isProblem())
                .thenComparing(ClusterSummary::name));
        return new Fleet(now, !inventory.clusters().isEmpty() || !inventory.machines().isEmpty(), clusters, rows,
                columns.stream().map(StatusColumn::name).toList(), inventory, observations, cabling, progress);
    }

    /** As after a gathering of every machine: nothing derived from facts is known yet (benchmarks measure that case). */
    public void forgetCaches() {
        observationsById.clear();
        reports.clear();
    }

    private Map<String, FactsObservation> observations(Map<String, FactsStore.LatestRow> latestRows) {
        List<Long> missing = latestRows.values().stream().map(FactsStore.LatestRow::id).filter(id -> !observationsById.containsKey(id)).toList();
        if (!missing.isEmpty()) {
            if (observationsById.size() + missing.size() > CACHE_LIMIT) {
                observationsById.clear();
            }
            observationsById.putAll(facts.observations(missing));
        }
        Map<String, FactsObservation> observations = new LinkedHashMap<>();
        latestRows.forEach((machine, row) -> {
            FactsObservation observation = observationsById.get(row.id());
            if (observation != null) {
                observations.put(machine, observation);
            }
        });
        return observations;
    }

    /**
     * The check from stored facts, through the one cabling path ({@link ClusterCabling#cluster(Cluster, List, Map,
     * ClusterCabling.Unreadable)}); the same cluster and the same fact rows give the same report, so it is kept.
     */
    private CablingReport cabling(Cluster cluster, List<Machine> members, Map<String, FactsStore.LatestRow> latestRows,
                                  Map<String, FactsObservation> observations) {
        StringBuilder key = new StringBuilder().append(cluster);
        for (Machine machine : members) {
            FactsStore.LatestRow row = latestRows.get(machine.name());
            key.append('|').append(machine.name()).append('@').append(machine.address()).append('/').append(machine.role())
                    .append('=').append(row == null || !observations.containsKey(machine.name()) ? "none" : row.id());
        }
        if (reports.size() > CACHE_LIMIT) {
            reports.clear();
        }
        // Facts without readable Thunderbolt output count as missing for the check (it reports them so).
        return reports.computeIfAbsent(key.toString(), ignored ->
                ClusterCabling.cluster(cluster, members, observations, ClusterCabling.Unreadable.COUNT_AS_MISSING).check());
    }

    /**
     * The observations the cabling check may use: not those of machines that do not answer now, whose cables are
     * unknown (the check then says so) rather than judged from facts that may no longer hold.
     */
    private static Map<String, FactsObservation> reachableOnly(Map<String, FactsObservation> observations, Map<String, Reachability> reached) {
        Map<String, FactsObservation> usable = new LinkedHashMap<>(observations);
        reached.values().stream().filter(reachability -> !reachability.reachable()).forEach(reachability -> usable.remove(reachability.machine()));
        return usable;
    }

    private static Status verdict(CablingReport report) {
        if (report == null) {
            return Status.none("no machines", "the cluster has no machines in the inventory");
        }
        long errors = report.count(Finding.Severity.ERROR);
        long warnings = report.count(Finding.Severity.WARNING);
        if (errors > 0) {
            return Status.problem(errors + (errors == 1 ? " error" : " errors"), report.verdict());
        }
        if (warnings > 0) {
            return Status.warning("passed, " + warnings + (warnings == 1 ? " warning" : " warnings"), report.verdict());
        }
        return Status.ok("passed", report.verdict());
    }

    /**
     * "not serving" whenever the supervision page says so (a current, readable status whose cluster does not serve):
     * a cluster whose endpoint answers 503 is never "ready for tensor parallelism", whatever its machines and cables.
     */
    static Optional<Status> serving(Optional<SharedStatus> supervision) {
        if (supervision.isPresent() && supervision.get() instanceof SharedStatus.Observed observed && !observed.stale()
                && !observed.status().serving()) {
            return Optional.of(Status.problem("not serving", "the supervision says: " + observed.status().diagnosis().explain()));
        }
        return Optional.empty();
    }

    /** Ready for tensor parallelism: every member ready (the one notion of a ready machine) and the cabling a passing full mesh. */
    private static Status readiness(CablingReport report, List<MachineRow> members) {
        if (report == null) {
            return Status.none("no machines", "");
        }
        List<String> notReady = members.stream().filter(row -> !row.ready()).map(MachineRow::name).toList();
        if (!notReady.isEmpty()) {
            return Status.problem("not ready", notReady.size() + " of " + members.size() + " machines not ready: " + String.join(", ", notReady));
        }
        if (report.passed() && report.fullMesh()) {
            return Status.ok("ready for tensor parallelism", report.verdict());
        }
        return Status.problem("not ready", report.verdict());
    }
}
