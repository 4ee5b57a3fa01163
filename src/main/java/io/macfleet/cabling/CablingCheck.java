package io.macfleet.cabling;

import io.macfleet.cabling.Finding.Code;
import io.macfleet.cabling.Finding.Severity;
import io.macfleet.inventory.PortReference;
import io.macfleet.inventory.Topology;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Compares the planned topology of a cluster with what its machines' facts show, and says exactly what
 * to change. Pure computation over facts already gathered: no I/O.
 */
public final class CablingCheck {

    private CablingCheck() {
    }

    /**
     * @param plan the planned topology
     * @param facts facts of the cluster's machines (facts of other machines are ignored)
     * @param targetVersion the cluster's target macOS version, if known
     */
    public static CablingReport check(PlannedTopology plan, List<MachineCablingFacts> facts, Optional<String> targetVersion) {
        return check(plan, facts, targetVersion, Map.of());
    }

    /**
     * @param unanswered machines that did not answer when their facts were gathered just now, with why: gathering
     *                   their facts again is not the fix, finding out why they do not answer is
     */
    public static CablingReport check(PlannedTopology plan, List<MachineCablingFacts> facts, Optional<String> targetVersion,
                                      Map<String, String> unanswered) {
        Map<String, MachineCablingFacts> byMachine = new LinkedHashMap<>();
        for (MachineCablingFacts machineFacts : facts) {
            if (plan.machines().contains(machineFacts.machine())) {
                byMachine.put(machineFacts.machine(), machineFacts);
            }
        }
        List<Finding> findings = new ArrayList<>();
        for (String machine : plan.machines()) {
            if (!byMachine.containsKey(machine) && unanswered.containsKey(machine)) {
                findings.add(new Finding(Severity.ERROR, Code.MISSING_FACTS, List.of(machine), List.of(),
                        machine + " did not answer over SSH (" + unanswered.get(machine) + "), so its cables cannot be checked",
                        unansweredFix(machine)));
            } else if (!byMachine.containsKey(machine)) {
                findings.add(new Finding(Severity.ERROR, Code.MISSING_FACTS, List.of(machine), List.of(),
                        machine + ": no Thunderbolt facts, so its cables cannot be checked",
                        "Gather facts (macfleet facts " + machine + ") or, offline, capture its command output into the capture directory."));
            }
        }
        ObservedTopology observed = ObservedTopology.build(List.copyOf(byMachine.values()));
        PortPlan proposal = plan.machines().size() >= 2 && plan.machines().size() <= 6
                ? PortPlan.fullMesh(plan.cluster(), plan.machines()) : null;

        Set<ObservedLink> accountedFor = new HashSet<>();
        for (List<String> pair : plan.requiredPairs()) {
            String a = pair.get(0);
            String b = pair.get(1);
            if (!byMachine.containsKey(a) || !byMachine.containsKey(b)) {
                continue;
            }
            List<ObservedLink> between = observed.linksBetween(a, b);
            accountedFor.addAll(between);
            List<ObservedLink> confirmed = between.stream().filter(ObservedLink::confirmed).toList();
            for (ObservedLink link : between) {
                if (!link.confirmed()) {
                    findings.add(oneSided(link));
                }
            }
            if (confirmed.isEmpty() && between.isEmpty()) {
                findings.add(missingLink(plan, a, b, byMachine, observed, proposal));
                continue;
            }
            List<Topology.Link> pinned = plan.linksBetween(a, b);
            int allowed = Math.max(1, pinned.size());
            if (confirmed.size() > allowed) {
                List<ObservedLink> extra = confirmed.subList(allowed, confirmed.size());
                findings.add(new Finding(Severity.WARNING, Code.DUPLICATE_LINK, List.of(a, b),
                        confirmed.stream().flatMap(link -> List.of(link.first(), link.second()).stream()).toList(),
                        confirmed.size() + " cables between " + a + " and " + b + " (" + describe(confirmed)
                                + "); tensor parallelism uses one cable per pair",
                        "Remove " + describe(extra) + " to free those ports, or list every cable of this pair in the cluster's topology.links if they are meant to add bandwidth."));
            }
            for (Topology.Link planned : pinned) {
                boolean present = confirmed.stream().anyMatch(link -> link.endOf(a).equals(planned.endOf(a)) && link.endOf(b).equals(planned.endOf(b)));
                if (!present) {
                    Optional<ObservedLink> misplaced = confirmed.stream()
                            .filter(link -> pinned.stream().noneMatch(other -> link.endOf(a).equals(other.endOf(a)) && link.endOf(b).equals(other.endOf(b))))
                            .findFirst();
                    if (misplaced.isPresent()) {
                        findings.add(wrongPorts(a, b, misplaced.get(), planned));
                    } else if (confirmed.size() + unconfirmed(between).size() < pinned.size()) {
                        // A one-sided cable of this pair is reported once, as one-sided (reseat), not also as missing.
                        findings.add(new Finding(Severity.ERROR, Code.MISSING_LINK, List.of(a, b), List.of(planned.first(), planned.second()),
                                "planned cable " + planned + " is missing",
                                "Connect a Thunderbolt 5 cable from " + planned.first().machine() + " port " + planned.first().port()
                                        + " to " + planned.second().machine() + " port " + planned.second().port() + "."));
                    }
                }
            }
        }
        for (ObservedLink link : observed.links()) {
            if (accountedFor.contains(link)) {
                continue;
            }
            if (!link.confirmed()) {
                findings.add(oneSided(link));
                continue;
            }
            findings.add(new Finding(Severity.WARNING, Code.UNPLANNED_LINK, List.of(link.first().machine(), link.second().machine()),
                    List.of(link.first(), link.second()),
                    "cable " + link + " is not in the planned topology of cluster " + plan.cluster(),
                    "Unplug it, or add it to the cluster's topology.links if it is meant to be there."));
        }
        for (ObservedLink link : observed.links()) {
            if (link.confirmed() && !link.isThunderbolt5()) {
                findings.add(new Finding(Severity.ERROR, Code.SLOW_LINK, List.of(link.first().machine(), link.second().machine()),
                        List.of(link.first(), link.second()),
                        "cable " + link + " links at " + link.speed().map(Object::toString).orElse("an unknown speed")
                                + ", not Thunderbolt 5 (80 Gb/s); RDMA does not work over it",
                        "Replace the cable between " + link.first().machine() + " port " + link.first().port() + " and "
                                + link.second().machine() + " port " + link.second().port()
                                + " with a Thunderbolt 5 cable; a link at 40 Gb/s means a Thunderbolt 4 or USB-C cable (or port)."));
            }
            for (PortReference end : List.of(link.first(), link.second())) {
                MachineCablingFacts machine = byMachine.get(end.machine());
                if (machine != null && !machine.portCarriesRdma(end.port())) {
                    findings.add(new Finding(Severity.ERROR, Code.RDMA_INCAPABLE_PORT, List.of(end.machine()), List.of(end),
                            end.machine() + " port " + end.port() + " (" + machine.interfaceOf(end.port()).orElse("?")
                                    + ", next to the Ethernet port) carries cable " + link + " but cannot carry RDMA",
                            "Move that cable on " + end.machine() + " from port " + end.port() + " to "
                                    + freePortText(machine, observed, end.machine()) + "."));
                }
            }
        }
        for (ObservedTopology.ForeignAttachment attachment : observed.foreignAttachments()) {
            String what = attachment.device().isHost()
                    ? "a Mac that is not in cluster " + plan.cluster() + " (" + attachment.device().describe() + ")"
                    : attachment.device().describe();
            findings.add(new Finding(Severity.WARNING, Code.OUTSIDE_DEVICE, List.of(attachment.port().machine()), List.of(attachment.port()),
                    attachment.port().machine() + " port " + attachment.port().port() + " is cabled to " + what,
                    attachment.device().isHost()
                            ? "Unplug it, or add that Mac to cluster " + plan.cluster() + " in the inventory."
                            : "Unplug it from " + attachment.port().machine() + " port " + attachment.port().port()
                                    + " unless the machine needs it; the mesh may need that port."));
        }
        findings.addAll(machineFindings(plan, byMachine, observed, targetVersion));

        Map<String, Set<String>> usable = adjacency(plan, observed, link -> link.isThunderbolt5()
                && byMachine.get(link.first().machine()).portCarriesRdma(link.first().port())
                && byMachine.get(link.second().machine()).portCarriesRdma(link.second().port()));
        Map<String, Set<String>> any = adjacency(plan, observed, link -> true);
        List<String> meshed = largestClique(plan.machines(), usable);
        boolean fullMesh = plan.machines().size() >= 2 && meshed.size() == plan.machines().size();
        // A ring over Thunderbolt 5 links where there is one: the report calls the others too slow, so a suggested ring
        // through one of them would contradict it.
        Optional<List<String>> ring = ring(plan.machines(), adjacency(plan, observed, ObservedLink::isThunderbolt5))
                .or(() -> ring(plan.machines(), any));
        // A machine without facts makes every finding about its cables a guess ("connect a cable" to a Mac that did not
        // answer): such findings are left out, and the verdict says unknown (issue 13).
        Set<String> withoutFacts = new java.util.TreeSet<>(plan.machines());
        withoutFacts.removeAll(byMachine.keySet());
        findings.removeIf(finding -> finding.code() != Code.MISSING_FACTS && finding.machines().stream().anyMatch(withoutFacts::contains));
        // A cable to a device no gathered machine claims may well end at the machine without facts: not "unplug it".
        if (!withoutFacts.isEmpty()) {
            findings.removeIf(finding -> finding.code() == Code.OUTSIDE_DEVICE);
        }
        findings.sort(Comparator.comparing(Finding::severity).thenComparing(finding -> finding.code().ordinal()));
        List<ObservedLink> clusterLinks = observed.links();
        List<String> silent = withoutFacts.stream().filter(unanswered::containsKey).toList();
        String verdict = withoutFacts.isEmpty() ? verdict(plan, findings, fullMesh, meshed, ring)
                : !silent.isEmpty() ? "unknown: " + String.join(", ", silent) + (silent.size() == 1 ? " does" : " do")
                        + " not answer over SSH (is it on and reachable? a hung Mac needs a power cycle)"
                : withoutFacts.size() == plan.machines().size() ? "unknown: no facts yet (run macfleet facts)"
                : "unknown: no facts of " + String.join(", ", withoutFacts) + " (run macfleet facts " + String.join(" ", withoutFacts) + ")";
        return new CablingReport(plan.cluster(), plan.machines(), clusterLinks, observed.foreignAttachments(), findings, fullMesh, meshed, ring, verdict);
    }

