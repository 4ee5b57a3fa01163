package io.macfleet.console;

import io.macfleet.accounts.Roles;
import io.macfleet.inventory.Cluster;
import io.macfleet.inventory.DesiredStateStore;
import io.macfleet.osupdate.CampaignView;
import io.macfleet.osupdate.OsUpdateCampaigns;
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
import java.util.List;
import java.util.Optional;

/**
 * OS-update campaigns in the console: the list with the form that starts one, each campaign's page with every
 * machine's phase (live), and pause/resume. Viewers see; starting, pausing and resuming need an operator.
 */
@Path("/console/os-updates")
@Produces(MediaType.TEXT_HTML)
public class CampaignResource {

    private final OsUpdateCampaigns campaigns;
    private final DesiredStateStore desiredState;
    private final ConsoleFrame frame;

    @Inject
    public CampaignResource(OsUpdateCampaigns campaigns, DesiredStateStore desiredState, ConsoleFrame frame) {
        this.campaigns = campaigns;
        this.desiredState = desiredState;
        this.frame = frame;
    }

    @GET
    public Response list() {
        List<CampaignPages.Summary> summaries = campaigns.campaigns(100).stream().map(CampaignPages::summary).toList();
        List<String> clusters = desiredState.clusters().stream().map(Cluster::name).sorted().toList();
        List<String> maintenance = campaigns.maintenance().entrySet().stream().map(entry -> entry.getKey() + ": " + entry.getValue()).toList();
        return ConsoleSupport.page(200, CampaignPages.Templates.osUpdates(new CampaignPages.Campaigns(frame.layout("OS updates", "os-updates"),
                summaries, clusters, maintenance)));
    }

    @GET
    @Path("{id}")
    public Response show(@PathParam("id") String id) {
        return page(id, false);
    }

    /** The live part alone, swapped in by htmx every few seconds while the campaign runs. */
    @GET
    @Path("{id}/progress")
    public Response progress(@PathParam("id") String id) {
        return page(id, true);
    }

    private Response page(String id, boolean live) {
        Optional<CampaignView> found = id(id).flatMap(campaigns::campaign);
        if (found.isEmpty()) {
            return frame.error(404, "Campaign not found", "There is no OS-update campaign " + id + ".", "/console/os-updates", "Back to OS updates");
        }
        CampaignPages.Progress progress = CampaignPages.progress(found.get(), frame.viewer());
        if (live) {
            return ConsoleSupport.live(CampaignPages.Templates.osUpdateProgress(progress));
        }
        return ConsoleSupport.page(200, CampaignPages.Templates.osUpdate(new CampaignPages.Campaign(frame.layout("OS update " + id, "os-updates"), progress)));
    }

    /** Starts a campaign of one cluster in the background; then shows it. */
    @POST
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    @RolesAllowed(Roles.OPERATOR)
    public Response start(@FormParam("cluster") String cluster, @FormParam("to") String version, @FormParam("build") String build) {
        if (blank(cluster) || blank(version)) {
            return frame.error(400, "Incomplete campaign", "Choose a cluster and a target version (and preferably the build).", "/console/os-updates",
                    "Back to OS updates");
        }
        try {
            long id = campaigns.startInBackground(OsUpdateCampaigns.Request.of(List.of(cluster), version.strip(),
                    blank(build) ? Optional.empty() : Optional.of(build.strip())), frame.actor());
            return Response.seeOther(URI.create("/console/os-updates/" + id)).build();
        } catch (OsUpdateCampaigns.InvalidCampaignException e) {
            return frame.error(400, "Cannot start the campaign", Pages.sentence(e.getMessage()) + ".", "/console/os-updates", "Back to OS updates");
        }
    }

    @POST
    @Path("{id}/pause")
    @RolesAllowed(Roles.OPERATOR)
    public Response pause(@PathParam("id") String id) {
        return act(id, true);
    }

    @POST
    @Path("{id}/resume")
    @RolesAllowed(Roles.OPERATOR)
    public Response resume(@PathParam("id") String id) {
        return act(id, false);
    }

    private Response act(String text, boolean pause) {
        Optional<Long> id = id(text);
        if (id.isEmpty() || campaigns.campaign(id.get()).isEmpty()) {
            return frame.error(404, "Campaign not found", "There is no OS-update campaign " + text + ".", "/console/os-updates", "Back to OS updates");
        }
        try {
            if (pause) {
                campaigns.pause(id.get(), frame.actor());
            } else {
                campaigns.resumeInBackground(id.get(), frame.actor());
            }
        } catch (OsUpdateCampaigns.CampaignConflictException e) {
            return frame.error(409, pause ? "Cannot pause" : "Cannot resume", Pages.sentence(e.getMessage()) + ".", "/console/os-updates/" + id.get(),
                    "Back to campaign " + id.get());
        }
        return Response.seeOther(URI.create("/console/os-updates/" + id.get())).build();
    }

    private static Optional<Long> id(String text) {
        try {
            long id = Long.parseLong(text);
            return id > 0 ? Optional.of(id) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static boolean blank(String text) {
        return text == null || text.isBlank();
    }
}
