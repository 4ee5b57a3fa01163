package io.macfleet.runtime;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import io.macfleet.deployment.NodeDeployer;
import io.macfleet.ssh.SshSettings;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.function.Supplier;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** The lockstep upgrade of a cluster's runtime over HTTP: what it would change, and the campaign in the background. */
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class RuntimeUpgradeResource {

    /** Each Mac's build now and after; {@code underWay} names an upgrade in progress. */
    public record UpgradeBody(String cluster, String runtime, List<RuntimeUpgrade.MachineChange> machines, boolean changes, String endpoint,
                              String underWay) {
    }

    @Inject
    RuntimeService runtimes;

    @Inject
    CurrentUser user;

    @GET
    @Path("/clusters/{name}/node/upgrade")
    @Operation(summary = "Each Mac's runtime build now and the build the applied inventory names (reads the Macs, changes nothing)")
    @APIResponse(responseCode = "200", description = "the preview", content = @Content(schema = @Schema(implementation = UpgradeBody.class)))
    @APIResponse(responseCode = "400", description = "the bundled node, or a plan refused (problem JSON)")
    public UpgradeBody preview(@PathParam("name") String name) {
        RuntimeUpgrade.Preview preview = refused(() -> runtimes.upgradePreview(name, SshSettings.defaults(user.actor())));
        return new UpgradeBody(name, preview.runtime(), preview.machines(), preview.changes(), preview.endpoint(),
                runtimes.upgrading(name).orElse(null));
    }

    @POST
    @Path("/clusters/{name}/node/upgrade")
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Upgrade the cluster's runtime on every Mac together, drained and verified, rolled back on failure; in the background"
            + " (the outcome is in the audit log as node.upgrade, GET .../node shows the daemons)")
    @APIResponse(responseCode = "202", description = "started", content = @Content(schema = @Schema(implementation = UpgradeBody.class)))
    @APIResponse(responseCode = "400", description = "the bundled node, or a plan refused (problem JSON)")
    @APIResponse(responseCode = "409", description = "an upgrade of this cluster is under way")
    public Response upgrade(@PathParam("name") String name) {
        RuntimeUpgrade.Preview preview = refused(() -> runtimes.upgradePreview(name, SshSettings.defaults(user.actor())));
        if (runtimes.upgrading(name).isPresent()) {
            throw new ProblemException(409, "Conflict", "cluster " + name + ": " + runtimes.upgrading(name).get() + " is under way");
        }
        String actor = user.actor();
        Thread.ofVirtual().name("runtime-upgrade-" + name).start(() -> {
            try {
                runtimes.upgrade(name, SshSettings.defaults(actor), NodeDeployer.Listener.NONE);
            } catch (RuntimeException recorded) {
                // In the audit log (node.upgrade, failure), with whether it was rolled back.
            }
        });
        return Response.accepted(new UpgradeBody(name, preview.runtime(), preview.machines(), preview.changes(), preview.endpoint(),
                "upgrade started by " + actor)).build();
    }

    private static <T> T refused(Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeRefused e) {
            throw e.getMessage().startsWith("no cluster named") ? new ProblemException(404, "Not Found", e.getMessage())
                    : ProblemException.badRequest(e.getMessage());
        }
    }
}
