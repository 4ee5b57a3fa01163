package io.macfleet.runtime;

import io.macfleet.deployment.NodeDeployer;
import io.macfleet.deployment.NodeRankStatus;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.problem.ProblemException;
import io.macfleet.ssh.SshSettings;
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
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** The inference node of a cluster over HTTP: its ranks' state, a deploy (in the background) and a restart. */
// The class path is the same as the inventory resource's (see CablingResource).
@RolesAllowed(Roles.VIEWER)
@Path("/api/v1")
@Produces(MediaType.APPLICATION_JSON)
public class NodeResource {

    /** Body of a deploy: a model path on the server's host or a URL (with its SHA-256 and size); empty: the inventory's. */
    public record DeployRequest(String model, String modelSha256, Long modelSize) {
    }

    /** A cluster's node: whether every rank serves, each rank as read from its Mac, and the latest deployment if there was one. */
    public record NodeStatusBody(String cluster, boolean serving, List<RankBody> ranks,
                                 @JsonInclude(JsonInclude.Include.NON_NULL) LastDeploymentBody lastDeployment,
                                 @JsonInclude(JsonInclude.Include.NON_NULL) String runtime,
                                 @JsonInclude(JsonInclude.Include.NON_NULL) String endpoint,
                                 @JsonInclude(JsonInclude.Include.NON_EMPTY) List<io.macfleet.runtime.RuntimeStatusBody> daemons) {
        public NodeStatusBody(String cluster, boolean serving, List<RankBody> ranks, LastDeploymentBody lastDeployment) {
            this(cluster, serving, ranks, lastDeployment, null, null, List.of());
        }
    }

    /**
     * One rank as launchd and the node's files show it. What could not be read (no pid while stopped, no node
     * installed, no error) is left out of the JSON rather than sent as null, as the answer always did.
     */
    public record RankBody(int rank, String machine, String state,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Long pid,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Integer runs,
                           String lastExit,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String nodeVersion,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String nodeSha256,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String modelSha256,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String error) {

        /** The rank as read from its Mac (also what {@code macfleet node status --json} prints). */
        public static RankBody of(NodeRankStatus status) {
            return new RankBody(status.rank(), status.machine(), status.state(),
                    status.pid().isPresent() ? status.pid().getAsLong() : null,
                    status.runs().isPresent() ? status.runs().getAsInt() : null,
                    NodeCommand.lastExit(status.launchd().lastExit()),
                    status.nodeVersion().orElse(null), status.nodeSha256().orElse(null), status.modelSha256().orElse(null), status.error().orElse(null));
        }
    }

    /** The cluster's latest deployment; {@code message} is empty (not null) while there is none. */
    public record LastDeploymentBody(long id, String phase, String message, String nodeVersion, String modelSha256) {
    }

    /** The 202 answer of a deploy: what is being deployed where (GET .../node follows it). */
    public record DeployStartedBody(String cluster, String nodeVersion, String model) {
    }

    /** A restart's answer: one line per machine. */
    public record RestartBody(String cluster, List<String> machines) {
    }

    @Inject
    NodeService nodes;

    @Inject
    io.macfleet.runtime.RuntimeService runtimes;

    @Inject
    CurrentUser user;

    @GET
    @Path("/clusters/{name}/node")
    @Operation(summary = "Each rank's launchd state, pid, runs, last exit, node version and model hash, read from the Macs now")
    @APIResponse(responseCode = "200", description = "the cluster's node, rank by rank")
    @APIResponse(responseCode = "404", description = "no such cluster (problem JSON)")
    public NodeStatusBody status(@PathParam("name") String name) {
        io.macfleet.runtime.InferenceRuntime runtime = refused(() -> runtimes.runtimeOf(name));
        String endpoint = refused(() -> runtimes.endpoint(name));
        if (!runtime.name().equals(io.macfleet.runtime.BundledRuntime.NAME)) {
            List<io.macfleet.runtime.RuntimeService.DaemonStatus> daemons = refused(() -> runtimes.status(name, SshSettings.defaults(user.actor())));
            return new NodeStatusBody(name, !daemons.isEmpty() && daemons.stream().allMatch(io.macfleet.runtime.RuntimeService.DaemonStatus::ready),
                    List.of(), null, runtime.name(), endpoint, daemons.stream().map(io.macfleet.runtime.RuntimeStatusBody::of).toList());
        }
        List<NodeRankStatus> statuses = refused(() -> nodes.status(name, SshSettings.defaults(user.actor())));
        LastDeploymentBody lastDeployment = nodes.deployments().latest(name)
                .map(deployment -> new LastDeploymentBody(deployment.id(), deployment.phase(), deployment.message() == null ? "" : deployment.message(),
                        deployment.nodeVersion(), deployment.modelSha256()))
                .orElse(null);
        return new NodeStatusBody(name, statuses.stream().allMatch(NodeRankStatus::running), statuses.stream().map(RankBody::of).toList(),
                lastDeployment, runtime.name(), endpoint, List.of());
    }