    /** What to do about a Mac that did not answer: gathering its facts again would only wait for it again. */
    static String unansweredFix(String machine) {
        return "Find out why " + machine + " does not answer: is it powered on and on the network (the console's fleet page shows"
                + " since when it has not answered)? A Mac that hangs needs a power cycle (hold its power button for 10 s, then press it)."
                + " Then run the check again.";
    }

    private static List<Finding> machineFindings(PlannedTopology plan, Map<String, MachineCablingFacts> byMachine,
                                                 ObservedTopology observed, Optional<String> targetVersion) {
        List<Finding> findings = new ArrayList<>();
        Map<String, List<String>> machinesByVersion = new TreeMap<>();
        for (MachineCablingFacts machine : byMachine.values()) {
            machine.macosVersion().ifPresent(version -> machinesByVersion.computeIfAbsent(version, key -> new ArrayList<>()).add(machine.machine()));
        }
        if (machinesByVersion.size() > 1 || (targetVersion.isPresent() && !machinesByVersion.isEmpty() && !machinesByVersion.containsKey(targetVersion.get()))) {
            String wanted = targetVersion.orElseGet(() -> machinesByVersion.entrySet().stream()
                    .max(Comparator.comparingInt((Map.Entry<String, List<String>> entry) -> entry.getValue().size()).thenComparing(Map.Entry::getKey))
                    .map(Map.Entry::getKey).orElseThrow());
            String summary = machinesByVersion.entrySet().stream()
                    .map(entry -> entry.getKey() + " on " + String.join(", ", entry.getValue())).collect(Collectors.joining("; "));
            if (machinesByVersion.size() == 1) {
                // The machines agree with each other but not with the target, which drift measures against: the
                // cluster is not ready until they run the version the inventory asks for.
                Map.Entry<String, List<String>> only = machinesByVersion.entrySet().iterator().next();
                findings.add(new Finding(Severity.ERROR, Code.MACOS_VERSION_MISMATCH, only.getValue(), List.of(),
                        "every machine of cluster " + plan.cluster() + " runs macOS " + only.getKey() + ", not the cluster's target " + wanted,
                        "Update " + String.join(", ", only.getValue()) + " from macOS " + only.getKey() + " to " + wanted + "."));
            }
            if (machinesByVersion.size() > 1) {
                for (Map.Entry<String, List<String>> entry : machinesByVersion.entrySet()) {
                    if (!entry.getKey().equals(wanted)) {
                        findings.add(new Finding(Severity.ERROR, Code.MACOS_VERSION_MISMATCH, entry.getValue(), List.of(),
                                "macOS versions differ inside cluster " + plan.cluster() + " (" + summary + "); RDMA needs the same version on every machine",
                                "Update " + String.join(", ", entry.getValue()) + " from macOS " + entry.getKey() + " to " + wanted + "."));
                    }
                }
            }
        }
        for (MachineCablingFacts machine : byMachine.values()) {
            String name = machine.machine();
            if (machine.bridgeActive().orElse(false)) {
                findings.add(new Finding(Severity.ERROR, Code.BRIDGE_ACTIVE, List.of(name), List.of(),
                        name + ": the Thunderbolt Bridge (bridge0) is active; RDMA needs it off, and with several cables it forms a network loop",
                        "On " + name + ": sudo ifconfig bridge0 down, and to keep it off after a reboot: networksetup -setnetworkserviceenabled \"Thunderbolt Bridge\" off."));
            }
            if (machine.rdmaEnabled().isEmpty()) {
                findings.add(new Finding(Severity.WARNING, Code.RDMA_STATUS_UNKNOWN, List.of(name), List.of(),
                        name + ": RDMA status unknown (no rdma_ctl status output)",
                        "Gather facts again, or capture rdma_ctl status for " + name + "."));
            } else if (!machine.rdmaEnabled().get()) {
                findings.add(new Finding(Severity.ERROR, Code.RDMA_DISABLED, List.of(name), List.of(),
                        name + ": RDMA over Thunderbolt is disabled (rdma_ctl status: disabled)",
                        "Enable it in macOS Recovery on " + name + ": shut down, hold the power button until startup options appear, Options, "
                                + "Utilities > Terminal, run rdma_ctl enable, restart (macfleet provision walks you through it)."));
            } else if (machine.rdmaDevices().isPresent()) {
                for (ObservedLink link : observed.links()) {
                    if (!link.confirmed() || !link.joinsMachine(name)) {
                        continue;
                    }
                    PortReference end = link.endOf(name);
                    Optional<String> device = machine.interfaceOf(end.port()).map(networkInterface -> "rdma_" + networkInterface);
                    if (device.isEmpty() || !machine.rdmaDevices().get().contains(device.get())) {
                        findings.add(new Finding(Severity.ERROR, Code.NO_RDMA_DEVICE, List.of(name), List.of(end),
                                name + ": no RDMA device " + device.orElse("for port " + end.port()) + " for cable " + link
                                        + " (ibv_devices lists " + (machine.rdmaDevices().get().isEmpty() ? "none" : String.join(", ", machine.rdmaDevices().get())) + ")",
                                "Check that " + link.otherEnd(name).machine() + " has RDMA enabled too, then restart " + name
                                        + "; if the device stays missing, reseat or replace the cable."));
                    } else {
                        rdmaPortDown(machine, byMachine.get(link.otherEnd(name).machine()), link).ifPresent(findings::add);
                    }
                }
            }
        }
        return findings;
    }

