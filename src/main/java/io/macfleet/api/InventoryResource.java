package io.macfleet.api;

import io.macfleet.accounts.Roles;
import jakarta.annotation.security.RolesAllowed;

import io.macfleet.inventory.DesiredStateStore;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The applied inventory (desired state), read-only. Change it with `macfleet inventory apply`. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "inventory", description = "The applied inventory (desired state), read-only")
public class InventoryResource {

    @Inject
    DesiredStateStore store;

    @GET
    @Path("/clusters")
    @Operation(summary = "All clusters, each with the names of its machines")
    public List<Map<String, Object>> clusters() {
        return store.clusters();
    }

    @GET
    @Path("/clusters/{name}")
    @Operation(summary = "One cluster")
    @APIResponse(responseCode = "200", description = "the cluster")
    @APIResponse(responseCode = "404", description = "no such cluster (problem JSON)")
    public Map<String, Object> cluster(@PathParam("name") String name) {
        return store.cluster(name).orElseThrow(() -> ProblemException.notFound("cluster", name));
    }

    @GET
    @Path("/machines")
    @Operation(summary = "All machines in name order, or those of one cluster")
    public List<Map<String, Object>> machines(@Parameter(description = "only the machines of this cluster") @QueryParam("cluster") String cluster) {
        if (cluster != null && store.cluster(cluster).isEmpty()) {
            throw ProblemException.badRequest("cluster '" + cluster + "' is not in the applied inventory");
        }
        return store.machines(cluster);
    }

    @GET
    @Path("/machines/{name}")
    @Operation(summary = "One machine, with defaults and groups merged")
    @APIResponse(responseCode = "200", description = "the machine")
    @APIResponse(responseCode = "404", description = "no such machine (problem JSON)")
    public Map<String, Object> machine(@PathParam("name") String name) {
        return store.machine(name).orElseThrow(() -> ProblemException.notFound("machine", name));
    }
}
