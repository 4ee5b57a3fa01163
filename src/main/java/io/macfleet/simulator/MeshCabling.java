package io.macfleet.simulator;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The simulator's own full-mesh cabling, as a person cabling Mac Studios would plug it: every cable joins the same
 * port number on both Macs, and port 1 (the receptacle next to Ethernet, which Apple's RDMA over Thunderbolt does not
 * use) stays free, leaving ports 2..6, so at most 6 Macs. Deliberately not the product's {@code cabling.PortPlan}: the
 * simulator stands in for the Macs and must not agree with a bug in the plan the product proposes.
 *
 * <p>The pairing is the round-robin tournament ("circle method"): the Macs sit around a table, the first keeps its
 * seat and the others move one seat per round; in round {@code r} the Macs facing each other are joined on the
 * {@code r}-th usable port. With an odd number of Macs an empty seat sits out each round.
 */
final class MeshCabling {

    /** Thunderbolt receptacles of a Mac Studio used for a mesh: all but port 1. */
    static final List<Integer> MESH_PORTS = List.of(2, 3, 4, 5, 6);

    private MeshCabling() {
    }

    /** The cables of a full mesh of these Macs, ordered by their first end and then their second. */
    static List<Cable> fullMesh(List<String> names) {
        int count = names.size();
        if (count < 2) {
            throw new IllegalArgumentException("a mesh needs at least 2 Macs, got " + count);
        }
        int seats = count % 2 == 0 ? count : count + 1;
        int rounds = seats - 1;
        if (rounds > MESH_PORTS.size()) {
            throw new IllegalArgumentException("a full mesh of " + count + " Macs needs " + (count - 1) + " ports on each Mac; "
                    + MESH_PORTS.size() + " are usable, so at most " + (MESH_PORTS.size() + 1) + " Macs");
        }
        List<Cable> cables = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            int port = MESH_PORTS.get(round);
            // Seats 0..seats-2 of the moving Macs: seat i holds Mac 1 + (i + round) mod (seats - 1).
            int[] moving = new int[seats - 1];
            for (int seat = 0; seat < seats - 1; seat++) {
                moving[seat] = 1 + Math.floorMod(seat + round, seats - 1);
            }
            join(cables, names, 0, moving[seats - 2], port);
            for (int seat = 0; seat < seats / 2 - 1; seat++) {
                join(cables, names, moving[seat], moving[seats - 3 - seat], port);
            }
        }
        Comparator<PortRef> byEnd = Comparator.comparing(PortRef::machine).thenComparingInt(PortRef::port);
        cables.sort(Comparator.comparing(Cable::a, byEnd).thenComparing(Cable::b, byEnd));
        return cables;
    }

    private static void join(List<Cable> cables, List<String> names, int one, int other, int port) {
        if (one >= names.size() || other >= names.size()) {
            return; // the empty seat of an odd count
        }
        String first = names.get(Math.min(one, other));
        String second = names.get(Math.max(one, other));
        cables.add(new Cable(new PortRef(first, port), new PortRef(second, port), LinkSpeed.TB5));
    }
}