    /**
     * A cabled port whose RDMA port is not PORT_ACTIVE: ibv_devices lists the device anyway, but the engines fail to
     * allocate resources on it. Only for cables RDMA could use (Thunderbolt 5, RDMA-capable ports, RDMA on at the
     * far end): slow links, wrong ports and RDMA switched off have their own findings.
     */
    private static Optional<Finding> rdmaPortDown(MachineCablingFacts machine, MachineCablingFacts peer, ObservedLink link) {
        String name = machine.machine();
        PortReference end = link.endOf(name);
        PortReference far = link.otherEnd(name);
        boolean usable = link.isThunderbolt5() && machine.portCarriesRdma(end.port())
                && peer != null && peer.portCarriesRdma(far.port()) && peer.rdmaEnabled().orElse(false);
        Optional<String> state = machine.rdmaPortState(end.port());
        if (!usable || state.isEmpty() || state.get().equals("PORT_ACTIVE")) {
            return Optional.empty();
        }
        String device = "rdma_" + machine.interfaceOf(end.port()).orElseThrow();
        return Optional.of(new Finding(Severity.ERROR, Code.RDMA_PORT_DOWN, List.of(name), List.of(end),
                name + ": RDMA port " + device + " of cable " + link + " is " + state.get() + " (ibv_devinfo), not PORT_ACTIVE;"
                        + " the inference engines cannot allocate RDMA resources on it",
                "Reseat the cable at both ends (" + end + " and " + far + "); if " + device + " stays " + state.get()
                        + ", restart " + name + " and " + far.machine() + ", then replace the cable."));
    }

