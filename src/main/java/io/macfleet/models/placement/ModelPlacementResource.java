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
import java.util.List;
import java.util.Locale;
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

    /**
     * One Mac: bytes written so far (at most about a second old while it runs) against the model's size, and once it
     * ended its outcome ({@code placed}, {@code already-present}, {@code failed}), bytes received again and message.
     */
    public record MachineBody(String machine, long bytesWritten, int percent,
                              @JsonInclude(JsonInclude.Include.NON_NULL) String outcome, long bytesResent,
                              @JsonInclude(JsonInclude.Include.NON_NULL) String message) {
    }

    /**
     * A placement as stored: {@code running}, {@code done} (see {@code succeeded}), {@code failed} (refused or broken:
     * {@code error}) or {@code interrupted} (its process stopped: macfleet restarted or was killed; {@code model place}
     * again resumes it).
     */
    public record PlacementStatusBody(String id, String cluster, String model, String state, String startedBy, String startedAt,
                                      @JsonInclude(JsonInclude.Include.NON_NULL) String finishedAt, long totalBytes,
                                      long bytesFromControlHost, @JsonInclude(JsonInclude.Include.NON_NULL) Boolean succeeded,
                                      List<MachineBody> machines, @JsonInclude(JsonInclude.Include.NON_NULL) String error) {

        public static PlacementStatusBody of(PlacementStore.PlacementRecord record) {
            List<MachineBody> machines = record.machines().stream().map(machine -> new MachineBody(machine.machine(), machine.bytesWritten(),
                    percent(machine.bytesWritten(), record.totalBytes()),
                    machine.outcome().map(kind -> kind.name().toLowerCase(Locale.ROOT).replace('_', '-')).orElse(null),
                    machine.bytesResent(), machine.message().orElse(null))).toList();
            Boolean succeeded = record.state() == PlacementState.DONE
                    ? record.machines().stream().noneMatch(machine -> machine.outcome().orElse(null) == PlacementReport.Kind.FAILED) : null;
            return new PlacementStatusBody(record.id(), record.cluster(), record.model(), record.state().label(), record.startedBy(),
                    record.startedAt().toString(), record.finishedAt().map(Object::toString).orElse(null), record.totalBytes(),
                    record.bytesFromControlHost(), succeeded, machines, record.error().orElse(null));
        }

        static int percent(long bytes, long total) {
            return total <= 0 ? 100 : (int) Math.min(100, bytes * 100 / total);
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
    @APIResponse(responseCode = "202", description = "started; GET .../model-placements/{id} (or .../latest) follows it",
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
    @Operation(summary = "The cluster's most recent placement (API, CLI or deploy): its state, each Mac's progress, its outcome")
    @APIResponse(responseCode = "200", description = "the placement")
    @APIResponse(responseCode = "404", description = "none recorded (problem JSON)")
    public PlacementStatusBody latest(@PathParam("cluster") String cluster) {
        return placement.latest(cluster).map(PlacementStatusBody::of)
                .orElseThrow(() -> new ProblemException(404, "Not Found", "no model placement of cluster '" + cluster
                        + "' is recorded (POST .../model-placements starts one)"));
    }

    @GET
    @Path("/clusters/{cluster}/model-placements/{id}")
    @Operation(summary = "One recorded placement of the cluster by its id")
    @APIResponse(responseCode = "200", description = "the placement")
    @APIResponse(responseCode = "404", description = "no such placement of this cluster (problem JSON)")
    public PlacementStatusBody one(@PathParam("cluster") String cluster, @PathParam("id") String id) {
        return placement.find(id).filter(record -> record.cluster().equals(cluster)).map(PlacementStatusBody::of)
                .orElseThrow(() -> new ProblemException(404, "Not Found", "no model placement '" + id + "' of cluster '" + cluster + "'"));
    }
}
