package io.macfleet.console;

import io.macfleet.fleet.MachineRow;
import io.macfleet.fleet.FleetStatus;
import static io.macfleet.console.ConsoleSupport.query;

import io.macfleet.cabling.CablingReport;
import io.macfleet.cabling.CablingSvg;
import io.macfleet.cabling.ClusterCabling;
import io.macfleet.cabling.ObservedLink;
import io.macfleet.cabling.PlannedTopology;
import io.macfleet.inventory.Topology;
import io.quarkus.qute.RawString;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The clusters' page models: pure functions of the fleet state. */
final class ClusterPage {

    private ClusterPage() {
    }

    static Pages.Clusters clusters(Pages.Layout layout, FleetStatus.Fleet fleet) {
        List<FleetStatus.ClusterSummary> sorted = fleet.clusters().stream().sorted(Comparator.comparing(FleetStatus.ClusterSummary::name)).toList();
        return new Pages.Clusters(layout, sorted, fleet.inventoryApplied());
    }

    /**
     * One cluster: readiness, the cabling diagram and findings, the port plan with each cable's state, its machines.
     *
     * @param playbooks what the "provision this cluster" form offers
     * @return empty when the applied inventory has no such cluster
     */
    static Optional<Pages.Cluster> cluster(Pages.Layout layout, FleetStatus.Fleet fleet, String name, List<String> playbooks) {
        Optional<FleetStatus.ClusterSummary> found = fleet.cluster(name);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        CablingReport report = fleet.cabling().get(name);
        List<MachineRow> machines = fleet.machines().stream().filter(row -> name.equals(row.cluster())).toList();
        List<Pages.PlanRow> plan = new ArrayList<>();
        String planNote = "";
        if (report != null) {
            PlannedTopology planned = ClusterCabling.plan(fleet.inventory().cluster(name).orElseThrow(), fleet.inventory().machinesOf(name));
            List<Topology.Link> cables = List.of();
            try {
                cables = planned.cables();
                planNote = planned.kind() == PlannedTopology.Kind.EXPLICIT ? "The inventory lists these cables (explicit topology)."
                        : "Full mesh: every cable joins the same port number on both Macs; port 1, next to the Ethernet port, stays free"
                        + (planned.links().isEmpty() ? "." : "; ports the inventory pins are used as given.");
            } catch (IllegalArgumentException e) {
                planNote = e.getMessage();
            }
            int number = 1;
            for (Topology.Link cable : cables) {
                plan.add(new Pages.PlanRow(number++, cable.first().machine() + " port " + cable.first().port(),
                        cable.second().machine() + " port " + cable.second().port(), cableState(cable, report)));
            }
        }
        RawString svg = new RawString(report == null ? "" : CablingSvg.render(report));
        return Optional.of(new Pages.Cluster(layout, found.get(), svg,
                report == null ? List.of() : report.findings().stream().map(Pages.FindingView::of).toList(), plan, planNote,
                fleet.columns(), machines, "/console/audit" + query(Map.of("text", name)), playbooks));
    }

    /** How a planned cable looks in the latest facts. */
    private static String cableState(Topology.Link cable, CablingReport report) {
        Optional<ObservedLink> exact = report.links().stream().filter(link -> link.joins(cable.first().machine(), cable.second().machine())
                && link.endOf(cable.first().machine()).equals(cable.first()) && link.endOf(cable.second().machine()).equals(cable.second())).findFirst();
        if (exact.isPresent()) {
            ObservedLink link = exact.get();
            if (!link.confirmed()) {
                return "seen from one side only";
            }
            return link.isThunderbolt5() ? "cabled, Thunderbolt 5" : "cabled, slower than Thunderbolt 5";
        }
        List<ObservedLink> elsewhere = report.links().stream().filter(link -> link.joins(cable.first().machine(), cable.second().machine())).toList();
        if (!elsewhere.isEmpty()) {
            return "cabled on other ports: " + elsewhere.stream().map(ObservedLink::toString).collect(Collectors.joining(", "));
        }
        return "not cabled";
    }
}
