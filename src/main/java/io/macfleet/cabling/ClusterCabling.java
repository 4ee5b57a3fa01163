package io.macfleet.cabling;

import io.macfleet.facts.FactsGatheringException;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsService;
import io.macfleet.inventory.Machine;
import io.macfleet.ssh.SshSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Live mode: a cluster's planned topology from the applied inventory, its observed cabling from the stored
 * facts of its machines (the same command output the offline mode reads from files). {@link #cluster(io.macfleet.inventory.Cluster,
 * List, Map, Unreadable)} is the one path from the fleet state to a cabling report: the CLI, the REST API,
 * provisioning's cabling step and the console all build their reports through it.
 */
@ApplicationScoped
public class ClusterCabling {

    /**
     * A cluster as the check needs it: the plan, the facts of its machines, the target macOS version, and the machines
     * that did not answer a refresh just now, with why (their findings then say so instead of "gather facts").
     */
    public record Cluster(PlannedTopology plan, List<MachineCablingFacts> facts, Optional<String> targetVersion, Map<String, String> unanswered) {
        public Cluster {
            unanswered = Map.copyOf(unanswered);
        }

        public Cluster(PlannedTopology plan, List<MachineCablingFacts> facts, Optional<String> targetVersion) {
            this(plan, facts, targetVersion, Map.of());
        }

        public CablingReport check() {
            return CablingCheck.check(plan, facts, targetVersion, unanswered);
        }
    }

    /** What to do with stored facts whose Thunderbolt output cannot be read. */
    public enum Unreadable {
        /** Fail with an {@link IllegalStateException} naming the machine (a command asked for this cluster). */
        FAIL,
        /** Leave the machine out, so the check reports its facts as missing (a view of the whole fleet). */
        COUNT_AS_MISSING
    }

    private final FactsService facts;

    @Inject
    public ClusterCabling(FactsService facts) {
        this.facts = facts;
    }

    /** The cluster's machines (coordinator first, then name order) and planned links from the inventory. */
    public PlannedTopology plan(String clusterName) {
        return plan(known(clusterName), facts.select(clusterName, List.of()));
    }

    /** The plan from a cluster of the applied inventory and its machines. */
    public static PlannedTopology plan(io.macfleet.inventory.Cluster cluster, List<Machine> clusterMachines) {
        PlannedTopology.Kind kind = cluster.topology().kind() == io.macfleet.inventory.Topology.Kind.EXPLICIT
                ? PlannedTopology.Kind.EXPLICIT : PlannedTopology.Kind.FULL_MESH;
        return new PlannedTopology(cluster.name(), rankOrder(clusterMachines), kind, cluster.topology().links());
    }

    /** Optionally gathers fresh facts of the cluster's machines first, then builds the cluster from the stored facts. */
    public Cluster cluster(String clusterName, Optional<SshSettings> refreshWith) {
        io.macfleet.inventory.Cluster cluster = known(clusterName);
        List<Machine> machines = facts.select(clusterName, List.of());
        refreshWith.ifPresent(settings -> facts.gather(machines, settings));
        return cluster(cluster, machines, facts.latest(machines.stream().map(Machine::name).toList()), Unreadable.FAIL);
    }

    /**
     * A check asked to refresh: the cluster with the facts gathered now, and what the operator must know about the
     * machines that did not answer. Their stored facts are not used (a check on a machine that did not answer is
     * unknown, never a fix made up from old facts); each note names the machine, why, and how old its stored facts are.
     */
    public record Refreshed(Cluster cluster, List<String> notes) {
    }

