package io.macfleet.facts;

import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import io.macfleet.inventory.Machine;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** Stored facts and drift of a machine. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class FactsResource {

    /** A facts answer: the latest facts with their drift, or (with {@code ?history=true}) every observation. */
    public sealed interface FactsBody permits LatestFactsBody, FactsHistoryBody {
    }

    /** The machine's latest facts and how they differ from the inventory (empty: no drift). */
    public record LatestFactsBody(String machine, MachineFacts facts, List<Drift.Difference> drift) implements FactsBody {
    }

    /** Every stored observation of the machine, newest first. */
    public record FactsHistoryBody(String machine, List<MachineFacts> history) implements FactsBody {
    }

    @Inject
    FactsService facts;

    /** The latest facts with the machine's drift; {@code ?history=true}: every observation, newest first. */
    @GET
    @Path("/machines/{name}/facts")
    @APIResponse(responseCode = "200", description = "the latest facts with their drift, or every observation with ?history=true",
            content = @Content(schema = @Schema(oneOf = {LatestFactsBody.class, FactsHistoryBody.class})))
    public FactsBody facts(@PathParam("name") String name, @QueryParam("history") boolean history) {
        Machine machine = known(name);
        if (history) {
            List<MachineFacts> observations = facts.history(name);
            if (observations.isEmpty()) {
                throw noFacts(name);
            }
            return new FactsHistoryBody(name, observations);
        }
        MachineFacts latest = facts.latest(name).map(FactsObservation::facts).orElseThrow(() -> noFacts(name));
        return new LatestFactsBody(name, latest, facts.drift(List.of(machine)).getFirst().differences());
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
