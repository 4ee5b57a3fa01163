package io.macfleet.provision;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Provisioning runs over REST: list and read (viewer), start and confirm an operator step (operator). The signed-in
 * user (API token or console session) is the actor in the run, the confirmations and the audit log.
 */
@Path("/api/v1/runs")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "provisioning", description = "Provisioning runs: state per machine per step, start, operator confirmations")
public class ProvisioningResource {

    /** Body of POST /api/v1/runs. */
    public record StartRequest(String cluster, List<String> machines, String playbook, String only, String from, Boolean newRun) {
    }

    @Inject
    ProvisioningService service;

    @Inject
    CurrentUser user;

    @GET
    @Operation(summary = "The latest runs, newest first")
    public List<RunView.Run> runs(@QueryParam("limit") @DefaultValue("50") String limit) {
        int count;
        try {
            // Parsed here, not by JAX-RS, which answers 404 to a query parameter it cannot convert.
            count = Integer.parseInt(limit.strip());
        } catch (NumberFormatException e) {
            throw ProblemException.badRequest("limit '" + limit + "' is not a whole number; expected for example ?limit=50");
        }
        try {
            return service.runs(count);
        } catch (ProvisioningService.InvalidRequestException e) {
            throw ProblemException.badRequest(e.getMessage());
        }
    }

    @GET
    @Path("/{id}")
    @Operation(summary = "One run: every step of every machine (status, attempts, times, summary), machine states, confirmations")
    @APIResponse(responseCode = "404", description = "no such run (problem JSON)")
    public Map<String, Object> run(@PathParam("id") long id) {
        RunView.Detail detail = service.run(id).orElseThrow(() -> new ProblemException(404, "Not Found", "no provisioning run " + id));
        return Map.of("run", detail.run(), "machines", detail.machineStates(), "steps", detail.steps(), "confirmations", detail.confirmations());
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Start (or resume) a run in the background; operator steps wait for a confirmation")
    @APIResponse(responseCode = "202", description = "started: {\"id\": RUN}")
    @APIResponse(responseCode = "400", description = "unknown cluster, machine, playbook or step; invalid playbook (problem JSON)")
    @APIResponse(responseCode = "409", description = "another live process works on that run (problem JSON)")
    @RolesAllowed(Roles.OPERATOR)
    public Response start(StartRequest body) {
        if (body == null) {
            throw ProblemException.badRequest("expected a JSON body {\"cluster\": ..., \"machines\": [...], \"playbook\": ..., \"only\": ..., \"from\": ...}");
        }
        if (body.playbook() != null && !body.playbook().matches("[A-Za-z0-9._-]+")) {
            throw ProblemException.badRequest("'playbook' must be the name of a playbook (" + String.join(", ", service.playbookNames())
                    + "), not a path: files on the server are not read on request");
        }
        try {
            long id = service.startInBackground(new ProvisioningService.Request(body.cluster(), body.machines(), body.playbook(), body.only(),
                    body.from(), Boolean.TRUE.equals(body.newRun()), null), user.actor());
            return Response.accepted(Map.of("id", id)).header("Location", "/api/v1/runs/" + id).build();
        } catch (ProvisioningService.InvalidRequestException | PlaybookLoader.InvalidPlaybookException | IllegalArgumentException e) {
            throw ProblemException.badRequest(e.getMessage());
        } catch (ProvisioningService.RunBusyException e) {
            throw new ProblemException(409, "Conflict", e.getMessage());
        }
    }

    @POST
    @Path("/{id}/machines/{machine}/steps/{step}/confirmation")
    @Operation(summary = "A person did the operator step: record who and when, verify over SSH now, continue the run when verified")
    @APIResponse(responseCode = "200", description = "{verified, detail (what is still wrong when not verified), resumed}")
    @APIResponse(responseCode = "404", description = "no such run, machine or step (problem JSON)")
    @APIResponse(responseCode = "409", description = "the step is not waiting for a person (problem JSON)")
    @RolesAllowed(Roles.OPERATOR)
    public ProvisioningService.Confirmation confirm(@PathParam("id") long id, @PathParam("machine") String machine, @PathParam("step") String step) {
        try {
            return service.confirmOperatorStep(id, machine, step, user.actor());
        } catch (ProvisioningService.NotFoundException e) {
            throw new ProblemException(404, "Not Found", e.getMessage());
        } catch (ProvisioningService.InvalidRequestException e) {
            throw new ProblemException(409, "Conflict", e.getMessage());
        }
    }
}