    private static List<ObservedLink> unconfirmed(List<ObservedLink> links) {
        return links.stream().filter(link -> !link.confirmed()).toList();
    }

    private static String describe(List<ObservedLink> links) {
        return links.stream().map(ObservedLink::toString).collect(Collectors.joining(", "));
    }

    private static Finding oneSided(ObservedLink link) {
        return new Finding(Severity.ERROR, Code.ONE_SIDED_LINK, List.of(link.first().machine(), link.second().machine()),
                List.of(link.first(), link.second()),
                link.first().machine() + " port " + link.first().port() + " sees " + link.second().machine() + " port "
                        + link.second().port() + ", but " + link.second().machine() + " does not see " + link.first().machine()
                        + " there; the link does not count",
                "Reseat the cable at both ends (" + link.first() + " and " + link.second() + "); if "
                        + link.second().machine() + " still does not list it, replace the cable.");
    }

    private static Finding wrongPorts(String a, String b, ObservedLink actual, Topology.Link planned) {
        List<String> moves = new ArrayList<>();
        for (String machine : List.of(a, b)) {
            int now = actual.endOf(machine).port();
            int wanted = planned.endOf(machine).port();
            if (now != wanted) {
                moves.add("on " + machine + " from port " + now + " to port " + wanted);
            }
        }
        return new Finding(Severity.ERROR, Code.WRONG_PORTS, List.of(a, b), List.of(actual.first(), actual.second()),
                "cable between " + a + " and " + b + " is in " + actual + ", the plan says " + planned,
                "Move the cable " + String.join(" and ", moves) + ".");
    }

