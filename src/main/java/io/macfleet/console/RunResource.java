package io.macfleet.console;

import static io.macfleet.console.ConsoleSupport.blank;

import io.macfleet.accounts.Roles;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.provision.PlaybookLoader;
import io.macfleet.provision.ProvisioningService;
import io.macfleet.provision.RunView;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
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
import java.util.List;
import java.util.Optional;

/**
 * Provisioning runs: the list with the form that starts one, each run's page with its live part, and the "done,
 * verify now" of a step that waits for a person. Starting and confirming need an operator.
 */
@Path("/console")
@Produces(MediaType.TEXT_HTML)
public class RunResource {

    private final ProvisioningService provisioning;
    private final DesiredStateStore desiredState;
    private final ConsoleFrame frame;

    @Inject
    public RunResource(ProvisioningService provisioning, DesiredStateStore desiredState, ConsoleFrame frame) {
        this.provisioning = provisioning;
        this.desiredState = desiredState;
        this.frame = frame;
    }

    @GET
    @Path("runs")
    public Response runs() {
        List<Pages.RunSummary> runs = provisioning.runs(100).stream().map(RunPage::summary).toList();
        List<String> clusters = desiredState.clusters().stream().map(Cluster::name).sorted().toList();
        return ConsoleSupport.page(200, Templates.runs(new Pages.Runs(frame.layout("Provisioning runs", "runs"), runs, clusters,
                provisioning.playbookNames())));
    }

    @GET
    @Path("runs/{id}")
    public Response run(@PathParam("id") String id) {
        return runPage(id, false);
    }

    /** The run's live part alone: what htmx swaps in every few seconds while the run can still change. */
    @GET
    @Path("runs/{id}/progress")
    public Response runProgress(@PathParam("id") String id) {
        return runPage(id, true);
    }

    private Response runPage(String id, boolean live) {
        Optional<RunView.Detail> found = runId(id).flatMap(provisioning::run);
        if (found.isEmpty()) {
            return frame.error(404, "Run not found", "There is no provisioning run " + id + ".", "/console/runs", "Back to the runs");
        }
        Pages.RunProgress progress = RunPage.progress(found.get(), frame.viewer());
        if (live) {
            return ConsoleSupport.live(Templates.runProgress(progress));
        }
        return ConsoleSupport.page(200, Templates.run(new Pages.Run(frame.layout("Run " + id, "runs"), progress)));
    }

    /**
     * "Done, verify now" on a step that waits for a person: verifies the machine over SSH at once, records who
     * confirmed (audit log and the run's confirmations), and continues the run when verified. Back to the run page,
     * which shows what the verification found.
     */
    @POST
    @Path("runs/{id}/confirm")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response confirm(@PathParam("id") String id, @FormParam("machine") String machine, @FormParam("step") String step) {
        Optional<Long> run = runId(id);
        if (run.isEmpty()) {
            return frame.error(404, "Run not found", "There is no provisioning run " + id + ".", "/console/runs", "Back to the runs");
        }
        if (blank(machine) || blank(step)) {
            return frame.error(400, "Incomplete confirmation", "The form must name the machine and the step that were done.",
                    "/console/runs/" + run.get(), "Back to run " + run.get());
        }
        try {
            provisioning.confirmOperatorStep(run.get(), machine, step, frame.actor());
        } catch (ProvisioningService.NotFoundException e) {
            return frame.error(404, "Step not found", Pages.sentence(e.getMessage()) + ".", "/console/runs/" + run.get(), "Back to run " + run.get());
        } catch (ProvisioningService.InvalidRequestException e) {
            return frame.error(409, "Nothing to confirm", Pages.sentence(e.getMessage()) + ": someone may have confirmed it already.",
                    "/console/runs/" + run.get(), "Back to run " + run.get());
        }
        return Response.seeOther(URI.create("/console/runs/" + run.get() + "#task-" + machine + "-" + step)).build();
    }

    /** Starts (or resumes) provisioning of a cluster, or of one machine, in the background; then shows the run. */
    @POST
    @Path("runs")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response start(@FormParam("cluster") String cluster, @FormParam("machine") String machine, @FormParam("playbook") String playbook) {
        String back = blank(cluster) ? "/console/runs" : "/console/clusters/" + URLEncoder.encode(cluster, StandardCharsets.UTF_8).replace("+", "%20");
        String backLabel = blank(cluster) ? "Back to the runs" : "Back to cluster " + cluster;
        if (blank(cluster) && blank(machine)) {
            return frame.error(400, "Nothing to provision", "Choose a cluster (or a machine) to provision.", back, backLabel);
        }
        if (!blank(playbook) && !provisioning.playbookNames().contains(playbook)) {
            return frame.error(400, "Unknown playbook", "There is no playbook named '" + playbook + "'; there are "
                    + String.join(", ", provisioning.playbookNames()) + ".", back, backLabel);
        }
        try {
            long id = provisioning.startInBackground(new ProvisioningService.Request(blank(cluster) ? null : cluster,
                    blank(machine) ? List.of() : List.of(machine), blank(playbook) ? null : playbook, null, null, false, null), frame.actor());
            return Response.seeOther(URI.create("/console/runs/" + id)).build();
        } catch (ProvisioningService.InvalidRequestException | PlaybookLoader.InvalidPlaybookException | IllegalArgumentException e) {
            return frame.error(400, "Cannot start provisioning", Pages.sentence(e.getMessage()) + ".", back, backLabel);
        } catch (ProvisioningService.RunBusyException e) {
            return frame.error(409, "Provisioning is already running", Pages.sentence(e.getMessage()) + ".", back, backLabel);
        }
    }

    private static Optional<Long> runId(String text) {
        try {
            long id = Long.parseLong(text);
            return id > 0 ? Optional.of(id) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
