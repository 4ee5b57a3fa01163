package io.macfleet.facts;

import io.macfleet.accounts.Roles;
import io.macfleet.api.ProblemException;
import io.macfleet.inventory.Machine;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Stored facts and drift of a machine. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class FactsResource {

    @Inject
    FactsService facts;

    /** The latest facts with the machine's drift; {@code ?history=true}: every observation, newest first. */
    @GET
    @Path("/machines/{name}/facts")
    public Object facts(@PathParam("name") String name, @QueryParam("history") boolean history) {
        Machine machine = known(name);
        if (history) {
            List<MachineFacts> observations = facts.history(name);
            if (observations.isEmpty()) {
                throw noFacts(name);
            }
            return Map.of("machine", name, "history", observations);
        }
        MachineFacts latest = facts.latest(name).map(FactsObservation::facts).orElseThrow(() -> noFacts(name));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("machine", name);
        body.put("facts", latest);
        body.put("drift", facts.drift(List.of(machine)).getFirst().differences());
        return body;
    }

    @GET
    @Path("/machines/{name}/drift")
    public Drift.Report drift(@PathParam("name") String name) {
        Machine machine = known(name);
        if (facts.latest(name).isEmpty()) {
            throw noFacts(name);
        }
        return facts.drift(List.of(machine)).getFirst();
    }

    private Machine known(String name) {
        return facts.machine(name).orElseThrow(() -> ProblemException.notFound("machine", name));
    }

    private static ProblemException noFacts(String name) {
        return new ProblemException(404, "Not Found", "no facts stored for machine '" + name + "' yet (run `macfleet facts " + name + "`)");
    }
}
