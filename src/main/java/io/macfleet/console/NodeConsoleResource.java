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
    private final io.macfleet.runtime.RuntimeService runtimes;
    private final io.macfleet.supervision.SupervisionService supervision;

    @Inject
    public NodeConsoleResource(NodeService nodes, ConsoleFrame frame, io.macfleet.runtime.RuntimeService runtimes,
                               io.macfleet.supervision.SupervisionService supervision) {
        this.nodes = nodes;
        this.frame = frame;
        this.runtimes = runtimes;
        this.supervision = supervision;
    }

    @GET
    public Response panel(@PathParam("name") String name) {
        Optional<String> runtime = otherRuntime(name);
        if (runtime.isPresent()) {
            return ConsoleSupport.live(NodeTemplates.clusterNode(runtimePanel(name, frame.viewer(), runtime.get(), runtimes.endpoint(name),
                    supervision.runtimeLooks().stream().filter(look -> look.cluster().equals(name)).findFirst())));
        }
        return ConsoleSupport.live(NodeTemplates.clusterNode(panel(name, frame.viewer(), nodes.deployments().latest(name))));
    }

    /** The cluster's runtime when it is not the bundled node (llama.cpp, mlx); empty for the bundled node or an unknown cluster. */
    private Optional<String> otherRuntime(String name) {
        try {
            String runtime = runtimes.runtimeOf(name).name();
            return runtime.equals(io.macfleet.runtime.BundledRuntime.NAME) ? Optional.empty() : Optional.of(runtime);
        } catch (RuntimeException unknown) {
            return Optional.empty();
        }
    }

    /**
     * The part for a llama.cpp or MLX cluster, from its supervisor's latest look (this instance's): serving or not, the
     * endpoint, how many daemons are ready and each link's transport (RDMA or TCP, and why).
     */
    static Panel runtimePanel(String cluster, Viewer viewer, String runtime, String endpoint, Optional<io.macfleet.supervision.RuntimeLook> look) {
        if (look.isEmpty()) {
            return new Panel(cluster, viewer, "", "", runtime + " · endpoint " + endpoint + " · not looked at by this instance's supervisor yet"
                    + " (macfleet node status " + cluster + " reads the Macs)", false);
        }
        io.macfleet.supervision.RuntimeLook seen = look.get();
        long ready = seen.daemons().stream().filter(io.macfleet.runtime.RuntimeService.DaemonStatus::ready).count();
        String links = seen.daemons().stream().filter(daemon -> daemon.transport().isPresent())
                .map(daemon -> daemon.machine() + " " + daemon.transport().get()).collect(java.util.stream.Collectors.joining(", "));
        String detail = runtime + " · endpoint " + endpoint + " · " + ready + " of " + seen.daemons().size() + " daemons ready"
                + (links.isEmpty() ? "" : " · links: " + links) + (seen.serving() ? "" : " · " + seen.state())
                + seen.alert().map(alert -> " · alert: " + alert).orElse("") + " · seen at " + Ages.utc(seen.at());
        return new Panel(cluster, viewer, seen.serving() ? "serving" : "not serving", seen.serving() ? "ok" : "bad", detail, false);
    }

    @POST
    @Path("deploy")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response deploy(@PathParam("name") String name) {
        String back = "/console/clusters/" + URLEncoder.encode(name, StandardCharsets.UTF_8);
        if (otherRuntime(name).isPresent()) {
            try {
                runtimes.plan(name, Optional.empty(), Optional.empty());
            } catch (io.macfleet.runtime.RuntimeRefused e) {
                return frame.error(409, "Cannot deploy", Pages.sentence(e.getMessage()) + ".", back, "Back to " + name);
            }
            String actor = frame.actor();
            Thread.ofVirtual().name("runtime-deploy-" + name).start(() -> {
                try {
                    runtimes.deploy(name, Optional.empty(), io.macfleet.ssh.SshSettings.defaults(actor), io.macfleet.deployment.NodeDeployer.Listener.NONE);
                } catch (RuntimeException recorded) {
                    // In the audit log (node.deploy, failure).
                }
            });
            return Response.seeOther(URI.create(back)).build();
        }
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