    private static Finding missingLink(PlannedTopology plan, String a, String b, Map<String, MachineCablingFacts> byMachine,
                                       ObservedTopology observed, PortPlan proposal) {
        Optional<Integer> portA = suggestedPort(plan, proposal, a, b, byMachine.get(a), observed);
        Optional<Integer> portB = suggestedPort(plan, proposal, b, a, byMachine.get(b), observed);
        String fix = portA.isPresent() && portB.isPresent()
                ? "Connect a Thunderbolt 5 cable from " + a + " port " + portA.get() + " to " + b + " port " + portB.get() + "."
                : "Connect a Thunderbolt 5 cable between " + a + " and " + b + "; "
                        + (portA.isEmpty() ? a : b) + " has no free RDMA-capable port, so free one first.";
        List<PortReference> ports = new ArrayList<>();
        portA.ifPresent(port -> ports.add(new PortReference(a, port)));
        portB.ifPresent(port -> ports.add(new PortReference(b, port)));
        return new Finding(Severity.ERROR, Code.MISSING_LINK, List.of(a, b), ports,
                "no cable between " + a + " and " + b + "; a " + (plan.kind() == PlannedTopology.Kind.FULL_MESH ? "full mesh" : "planned topology")
                        + " needs one", fix);
    }

    private static Optional<Integer> suggestedPort(PlannedTopology plan, PortPlan proposal, String machine, String peer,
                                                   MachineCablingFacts facts, ObservedTopology observed) {
        Set<Integer> free = freePorts(facts, observed, machine);
        for (Topology.Link pinned : plan.linksBetween(machine, peer)) {
            if (free.contains(pinned.endOf(machine).port())) {
                return Optional.of(pinned.endOf(machine).port());
            }
        }
        if (proposal != null) {
            Optional<Integer> proposed = proposal.cableBetween(machine, peer).map(cable -> cable.endOf(machine).port()).filter(free::contains);
            if (proposed.isPresent()) {
                return proposed;
            }
        }
        return free.stream().findFirst();
    }

    private static Set<Integer> freePorts(MachineCablingFacts facts, ObservedTopology observed, String machine) {
        Set<Integer> used = new HashSet<>();
        for (ObservedLink link : observed.links()) {
            if (link.joinsMachine(machine)) {
                used.add(link.endOf(machine).port());
            }
        }
        observed.foreignAttachments().stream().filter(attachment -> attachment.port().machine().equals(machine))
                .forEach(attachment -> used.add(attachment.port().port()));
        Set<Integer> free = new java.util.TreeSet<>();
        facts.thunderbolt().buses().forEach(bus -> bus.receptacle().ifPresent(port -> {
            if (!used.contains(port) && facts.portCarriesRdma(port)) {
                free.add(port);
            }
        }));
        return free;
    }

