package io.macfleet.osupdate;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.Finding;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;
import io.macfleet.osupdate.OsUpdateCampaigns.InvalidCampaignException;
import io.macfleet.osupdate.OsUpdateCampaigns.Request;
import java.time.LocalDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * The read-only part of a campaign: what a request means (method, target, the clusters' machines, refused with a
 * clear message when it is wrong), each machine's preflight, and the cabling check. Changes nothing.
 */
final class CampaignPlanner {
    private final CampaignContext context;
    private final Map<String, UpdateMethod> methods;

    CampaignPlanner(CampaignContext context, Map<String, UpdateMethod> methods) {
        this.context = context;
        this.methods = new java.util.TreeMap<>(methods);
    }

    record Resolved(UpdateMethod method, OsUpdateTarget target, Map<String, List<Machine>> machines) {
    }

    List<String> methodNames() {
        return List.copyOf(methods.keySet());
    }

    Optional<UpdateMethod> method(String name) {
        return Optional.ofNullable(methods.get(name));
    }

    Resolved resolve(Request request) {
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
            target = new OsUpdateTarget(request.version(), request.build(), request.installBy().orElseGet(() -> LocalDateTime.now(context.clock().withZone(java.time.ZoneId.systemDefault()))));
        } catch (IllegalArgumentException e) {
            throw new InvalidCampaignException(e.getMessage());
        }
        List<String> names;
        if (request.all()) {
            if (!request.clusters().isEmpty()) {
                throw new InvalidCampaignException("give cluster names or --all, not both");
            }
            names = context.desiredState().clusters().stream().map(Cluster::name).sorted().toList();
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
            if (context.desiredState().cluster(name).isEmpty()) {
                throw new InvalidCampaignException("no cluster named '" + name + "' in the applied inventory (known: "
                        + context.desiredState().clusters().stream().map(Cluster::name).sorted().collect(Collectors.joining(", ")) + ")");
            }
            List<Machine> members = context.desiredState().machines(name);
            if (members.isEmpty()) {
                throw new InvalidCampaignException("cluster '" + name + "' has no machines in the applied inventory");
            }
            String wanted = context.desiredState().cluster(name).get().macosVersion();
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


    Map<String, PreflightResult> preflightAll(UpdateMethod method, List<Machine> machines, OsUpdateTarget target) {
        java.time.Instant started = context.clock().instant();
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
        List<Machine> unread = machines.stream().filter(machine -> context.facts().latest(machine.name())
                .map(observation -> observation.facts().observedAt().isBefore(started)).orElse(true)).toList();
        if (!unread.isEmpty()) {
            context.facts().gather(unread, context.options().ssh());
        }
        Map<String, PreflightResult> ordered = new LinkedHashMap<>();
        machines.forEach(machine -> ordered.put(machine.name(), results.get(machine.name())));
        return ordered;
    }

    /**
     * The cabling check's errors. Before the update a macOS version that is not the cluster's target is what the
     * campaign is about to fix, so it does not block it; after the update it does.
     */
    List<String> cablingErrors(String cluster, boolean beforeUpdate) {
        try {
            CablingReport report = context.cabling().cluster(cluster, Map.of()).check();
            return report.findings().stream().filter(finding -> finding.severity() == Finding.Severity.ERROR)
                    .filter(finding -> !(beforeUpdate && finding.fixedByOsUpdate()))
                    .map(finding -> finding.code() + ": " + finding.message()).toList();
        } catch (RuntimeException e) {
            return List.of("cabling check could not run: " + e.getMessage());
        }
    }

    /** The campaign's machines of a cluster from the applied inventory, or null when one is gone or moved. */
}
