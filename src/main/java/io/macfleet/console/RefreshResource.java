package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.facts.FactsService;
import io.macfleet.observe.ObservationLoop;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The console's "Refresh now" buttons: gather the machine or the cluster now, then show its page again. */
@Path("/console")
public class RefreshResource {

    @Inject
    ObservationLoop loop;

    @Inject
    FactsService facts;

    @Inject
    ConsoleFrame frame;

    @POST
    @Path("machines/{name}/refresh")
    @RolesAllowed(Roles.OPERATOR)
    public Response machine(@PathParam("name") String name) {
        var machine = facts.machine(name);
        if (machine.isEmpty()) {
            return frame.error(404, "Machine not found", "There is no machine named '" + name + "' in the applied inventory.",
                    "/console", "Back to the fleet overview");
        }
        loop.refreshNow(List.of(machine.get()));
        return Response.seeOther(URI.create("/console/machines/" + URLEncoder.encode(name, StandardCharsets.UTF_8))).build();
    }

    @POST
    @Path("clusters/{name}/refresh")
    @RolesAllowed(Roles.OPERATOR)
    public Response cluster(@PathParam("name") String name) {
        if (facts.cluster(name).isEmpty()) {
            return frame.error(404, "Cluster not found", "There is no cluster named '" + name + "' in the applied inventory.",
                    "/console", "Back to the fleet overview");
        }
        loop.refreshNow(facts.select(name, List.of()));
        return Response.seeOther(URI.create("/console/clusters/" + URLEncoder.encode(name, StandardCharsets.UTF_8))).build();
    }
}
