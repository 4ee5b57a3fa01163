package io.macfleet.models.placement;

import io.macfleet.runtime.RuntimeCluster;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The order the Macs pass a file on in: a path along the cluster's cables (two Macs are neighbours when the cabling
 * facts give each one's address on the cable toward the other), starting at the first Mac in rank order that needs the
 * file. A Mac that holds the file already joins only when the others cannot be joined without it (it then forwards
 * without writing). When no single path reaches every Mac that needs the file (a Mac without configured Thunderbolt
 * addresses), the rest form further chains, each fed by the control host: correct, at the price of sending the bytes
 * once per chain.
 */
final class PlacementChain {
    /** Path search is exponential in the worst case; past this many steps the greedy chains are good enough. */
    private static final int SEARCH_BUDGET = 200_000;

    /** One Mac of a chain: where its relay listens, whom it accepts, and where its upstream peer connects from. */
    record Link(RuntimeCluster.Machine machine, String listenAddress, Optional<String> upstreamAddress, boolean store) {
        String name() {
            return machine.name();
        }
    }

    private PlacementChain() {
    }

    /** The chains covering every Mac of {@code needing} (machine names), machines in rank order, each fed by the control host. */
    static List<List<Link>> plan(List<RuntimeCluster.Machine> machines, Set<String> needing) {
        return plan(machines, needing, Optional.empty());
    }

    /**
     * As above; with a {@code source} (a Mac that holds the file verified), every chain starts at that Mac, which reads
     * the file from its own disk and forwards without writing: the first chain is a path along the cables from it, and
     * a Mac it cannot reach over cables is fed over the management network (from the source, still not from the
     * control host).
     */
    static List<List<Link>> plan(List<RuntimeCluster.Machine> machines, Set<String> needing, Optional<String> source) {
        if (source.isEmpty()) {
            return planFromControlHost(machines, needing);
        }
        Map<String, RuntimeCluster.Machine> byName = machines.stream().collect(Collectors.toMap(RuntimeCluster.Machine::name, m -> m,
                (a, b) -> a, java.util.LinkedHashMap::new));
        String head = source.get();
        if (!byName.containsKey(head)) {
            throw new IllegalArgumentException(head + " is not a machine of the cluster");
        }
        List<List<Link>> chains = new ArrayList<>();
        Set<String> remaining = new LinkedHashSet<>();
        machines.stream().map(RuntimeCluster.Machine::name).filter(name -> needing.contains(name) && !name.equals(head)).forEach(remaining::add);
        while (!remaining.isEmpty()) {
            List<String> path = new ArrayList<>(List.of(head));
            Set<String> visited = new HashSet<>(path);
            if (!extend(path, visited, machines, byName, remaining, new int[] {SEARCH_BUDGET})) {
                path = greedyFrom(head, machines, byName, remaining);
            }
            chains.add(links(path, byName, needing));
            path.forEach(remaining::remove);
        }
        return chains;
    }

    /** From the source along cables to Macs that need the file; when none is cabled to it, the first such Mac over the management network. */
    private static List<String> greedyFrom(String head, List<RuntimeCluster.Machine> machines, Map<String, RuntimeCluster.Machine> byName,
                                           Set<String> remaining) {
        List<String> path = new ArrayList<>(List.of(head));
        while (true) {
            RuntimeCluster.Machine last = byName.get(path.getLast());
            Optional<RuntimeCluster.Machine> next = machines.stream()
                    .filter(m -> remaining.contains(m.name()) && !path.contains(m.name()) && cabled(last, m)).findFirst();
            if (next.isPresent()) {
                path.add(next.get().name());
            } else if (path.size() == 1) {
                path.add(remaining.iterator().next());
            } else {
                return path;
            }
        }
    }

    private static List<List<Link>> planFromControlHost(List<RuntimeCluster.Machine> machines, Set<String> needing) {
        Map<String, RuntimeCluster.Machine> byName = machines.stream().collect(Collectors.toMap(RuntimeCluster.Machine::name, m -> m,
                (a, b) -> a, java.util.LinkedHashMap::new));
        List<List<Link>> chains = new ArrayList<>();
        Set<String> remaining = new LinkedHashSet<>();
        machines.stream().map(RuntimeCluster.Machine::name).filter(needing::contains).forEach(remaining::add);
        while (!remaining.isEmpty()) {
            List<String> path = search(machines, byName, remaining).orElseGet(() -> greedy(machines, byName, remaining));
            chains.add(links(path, byName, needing));
            path.forEach(remaining::remove);
        }
        return chains;
    }

