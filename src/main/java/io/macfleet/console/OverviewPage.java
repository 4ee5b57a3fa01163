package io.macfleet.console;

import io.macfleet.fleet.MachineRow;
import io.macfleet.fleet.FleetStatus;
import static io.macfleet.console.ConsoleSupport.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The fleet overview's page model: a pure function of the fleet state and the filters. */
final class OverviewPage {

    static final List<String> STATUS_FILTERS = List.of("all", "problems", "ready");

    /** A filter the page cannot show: the status code and the message of the error page. */
    record FilterError(int status, String heading, String message) {
    }

    private OverviewPage() {
    }

    /** Why the filters cannot be applied, if they cannot (an unknown status or cluster). */
    static Optional<FilterError> checkFilters(FleetStatus.Fleet fleet, String cluster, String status) {
        if (!ConsoleSupport.blank(status) && !STATUS_FILTERS.contains(status)) {
            return Optional.of(new FilterError(400, "Unknown status filter", "The status filter '" + status + "' is not one of "
                    + String.join(", ", STATUS_FILTERS) + "."));
        }
        if (!ConsoleSupport.blank(cluster) && !"-".equals(cluster) && fleet.cluster(cluster).isEmpty()) {
            return Optional.of(new FilterError(404, "Cluster not found", "There is no cluster named '" + cluster
                    + "' in the applied inventory."));
        }
        return Optional.empty();
    }

    /**
     * The whole page.
     *
     * @param cluster a cluster's name, "-" for machines in no cluster, or "" for all
     * @param status all, problems or ready
     */
    static Pages.Overview overview(Pages.Layout layout, FleetStatus.Fleet fleet, String cluster, String status) {
        List<Pages.Choice> clusterChoices = new ArrayList<>();
        clusterChoices.add(new Pages.Choice("All clusters", "", url("", status), cluster.isEmpty()));
        fleet.clusters().stream().map(FleetStatus.ClusterSummary::name).sorted().forEach(name ->
                clusterChoices.add(new Pages.Choice(name, name, url(name, status), name.equals(cluster))));
        if (fleet.machines().stream().anyMatch(row -> row.cluster() == null)) {
            clusterChoices.add(new Pages.Choice("No cluster", "-", url("-", status), "-".equals(cluster)));
        }
        List<Pages.Choice> statusChoices = STATUS_FILTERS.stream()
                .map(value -> new Pages.Choice(value, value, url(cluster, value), value.equals(status))).toList();
        return new Pages.Overview(layout, clusterChoices, statusChoices, "all".equals(status) ? "" : status, table(fleet, cluster, status));
    }

    /** The table and counts alone: what htmx swaps in every few seconds. */
    static Pages.OverviewTable table(FleetStatus.Fleet fleet, String cluster, String status) {
        List<MachineRow> rows = fleet.machines().stream()
                .filter(row -> cluster.isEmpty() || ("-".equals(cluster) ? row.cluster() == null : cluster.equals(row.cluster())))
                .filter(row -> switch (status) {
                    case "problems" -> row.problem();
                    case "ready" -> row.ready();
                    default -> true;
                })
                .toList();
        List<FleetStatus.ClusterSummary> clusters = fleet.clusters().stream()
                .filter(summary -> cluster.isEmpty() || summary.name().equals(cluster)).toList();
        long problems = fleet.machines().stream().filter(MachineRow::problem).count();
        String description = (cluster.isEmpty() ? "all clusters" : "-".equals(cluster) ? "machines in no cluster" : "cluster " + cluster)
                + ("all".equals(status) ? "" : ", " + ("problems".equals(status) ? "machines with problems" : "ready machines"));
        String empty = fleet.machines().isEmpty() ? "The applied inventory has no machines."
                : "problems".equals(status) ? "No machine has a problem." : "No machine matches " + description + ".";
        return new Pages.OverviewTable(Ages.utc(fleet.at()), fleet.inventoryApplied(), fleet.machines().size(), problems,
                fleet.ready(), fleet.clusters().size(), clusters, fleet.columns(), rows,
                "/console/fleet-table" + query(Map.of("cluster", cluster, "status", "all".equals(status) ? "" : status)),
                description, empty);
    }

    private static String url(String cluster, String status) {
        return "/console" + query(Map.of("cluster", cluster, "status", "all".equals(status) ? "" : status));
    }
}
