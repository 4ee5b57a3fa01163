package io.macfleet.cabling;

import io.macfleet.accounts.Roles;
import jakarta.annotation.security.RolesAllowed;

import io.macfleet.problem.ProblemException;
import io.macfleet.facts.FactsService;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;

/** A cluster's cabling checked from the stored facts: the report as JSON, the diagram as SVG for the console. */
// The class path is the same as the inventory resource's: a longer class path would take every
// /api/v1/clusters/{name} request away from it (JAX-RS picks the class first) and answer 404.
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
public class CablingResource {

    @Inject
    ClusterCabling live;

    @GET
    @Path("/clusters/{name}/cabling")
    @Produces(MediaType.APPLICATION_JSON)
    public Response report(@PathParam("name") String name) {
        return Response.ok(CablingText.json(check(name)), MediaType.APPLICATION_JSON).build();
    }

    @GET
    @Path("/clusters/{name}/cabling.svg")
    @Produces("image/svg+xml")
    public Response svg(@PathParam("name") String name) {
        return Response.ok(CablingSvg.render(check(name)), "image/svg+xml").build();
    }

    private CablingReport check(String name) {
        try {
            return live.cluster(name, Optional.empty()).check();
        } catch (FactsService.UnknownNameException e) {
            throw ProblemException.notFound("cluster", name);
        }
    }
}
