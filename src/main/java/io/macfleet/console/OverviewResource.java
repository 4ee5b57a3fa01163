package io.macfleet.console;

import io.macfleet.fleet.FleetStatus;
import io.quarkus.qute.TemplateInstance;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;

/** The fleet overview: every machine with its status columns, problems first, filtered by cluster and status. */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class OverviewResource {

    private final FleetStatus fleetStatus;
    private final ConsoleFrame frame;

    @Inject
    public OverviewResource(FleetStatus fleetStatus, ConsoleFrame frame) {
        this.fleetStatus = fleetStatus;
        this.frame = frame;
    }

    @GET
    public Response overview(@QueryParam("cluster") String cluster, @QueryParam("status") String status) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        return checked(fleet, cluster, status).orElseGet(() -> ConsoleSupport.page(200, Templates.overview(
                OverviewPage.overview(frame.layout("Fleet overview", "overview"), fleet, orEmpty(cluster), orAll(status)))));
    }

    /** The overview's table and counts alone: what htmx swaps in every few seconds. */
    @GET
    @Path("fleet-table")
    public Response fleetTable(@QueryParam("cluster") String cluster, @QueryParam("status") String status) {
        FleetStatus.Fleet fleet = fleetStatus.fleet();
        return checked(fleet, cluster, status).orElseGet(() -> {
            TemplateInstance table = Templates.fleetTable(OverviewPage.table(fleet, orEmpty(cluster), orAll(status)));
            return ConsoleSupport.live(table);
        });
    }

    private Optional<Response> checked(FleetStatus.Fleet fleet, String cluster, String status) {
        return OverviewPage.checkFilters(fleet, cluster, status)
                .map(error -> frame.error(error.status(), error.heading(), error.message(), "/console", "Back to the fleet overview"));
    }

    private static String orEmpty(String cluster) {
        return ConsoleSupport.blank(cluster) ? "" : cluster;
    }

    private static String orAll(String status) {
        return ConsoleSupport.blank(status) ? "all" : status;
    }
}