    @POST
    @Path("/clusters/{name}/node/deploy")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Deploy the node (and the model) to the cluster in the background; GET .../node shows how it went")
    @APIResponse(responseCode = "202", description = "started", content = @Content(schema = @Schema(implementation = DeployStartedBody.class)))
    @APIResponse(responseCode = "400", description = "unknown cluster, unreadable model (problem JSON)")
    public Response deploy(@PathParam("name") String name, DeployRequest body) {
        DeployRequest request = body == null ? new DeployRequest(null, null, null) : body;
        if (request.model() != null && (request.model().startsWith("http:") || request.model().startsWith("https:"))) {
            // A request must not make every Mac fetch an address of its choosing; an operator at the CLI may.
            throw ProblemException.badRequest("'model' must be a model file on the server's host: the API does not deploy from URLs"
                    + " (from the command line: macfleet node deploy CLUSTER --model URL --model-sha256 HEX --model-size BYTES)");
        }
        if (request.model() != null && !request.model().startsWith("/")) {
            throw ProblemException.badRequest("'model' must be an absolute path on the server's host");
        }
        io.macfleet.runtime.InferenceRuntime runtime = refused(() -> runtimes.runtimeOf(name));
        if (!runtime.name().equals(io.macfleet.runtime.BundledRuntime.NAME)) {
            if (request.model() != null && request.model().startsWith("http")) {
                throw ProblemException.badRequest("the " + runtime.name() + " runtime copies a model file of the server's host; got " + request.model());
            }
            Optional<java.nio.file.Path> model = Optional.ofNullable(request.model()).map(java.nio.file.Path::of);
            io.macfleet.runtime.RuntimePlan plan = refused(() -> runtimes.plan(name, model, Optional.empty()));
            String actor = user.actor();
            Thread.ofVirtual().name("runtime-deploy-" + name).start(() -> {
                try {
                    runtimes.deploy(name, model, SshSettings.defaults(actor), NodeDeployer.Listener.NONE);
                } catch (RuntimeException recorded) {
                    // In the audit log (node.deploy, failure).
                }
            });
            return Response.accepted(new DeployStartedBody(name, runtime.name() + " " + plan.build(),
                    model.map(java.nio.file.Path::toString).orElse("the inventory's"))).build();
        }
        NodeRelease release = refused(() -> nodes.release(name, new NodeService.Request(Optional.ofNullable(request.model()),
                Optional.ofNullable(request.modelSha256()), Optional.ofNullable(request.modelSize()), Optional.empty())));
        try {
            nodes.deployInBackground(name, release, user.actor());
        } catch (NodeService.RefusedException underWay) {
            throw new ProblemException(409, "Conflict", underWay.getMessage());
        }
        return Response.accepted(new DeployStartedBody(name, release.nodeVersion(), release.modelFileName())).build();
    }

    @POST
    @Path("/clusters/{name}/node/restart")
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Restart every rank together (launchctl kickstart -k)")
    @APIResponse(responseCode = "200", description = "one line per machine")
    public RestartBody restart(@PathParam("name") String name) {
        try {
            boolean bundled = refused(() -> runtimes.runtimeOf(name)).name().equals(io.macfleet.runtime.BundledRuntime.NAME);
            return new RestartBody(name, refused(() -> bundled ? nodes.act(name, NodeService.Action.RESTART, SshSettings.defaults(user.actor()))
                    : runtimes.act(name, NodeService.Action.RESTART, SshSettings.defaults(user.actor()))));
        } catch (NodeDeployer.DeployFailedException e) {
            throw new ProblemException(502, "Bad Gateway", e.getMessage());
        }
    }

    private static <T> T refused(java.util.function.Supplier<T> work) {
        try {
            return work.get();
        } catch (NodeService.RefusedException | io.macfleet.runtime.RuntimeRefused e) {
            throw e.getMessage().startsWith("no cluster named") ? new ProblemException(404, "Not Found", e.getMessage()) : ProblemException.badRequest(e.getMessage());
        }
    }
}