    static boolean cabled(RuntimeCluster.Machine a, RuntimeCluster.Machine b) {
        return a.thunderboltAddresses().containsKey(b.name()) && b.thunderboltAddresses().containsKey(a.name());
    }

    /** A path covering every remaining Mac, through Macs that are done only where needed. */
    private static Optional<List<String>> search(List<RuntimeCluster.Machine> machines, Map<String, RuntimeCluster.Machine> byName,
                                                 Set<String> remaining) {
        int[] budget = {SEARCH_BUDGET};
        for (String start : remaining) {
            List<String> path = new ArrayList<>(List.of(start));
            if (extend(path, new HashSet<>(path), machines, byName, remaining, budget)) {
                return Optional.of(path);
            }
            if (budget[0] <= 0) {
                break;
            }
        }
        return Optional.empty();
    }

    private static boolean extend(List<String> path, Set<String> visited, List<RuntimeCluster.Machine> machines,
                                  Map<String, RuntimeCluster.Machine> byName, Set<String> remaining, int[] budget) {
        if (visited.containsAll(remaining)) {
            // A bridge at the end forwards to nobody: drop it.
            while (!remaining.contains(path.getLast())) {
                visited.remove(path.removeLast());
            }
            return true;
        }
        if (--budget[0] <= 0) {
            return false;
        }
        RuntimeCluster.Machine last = byName.get(path.getLast());
        // Macs that need the file first, in rank order; bridges after them.
        List<RuntimeCluster.Machine> next = new ArrayList<>();
        machines.stream().filter(m -> remaining.contains(m.name())).forEach(next::add);
        machines.stream().filter(m -> !remaining.contains(m.name())).forEach(next::add);
        for (RuntimeCluster.Machine candidate : next) {
            if (visited.contains(candidate.name()) || !cabled(last, candidate)) {
                continue;
            }
            path.add(candidate.name());
            visited.add(candidate.name());
            if (extend(path, visited, machines, byName, remaining, budget)) {
                return true;
            }
            visited.remove(path.removeLast());
        }
        return false;
    }

    /** The longest path found by always taking the first cabled Mac that still needs the file. */
    private static List<String> greedy(List<RuntimeCluster.Machine> machines, Map<String, RuntimeCluster.Machine> byName, Set<String> remaining) {
        List<String> path = new ArrayList<>(List.of(remaining.iterator().next()));
        while (true) {
            RuntimeCluster.Machine last = byName.get(path.getLast());
            Optional<RuntimeCluster.Machine> next = machines.stream()
                    .filter(m -> remaining.contains(m.name()) && !path.contains(m.name()) && cabled(last, m)).findFirst();
            if (next.isEmpty()) {
                return path;
            }
            path.add(next.get().name());
        }
    }

    private static List<Link> links(List<String> path, Map<String, RuntimeCluster.Machine> byName, Set<String> needing) {
        List<Link> links = new ArrayList<>();
        for (int index = 0; index < path.size(); index++) {
            RuntimeCluster.Machine machine = byName.get(path.get(index));
            boolean store = needing.contains(machine.name());
            if (index == 0) {
                // The first Mac is fed by the control host, over the management network.
                links.add(new Link(machine, machine.managementAddress(), Optional.empty(), store));
            } else if (!cabled(byName.get(path.get(index - 1)), machine)) {
                // Only a chain that starts at a Mac holding the file has such a link: the source feeds a Mac it has no
                // cable to over the management network.
                links.add(new Link(machine, machine.managementAddress(), Optional.of(byName.get(path.get(index - 1)).managementAddress()), store));
            } else {
                RuntimeCluster.Machine previous = byName.get(path.get(index - 1));
                links.add(new Link(machine, machine.thunderboltAddresses().get(previous.name()),
                        Optional.of(previous.thunderboltAddresses().get(machine.name())), store));
            }
        }
        return List.copyOf(links);
    }
}
