package io.macfleet.models.placement;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Comparator;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** Placing a catalogue model on a cluster over HTTP: started in the background, followed through {@code .../latest}. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class ModelPlacementResource {

    /** The model to place, by its catalogue name. */
    public record PlacementRequest(String model) {
    }

    /** How far one Mac is with one file. */
    public record ProgressBody(String machine, String file, long bytes, long totalBytes) {
    }

    /**
     * A placement: {@code running}, {@code done} (see {@code result.succeeded}) or {@code failed} (refused or broken:
     * {@code error}); progress per Mac and file while it runs.
     */
    public record PlacementStatusBody(String cluster, String model, String state, String startedAt, List<ProgressBody> progress,
                                      @JsonInclude(JsonInclude.Include.NON_NULL) PlacementBody result,
                                      @JsonInclude(JsonInclude.Include.NON_NULL) String error) {

        static PlacementStatusBody of(ModelPlacement.Running running) {
            List<ProgressBody> progress = running.progress.entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                    .map(entry -> {
                        String[] key = entry.getKey().split(" ", 2);
                        return new ProgressBody(key[0], key[1], entry.getValue()[0], entry.getValue()[1]);
                    }).sorted(Comparator.comparing(ProgressBody::machine)).toList();
            PlacementReport report = running.report;
            String state = report != null ? "done" : running.error != null ? "failed" : "running";
            return new PlacementStatusBody(running.cluster, running.model, state, running.startedAt.toString(), progress,
                    report == null ? null : PlacementBody.of(running.model, report), running.error);
        }
    }

    @Inject
    ModelPlacement placement;

    @Inject
    CurrentUser user;

    @POST
    @Path("/clusters/{cluster}/model-placements")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Place a catalogue model on every Mac of the cluster (sent once, passed on over Thunderbolt), in the background")
    @APIResponse(responseCode = "202", description = "started; GET .../model-placements/latest follows it",
            content = @Content(schema = @Schema(implementation = PlacementStatusBody.class)))
    @APIResponse(responseCode = "400", description = "no model given, or no such model in the catalogue (problem JSON)")
    @APIResponse(responseCode = "404", description = "no such cluster (problem JSON)")
    @APIResponse(responseCode = "409", description = "a placement of this cluster is running (problem JSON)")
    public Response place(@PathParam("cluster") String cluster, PlacementRequest body) {
        if (body == null || body.model() == null || body.model().isBlank()) {
            throw ProblemException.badRequest("'model' is missing: the name of a catalogue model (GET /api/v1/models lists them)");
        }
        try {
            return Response.accepted(PlacementStatusBody.of(placement.placeInBackground(cluster, body.model(), user.actor()))).build();
        } catch (PlacementRefused refused) {
            if (refused.isBusy()) {
                throw new ProblemException(409, "Conflict", refused.getMessage());
            }
            throw refused.getMessage().startsWith("no cluster named") ? new ProblemException(404, "Not Found", refused.getMessage())
                    : ProblemException.badRequest(refused.getMessage());
        }
    }

    @GET
    @Path("/clusters/{cluster}/model-placements/latest")
    @Operation(summary = "The latest placement started through the API for the cluster: its state, each Mac's progress, its outcome")
    @APIResponse(responseCode = "200", description = "the placement")
    @APIResponse(responseCode = "404", description = "none since the service started (problem JSON)")
    public PlacementStatusBody latest(@PathParam("cluster") String cluster) {
        return placement.latest(cluster).map(PlacementStatusBody::of)
                .orElseThrow(() -> new ProblemException(404, "Not Found", "no model placement of cluster '" + cluster
                        + "' was started through this service since it started (POST .../model-placements starts one)"));
    }
}
