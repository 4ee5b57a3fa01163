package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.deployment.NodeDeploymentStore;
import io.macfleet.deployment.NodeRelease;
import io.macfleet.deployment.NodeService;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
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
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The inference node on a cluster's page: the latest deployment's state (a part htmx fetches) and, for operators,
 * "Deploy node", which starts the same background deployment as {@code POST /api/v1/clusters/NAME/node/deploy}.
 */
@Path("/console/clusters/{name}/node")
@Produces(MediaType.TEXT_HTML)
public class NodeConsoleResource {

    @CheckedTemplate(basePath = "console")
    static final class NodeTemplates {
        static native TemplateInstance clusterNode(Panel panel);
    }

    /** What the part shows: the latest deployment (state empty: never deployed) and whether a deploy may be started. */
    public record Panel(String cluster, Viewer viewer, String state, String stateCss, String detail, boolean underWay) {
    }

    private final NodeService nodes;
    private final ConsoleFrame frame;

    @Inject
    public NodeConsoleResource(NodeService nodes, ConsoleFrame frame) {
        this.nodes = nodes;
        this.frame = frame;
    }

    @GET
    public Response panel(@PathParam("name") String name) {
        return ConsoleSupport.live(NodeTemplates.clusterNode(panel(name, frame.viewer(), nodes.deployments().latest(name))));
    }

    @POST
    @Path("deploy")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response deploy(@PathParam("name") String name) {
        String back = "/console/clusters/" + URLEncoder.encode(name, StandardCharsets.UTF_8);
        try {
            NodeRelease release = nodes.release(name, NodeService.Request.resume());
            nodes.deployInBackground(name, release, frame.actor());
        } catch (NodeService.RefusedException e) {
            int status = e.getMessage().startsWith("no cluster named") ? 404 : 409;
            return frame.error(status, "Cannot deploy the node", Pages.sentence(e.getMessage()) + ".", back, "Back to " + name);
        }
        return Response.seeOther(URI.create(back)).build();
    }

    /** The part's model from the latest deployment; a pure function so the wording is tested without a cluster. */
    static Panel panel(String cluster, Viewer viewer, Optional<NodeDeploymentStore.Deployment> latest) {
        if (latest.isEmpty()) {
            return new Panel(cluster, viewer, "", "", "never deployed", false);
        }
        NodeDeploymentStore.Deployment deployment = latest.get();
        String css = switch (deployment.phase()) {
            case "serving" -> "ok";
            case "failed" -> "bad";
            default -> "";
        };
        String detail = "deployment " + deployment.id() + " by " + deployment.startedBy() + ": node " + deployment.nodeVersion() + ", model "
                + deployment.modelFileName()
                + (deployment.message() == null || deployment.message().isBlank() ? "" : " · " + deployment.message());
        return new Panel(cluster, viewer, deployment.phase(), css, detail, !deployment.finished());
    }
}
