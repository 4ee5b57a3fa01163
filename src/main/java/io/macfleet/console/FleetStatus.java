package io.macfleet.console;

import io.macfleet.cabling.CablingCheck;
import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.Finding;
import io.macfleet.cabling.MachineCablingFacts;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.facts.Drift;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsStore;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunView;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import io.macfleet.config.MacfleetConfig;

/**
 * The state of the whole fleet as the console shows it: the applied inventory, the latest facts of every machine,
 * each cluster's cabling check and every machine's status columns. A handful of queries whatever the size of the
 * fleet: all machines, all clusters, the latest fact rows, and the documents of the rows not read before.
 */
@ApplicationScoped
public class FleetStatus {

    /** Past this many cached entries a cache starts over; far above a fleet's size, so only a leak guard. */
    private static final int CACHE_LIMIT = 5_000;

    /** Everything one rendering needs, taken at one moment. */
    public record Fleet(Instant at, boolean inventoryApplied, List<ClusterSummary> clusters, List<MachineRow> machines,
                        Map<String, Map<String, Object>> machineDocuments, Map<String, FactsObservation> observations,
                        Map<String, CablingReport> cabling, Map<String, RunView.MachineProgress> provisioning) {

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
    private final Duration staleAfter;
    private final Supplier<Map<String, RunView.MachineProgress>> provisioning;
    private final Map<Long, FactsObservation> observationsById = new ConcurrentHashMap<>();
    private final Map<Long, Optional<MachineCablingFacts>> cablingFactsById = new ConcurrentHashMap<>();
    private final Map<String, CablingReport> reports = new ConcurrentHashMap<>();

    @Inject
    public FleetStatus(DataSource dataSource, DesiredStateStore desiredState, ProvisioningService provisioning,
                       MacfleetConfig config) {
        this(new FactsStore(dataSource), desiredState, provisioning::latestPerMachine, Clock.systemUTC(), config.console().factsStaleAfter());
    }

    /**
     * @param provisioning where every machine stands in the newest provisioning run that included it
     */
    public FleetStatus(FactsStore facts, DesiredStateStore desiredState, Supplier<Map<String, RunView.MachineProgress>> provisioning,
                       Clock clock, Duration staleAfter) {
        this.facts = facts;
        this.desiredState = desiredState;
        this.provisioning = provisioning;
        this.clock = clock;
        this.staleAfter = staleAfter;
    }

    public Fleet fleet() {
        Instant now = clock.instant();
        List<Map<String, Object>> clusterDocuments = desiredState.clusters();
        List<Map<String, Object>> machineDocuments = desiredState.machines(null);
        Map<String, FactsStore.LatestRow> latestRows = facts.latestRows();
        Map<String, FactsObservation> observations = observations(latestRows);
        Map<String, RunView.MachineProgress> progress = provisioning.get();

        Map<String, Map<String, Object>> machinesByName = new LinkedHashMap<>();
        machineDocuments.forEach(machine -> machinesByName.put(String.valueOf(machine.get("name")), machine));
        Map<String, List<Map<String, Object>>> machinesByCluster = new LinkedHashMap<>();
        for (Map<String, Object> machine : machineDocuments) {
            if (machine.get("cluster") != null) {
                machinesByCluster.computeIfAbsent(machine.get("cluster").toString(), key -> new ArrayList<>()).add(machine);
            }
        }
        Map<String, String> targets = new HashMap<>();
        Map<String, CablingReport> cabling = new LinkedHashMap<>();
        for (Map<String, Object> cluster : clusterDocuments) {
            String name = String.valueOf(cluster.get("name"));
            targets.put(name, (String) cluster.get("macosVersion"));
            List<Map<String, Object>> members = machinesByCluster.getOrDefault(name, List.of());
            if (!members.isEmpty()) {
                cabling.put(name, cabling(cluster, members, latestRows));
            }
        }

        List<MachineRow> rows = new ArrayList<>();
        for (Map<String, Object> machine : machineDocuments) {
            String name = String.valueOf(machine.get("name"));
            String cluster = machine.get("cluster") == null ? null : machine.get("cluster").toString();
            FactsObservation observation = observations.get(name);
            Drift.Report drift = Drift.compare(machine, cluster == null ? null : targets.get(cluster),
                    observation == null ? null : observation.facts());
            rows.add(new MachineRow(name, cluster, String.valueOf(machine.get("address")), String.valueOf(machine.getOrDefault("role", "worker")),
                    reachable(observation, now), macos(observation, drift, cluster == null ? null : targets.get(cluster)),
                    rdma(observation), cabling(name, cluster == null ? null : cabling.get(cluster)), drift(observation, drift),
                    provisioning(name, progress.get(name)), inference(name)));
        }
        rows.sort(MachineRow.PROBLEMS_FIRST);

        Map<String, List<MachineRow>> rowsByCluster = rows.stream().filter(row -> row.cluster() != null)
                .collect(Collectors.groupingBy(MachineRow::cluster));
        List<ClusterSummary> clusters = new ArrayList<>();
        for (Map<String, Object> cluster : clusterDocuments) {
            String name = String.valueOf(cluster.get("name"));
            List<MachineRow> members = rowsByCluster.getOrDefault(name, List.of());
            CablingReport report = cabling.get(name);
            Map<?, ?> topology = cluster.get("topology") instanceof Map<?, ?> map ? map : Map.of();
            clusters.add(new ClusterSummary(name, targets.get(name), topology.get("kind") == null ? "full-mesh" : String.valueOf(topology.get("kind")),
                    report == null ? List.of() : report.machines(), members.stream().filter(MachineRow::problem).count(),
                    verdict(report), readiness(report), report));
        }
        clusters.sort(Comparator.comparing((ClusterSummary cluster) -> cluster.problemMachines() == 0 && !cluster.cabling().isProblem())
                .thenComparing(ClusterSummary::name));
        return new Fleet(now, !clusterDocuments.isEmpty() || !machineDocuments.isEmpty(), clusters, rows, machinesByName, observations, cabling,
                progress);
    }

    /** As after a gathering of every machine: nothing derived from facts is known yet (benchmarks measure that case). */
    void forgetCaches() {
        observationsById.clear();
        cablingFactsById.clear();
        reports.clear();
    }

    private Map<String, FactsObservation> observations(Map<String, FactsStore.LatestRow> latestRows) {
        List<Long> missing = latestRows.values().stream().map(FactsStore.LatestRow::id).filter(id -> !observationsById.containsKey(id)).toList();
        if (!missing.isEmpty()) {
            if (observationsById.size() + missing.size() > CACHE_LIMIT) {
                observationsById.clear();
                cablingFactsById.clear();
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

    /** The check from stored facts; the same plan and the same fact rows give the same report, so it is kept. */
    private CablingReport cabling(Map<String, Object> cluster, List<Map<String, Object>> members, Map<String, FactsStore.LatestRow> latestRows) {
        PlannedTopology plan = ClusterCabling.plan(cluster, members);
        String target = (String) cluster.get("macosVersion");
        StringBuilder key = new StringBuilder().append(plan).append('|').append(target);
        for (Map<String, Object> machine : members) {
            FactsStore.LatestRow row = latestRows.get(String.valueOf(machine.get("name")));
            key.append('|').append(machine.get("name")).append('@').append(machine.get("address")).append('=').append(row == null ? "none" : row.id());
        }
        if (reports.size() > CACHE_LIMIT) {
            reports.clear();
        }
        return reports.computeIfAbsent(key.toString(), ignored -> {
            List<MachineCablingFacts> cablingFacts = new ArrayList<>();
            for (Map<String, Object> machine : members) {
                FactsStore.LatestRow row = latestRows.get(String.valueOf(machine.get("name")));
                FactsObservation observation = row == null ? null : observationsById.get(row.id());
                if (observation != null) {
                    cablingFactsById.computeIfAbsent(row.id(), id -> readable(observation, (String) machine.get("address")))
                            .ifPresent(cablingFacts::add);
                }
            }
            return CablingCheck.check(plan, cablingFacts, Optional.ofNullable(target));
        });
    }

    /** Facts without readable Thunderbolt output count as missing for the check (it reports them so). */
    private static Optional<MachineCablingFacts> readable(FactsObservation observation, String address) {
        try {
            return Optional.of(ClusterCabling.cablingFacts(observation, address));
        } catch (IllegalStateException e) {
            return Optional.empty();
        }
    }

    private Status reachable(FactsObservation observation, Instant now) {
        if (observation == null) {
            return Status.problem("never reached", "no facts gathered yet: run `macfleet facts` (or `macfleet cabling check CLUSTER --refresh`)");
        }
        Instant observedAt = observation.facts().observedAt();
        String age = Ages.ago(observedAt, now);
        if (Duration.between(observedAt, now).compareTo(staleAfter) > 0) {
            return Status.warning("last seen " + age, "the latest facts are from " + Ages.utc(observedAt)
                    + ", older than " + staleAfter.toMinutes() + " min: gather again to know whether it is still reachable");
        }
        return Status.ok("seen " + age, "answered over SSH at " + Ages.utc(observedAt));
    }

    private static Status macos(FactsObservation observation, Drift.Report drift, String target) {
        if (observation == null) {
            return Status.none("unknown", target == null ? "no facts yet" : "no facts yet; the cluster targets " + target);
        }
        String version = observation.facts().macosVersion();
        Optional<Drift.Difference> behind = drift.differences().stream().filter(difference -> difference.field().equals("macosVersion")).findFirst();
        if (behind.isPresent()) {
            return Status.problem(version + " \u2260 " + target, behind.get().message());
        }
        if (target == null) {
            return Status.none(version, "macOS " + version + " (" + observation.facts().macosBuild() + "); not in a cluster, so no target");
        }
        return Status.ok(version, "macOS " + version + " (" + observation.facts().macosBuild() + "), the cluster targets " + target);
    }

    private static Status rdma(FactsObservation observation) {
        if (observation == null) {
            return Status.none("unknown", "no facts yet");
        }
        if (observation.facts().rdmaEnabled()) {
            return Status.ok("enabled", "rdma_ctl status: enabled; devices " + String.join(", ", observation.facts().rdmaDevices()));
        }
        return Status.problem("disabled", "rdma_ctl status: disabled. Enable it in macOS Recovery: `rdma_ctl enable`, then restart");
    }

    private static Status cabling(String machine, CablingReport report) {
        if (report == null) {
            return Status.none("no cluster", "not in a cluster, so not checked");
        }
        List<Finding> own = report.findings().stream().filter(finding -> finding.machines().contains(machine)).toList();
        List<Finding> errors = own.stream().filter(finding -> finding.severity() == Finding.Severity.ERROR).toList();
        if (!errors.isEmpty()) {
            return Status.problem(codes(errors), errors.stream().map(Finding::message).collect(Collectors.joining(" ")));
        }
        if (!own.isEmpty()) {
            return Status.warning(codes(own), own.stream().map(Finding::message).collect(Collectors.joining(" ")));
        }
        if (!report.passed()) {
            return Status.warning("cluster fails", "this machine's cables are fine; the cluster's are not: " + report.verdict());
        }
        return Status.ok("passed", report.verdict());
    }

    private static String codes(List<Finding> findings) {
        return findings.stream().map(finding -> finding.code().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'))
                .distinct().collect(Collectors.joining(", "));
    }

    private static Status drift(FactsObservation observation, Drift.Report drift) {
        if (observation == null) {
            return Status.none("unknown", "no facts yet");
        }
        List<Drift.Difference> differences = drift.differences().stream().filter(difference -> !difference.field().equals("macosVersion")).toList();
        if (differences.isEmpty()) {
            return Status.ok("matches", "serial number, memory and model match the inventory (where it states them)");
        }
        return Status.problem(differences.stream().map(Drift.Difference::field).collect(Collectors.joining(", ")),
                differences.stream().map(Drift.Difference::message).collect(Collectors.joining(" ")));
    }

    /**
     * Where the machine stands in the newest run that included it. A machine waiting for a person counts as a problem:
     * someone has to go to it, so it belongs at the top of the overview.
     */
    static Status provisioning(String machine, RunView.MachineProgress progress) {
        if (progress == null) {
            return Status.none("not provisioned yet", "no provisioning run has included " + machine);
        }
        RunView.Step step = progress.currentStep();
        String run = "run " + progress.runId() + " (" + progress.playbook() + ")";
        String summary = step.summary() == null ? "" : ": " + step.summary().lines().findFirst().orElse("");
        return switch (progress.state()) {
            case "ready" -> Status.ok("ready", run + " finished every step on " + machine);
            case "failed" -> Status.problem("failed: " + step.step(), run + ", step " + step.step() + " failed" + summary);
            case "waiting-for-operator" -> Status.problem("waiting for a person: " + step.step(), run + ", step " + step.step()
                    + " needs someone at " + machine + summary);
            default -> Status.warning("in progress: " + step.step(), run + ", at step " + step.step() + " (" + step.status() + ")");
        };
    }

    /** Until the inference node is deployed by macfleet, there is nothing to report. */
    private static Status inference(String machine) {
        return Status.none("not deployed", "macfleet has not deployed the inference node to " + machine);
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

    private static Status readiness(CablingReport report) {
        if (report == null) {
            return Status.none("no machines", "");
        }
        if (report.passed() && report.fullMesh()) {
            return Status.ok("ready for tensor parallelism", report.verdict());
        }
        return Status.problem("not ready", report.verdict());
    }
}
