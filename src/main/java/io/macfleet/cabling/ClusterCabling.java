package io.macfleet.cabling;

import io.macfleet.facts.FactsGatherer;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.FactsParseException;
import io.macfleet.facts.FactsService;
import io.macfleet.facts.HardwarePortsParser;
import io.macfleet.facts.ThunderboltParser;
import io.macfleet.ssh.SshSettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Live mode: a cluster's planned topology from the applied inventory, its observed cabling from the stored
 * facts of its machines (the same command output the offline mode reads from files).
 */
@ApplicationScoped
public class ClusterCabling {

    /** A cluster as the check needs it: the plan, the facts of its machines, the target macOS version. */
    public record Cluster(PlannedTopology plan, List<MachineCablingFacts> facts, Optional<String> targetVersion) {
        public CablingReport check() {
            return CablingCheck.check(plan, facts, targetVersion);
        }
    }

    private final FactsService facts;

    @Inject
    public ClusterCabling(FactsService facts) {
        this.facts = facts;
    }

    /** The cluster's machines (coordinator first, then name order) and planned links from the inventory. */
    public PlannedTopology plan(String clusterName) {
        Map<String, Object> cluster = facts.cluster(clusterName).orElseThrow(() -> new FactsService.UnknownNameException(
                "no cluster named '" + clusterName + "' in the applied inventory (macfleet inventory apply DIR first)"));
        return plan(cluster, facts.select(clusterName, List.of()));
    }

    /**
     * The plan from a stored cluster document and its machines' stored documents, for callers that already read
     * them (the console reads every cluster and machine in one go).
     */
    public static PlannedTopology plan(Map<String, Object> cluster, List<Map<String, Object>> clusterMachines) {
        List<String> machines = rankOrder(clusterMachines);
        Map<?, ?> topology = cluster.get("topology") instanceof Map<?, ?> map ? map : Map.of();
        List<PlannedTopology.PlannedLink> links = new ArrayList<>();
        if (topology.get("links") instanceof List<?> listed) {
            for (Object link : listed) {
                links.add(CablingCommand.parseLink(String.valueOf(link)));
            }
        }
        PlannedTopology.Kind kind = "explicit".equals(topology.get("kind")) ? PlannedTopology.Kind.EXPLICIT : PlannedTopology.Kind.FULL_MESH;
        return new PlannedTopology(String.valueOf(cluster.get("name")), machines, kind, links);
    }

    /** Optionally gathers fresh facts of the cluster's machines first, then builds the cluster from the stored facts. */
    public Cluster cluster(String clusterName, Optional<SshSettings> refreshWith) {
        PlannedTopology plan = plan(clusterName);
        List<Map<String, Object>> machines = facts.select(clusterName, List.of());
        refreshWith.ifPresent(settings -> facts.gather(machines, settings));
        Map<String, FactsObservation> latest = facts.latest(plan.machines());
        List<MachineCablingFacts> cablingFacts = new ArrayList<>();
        for (Map<String, Object> machine : machines) {
            FactsObservation observation = latest.get(String.valueOf(machine.get("name")));
            if (observation != null) {
                cablingFacts.add(cablingFacts(observation, (String) machine.get("address")));
            }
        }
        String target = (String) facts.cluster(clusterName).map(cluster -> cluster.get("macosVersion")).orElse(null);
        return new Cluster(plan, cablingFacts, Optional.ofNullable(target));
    }

    /** What the cabling check reads, from one stored observation (parsed again from its command output). */
    public static MachineCablingFacts cablingFacts(FactsObservation observation, String managementAddress) {
        Map<String, String> outputs = observation.outputs();
        try {
            return new MachineCablingFacts(observation.machine(), Optional.ofNullable(managementAddress),
                    ThunderboltParser.parse(outputs.get(FactsGatherer.THUNDERBOLT.render())),
                    HardwarePortsParser.parse(outputs.get(FactsGatherer.HARDWARE_PORTS.render())),
                    Optional.of(observation.facts().rdmaEnabled()),
                    Optional.of(observation.facts().rdmaDevices()),
                    Optional.of(observation.facts().macosVersion()),
                    Optional.of(observation.facts().thunderboltBridgeActive()));
        } catch (FactsParseException | NullPointerException e) {
            throw new IllegalStateException("stored facts of " + observation.machine() + " lack readable Thunderbolt output: " + e.getMessage(), e);
        }
    }

    private static List<String> rankOrder(List<Map<String, Object>> machines) {
        return machines.stream()
                .sorted(Comparator.comparing((Map<String, Object> machine) -> !"coordinator".equals(machine.get("role")))
                        .thenComparing(machine -> String.valueOf(machine.get("name"))))
                .map(machine -> String.valueOf(machine.get("name")))
                .toList();
    }
}
