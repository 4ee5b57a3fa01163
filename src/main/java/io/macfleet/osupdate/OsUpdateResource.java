package io.macfleet.osupdate;

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
import java.time.LocalDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * OS-update campaigns over REST: list and read (viewer), start, pause and resume (operator). The signed-in user is the
 * actor in the audit log. Starting and resuming run the campaign in the background; read it back to follow it.
 */
@Path("/api/v1/os-updates")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "os-updates", description = "OS-update campaigns: clusters updated in lockstep, each machine's phase")
public class OsUpdateResource {

    /** Body of POST /api/v1/os-updates. */
    public record StartRequest(List<String> clusters, Boolean all, String to, String build, String via, Integer clustersAtOnce,
                               Boolean continueOnFailure, String installBy, String serviceLabel) {
    }

    @Inject
    OsUpdateCampaigns campaigns;

    @Inject
    CurrentUser user;

    @GET
    @Operation(summary = "The latest campaigns, newest first, with each cluster's step and each machine's phase")
    public List<CampaignView> list(@QueryParam("limit") @DefaultValue("50") String limit) {
        int count;
        try {
            count = Integer.parseInt(limit.strip());
        } catch (NumberFormatException e) {
            throw ProblemException.badRequest("limit '" + limit + "' is not a whole number; expected for example ?limit=50");
        }
        if (count < 1 || count > 1000) {
            throw ProblemException.badRequest("limit must be between 1 and 1000, was " + count);
        }
        return campaigns.campaigns(count);
    }

    @GET
    @Path("/maintenance")
    @Operation(summary = "Clusters down for maintenance now (drained by a campaign), with the campaign and reason")
    public Map<String, String> maintenance() {
        return campaigns.maintenance();
    }

    @GET
    @Path("/{id}")
    @Operation(summary = "One campaign")
    @APIResponse(responseCode = "404", description = "no such campaign (problem JSON)")
    public CampaignView show(@PathParam("id") long id) {
        return campaigns.campaign(id).orElseThrow(() -> new ProblemException(404, "Not Found", "no OS-update campaign " + id));
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Start a campaign in the background (or continue the unfinished one of the same clusters and target)")
    @APIResponse(responseCode = "202", description = "started: {\"id\": CAMPAIGN}")
    @APIResponse(responseCode = "400", description = "unknown cluster or method, bad version or build, a cluster in another unfinished campaign (problem JSON)")
    @RolesAllowed(Roles.OPERATOR)
    public Response start(StartRequest body) {
        if (body == null) {
            throw ProblemException.badRequest("expected a JSON body {\"clusters\": [...], \"to\": \"26.2\", \"build\": \"25C56\", \"via\": \"mdm\"}");
        }
        Optional<LocalDateTime> installBy;
        try {
            installBy = body.installBy() == null ? Optional.empty() : Optional.of(LocalDateTime.parse(body.installBy()));
        } catch (DateTimeParseException e) {
            throw ProblemException.badRequest("installBy '" + body.installBy() + "' is not a local time like 2026-12-01T02:00:00");
        }
        OsUpdateCampaigns.Request request = new OsUpdateCampaigns.Request(body.clusters(), Boolean.TRUE.equals(body.all()), body.to(),
                Optional.ofNullable(body.build()), body.via(), body.clustersAtOnce() == null ? 1 : body.clustersAtOnce(),
                Boolean.TRUE.equals(body.continueOnFailure()), installBy, Optional.ofNullable(body.serviceLabel()));
        try {
            long id = campaigns.startInBackground(request, user.actor());
            return Response.accepted(Map.of("id", id)).header("Location", "/api/v1/os-updates/" + id).build();
        } catch (OsUpdateCampaigns.InvalidCampaignException e) {
            throw ProblemException.badRequest(e.getMessage());
        }
    }

    @POST
    @Path("/{id}/pause")
    @Operation(summary = "Pause a running campaign at its next check (Macs already installing carry on)")
    @APIResponse(responseCode = "404", description = "no such campaign (problem JSON)")
    @APIResponse(responseCode = "409", description = "the campaign is not running (problem JSON)")
    @RolesAllowed(Roles.OPERATOR)
    public CampaignView pause(@PathParam("id") long id) {
        try {
            return campaigns.pause(id, user.actor());
        } catch (OsUpdateCampaigns.UnknownCampaignException e) {
            throw new ProblemException(404, "Not Found", e.getMessage());
        } catch (OsUpdateCampaigns.CampaignConflictException e) {
            throw new ProblemException(409, "Conflict", e.getMessage());
        }
    }

    @POST
    @Path("/{id}/resume")
    @Operation(summary = "Resume a paused or failed campaign (after the fix) in the background")
    @APIResponse(responseCode = "202", description = "resumed: {\"id\": CAMPAIGN}")
    @APIResponse(responseCode = "404", description = "no such campaign (problem JSON)")
    @APIResponse(responseCode = "409", description = "the campaign already succeeded (problem JSON)")
    @RolesAllowed(Roles.OPERATOR)
    public Response resume(@PathParam("id") long id) {
        try {
            campaigns.resumeInBackground(id, user.actor());
            return Response.accepted(Map.of("id", id)).header("Location", "/api/v1/os-updates/" + id).build();
        } catch (OsUpdateCampaigns.UnknownCampaignException e) {
            throw new ProblemException(404, "Not Found", e.getMessage());
        } catch (OsUpdateCampaigns.CampaignConflictException e) {
            throw new ProblemException(409, "Conflict", e.getMessage());
        }
    }
}