    public Refreshed refreshed(String clusterName, SshSettings settings) {
        io.macfleet.inventory.Cluster cluster = known(clusterName);
        List<Machine> machines = facts.select(clusterName, List.of());
        FactsService.Gathering gathering = facts.gather(machines, settings);
        Map<String, FactsObservation> observations = new LinkedHashMap<>(facts.latest(machines.stream().map(Machine::name).toList()));
        List<String> notes = new ArrayList<>();
        Map<String, String> unanswered = new LinkedHashMap<>();
        java.time.Instant now = java.time.Instant.now();
        for (var result : gathering.results()) {
            if (result.succeeded()) {
                continue;
            }
            unanswered.put(result.machine(), result.describe());
            FactsObservation stale = observations.remove(result.machine());
            notes.add(result.machine() + " did not answer the refresh (" + result.describe() + "); "
                    + (stale == null ? "it has no stored facts"
                    : "its stored facts from " + stale.facts().observedAt() + " (" + age(stale.facts().observedAt(), now) + " old) were not used")
                    + ": its checks are unknown");
        }
        Cluster checked = cluster(cluster, machines, observations, Unreadable.FAIL);
        return new Refreshed(new Cluster(checked.plan(), checked.facts(), checked.targetVersion(), unanswered), notes);
    }

    private static String age(java.time.Instant then, java.time.Instant now) {
        long seconds = Math.max(0, java.time.Duration.between(then, now).toSeconds());
        return seconds < 120 ? seconds + " s" : seconds < 7200 ? seconds / 60 + " min" : seconds / 3600 + " h";
    }

    /**
     * The cluster from the stored facts, with fresher observations of some of its machines (gathered by the caller
     * just now) in place of the stored ones.
     */
    public Cluster cluster(String clusterName, Map<String, FactsObservation> fresher) {
        io.macfleet.inventory.Cluster cluster = known(clusterName);
        List<Machine> machines = facts.select(clusterName, List.of());
        Map<String, FactsObservation> observations = new LinkedHashMap<>(facts.latest(machines.stream().map(Machine::name).toList()));
        observations.putAll(fresher);
        return cluster(cluster, machines, observations, Unreadable.FAIL);
    }

    /**
     * The one path from the fleet state to what the check reads: the plan from the inventory, and the cabling facts of
     * each machine that has an observation. A pure function of its arguments.
     */
    public static Cluster cluster(io.macfleet.inventory.Cluster cluster, List<Machine> members, Map<String, FactsObservation> observations,
                                  Unreadable unreadable) {
        List<MachineCablingFacts> cablingFacts = new ArrayList<>();
        for (Machine machine : members) {
            FactsObservation observation = observations.get(machine.name());
            if (observation == null) {
                continue;
            }
            try {
                cablingFacts.add(cablingFacts(observation, machine.address()));
            } catch (IllegalStateException e) {
                if (unreadable == Unreadable.FAIL) {
                    throw e;
                }
            }
        }
        return new Cluster(plan(cluster, members), cablingFacts, Optional.ofNullable(cluster.macosVersion()));
    }

    /** What the cabling check reads, from one stored observation. */
    public static MachineCablingFacts cablingFacts(FactsObservation observation, String managementAddress) {
        try {
            return new MachineCablingFacts(observation.machine(), Optional.ofNullable(managementAddress),
                    observation.thunderbolt(), observation.hardwarePorts(),
                    Optional.of(observation.facts().rdmaEnabled()),
                    Optional.of(observation.facts().rdmaDevices()),
                    Optional.of(observation.facts().macosVersion()),
                    Optional.of(observation.facts().thunderboltBridgeActive()),
                    observation.rdmaPortStates());
        } catch (FactsGatheringException e) {
            throw new IllegalStateException("stored facts of " + observation.machine() + " lack readable Thunderbolt output: " + e.getMessage(), e);
        }
    }

    private io.macfleet.inventory.Cluster known(String clusterName) {
        return facts.cluster(clusterName).orElseThrow(() -> new FactsService.UnknownNameException(
                "no cluster named '" + clusterName + "' in the applied inventory (macfleet inventory apply DIR first)"));
    }

    private static List<String> rankOrder(List<Machine> machines) {
        return machines.stream()
                .sorted(Comparator.comparing((Machine machine) -> machine.role() != Machine.Role.COORDINATOR).thenComparing(Machine::name))
                .map(Machine::name)
                .toList();
    }
}
