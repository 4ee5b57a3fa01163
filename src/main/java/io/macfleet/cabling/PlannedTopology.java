package io.macfleet.cabling;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The cabling a cluster should have: every pair of machines (full mesh) or exactly the listed links
 * (explicit). In a full mesh, listed links pin the ports of those pairs.
 */
public record PlannedTopology(String cluster, List<String> machines, Kind kind, List<PlannedLink> links) {

    public enum Kind { FULL_MESH, EXPLICIT }

    /** A planned cable between two ports. */
    public record PlannedLink(PortReference first, PortReference second) {
        public boolean joins(String machineA, String machineB) {
            return (first.machine().equals(machineA) && second.machine().equals(machineB))
                    || (first.machine().equals(machineB) && second.machine().equals(machineA));
        }

        public PortReference endOf(String machine) {
            return first.machine().equals(machine) ? first : second;
        }

        @Override
        public String toString() {
            return first + " <-> " + second;
        }
    }

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

    public List<PlannedLink> linksBetween(String machineA, String machineB) {
        return links.stream().filter(link -> link.joins(machineA, machineB)).toList();
    }
}
