package io.macfleet.cabling;

import io.macfleet.inventory.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The cabling a cluster should have: every pair of machines (full mesh) or exactly the listed links
 * (explicit). In a full mesh, listed links pin the ports of those pairs. The links are the inventory's own
 * {@link Topology.Link}s, parsed once by the inventory loader.
 */
public record PlannedTopology(String cluster, List<String> machines, Kind kind, List<Topology.Link> links) {

    public enum Kind { FULL_MESH, EXPLICIT }

    public PlannedTopology {
        Objects.requireNonNull(cluster, "cluster");
        machines = List.copyOf(machines);
        links = List.copyOf(links);
    }

    public static PlannedTopology fullMesh(String cluster, List<String> machines) {
        return new PlannedTopology(cluster, machines, Kind.FULL_MESH, List.of());
    }

    /** The pairs that must be cabled, in machine order. */
    public List<List<String>> requiredPairs() {
        List<List<String>> pairs = new ArrayList<>();
        for (int i = 0; i < machines.size(); i++) {
            for (int j = i + 1; j < machines.size(); j++) {
                String a = machines.get(i);
                String b = machines.get(j);
                if (kind == Kind.FULL_MESH || links.stream().anyMatch(link -> link.joins(a, b))) {
                    pairs.add(List.of(a, b));
                }
            }
        }
        return pairs;
    }

    /**
     * The cables to lay: with an explicit topology its links; with a full mesh the proposed port plan
     * ({@link PortPlan#fullMesh}) with the links the inventory pins used in place of the proposed ones.
     *
     * @throws IllegalArgumentException when no full mesh of these machines can be cabled (the message says why)
     */
    public List<Topology.Link> cables() {
        if (kind == Kind.EXPLICIT) {
            return links;
        }
        List<Topology.Link> cables = new ArrayList<>();
        for (Topology.Link cable : PortPlan.fullMesh(cluster, machines).cables()) {
            List<Topology.Link> pinned = linksBetween(cable.first().machine(), cable.second().machine());
            cables.add(pinned.isEmpty() ? cable : pinned.getFirst());
        }
        return cables;
    }

    public List<Topology.Link> linksBetween(String machineA, String machineB) {
        return links.stream().filter(link -> link.joins(machineA, machineB)).toList();
    }
}