    private static String freePortText(MachineCablingFacts machine, ObservedTopology observed, String name) {
        Set<Integer> free = freePorts(machine, observed, name);
        return free.isEmpty() ? "a port that carries RDMA (free one first)" : "free port " + free.iterator().next();
    }

    /** Which planned machines are joined by a confirmed cable that {@code counts}. */
    private static Map<String, Set<String>> adjacency(PlannedTopology plan, ObservedTopology observed, java.util.function.Predicate<ObservedLink> counts) {
        Map<String, Set<String>> adjacency = new LinkedHashMap<>();
        plan.machines().forEach(machine -> adjacency.put(machine, new HashSet<>()));
        for (ObservedLink link : observed.links()) {
            String a = link.first().machine();
            String b = link.second().machine();
            if (!link.confirmed() || !adjacency.containsKey(a) || !adjacency.containsKey(b) || !counts.test(link)) {
                continue;
            }
            adjacency.get(a).add(b);
            adjacency.get(b).add(a);
        }
        return adjacency;
    }

    /** Largest fully connected subset; clusters have at most a few dozen machines, so subsets are enumerated. */
    static List<String> largestClique(List<String> machines, Map<String, Set<String>> adjacency) {
        int count = machines.size();
        if (count > 20) {
            throw new IllegalArgumentException("cabling analysis supports clusters of at most 20 machines, got " + count);
        }
        List<String> best = count == 0 ? List.of() : List.of(machines.get(0));
        for (int mask = 1; mask < (1 << count); mask++) {
            if (Integer.bitCount(mask) <= best.size()) {
                continue;
            }
            List<String> members = new ArrayList<>();
            boolean clique = true;
            for (int i = 0; i < count && clique; i++) {
                if ((mask & (1 << i)) == 0) {
                    continue;
                }
                for (String member : members) {
                    if (!adjacency.get(member).contains(machines.get(i))) {
                        clique = false;
                        break;
                    }
                }
                members.add(machines.get(i));
            }
            if (clique) {
                best = members;
            }
        }
        return best;
    }

    /** A Hamiltonian cycle through all machines (depth-first search from the first machine). */
    static Optional<List<String>> ring(List<String> machines, Map<String, Set<String>> adjacency) {
        if (machines.size() < 3) {
            return machines.size() == 2 && adjacency.get(machines.get(0)).contains(machines.get(1))
                    ? Optional.of(List.copyOf(machines)) : Optional.empty();
        }
        List<String> path = new ArrayList<>(List.of(machines.get(0)));
        return extend(machines, adjacency, path) ? Optional.of(path) : Optional.empty();
    }

    private static boolean extend(List<String> machines, Map<String, Set<String>> adjacency, List<String> path) {
        String last = path.get(path.size() - 1);
        if (path.size() == machines.size()) {
            return adjacency.get(last).contains(path.get(0));
        }
        for (String next : machines) {
            if (!path.contains(next) && adjacency.get(last).contains(next)) {
                path.add(next);
                if (extend(machines, adjacency, path)) {
                    return true;
                }
                path.remove(path.size() - 1);
            }
        }
        return false;
    }

    private static String verdict(PlannedTopology plan, List<Finding> findings, boolean fullMesh, List<String> meshed,
                                  Optional<List<String>> ring) {
        int count = plan.machines().size();
        boolean errors = findings.stream().anyMatch(finding -> finding.severity() == Severity.ERROR);
        if (fullMesh && !errors) {
            return "ready for tensor parallelism over RDMA (JACCL) on all " + count + " machines";
        }
        if (fullMesh) {
            return "cabled as a full Thunderbolt 5 mesh; fix the errors above before RDMA tensor parallelism";
        }
        StringBuilder verdict = new StringBuilder("not a full mesh: pipeline parallel only");
        if (meshed.size() >= 2) {
            verdict.append("; largest fully meshed subset: ").append(String.join(", ", meshed))
                    .append(" (tensor parallel possible on these ").append(meshed.size()).append(")");
        }
        ring.ifPresent(order -> verdict.append("; ring: ").append(String.join(" -> ", order)).append(" -> ").append(order.get(0))
                .append(" (MLX ring or jaccl-ring backend)"));
        return verdict.toString();
    }
}
