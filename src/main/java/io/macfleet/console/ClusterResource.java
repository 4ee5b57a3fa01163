package io.macfleet.console;

import io.macfleet.fleet.FleetStatus;
import io.macfleet.provision.ProvisioningService;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;

/** The clusters: the list, and each cluster's page with its live part. */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class ClusterResource {

    private final FleetStatus fleetStatus;
    private final ProvisioningService provisioning;
    private final ConsoleFrame frame;

    @Inject
    public ClusterResource(FleetStatus fleetStatus, ProvisioningService provisioning, ConsoleFrame frame) {
        this.fleetStatus = fleetStatus;
        this.provisioning = provisioning;
        this.frame = frame;
    }

    @GET
    @Path("clusters")
    public Response clusters() {
        return ConsoleSupport.page(200, Templates.clusters(ClusterPage.clusters(frame.layout("Clusters", "clusters"), fleetStatus.fleet())));
    }

    @GET
    @Path("clusters/{name}")
    public Response cluster(@PathParam("name") String name) {
        return clusterPage(name, false);
    }

    /** The cluster page without its frame: what htmx swaps in every few seconds. */
    @GET
    @Path("clusters/{name}/live")
    public Response clusterLive(@PathParam("name") String name) {
        return clusterPage(name, true);
    }

    private Response clusterPage(String name, boolean live) {
        Optional<Pages.Cluster> page = ClusterPage.cluster(frame.layout("Cluster " + name, "clusters"), fleetStatus.fleet(), name,
                provisioning.playbookNames());
        if (page.isEmpty()) {
            return frame.error(404, "Cluster not found", "There is no cluster named '" + name + "' in the applied inventory.",
                    "/console/clusters", "Back to the clusters");
        }
        return live ? ConsoleSupport.live(Templates.clusterBody(page.get())) : ConsoleSupport.page(200, Templates.cluster(page.get()));
    }
}
