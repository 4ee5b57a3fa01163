package io.macfleet.cabling;

import io.macfleet.inventory.PortReference;
import io.macfleet.inventory.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A proposed port plan for a full mesh: which port on which machine goes to which port on which peer.
 * It uses a round-robin schedule (a 1-factorisation of the complete graph), so that every cable joins the
 * same port number on both machines, which is the easiest plan to cable and to check by eye.
 */
public record PortPlan(String cluster, List<String> machines, List<Topology.Link> cables) {

    /**
     * Ports of a Mac Studio with Thunderbolt 5 that can carry RDMA: all six but port 1, the one next to the
     * Ethernet port (its interface is en2; see {@link MachineCablingFacts#portCarriesRdma(int)}).
     */
    public static final List<Integer> MAC_STUDIO_RDMA_PORTS = List.of(2, 3, 4, 5, 6);

    public PortPlan {
        machines = List.copyOf(machines);
        cables = List.copyOf(cables);
    }

    public static PortPlan fullMesh(String cluster, List<String> machines) {
        return fullMesh(cluster, machines, MAC_STUDIO_RDMA_PORTS);
    }

    public static PortPlan fullMesh(String cluster, List<String> machines, List<Integer> usablePorts) {
        int count = machines.size();
        int rounds = count % 2 == 0 ? count - 1 : count;
        if (count < 2) {
            throw new IllegalArgumentException("a mesh needs at least 2 machines, cluster " + cluster + " has " + count);
        }
        if (rounds > usablePorts.size()) {
            throw new IllegalArgumentException("a full mesh of " + count + " machines needs " + (count - 1)
                    + " RDMA-capable ports on each machine; a Mac Studio has " + usablePorts.size()
                    + ", so a full RDMA mesh has at most " + (usablePorts.size() + 1) + " machines");
        }
        // Circle method: with an even number of slots, slot 0 stays, the others rotate one step per round.
        int slots = count % 2 == 0 ? count : count + 1;
        List<Topology.Link> cables = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            int port = usablePorts.get(round);
            for (int pair = 0; pair < slots / 2; pair++) {
                int a = pair == 0 ? 0 : 1 + Math.floorMod(pair - 1 + round, slots - 1);
                int b = 1 + Math.floorMod(slots - 2 - pair + round, slots - 1);
                if (a >= count || b >= count) {
                    continue;
                }
                String first = machines.get(Math.min(a, b));
                String second = machines.get(Math.max(a, b));
                cables.add(new Topology.Link(new PortReference(first, port), new PortReference(second, port)));
            }
        }
        cables.sort((x, y) -> x.first().compareTo(y.first()) != 0 ? x.first().compareTo(y.first()) : x.second().compareTo(y.second()));
        return new PortPlan(cluster, machines, cables);
    }

    public Optional<Topology.Link> cableBetween(String machineA, String machineB) {
        return cables.stream().filter(cable -> cable.joins(machineA, machineB)).findFirst();
    }

    /** The cabling sheet for whoever plugs the cables. */
    public String toText() {
        StringBuilder text = new StringBuilder();
        text.append("Cabling sheet for cluster ").append(cluster).append(": ").append(machines.size())
                .append(" machines, full mesh, ").append(cables.size()).append(" Thunderbolt 5 cables\n");
        text.append("Port numbers are the receptacle numbers macOS shows (System Information > Thunderbolt/USB4).\n");
        text.append("Leave port 1 (next to the Ethernet port) free: it cannot carry RDMA.\n\n");
        int width = machines.stream().mapToInt(String::length).max().orElse(8) + 8;
        text.append(String.format("%3s  %-" + width + "s  %-" + width + "s%n", "#", "from", "to"));
        int number = 1;
        for (Topology.Link cable : cables) {
            text.append(String.format("%3d  %-" + width + "s  %-" + width + "s%n", number++,
                    cable.first().machine() + " port " + cable.first().port(),
                    cable.second().machine() + " port " + cable.second().port()));
        }
        return text.toString();
    }
}
