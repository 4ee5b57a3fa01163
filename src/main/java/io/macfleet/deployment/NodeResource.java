package io.macfleet.deployment;

import io.macfleet.accounts.CurrentUser;
import io.macfleet.accounts.Roles;
import io.macfleet.api.ProblemException;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.Operation;
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

    @Inject
    NodeService nodes;

    @Inject
    CurrentUser user;

    @GET
    @Path("/clusters/{name}/node")
    @Operation(summary = "Each rank's launchd state, pid, runs, last exit, node version and model hash, read from the Macs now")
    @APIResponse(responseCode = "404", description = "no such cluster (problem JSON)")
    public Map<String, Object> status(@PathParam("name") String name) {
        List<NodeRankStatus> statuses = refused(() -> nodes.status(name, SshSettings.defaults(user.actor())));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("cluster", name);
        body.put("serving", statuses.stream().allMatch(NodeRankStatus::running));
        body.put("ranks", statuses.stream().map(NodeResource::rank).toList());
        nodes.deployments().latest(name).ifPresent(deployment -> body.put("lastDeployment", Map.of("id", deployment.id(),
                "phase", deployment.phase(), "message", deployment.message() == null ? "" : deployment.message(),
                "nodeVersion", deployment.nodeVersion(), "modelSha256", deployment.modelSha256())));
        return body;
    }

    @POST
    @Path("/clusters/{name}/node/deploy")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Deploy the node (and the model) to the cluster in the background; GET .../node shows how it went")
    @APIResponse(responseCode = "202", description = "started")
    @APIResponse(responseCode = "400", description = "unknown cluster, unreadable model (problem JSON)")
    public Response deploy(@PathParam("name") String name, DeployRequest body) {
        DeployRequest request = body == null ? new DeployRequest(null, null, null) : body;
        if (request.model() != null && !request.model().startsWith("http") && !request.model().startsWith("/")) {
            throw ProblemException.badRequest("'model' must be an absolute path on the server's host or an http(s) URL");
        }
        NodeRelease release = refused(() -> nodes.release(name, new NodeService.Request(Optional.ofNullable(request.model()),
                Optional.ofNullable(request.modelSha256()), Optional.ofNullable(request.modelSize()), Optional.empty())));
        try {
            nodes.deployInBackground(name, release, user.actor());
        } catch (NodeService.RefusedException underWay) {
            throw new ProblemException(409, "Conflict", underWay.getMessage());
        }
        return Response.accepted(Map.of("cluster", name, "nodeVersion", release.nodeVersion(), "model", release.modelFileName())).build();
    }

    @POST
    @Path("/clusters/{name}/node/restart")
    @RolesAllowed(Roles.OPERATOR)
    @Operation(summary = "Restart every rank together (launchctl kickstart -k)")
    @APIResponse(responseCode = "200", description = "one line per machine")
    public Map<String, Object> restart(@PathParam("name") String name) {
        try {
            return Map.of("cluster", name, "machines", refused(() -> nodes.act(name, NodeService.Action.RESTART, SshSettings.defaults(user.actor()))));
        } catch (NodeDeployer.DeployFailedException e) {
            throw new ProblemException(502, "Bad Gateway", e.getMessage());
        }
    }

    private static Map<String, Object> rank(NodeRankStatus status) {
        Map<String, Object> rank = new LinkedHashMap<>();
        rank.put("rank", status.rank());
        rank.put("machine", status.machine());
        rank.put("state", status.state());
        status.pid().ifPresent(pid -> rank.put("pid", pid));
        status.runs().ifPresent(runs -> rank.put("runs", runs));
        rank.put("lastExit", NodeCommand.lastExit(status.launchd().lastExit()));
        status.nodeVersion().ifPresent(version -> rank.put("nodeVersion", version));
        status.nodeSha256().ifPresent(sha -> rank.put("nodeSha256", sha));
        status.modelSha256().ifPresent(sha -> rank.put("modelSha256", sha));
        status.error().ifPresent(error -> rank.put("error", error));
        return rank;
    }

    private static <T> T refused(java.util.function.Supplier<T> work) {
        try {
            return work.get();
        } catch (NodeService.RefusedException e) {
            throw e.getMessage().startsWith("no cluster named") ? new ProblemException(404, "Not Found", e.getMessage()) : ProblemException.badRequest(e.getMessage());
        }
    }
}
